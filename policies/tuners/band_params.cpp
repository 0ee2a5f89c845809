// Shared parameters of the Hyperband-family tuners (band_params.hpp).
#include "tuners/band_params.hpp"

#include "gpumux/io/params.hpp"
#include "tuners/tuner_params.hpp"

namespace gpumux::tuners {

ParamSpecs band_param_specs(std::int64_t max_epochs, bool concurrent_brackets,
                            std::int64_t max_concurrent) {
  return ParamSpecs{
      eta_param("reduction factor (Li et al.'s eta)"),
      min_epochs_param("smallest budget r_min, epochs"),
      max_epochs_param(max_epochs, "largest budget R, epochs"),
      param::flag("concurrent_brackets", concurrent_brackets,
                  "open all brackets of a round at once (else one after another)"),
      param::integer("max_concurrent", max_concurrent, "running trials at most (0: no cap)"),
      param::integer("rounds", 1, "passes over the bracket list (0: until the target)")};
}

BandOptions read_band_options(const TunerArgs& args, const ParamSpecs& specs) {
  return read_tuner_params(args, specs, [](ParamReader& p) {
    BandOptions o;
    o.eta = read_eta(p);
    const EpochRange epochs = read_epoch_range(p);
    o.max_epochs = epochs.max_epochs;
    o.concurrent_brackets = p.flag("concurrent_brackets");
    o.max_concurrent = read_count(p, "max_concurrent", 0);
    o.rounds = read_count(p, "rounds", 0);
    o.brackets = hyperband_brackets(o.eta, epochs.min_epochs, o.max_epochs);
    return o;
  });
}

}  // namespace gpumux::tuners
