// successive_halving: one bracket of successive halving (Jamieson & Talwalkar, AISTATS 2016;
// Li et al. JMLR 2018's inner loop). num_samples random configs run min_epochs epochs; when a
// rung is complete the best ceil(n/eta) continue to eta times the epochs, up to max_epochs.
//
// Faithfulness notes: rung sizes n_k = ceil(n_{k-1}/eta) and budgets r_k = min(r_{k-1}*eta, max)
// follow Fluid's fluid/my_bracket.py; Li et al. use floor(n * eta^-k) (equal whenever eta divides
// n). Promotion waits for the whole rung (synchronous), and each rung is one TrialGroup (our model
// of Fluid's band scheduler, whose group is a bracket). eta = 3 is the value of every Fluid
// experiment (SymbioticLab/Fluid workloads/tune_*.py); max_epochs 81 their Hyperband max_t;
// num_samples 81 = eta^4, the most exploratory Hyperband bracket of that setting. Configs: uniform
// random.
#include "gpumux/io/params.hpp"
#include "tuners/band_tuner.hpp"
#include "tuners/tuner_params.hpp"

namespace gpumux::tuners {
namespace {

class SuccessiveHalving final : public BandTuner {
 public:
  explicit SuccessiveHalving(const TunerArgs& args) : BandTuner(args, options(args)) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "successive_halving"; }

  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs{param::integer("num_samples", 81, "trials in rung 0"),
                                  eta_param("reduction factor: 1/eta of a rung is promoted"),
                                  min_epochs_param("epochs of rung 0"),
                                  max_epochs_param(81, "epochs of the last rung")};
    return specs;
  }

 private:
  static BandOptions options(const TunerArgs& args) {
    return read_tuner_params(args, param_specs(), [](ParamReader& p) {
      BandOptions o;
      const int n = read_count(p, "num_samples", 1);
      o.eta = read_eta(p);
      const EpochRange epochs = read_epoch_range(p);
      o.max_epochs = epochs.max_epochs;
      o.brackets = {BracketShape{n, epochs.min_epochs}};
      return o;
    });
  }
};

GPUMUX_REGISTER_TUNER("successive_halving", SuccessiveHalving,
                      "one synchronous successive-halving bracket (Jamieson & Talwalkar 2016)");

}  // namespace
}  // namespace gpumux::tuners
