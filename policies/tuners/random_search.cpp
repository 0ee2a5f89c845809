// random_search: num_samples configs drawn uniformly (log-uniformly on log dimensions) from
// the search space, each run for max_epochs epochs; one TrialGroup.
//
// Faithfulness notes: Bergstra & Bengio, JMLR 2012; Ray Tune's BasicVariantGenerator draws each
// sampled dimension independently (as we recall; not verified). num_samples 81 and max_epochs 81
// match the grid and Hyperband defaults (our choice).
#include "tuners/fixed_budget.hpp"

namespace gpumux::tuners {
namespace {

class RandomSearch final : public FixedBudgetTuner {
 public:
  explicit RandomSearch(const TunerArgs& args)
      : FixedBudgetTuner(args, param_specs(), "num_samples") {}
  [[nodiscard]] std::string_view name() const noexcept override { return "random_search"; }

  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs =
        fixed_budget_specs(param::integer("num_samples", 81, "configs drawn"));
    return specs;
  }

 protected:
  std::vector<nlohmann::json> configs() override {
    std::vector<nlohmann::json> out;
    out.reserve(static_cast<std::size_t>(count()));
    for (int i = 0; i < count(); ++i) out.push_back(space_.sample(rng_));
    return out;
  }
};

GPUMUX_REGISTER_TUNER("random_search", RandomSearch, "num_samples random configs, one group");

}  // namespace
}  // namespace gpumux::tuners
