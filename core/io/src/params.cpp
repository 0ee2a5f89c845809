// Declared plug-in parameters: builders, the listing, and reading through a declaration.
#include "gpumux/io/params.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <type_traits>
#include <variant>

#include "gpumux/api/errors.hpp"

namespace gpumux {

nlohmann::json param_default_json(const ParamSpec& spec) {
  return std::visit(
      [](const auto& v) -> nlohmann::json {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
          return nullptr;
        } else {
          return v;
        }
      },
      spec.default_value);
}

std::string describe_params(const ParamSpecs& specs, std::string_view indent) {
  std::ostringstream out;
  for (const ParamSpec& s : specs) {
    std::string type(kParamTypeNames.name(s.type));
    if (!s.unit.empty()) type += " [" + s.unit + "]";
    if (!s.choices.empty()) {
      type += " {";
      for (std::size_t i = 0; i < s.choices.size(); ++i) type += (i ? "|" : "") + s.choices[i];
      type += "}";
    }
    const nlohmann::json value = param_default_json(s);
    const std::string fallback = value.is_null()     ? "-"
                                 : value.is_string() ? value.get<std::string>()
                                                     : value.dump();
    out << indent << std::left << std::setw(24) << s.name << ' ' << std::setw(34) << type << ' '
        << "default " << std::setw(10) << fallback << ' ' << s.help << '\n';
  }
  return out.str();
}

ParamReader::ParamReader(const nlohmann::json& params, std::string file, std::string path,
                         const ParamSpecs& specs)
    : reader_(params, std::move(file), std::move(path)), params_(params), specs_(specs) {}

const ParamSpec& ParamReader::spec(const std::string& name, ParamType type) const {
  const auto it = std::find_if(specs_.begin(), specs_.end(),
                               [&](const ParamSpec& s) { return s.name == name; });
  if (it == specs_.end()) throw Error("parameter '" + name + "' is read but not declared");
  if (it->type != type) {
    throw Error("parameter '" + name + "' is declared " +
                std::string(kParamTypeNames.name(it->type)) + " but read as " +
                std::string(kParamTypeNames.name(type)));
  }
  return *it;
}

std::int64_t ParamReader::integer(const std::string& name) {
  const ParamSpec& s = spec(name, ParamType::Int);
  return reader_.int_or(name, std::get<std::int64_t>(s.default_value));
}

double ParamReader::number(const std::string& name) {
  const ParamSpec& s = spec(name, ParamType::Number);
  if (std::holds_alternative<std::monostate>(s.default_value))
    throw Error("parameter '" + name + "' has no default");
  return reader_.number_or(name, std::get<double>(s.default_value));
}

std::optional<double> ParamReader::optional_number(const std::string& name) {
  spec(name, ParamType::Number);
  if (!reader_.has(name)) return std::nullopt;
  return reader_.required_number(name);
}

bool ParamReader::flag(const std::string& name) {
  const ParamSpec& s = spec(name, ParamType::Bool);
  return reader_.bool_or(name, std::get<bool>(s.default_value));
}

DurationNs ParamReader::duration(const std::string& name, Sign sign) {
  const ParamSpec& s = spec(name, ParamType::Duration);
  if (std::holds_alternative<std::monostate>(s.default_value))
    throw Error("parameter '" + name + "' has no default");
  const auto unit = kTimeUnitNames.parse(s.unit);
  if (!reader_.has(name)) return duration_to_ns(std::get<double>(s.default_value), *unit);
  return reader_.required_duration(name, *unit, sign);
}

std::optional<DurationNs> ParamReader::optional_duration(const std::string& name, Sign sign) {
  const ParamSpec& s = spec(name, ParamType::Duration);
  if (!reader_.has(name)) return std::nullopt;
  return reader_.required_duration(name, *kTimeUnitNames.parse(s.unit), sign);
}

std::int64_t ParamReader::integer_in_range(const std::string& name, std::int64_t min,
                                           std::int64_t max) {
  const ParamSpec& s = spec(name, ParamType::Int);
  if (!has(name)) {
    const std::int64_t fallback = std::get<std::int64_t>(s.default_value);
    if (fallback < min || fallback > max) {
      throw Error("parameter '" + name + "': default " + std::to_string(fallback) +
                  " is outside its range");
    }
    return fallback;
  }
  return reader_.required_int_in(name, min, max);
}

double ParamReader::number_in(const std::string& name, double low, double high, Ends ends) {
  const double v = number(name);
  const bool open_low = ends == Ends::OpenLow || ends == Ends::Open;
  const bool open_high = ends == Ends::OpenHigh || ends == Ends::Open;
  const bool above_low = open_low ? v > low : v >= low;
  const bool below_high = open_high ? v < high : v <= high;
  if (!(above_low && below_high)) {
    std::ostringstream range;  // default formatting: 0, 0.5, 100
    range << (open_low ? '(' : '[') << low << ", " << high << (open_high ? ')' : ']');
    fail(name, "must be in " + range.str());
  }
  return v;
}

void ParamReader::finish() const {
  for (const auto& item : params_.items()) {
    const std::string& key = item.key();  // a named copy: clang cannot capture a binding
    const bool declared = std::any_of(specs_.begin(), specs_.end(),
                                      [&](const ParamSpec& s) { return s.name == key; });
    if (declared) continue;
    std::string valid;
    for (const ParamSpec& s : specs_) valid += (valid.empty() ? "" : ", ") + s.name;
    reader_.fail(key, "unknown key (valid keys: " + (valid.empty() ? "none" : valid) + ")");
  }
  reader_.finish();  // a declared key that the plug-in never read is still refused
}

}  // namespace gpumux
