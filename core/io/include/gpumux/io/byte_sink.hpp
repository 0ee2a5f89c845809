// Byte outputs for streamed result files (events.jsonl, trace.json): a ByteSink takes bytes in
// large chunks (a file descriptor, an ostream, a compressor in front of either), and OutBuf is
// the bounded buffer the event writers format into with std::to_chars, no iostreams.
//
// Thread rules: a sink and its buffer belong to one thread (the runtime thread during a run).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iosfwd>
#include <memory>
#include <string_view>

#include "gpumux/api/enum_names.hpp"

namespace gpumux {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  /// Takes `n` bytes. Throws gpumux::Error on a write error (naming the file).
  virtual void write(const char* data, std::size_t n) = 0;
  /// Writes what the sink still holds (a compressor's tail) to the next one; call once, after
  /// the last write.
  virtual void finish() {}
};

/// Writes to a std::ostream (EventLog::write_jsonl, tests).
class OstreamSink final : public ByteSink {
 public:
  explicit OstreamSink(std::ostream& out) : out_(out) {}
  void write(const char* data, std::size_t n) override;

 private:
  std::ostream& out_;
};

/// Discards everything (benchmarks of formatting alone).
class NullSink final : public ByteSink {
 public:
  void write(const char*, std::size_t) override {}
};

/// A fixed-size buffer in front of a sink: memory stays bounded however long the run, and the
/// sink sees chunks of up to kCapacity bytes. flush() must be called after the last put (the
/// destructor does not flush: a write error must not be thrown from a destructor).
class OutBuf {
 public:
  static constexpr std::size_t kCapacity = std::size_t{1} << 18;  // 256 KiB

  explicit OutBuf(ByteSink& sink) : sink_(sink), buf_(new char[kCapacity]) {}
  OutBuf(const OutBuf&) = delete;
  OutBuf& operator=(const OutBuf&) = delete;

  void put(char c) {
    if (pos_ == kCapacity) flush();
    buf_[pos_++] = c;
  }
  void put(std::string_view s) {
    if (s.size() > kCapacity - pos_) {
      flush();
      if (s.size() > kCapacity) {
        sink_.write(s.data(), s.size());
        bytes_ += s.size();
        return;
      }
    }
    std::memcpy(buf_.get() + pos_, s.data(), s.size());
    pos_ += s.size();
  }
  template <class Int>
  void put_int(Int v) {
    reserve(24);
    pos_ = static_cast<std::size_t>(
        std::to_chars(buf_.get() + pos_, buf_.get() + kCapacity, v).ptr - buf_.get());
  }
  /// The characters of a JSON string as nlohmann::json::dump writes them (short escapes for
  /// \b \t \n \f \r " and backslash, \u00xx for other control bytes, the rest as is),
  /// without the quotes, so a string can be written in pieces. Both writers use it.
  void put_json_chars(std::string_view s);
  /// `v` formatted as std::to_chars's shortest round-trip form (events.jsonl's "value"); `null`
  /// when `v` is NaN or infinite (JSON has neither).
  void put_shortest(double v);
  /// `v` formatted exactly as nlohmann::json::dump formats a double ("1000.0", "1.5e-05",
  /// "null" for NaN and infinities): trace.json stays byte-identical to the JSON tree's output.
  void put_json_double(double v);
  /// Hands the buffered bytes to the sink.
  void flush() {
    if (pos_ == 0) return;
    sink_.write(buf_.get(), pos_);
    bytes_ += pos_;
    pos_ = 0;
  }
  [[nodiscard]] ByteSink& sink() noexcept { return sink_; }
  /// Bytes handed to the sink so far plus those buffered.
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_ + pos_; }

 private:
  void reserve(std::size_t n) {
    if (kCapacity - pos_ < n) flush();
  }

  ByteSink& sink_;
  std::unique_ptr<char[]> buf_;
  std::size_t pos_ = 0;
  std::uint64_t bytes_ = 0;
};

/// Compression of a streamed result file.
enum class Compression : std::uint8_t { None, Gzip, Zstd };
/// "none" | "gzip" | "zstd"
inline constexpr EnumNames<Compression, 3> kCompressionNames{
    {{Compression::None, "none"}, {Compression::Gzip, "gzip"}, {Compression::Zstd, "zstd"}}};
[[nodiscard]] constexpr std::string_view to_string(Compression c) noexcept {
  return kCompressionNames.name(c);
}
/// The file-name suffix a compressed file gets: "", ".gz", ".zst".
[[nodiscard]] std::string_view file_suffix(Compression c) noexcept;
/// A compressor writing to `next` (nullptr for Compression::None). Deterministic: the gzip
/// header carries no time stamp or name, so identical input gives identical files.
[[nodiscard]] std::unique_ptr<ByteSink> make_compressor(Compression c, ByteSink& next);

}  // namespace gpumux
