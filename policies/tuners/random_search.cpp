// random_search: num_samples configs drawn uniformly (log-uniformly on log dimensions) from
// the search space, each run for max_epochs epochs; one TrialGroup.
//
// Faithfulness notes: Bergstra & Bengio, JMLR 2012 [S]; Ray Tune's BasicVariantGenerator
// draws each sampled dimension independently [R]. num_samples 81 and max_epochs 81 match the
// grid and Hyperband defaults [D].
#include "tuners/fixed_budget.hpp"

namespace gpumux::tuners {
namespace {

class RandomSearch final : public FixedBudgetTuner {
 public:
  explicit RandomSearch(const TunerArgs& args) : RandomSearch(args, read(args)) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "random_search"; }

  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs{param::integer("num_samples", 81, "configs drawn"),
                                  param::integer("max_epochs", 81, "epochs every trial runs")};
    return specs;
  }

 protected:
  std::vector<nlohmann::json> configs() override {
    std::vector<nlohmann::json> out;
    out.reserve(static_cast<std::size_t>(samples_));
    for (int i = 0; i < samples_; ++i) out.push_back(space_.sample(rng_));
    return out;
  }

 private:
  struct Read {
    int samples;
    int max_epochs;
  };
  static Read read(const TunerArgs& args) {
    ParamReader p(args.params, args.file, args.path, param_specs());
    const Read r{static_cast<int>(p.integer("num_samples")),
                 static_cast<int>(p.integer("max_epochs"))};
    p.finish();
    if (r.samples < 1) p.fail("num_samples", "must be >= 1");
    if (r.max_epochs < 1) p.fail("max_epochs", "must be >= 1");
    return r;
  }
  RandomSearch(const TunerArgs& args, Read r)
      : FixedBudgetTuner(args, r.max_epochs), samples_(r.samples) {}

  int samples_;
};

GPUMUX_REGISTER_TUNER("random_search", RandomSearch, "num_samples random configs, one group");

}  // namespace
}  // namespace gpumux::tuners
