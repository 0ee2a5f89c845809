// The makespan of a Fluid allocation under the trial model (trial_model.hpp): list scheduling of
// rectangles (fixed width per trial) on n identical GPUs, the placement StaticFluid's proof uses
// (Fluid, MLSys'21, Algorithm 1 and App. A: trials that do not fit wait and start when any GPU
// frees).
//
// Rules (the paper names list scheduling and next-fit shelves; the details are our choice):
//   - A whole-GPU trial (integer w >= 1) takes the w lowest-indexed GPUs that hold nothing.
//   - A packed trial (w < 1) takes room on a GPU already holding packed trials and with at least
//     w free (lowest index first: next-fit, so c trials of width 1/c fill one GPU before the next
//     opens, the paper's shelves); otherwise the lowest-indexed empty GPU. A slot freed by a
//     finished packed trial is refilled by the next packed trial in the list (a shelf is not
//     held until its tallest member ends).
//   - At time 0 and at every completion, the list is scanned in order and every trial that fits
//     starts (Graham's greedy list scheduling: a trial that does not fit does not block later
//     ones). A started trial runs to its end at its own rate h_{i,w}; packed neighbours do not
//     slow it beyond alpha (no interference beyond the model).
// Times are seconds as double, from 0 (the group's start). Pure function; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fluid/trial_model.hpp"

namespace gpumux::policies::fluid {

/// Where and when one trial runs.
struct Placement {
  std::vector<std::uint32_t> gpus;  ///< GPU indices in [0, n): w of them, or 1 if packed
  double start_s = 0.0;
  double end_s = 0.0;
};

/// One placement per trial, indexed like the input trials.
struct Schedule {
  std::vector<Placement> trials;
  double makespan_s = 0.0;  ///< max end_s (0 for no trials)
};

/// True if w is a width list_schedule accepts on n GPUs: 0 < w < 1, or w an integer in [1, n].
[[nodiscard]] bool placeable_width(double width, std::uint32_t n_gpus);

/// List-schedules `trials` with `widths` (same size) in the list order `order` (a permutation
/// of 0..size-1) on `n_gpus` GPUs. Throws std::invalid_argument for mismatched sizes, a bad
/// permutation, n_gpus == 0, an invalid trial, or a width that placeable_width rejects.
[[nodiscard]] Schedule list_schedule(std::span<const TrialModel> trials,
                                     std::span<const double> widths,
                                     std::span<const std::size_t> order, std::uint32_t n_gpus);

}  // namespace gpumux::policies::fluid
