// Stage 1 ("offline packing") of the released code's FluidBandScheduler (dossier §2.6 b [C:
// SymbioticLab/Fluid fluid/scheduler.py, Stage1]): after Stage 0 ran every trial of a Hyperband
// bracket for one iteration, the trials are sorted by that iteration time, descending (stable:
// Python's sorted(reverse=True) [C my_bracket.py sort_by_runtime]), and placed by one of three
// branches, G = number of GPUs:
//
//   trials > G   MPS packing. Trial k (sorted) goes to GPU k mod G on even rounds (k div G
//                even) and G-1 - (k mod G) on odd rounds (serpentine). Its share is 0.6 while
//                the summed time of the trials before it is <= 50 % of the total, 0.4 after
//                (strict `>`: the trial that crosses 50 % still gets 0.6) [C].
//   trials == G  distributed bin packing. The top floor(G/2) trials get int(t_k / S) GPUs,
//                clipped to [1, min(MAX_WORKER, G)]; the others 1 GPU; GPUs handed out
//                round-robin from GPU 0, wrapping modulo G [C].
//   trials < G   even bin packing. add = trials with t_k > mean; extra = min(|add| * MAX_WORKER,
//                G) - trials; extra GPUs go one at a time round-robin over the sorted trials
//                that are in add and below MAX_WORKER; GPUs handed out contiguously from 0 [C].
//
// Quirks of the code, implemented as it runs (tag [C]), and where it differs from the paper
// (Algorithm 1 water-fills widths h1 * n / sum h1 and packs c per GPU [S]):
//   q1 (dist.) S is summed as sum(rt[-i] for i in range(G - G//2)); Python's rt[-0] is rt[0],
//      so S = the LONGEST time plus the G - G//2 - 1 shortest. Then t_k / S < 1 for every k
//      (t_k <= t_0 < S when G >= 3; S = t_0 when G = 2), int() gives 0, the clip gives 1: the
//      branch always hands out one GPU per trial. `intended_small_sum` sums the G - G//2
//      shortest instead (our reading of the intent [D]), which can give the top trials more
//      GPUs; then the round-robin wraps and two trials hold the same GPU.
//   q2 (MPS) Shares on one GPU are not checked: with more than 2 trials per GPU, or two 0.6
//      shares on one GPU, they sum above 1. Ray's per-GPU custom resource has capacity 1 [C
//      ray_custom_gpu_res.py], so such a trial waits until its GPU's earlier trial ends.
//   q3 (even) extra subtracts the trial count from min(|add| * MAX_WORKER, G) instead of the
//      GPUs already given: with few long trials some GPUs stay idle (G = 8, 2 trials, 1 long:
//      extra = 4 - 2 = 2, so 3 GPUs + 1 GPU busy, 4 idle).
//   q4 Shares are 0.6/0.4 constants, not 1/c; widths ignore the water level; a trial never
//      exceeds MAX_WORKER = 4 GPUs (paper: d from Paleo) [C vs S].
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
  double long_share = 0.6;       ///< MPS share of the long trials [C scheduler.py _mps_packing]
  double short_share = 0.4;      ///< MPS share after the long ones [C]
  double long_fraction = 0.5;    ///< "long" until predecessors' time > 50 % of the total [C]
  std::uint32_t max_worker = 4;  ///< MAX_WORKER, GPUs per trial cap [C "HARDCODE optimal worker"]
  bool intended_small_sum = false;  ///< false = the code's rt[-0] sum (q1); true = [D] reading
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
