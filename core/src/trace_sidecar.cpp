// Reading the data digest of an import's .SOURCE (trace_sidecar.hpp).
#include "gpumux/trace_sidecar.hpp"

#include <sstream>

#include "gpumux/errors.hpp"
#include "gpumux/input_file.hpp"

namespace gpumux {
namespace {

// A .SOURCE is a few hundred bytes; anything far larger is not one gpumux wrote.
constexpr std::uint64_t kMaxSidecarBytes = std::uint64_t{1} << 20;
constexpr std::string_view kDataKey = "data_sha256: ";

}  // namespace

std::filesystem::path import_sidecar_of(const std::filesystem::path& csv) {
  return std::filesystem::path(csv.string() + ".SOURCE");
}

std::optional<std::string> import_sidecar_data_sha256(const std::filesystem::path& csv) {
  const std::filesystem::path side = import_sidecar_of(csv);
  std::error_code ec;
  if (!std::filesystem::exists(side, ec)) return std::nullopt;
  std::string text;
  try {
    text = read_input_file(side, side.string(), kMaxSidecarBytes, InputKind::Trace);
  } catch (const InputError&) {
    return std::nullopt;  // not a file gpumux wrote
  }
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kImportSidecarMarker) return std::nullopt;
  while (std::getline(in, line)) {
    if (line.rfind(kDataKey, 0) == 0) return line.substr(kDataKey.size());
  }
  return std::nullopt;
}

}  // namespace gpumux
