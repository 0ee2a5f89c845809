// Byte sinks and the output buffer's number formats (byte_sink.hpp). Compressors live in
// compressors.cpp.
#include "gpumux/io/byte_sink.hpp"

#include <cmath>
#include <ostream>

#include <nlohmann/json.hpp>

namespace gpumux {

void OstreamSink::write(const char* data, std::size_t n) {
  out_.write(data, static_cast<std::streamsize>(n));
}

namespace {

/// JSON's two-character escape of `c` ("\\n" for a newline), or empty when it has none.
constexpr std::string_view short_escape(char c) noexcept {
  switch (c) {
    case '\b':
      return "\\b";
    case '\t':
      return "\\t";
    case '\n':
      return "\\n";
    case '\f':
      return "\\f";
    case '\r':
      return "\\r";
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    default:
      return {};
  }
}

}  // namespace

void OutBuf::put_json_chars(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (const std::string_view e = short_escape(c); !e.empty()) {
      put(e);
    } else if (u < 0x20) {
      const char esc[] = {'\\', 'u', '0', '0', kHex[u >> 4], kHex[u & 15]};
      put(std::string_view(esc, sizeof esc));
    } else {
      put(c);
    }
  }
}

void OutBuf::put_shortest(double v) {
  if (!std::isfinite(v)) {  // JSON has no NaN or infinity (to_chars would write "nan")
    put(std::string_view("null"));
    return;
  }
  reserve(32);
  pos_ = static_cast<std::size_t>(std::to_chars(buf_.get() + pos_, buf_.get() + kCapacity, v).ptr -
                                  buf_.get());
}

void OutBuf::put_json_double(double v) {
  if (!std::isfinite(v)) {
    put(std::string_view("null"));
    return;
  }
  reserve(64);
  // nlohmann's own formatter (what json::dump calls), so the streamed trace matches the
  // JSON tree byte for byte: shortest round-trip digits, ".0" on integral values, exponent
  // form outside 1e-5..1e15.
  char* end = nlohmann::detail::to_chars(buf_.get() + pos_, buf_.get() + kCapacity, v);
  pos_ = static_cast<std::size_t>(end - buf_.get());
}

std::string_view file_suffix(Compression c) noexcept {
  static constexpr EnumNames<Compression, 3> kSuffixes{
      {{Compression::None, ""}, {Compression::Gzip, ".gz"}, {Compression::Zstd, ".zst"}}};
  return kSuffixes.name(c);
}

}  // namespace gpumux
