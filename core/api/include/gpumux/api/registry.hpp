// Name -> factory registries for plug-ins (policies, platforms, arrival generators). Each kind
// has one registry living in a function-local static (no static-initialisation-order issue);
// plug-ins register from their own .cpp through a static bool, and are linked as OBJECT
// libraries so the linker never drops a registrar. An entry also holds the plug-in's declared
// parameters (gpumux/api/param_spec.hpp), for `gpumux list <kind> --params`.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/param_spec.hpp"

namespace gpumux {

template <class Base, class... Args>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Base>(Args...)>;
  struct Entry {
    std::string summary;
    Factory factory;
    ParamSpecs params;
  };

  static Registry& instance() {
    static Registry registry;
    return registry;
  }

  /// Registers `name`; returns true so it can initialise a static. A duplicate name is a
  /// programming error and aborts the registration with an exception at start-up.
  bool add(std::string name, std::string summary, Factory factory, ParamSpecs params = {}) {
    if (entries_.count(name) != 0) throw Error("duplicate registration of '" + name + "'");
    entries_.emplace(std::move(name),
                     Entry{std::move(summary), std::move(factory), std::move(params)});
    return true;
  }

  [[nodiscard]] bool contains(std::string_view name) const {
    return entries_.find(std::string(name)) != entries_.end();
  }

  /// Creates `name`; throws UsageError listing the valid names when it is unknown.
  [[nodiscard]] std::unique_ptr<Base> create(std::string_view name, Args... args) const {
    auto it = entries_.find(std::string(name));
    if (it == entries_.end()) throw UsageError(unknown_message(name));
    return it->second.factory(std::forward<Args>(args)...);
  }

  [[nodiscard]] std::string unknown_message(std::string_view name) const {
    std::string msg = "unknown name '" + std::string(name) + "'; valid names: ";
    bool first = true;
    for (const auto& [known, entry] : entries_) {
      msg += (first ? "" : ", ") + known;
      first = false;
    }
    return msg;
  }

  /// Registered names, sorted.
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, entry] : entries_) out.push_back(name);
    return out;
  }

  [[nodiscard]] const std::string& summary(std::string_view name) const {
    return entries_.at(std::string(name)).summary;
  }

  /// The parameters `name` declared at registration (empty when it takes none).
  [[nodiscard]] const ParamSpecs& params(std::string_view name) const {
    return entries_.at(std::string(name)).params;
  }

 private:
  Registry() = default;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace gpumux
