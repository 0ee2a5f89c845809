// Shared parameters of the Hyperband-family tuners (band_params.hpp).
#include "tuners/band_params.hpp"

namespace gpumux::tuners {

ParamSpecs band_param_specs(std::int64_t max_epochs, bool concurrent_brackets,
                            std::int64_t max_concurrent) {
  return ParamSpecs{
      param::integer("eta", 3, "reduction factor (Li et al.'s eta)"),
      param::integer("min_epochs", 1, "smallest budget r_min, epochs"),
      param::integer("max_epochs", max_epochs, "largest budget R, epochs"),
      param::flag("concurrent_brackets", concurrent_brackets,
                  "open all brackets of a round at once (else one after another)"),
      param::integer("max_concurrent", max_concurrent, "running trials at most (0: no cap)"),
      param::integer("rounds", 1, "passes over the bracket list (0: until the target)")};
}

BandOptions read_band_options(const TunerArgs& args, const ParamSpecs& specs) {
  ParamReader p(args.params, args.file, args.path, specs);
  BandOptions o;
  o.eta = static_cast<int>(p.integer("eta"));
  const auto r_min = static_cast<int>(p.integer("min_epochs"));
  o.max_epochs = static_cast<int>(p.integer("max_epochs"));
  o.concurrent_brackets = p.flag("concurrent_brackets");
  o.max_concurrent = static_cast<int>(p.integer("max_concurrent"));
  o.rounds = static_cast<int>(p.integer("rounds"));
  p.finish();
  if (o.eta < 2) p.fail("eta", "must be >= 2");
  if (r_min < 1 || o.max_epochs < r_min)
    p.fail("max_epochs", "needs 1 <= min_epochs <= max_epochs");
  if (o.max_concurrent < 0) p.fail("max_concurrent", "must be >= 0");
  if (o.rounds < 0) p.fail("rounds", "must be >= 0");
  o.brackets = hyperband_brackets(o.eta, r_min, o.max_epochs);
  return o;
}

}  // namespace gpumux::tuners
