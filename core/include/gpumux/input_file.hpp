// Bounded reading of input files (configs, workloads, arrivals, models, device profiles):
// only regular files are read, and never more than a fixed number of bytes, so a path such as
// /dev/zero, a FIFO or a file that keeps growing cannot exhaust memory. Also the UTF-8 check
// applied to text that reaches JSON documents from outside a JSON parser (--set values).
//
// Thread rules: free functions without shared state; safe to call from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "gpumux/errors.hpp"
#include "gpumux/json_reader.hpp"

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
