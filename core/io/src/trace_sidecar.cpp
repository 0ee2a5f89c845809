// Escaping values for, and strictly reading, an import's .SOURCE (trace_sidecar.hpp).
#include "gpumux/io/trace_sidecar.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/input_file.hpp"

namespace gpumux {
namespace {

// A .SOURCE is a few hundred bytes; anything far larger is not one gpumux wrote.
constexpr std::uint64_t kMaxSidecarBytes = std::uint64_t{1} << 20;

bool is_control(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

bool is_sha256_hex(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

std::filesystem::path import_sidecar_of(const std::filesystem::path& csv) {
  return std::filesystem::path(csv.string() + ".SOURCE");
}

std::string escape_sidecar_value(std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (is_control(c)) {
          const auto u = static_cast<unsigned char>(c);
          out += "\\x";
          out += kHex[u >> 4];
          out += kHex[u & 0xf];
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::optional<std::string> import_sidecar_data_sha256(const std::filesystem::path& csv) {
  const std::filesystem::path side = import_sidecar_of(csv);
  const std::string name = side.string();
  std::error_code ec;
  if (!std::filesystem::exists(side, ec)) return std::nullopt;
  std::string text;
  try {
    text = read_input_file(side, name, kMaxSidecarBytes, InputKind::Trace);
  } catch (const InputError&) {
    return std::nullopt;  // not a file gpumux wrote
  }
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kImportSidecarMarker) return std::nullopt;
  std::map<std::string, std::size_t, std::less<>> seen{{"written_by", 1}};
  std::optional<std::string> data_sha256;
  for (std::size_t number = 2; std::getline(in, line); ++number) {
    const std::string where = "line " + std::to_string(number);
    const auto colon = line.find(": ");
    if (colon == std::string::npos || colon == 0) {
      throw TraceError(name, where, "expected 'key: value'");
    }
    const std::string key = line.substr(0, colon);
    if (std::find(kImportSidecarKeys.begin(), kImportSidecarKeys.end(), key) ==
        kImportSidecarKeys.end()) {
      throw TraceError(
          name, where,
          "'" + escape_sidecar_value(key) + "' is not a key gpumux trace import writes");
    }
    if (const auto [it, fresh] = seen.emplace(key, number); !fresh) {
      throw TraceError(
          name, where,
          key + " appears a second time (first on line " + std::to_string(it->second) + ")");
    }
    if (std::any_of(line.begin(), line.end(), is_control)) {
      throw TraceError(name, where, "a raw control character (gpumux writes them escaped)");
    }
    if (key == "data_sha256") {
      data_sha256 = line.substr(colon + 2);
      if (!is_sha256_hex(*data_sha256)) {
        throw TraceError(name, where, "data_sha256: expected 64 lowercase hex digits");
      }
    }
  }
  return data_sha256;
}

}  // namespace gpumux
