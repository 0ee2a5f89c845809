// Stage 1 ("offline packing") of the released code's FluidBandScheduler (SymbioticLab/Fluid
// fluid/scheduler.py, Stage1): after Stage 0 ran every trial of a Hyperband bracket for one
// iteration, the trials are sorted by that iteration time, descending (stable, as Python's
// sorted(reverse=True) in fluid/my_bracket.py), and placed by one of three branches, G = number
// of GPUs:
//
// trials > G: serpentine MPS packing, shares 0.6 then 0.4 (after half the summed time); trials ==
// G: distributed bin packing, the top floor(G/2) trials get int(t_k / S) GPUs clipped to [1,
// min(MAX_WORKER, G)]; trials < G: even bin packing, extra GPUs round-robin to the longer-than-mean
// trials. The code's quirks q1-q4 are implemented as it runs (q1: its rt[-0] sum gives every trial
// one GPU; `intended_small_sum` is our reading of the intent); the exact rules, the quirks and
// where they differ from the paper's Algorithm 1: docs/policies/fluid.md, "Band scheduler Stage 1".
//
// Units: iteration times in seconds (any positive unit works: only ratios and sums matter).
// Pure function; thread-safe. Throws std::invalid_argument for no trials, no GPUs, or a time
// that is not > 0 (the code would divide by zero or sort NaN).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace gpumux::policies::fluid {

struct BandKnobs {
  double long_share = 0.6;          ///< MPS share of the long trials (scheduler.py _mps_packing)
  double short_share = 0.4;         ///< MPS share after the long ones (same)
  double long_fraction = 0.5;       ///< "long" until predecessors' time > 50 % of the total (same)
  std::uint32_t max_worker = 4;     ///< MAX_WORKER, GPUs per trial cap ("HARDCODE optimal worker")
  bool intended_small_sum = false;  ///< false = the code's rt[-0] sum (q1); true = our reading
};

enum class BandBranch { mps_packing, distributed_bin_packing, even_bin_packing };

/// One GPU a trial holds and the fraction of it (1 = whole GPU).
struct BandSlot {
  std::uint32_t gpu = 0;
  double share = 1.0;
};

struct BandPacking {
  BandBranch branch = BandBranch::mps_packing;
  std::vector<std::size_t> order;            ///< trial indices, iteration time descending
  std::vector<std::vector<BandSlot>> slots;  ///< per trial (input index), in hand-out order
};

/// Stage 1 placement of trials with profiled per-iteration times `iter_s` on `n_gpus` GPUs.
[[nodiscard]] BandPacking band_stage1_packing(std::span<const double> iter_s, std::uint32_t n_gpus,
                                              BandKnobs knobs = {});

}  // namespace gpumux::policies::fluid
