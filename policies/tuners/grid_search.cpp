// grid_search: every point of the search space's grid (SearchSpace::grid) runs max_epochs
// epochs; one TrialGroup. Choice dimensions contribute their values, numeric dimensions
// points_per_dim evenly spaced values (log-spaced for log-uniform ones).
//
// Faithfulness notes: Fluid's microbenchmarks use grid spaces of 81/27/9/3 configs
// (SymbioticLab/Fluid workloads/grid_search_space.py); 3 points per dimension over 4 dimensions
// gives 81. max_epochs 81 as the Hyperband settings (our choice). Trials run in grid order (first
// dimension slowest), as we recall Ray Tune's grid_search variant generator expands them (not
// verified).
#include <cstdint>
#include <string>

#include "gpumux/api/errors.hpp"
#include "tuners/fixed_budget.hpp"

namespace gpumux::tuners {
namespace {

class GridSearch final : public FixedBudgetTuner {
 public:
  explicit GridSearch(const TunerArgs& args)
      : FixedBudgetTuner(args, param_specs(), "points_per_dim") {
    // Counted before the grid is built: 100 points over 7 dimensions would be 10^14 configs.
    if (space_.grid_size(count()) > static_cast<std::uint64_t>(kMaxTunerCount)) {
      throw ConfigError(args.file, args.path + ".points_per_dim",
                        "the grid has more than " + std::to_string(kMaxTunerCount) +
                            " points (the most trials a tuning job may have)");
    }
  }
  [[nodiscard]] std::string_view name() const noexcept override { return "grid_search"; }

  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs = fixed_budget_specs(
        param::integer("points_per_dim", 3, "grid values per numeric dimension"));
    return specs;
  }

 protected:
  std::vector<nlohmann::json> configs() override { return space_.grid(count()); }
};

GPUMUX_REGISTER_TUNER("grid_search", GridSearch, "every grid point for max_epochs, one group");

}  // namespace
}  // namespace gpumux::tuners
