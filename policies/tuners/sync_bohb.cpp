// sync_bohb: Fluid's SyncBOHB (fluid/syncbohb.py, a subclass of Ray's HyperBandForBOHB):
// BOHB's brackets processed synchronously, one bracket after another, with at most
// max_concurrent trials running at once; a rung's paused trials are promoted only when every
// trial of the rung has finished it, i.e. when nothing of the bracket runs.
//
// Faithfulness notes: at most NUM_WORKER (default 4) running trials per bracket, and paused
// brackets processed only when nothing runs (SymbioticLab/Fluid fluid/syncbohb.py), hence
// max_concurrent 4 and sequential brackets; eta 3, R 81 (workloads/tune_syncbohb_*.py). Configs
// drawn uniformly: BOHB's TPE/KDE sampler is not implemented (see bohb.cpp). Under the cap, a
// rung's trials are released a few at a time and each release is its own TrialGroup (our choice).
#include "tuners/band_params.hpp"

namespace gpumux::tuners {
namespace {

// R 81, brackets one after another, at most 4 running trials (notes above).
constexpr BandDefaults kSyncBohb{"sync_bohb", 81, false, 4};
using SyncBohb = BandPlugin<kSyncBohb>;

GPUMUX_REGISTER_TUNER(kSyncBohb.name, SyncBohb,
                      "Fluid's SyncBOHB: sequential brackets, at most 4 running trials");

}  // namespace
}  // namespace gpumux::tuners
