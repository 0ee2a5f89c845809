// Fluid's water-filling allocations (Yu, Liu, Chowdhury, MLSys'21, Algorithms 1-2; code
// SymbioticLab/Fluid):
//   StaticFluid  (paper Algorithm 1) widths for a new TrialGroup on the idle GPUs, and its
//                list schedule (list_schedule.hpp) in the paper's order;
//   DynamicFluid (paper Algorithm 2) new widths for running trials when GPUs free up or the
//                cluster changes, with the elastic-resize cost eps;
//   FIFO         the baseline the paper compares with: Ray Tune's default, one trial per GPU in
//                submission order (paper §6.1; workloads/common/__init__.py);
//   packing_limit_c  the paper's rule for c from measured per-iteration times and O_th.
//
// Knobs and their sources:
//   c    max trials packed on one GPU. Paper: from O_th (packing_limit_c, §4.2.2). Default 2:
//        the executor's `c = 1/2` (packed width floor 1/2) and the band scheduler's "two models
//        per GPU" (fluid_executor.py, scheduler.py).
//   d    max GPUs per trial. Paper: from the Paleo model, no value. Default 4: executor
//        `d = 4`, band scheduler `MAX_WORKER = 4`.
//   eps  cost of one elastic resize, seconds. Named by the paper, no value; absent from the
//        code (resize = stop + restart). No default: the caller passes it (an assumption of
//        the experiment, e.g. the measured restart cost).
//   O_th packing threshold. Named by the paper, no value; absent from the code. No default.
// Units: seconds as double (trial_model.hpp), widths in GPUs. Pure functions; thread-safe.
// Throw std::invalid_argument on invalid input (empty GPU set, c == 0, d == 0, bad trial).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fluid/list_schedule.hpp"
#include "fluid/trial_model.hpp"

namespace gpumux::policies::fluid {

struct FluidKnobs {
  std::uint32_t c = 2;  ///< max trials per GPU (code: executor c = 1/2; band scheduler 2 per GPU)
  std::uint32_t d = 4;  ///< max GPUs per trial (code: executor d = 4; band MAX_WORKER = 4)
};

/// The paper's order: h_{i,1} descending; ties keep input order (stable, our choice).
[[nodiscard]] std::vector<std::size_t> fluid_order(std::span<const TrialModel> trials);

/// Algorithm 1's widths over `n_gpus`: share_i = h_{i,1} * n / sum_j h_{j,1};
/// w_i = floor(share_i) if share_i >= 1, else 1/c; then w_i = min(w_i, d). Indexed like
/// `trials`. If every h1 is 0 every trial gets 1/c (no water to share; our choice).
[[nodiscard]] std::vector<double> static_fluid_widths(std::span<const TrialModel> trials,
                                                      std::uint32_t n_gpus, FluidKnobs knobs);

struct FluidPlan {
  std::vector<double> widths;      ///< per trial (input index)
  std::vector<std::size_t> order;  ///< the list order (fluid_order)
  Schedule schedule;               ///< list_schedule(trials, widths, order, n)
};

/// StaticFluid: widths, then the list schedule in non-increasing width, packed trials next-fit
/// in decreasing height (h1 descending gives both: width is monotone in h1).
[[nodiscard]] FluidPlan static_fluid(std::span<const TrialModel> trials, std::uint32_t n_gpus,
                                     FluidKnobs knobs);

/// The baseline: every trial on one whole GPU, in submission (input) order.
[[nodiscard]] Schedule fifo_schedule(std::span<const TrialModel> trials, std::uint32_t n_gpus);

/// A running trial as DynamicFluid sees it: `remaining.h1_s` is the remaining runtime at width
/// 1 (seconds), `width` its current width (> 0).
struct RunningTrial {
  TrialModel remaining;
  double width = 1.0;
};

enum class Resize { keep, scale_up, scale_down };

struct DynamicDecision {
  double width = 0.0;  ///< the width to run at after the current iteration ends
  Resize action = Resize::keep;
};

/// Algorithm 2's resize test for one running trial moving from `t.width` to `new_width`, eps_s
/// = the cost of the resize in seconds:
///   scale up   if new_width > w and h_{new} + eps < h_{w}            (finishes sooner)
///   scale down if new_width < w and new_width * (h_{new} + eps) < w * h_{w}   (less area)
///   keep       otherwise (also when the widths are equal).
/// Heights are remaining runtimes (height_s of t.remaining). Throws std::invalid_argument for
/// a width <= 0 or eps < 0.
[[nodiscard]] DynamicDecision resize_decision(const RunningTrial& t, double new_width,
                                              double eps_s);

/// resize_decision for each trial against `new_widths` (same size; std::invalid_argument if
/// not), e.g. widths an executor planned over its waiting and running trials together.
[[nodiscard]] std::vector<DynamicDecision> resize_decisions(std::span<const RunningTrial> trials,
                                                            std::span<const double> new_widths,
                                                            double eps_s);

/// Algorithm 2 over `total_gpus` (all GPUs of the cluster, not only idle ones):
/// w'_i = static_fluid_widths(remaining, total_gpus, knobs)_i; then
///   scale up   if w'_i > w_i and h_{i,w'} + eps < h_{i,w}
///   scale down if w'_i < w_i and w'_i * (h_{i,w'} + eps) < w_i * h_{i,w}
///   keep       otherwise.
/// Heights are the remaining runtimes at the given widths. The decisions take effect at the end
/// of each trial's current iteration (the caller's job). The kept and new widths together may
/// exceed total_gpus; the caller applies scale-downs first and grants scale-ups as GPUs free.
[[nodiscard]] std::vector<DynamicDecision> dynamic_fluid(std::span<const RunningTrial> trials,
                                                         std::uint32_t total_gpus, FluidKnobs knobs,
                                                         double eps_s);

/// The paper's rule for c (Fluid §4.2.2): O_p = 1 - ((p-1)/p) * T_p / T_{p-1} for
/// p > 1, where T_p = mean per-iteration time of p co-located trials (avg_iter_s[p-1]); c is the
/// largest p with O_q > o_th for every q in 2..p (our reading: the paper writes "argmax_p O_p >
/// O_th"; we stop at the first p that fails). Returns 1 (no packing) if O_2 <= o_th. Throws if
/// avg_iter_s is empty or holds a value <= 0.
[[nodiscard]] std::uint32_t packing_limit_c(std::span<const double> avg_iter_s, double o_th);

}  // namespace gpumux::policies::fluid
