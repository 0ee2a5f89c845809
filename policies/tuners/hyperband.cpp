// hyperband: Li et al. JMLR 2018, Algorithm 1. Brackets s = s_max..0 of successive halving,
// bracket s starting n = ceil(B/R * eta^s/(s+1)) random configs at r = R*eta^-s epochs
// (eta 3, R 81: n = 81, 34, 15, 8, 5; r = 1, 3, 9, 27, 81). Brackets run one after another.
//
// Faithfulness notes: bracket table as Li et al. Algorithm 1; inside a bracket, rung sizes
// ceil(n_{k-1}/eta) and budgets min(r_{k-1}*eta, R) as Fluid's fluid/my_bracket.py, where Li et al.
// use floor(n*eta^-i). eta = 3, R = 81 (243 for WLM) as the Fluid baseline scripts'
// HyperBandScheduler (SymbioticLab/Fluid workloads/tune_hb_*.py); r_min = 1 epoch (our choice). Ray
// Tune's HyperBandScheduler fills brackets as the trial runner creates trials, so brackets overlap;
// set concurrent_brackets and max_concurrent (= GPUs) for that behaviour; the default is the
// paper's sequential loop. rounds 0 repeats the loop until the target is reached, as the Fluid
// runs' num_samples = 1e10 with a MetricStopper (workloads/common/__init__.py).
#include "tuners/band_params.hpp"

namespace gpumux::tuners {
namespace {

// R 81, brackets one after another, no concurrency cap (notes above).
constexpr BandDefaults kHyperband{"hyperband", 81, false, 0};
using Hyperband = BandPlugin<kHyperband>;

GPUMUX_REGISTER_TUNER(kHyperband.name, Hyperband,
                      "Hyperband: successive-halving brackets one after another (Li et al. 2018)");

}  // namespace
}  // namespace gpumux::tuners
