// Bounded reading of input files (configs, workloads, arrivals, models, device profiles):
// only regular files are read, and never more than a fixed number of bytes, so a path such as
// /dev/zero, a FIFO or a file that keeps growing cannot exhaust memory. Also the UTF-8 check
// applied to text that reaches JSON documents from outside a JSON parser (--set values).
//
// Thread rules: free functions without shared state; safe to call from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/json_reader.hpp"

namespace gpumux {

/// Size limit of configs, sweep files, models and device profiles (64 MiB): the largest real
/// one (a model) is under 100 KiB, so this only stops runaway or hostile inputs.
inline constexpr std::uint64_t kMaxDocumentBytes = std::uint64_t{64} << 20;
/// Size limit of job JSONL and arrival CSV files (1 GiB): about ten million jobs or a hundred
/// million arrival times, far beyond any trace a run could replay.
inline constexpr std::uint64_t kMaxTraceBytes = std::uint64_t{1} << 30;

/// Reads a whole input file. Throws the InputError of `kind` naming `display_name` when the
/// file does not exist ("no such file (cannot open it)"), cannot be read, is not a regular file
/// ("not a regular file") or holds more than `max_bytes` ("larger than N MiB"), including a file
/// that grows past the limit while it is read.
[[nodiscard]] std::string read_input_file(const std::filesystem::path& path,
                                          const std::string& display_name, std::uint64_t max_bytes,
                                          InputKind kind);

/// An input file read in chunks, with read_input_file's checks (it exists, is a regular file and
/// holds at most `max_bytes`, also while it grows), for readers that stream: memory is the
/// caller's chunk, not the file.
class InputStream {
 public:
  /// Opens `path`; throws as read_input_file does.
  InputStream(const std::filesystem::path& path, std::string display_name, std::uint64_t max_bytes,
              InputKind kind);
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;

  /// Reads up to `size` bytes into `buffer`; 0 only at the end of the file. Throws the
  /// InputError of the stream's kind past `max_bytes` ("larger than N MiB") or on a read error.
  std::size_t read(char* buffer, std::size_t size);
  /// Back to the first byte, for a second pass.
  void rewind();
  /// `observe` sees every byte of the file once, in order, as it is first read (a second pass
  /// after rewind() does not repeat them): to hash a file while it streams.
  void observe(std::function<void(std::string_view)> observe) { observe_ = std::move(observe); }
  /// The name messages use.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// The bytes of the file seen so far (the furthest any pass has read).
  [[nodiscard]] std::uint64_t bytes_seen() const noexcept { return seen_; }
  [[nodiscard]] std::uint64_t max_bytes() const noexcept { return max_bytes_; }

 private:
  std::ifstream in_;
  std::string name_;
  std::uint64_t max_bytes_;
  InputKind kind_;
  std::uint64_t position_ = 0;
  std::uint64_t seen_ = 0;
  std::function<void(std::string_view)> observe_;
};

/// A data document (a model, a device profile): read_input_file within kMaxDocumentBytes,
/// named by its path.
[[nodiscard]] std::string read_data_document(const std::filesystem::path& file);

/// Parses a data document's `text` with `parse(doc, file)`; a JsonReader's ConfigError becomes
/// a TraceError (the file is data, not a config).
template <class Parse>
[[nodiscard]] auto parse_data_document(std::string_view text, const std::string& file,
                                       Parse&& parse) {
  const nlohmann::json doc = parse_json_text(text, file, "", InputKind::Trace);
  try {
    return parse(doc, file);
  } catch (const ConfigError& e) {
    rethrow_as_trace(e, file);
  }
}

/// The names (stems) of the *.json regular files in `directory`, sorted; none when it cannot
/// be read. How model and device-profile directories list what they hold.
[[nodiscard]] std::vector<std::string> json_file_stems(const std::filesystem::path& directory);

/// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or code points above
/// U+10FFFF), the encoding JSON text must use.
[[nodiscard]] bool is_valid_utf8(std::string_view text) noexcept;

/// `text` with every byte outside printable ASCII written as \xNN, for error messages that
/// quote input (a message must itself be valid UTF-8 to be logged or written as JSON).
[[nodiscard]] std::string printable(std::string_view text);

}  // namespace gpumux
