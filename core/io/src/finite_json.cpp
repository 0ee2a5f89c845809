// null_non_finite (finite_json.hpp).
#include "gpumux/io/finite_json.hpp"

#include <cmath>
#include <string>

namespace gpumux {
namespace {

// RFC 6901: "~" is written "~0" and "/" is written "~1" inside a pointer's token.
std::string pointer_token(const std::string& key) {
  std::string out;
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

void walk(nlohmann::json& v, const std::string& pointer, nlohmann::json& found) {
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d)) return;
    found[pointer.empty() ? std::string("/") : pointer] = std::isnan(d) ? "nan"
                                                          : d > 0       ? "inf"
                                                                        : "-inf";
    v = nullptr;
  } else if (v.is_object()) {
    for (auto& [key, child] : v.items()) walk(child, pointer + "/" + pointer_token(key), found);
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) walk(v[i], pointer + "/" + std::to_string(i), found);
  }
}

}  // namespace

nlohmann::json null_non_finite(nlohmann::json& doc) {
  nlohmann::json found = nlohmann::json::object();
  walk(doc, "", found);
  return found;
}

}  // namespace gpumux
