// Declared plug-in parameters: each plug-in (policy first) lists its parameters (name, type,
// unit, default, help) next to its registration, and reads its params object through that
// list (gpumux/io/params.hpp, ParamReader), so the documentation (`gpumux list policies
// --params`), the default and the parsing come from one place.
//
// Thread rules: ParamSpec lists are immutable after start-up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "gpumux/api/enum_names.hpp"
#include "gpumux/api/time.hpp"

namespace gpumux {

enum class ParamType : std::uint8_t { Int, Number, Bool, Choice, Duration };
inline constexpr EnumNames<ParamType, 5> kParamTypeNames{{{ParamType::Int, "int"},
                                                          {ParamType::Number, "number"},
                                                          {ParamType::Bool, "bool"},
                                                          {ParamType::Choice, "choice"},
                                                          {ParamType::Duration, "duration"}}};

/// A declared default, in the parameter's own unit (1000 for a quantum_us of 1 ms): an Int's
/// int64, a Number's or a Duration's double, a Bool's bool, a Choice's name; monostate means
/// "no default": the plug-in derives the value (help says how).
using ParamDefault = std::variant<std::monostate, std::int64_t, double, bool, std::string>;

/// One declared parameter.
struct ParamSpec {
  std::string name;
  ParamType type = ParamType::Number;
  std::string unit;  ///< "us", "ms", "s", "GiB", or "" for none
  ParamDefault default_value;
  std::string help;
  std::vector<std::string> choices;  ///< the valid names of a Choice, in table order
};
using ParamSpecs = std::vector<ParamSpec>;

/// Builders that keep declarations one line each.
namespace param {
ParamSpec integer(std::string name, std::int64_t fallback, std::string help);
ParamSpec number(std::string name, std::string unit, std::optional<double> fallback,
                 std::string help);
ParamSpec flag(std::string name, bool fallback, std::string help);
ParamSpec duration(std::string name, TimeUnit unit, std::optional<double> fallback,
                   std::string help);
template <class E, std::size_t N>
ParamSpec choice(std::string name, const EnumNames<E, N>& names, E fallback, std::string help) {
  ParamSpec s{std::move(name),
              ParamType::Choice,
              "",
              std::string(names.name(fallback)),
              std::move(help),
              {}};
  for (const auto& e : names.entries) s.choices.emplace_back(e.name);
  return s;
}
}  // namespace param

/// A plug-in type's declared parameters: T::param_specs() when T has it, else none. The
/// registration macros (GPUMUX_REGISTER_POLICY, _PLATFORM) store this with the entry.
template <class T>
const ParamSpecs& plugin_param_specs() {
  if constexpr (requires { T::param_specs(); }) {
    return T::param_specs();
  } else {
    static const ParamSpecs none;
    return none;
  }
}

}  // namespace gpumux
