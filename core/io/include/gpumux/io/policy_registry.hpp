// Where policies register (name -> factory) and what a factory is given: the config's
// policy.params, read through the policy's declared parameters (gpumux/io/params.hpp).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/api/policy.hpp"
#include "gpumux/api/registry.hpp"

namespace gpumux {

struct PolicyArgs {
  nlohmann::json params = nlohmann::json::object();  ///< the config's policy.params
  std::string file;                                  ///< config file, for error messages
};

using PolicyRegistry = Registry<Policy, const PolicyArgs&>;

/// Registers policy TYPE under NAME, with the parameters TYPE::param_specs() declares.
#define GPUMUX_REGISTER_POLICY(NAME, TYPE, SUMMARY)                                               \
  [[maybe_unused]] static const bool gpumux_policy_registered_##TYPE =                            \
      ::gpumux::PolicyRegistry::instance().add(                                                   \
          NAME, SUMMARY, [](const ::gpumux::PolicyArgs& a) { return std::make_unique<TYPE>(a); }, \
          ::gpumux::plugin_param_specs<TYPE>())

}  // namespace gpumux
