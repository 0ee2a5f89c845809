// Declared plug-in parameters: each plug-in (policy first) lists its parameters (name, type,
// unit, default, help) next to its registration, and reads its params object through that
// list with ParamReader, so the documentation (`gpumux list policies --params`), the default
// and the parsing come from one place. A key the list does not declare is refused.
//
// Thread rules: ParamSpec lists are immutable after start-up; a ParamReader belongs to one
// thread.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/api/enum_names.hpp"
#include "gpumux/api/param_spec.hpp"
#include "gpumux/api/time.hpp"
#include "gpumux/io/json_reader.hpp"

namespace gpumux {

/// Which ends of a number range belong to it: [low, high], (low, high], [low, high), (low, high).
enum class Ends : std::uint8_t { Closed, OpenLow, OpenHigh, Open };

/// A parameter's declared default as JSON (null when it has none).
[[nodiscard]] nlohmann::json param_default_json(const ParamSpec& spec);

/// "name  type [unit]  default  help" lines, one per parameter (`gpumux list ... --params`).
[[nodiscard]] std::string describe_params(const ParamSpecs& specs, std::string_view indent);

/// Reads a plug-in's params object through its declaration. Every getter names a declared
/// parameter of the matching type (anything else is a programming error: gpumux::Error) and
/// returns the declared default when the key is absent. Input errors are ConfigErrors naming
/// the file and key path, as JsonReader's; finish() refuses undeclared keys and lists the
/// declared ones.
class ParamReader {
 public:
  ParamReader(const nlohmann::json& params, std::string file, std::string path,
              const ParamSpecs& specs);

  [[nodiscard]] bool has(const std::string& name) const { return reader_.has(name); }
  [[nodiscard]] std::int64_t integer(const std::string& name);
  [[nodiscard]] double number(const std::string& name);
  /// For a Number declared without a default: nullopt when absent.
  [[nodiscard]] std::optional<double> optional_number(const std::string& name);
  [[nodiscard]] bool flag(const std::string& name);
  /// Durations follow JsonReader::required_duration (>= 0 or > 0, at most 1e9 units, rounded
  /// to the nearest ns).
  [[nodiscard]] DurationNs duration(const std::string& name, Sign sign = Sign::NonNegative);
  /// For a Duration declared without a default: nullopt when absent.
  [[nodiscard]] std::optional<DurationNs> optional_duration(const std::string& name,
                                                            Sign sign = Sign::NonNegative);
  template <class E, std::size_t N>
  [[nodiscard]] E choice(const std::string& name, const EnumNames<E, N>& names) {
    const ParamSpec& s = spec(name, ParamType::Choice);
    const auto fallback = names.parse(std::get<std::string>(s.default_value));
    if (!fallback) throw Error("parameter '" + name + "': default is not a valid name");
    return reader_.choice_or(name, names, *fallback);
  }

  /// An Int in [min, max] as a T, checked as written before it is narrowed (JsonReader::
  /// integer_in), else ConfigError "<key>: must be an integer in [1, 65536], got 0". The
  /// declared default must lie in the range too.
  template <std::integral T = std::int64_t>
  [[nodiscard]] T integer_in(const std::string& name, std::int64_t min, std::int64_t max) {
    check_integer_range<T>(min, max);
    return static_cast<T>(integer_in_range(name, min, max));
  }
  /// An Int >= `min` that fits T: integer_in over [min, the largest T].
  template <std::integral T = std::int64_t>
  [[nodiscard]] T integer_at_least(const std::string& name, std::int64_t min) {
    constexpr auto kTop = std::numeric_limits<T>::max();
    constexpr std::int64_t kMax = std::in_range<std::int64_t>(kTop)
                                      ? static_cast<std::int64_t>(kTop)
                                      : std::numeric_limits<std::int64_t>::max();
    return integer_in<T>(name, min, kMax);
  }
  /// A Number in the range from `low` to `high` whose ends `ends` says, else ConfigError
  /// "<key>: must be in (0, 1]".
  [[nodiscard]] double number_in(const std::string& name, double low, double high,
                                 Ends ends = Ends::Closed);

  /// Number constraints, as JsonReader's ("must be > 0, got -1.0").
  double positive(const std::string& name, double v) const { return reader_.positive(name, v); }

  [[noreturn]] void fail(const std::string& name, const std::string& problem) const {
    reader_.fail(name, problem);
  }
  /// Throws ConfigError "<file>: <path>.<key>: unknown key (valid keys: a, b, c)".
  void finish() const;

 private:
  const ParamSpec& spec(const std::string& name, ParamType type) const;
  [[nodiscard]] std::int64_t integer_in_range(const std::string& name, std::int64_t min,
                                              std::int64_t max);

  JsonReader reader_;
  const nlohmann::json& params_;
  const ParamSpecs& specs_;
};

}  // namespace gpumux
