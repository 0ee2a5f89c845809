// Optimizer slots and names (work.hpp).
#include "gpumux/api/work.hpp"

#include <string>

#include "gpumux/api/errors.hpp"

namespace gpumux {

std::uint32_t optimizer_slots(Optimizer o) noexcept {
  switch (o) {
    case Optimizer::Sgd:
      return 0;
    case Optimizer::Momentum:
      return 1;
    case Optimizer::Adam:
      return 2;
  }
  return 0;
}

Optimizer parse_optimizer(std::string_view text) {
  if (const auto o = kOptimizerNames.parse(text)) return *o;
  throw UsageError("unknown optimizer '" + std::string(text) +
                   "'; valid names: " + kOptimizerNames.list());
}

}  // namespace gpumux
