// The builders of parameter declarations (param_spec.hpp).
#include "gpumux/api/param_spec.hpp"

namespace gpumux {

namespace param {

ParamSpec integer(std::string name, std::int64_t fallback, std::string help) {
  return ParamSpec{std::move(name), ParamType::Int, "", fallback, std::move(help), {}};
}

ParamSpec number(std::string name, std::string unit, std::optional<double> fallback,
                 std::string help) {
  return ParamSpec{std::move(name), ParamType::Number,
                   std::move(unit), fallback ? ParamDefault(*fallback) : ParamDefault(),
                   std::move(help), {}};
}

ParamSpec flag(std::string name, bool fallback, std::string help) {
  return ParamSpec{std::move(name), ParamType::Bool, "", fallback, std::move(help), {}};
}

ParamSpec duration(std::string name, TimeUnit unit, std::optional<double> fallback,
                   std::string help) {
  return ParamSpec{std::move(name),
                   ParamType::Duration,
                   std::string(kTimeUnitNames.name(unit)),
                   fallback ? ParamDefault(*fallback) : ParamDefault(),
                   std::move(help),
                   {}};
}

}  // namespace param

}  // namespace gpumux
