// PipeSwitch's model-aware grouping (OSDI'20 §4.2; docs/policies/pipeswitch.md): split a
// model's layers into consecutive groups, copy each group with one call on the copy stream and
// compute it on the compute stream as soon as its bytes have arrived and the previous group has
// finished. Pure functions of per-layer costs: no Context, no clock, deterministic.
//
// Cost of a grouping (our model of the pipeline), for groups 1..G in execution order:
//   S_i = sum_{k<=i} (o_c + o_h + sum_{j in group k} t_j)   group i may compute
//   C_i = max(C_{i-1}, S_i) + o_s + sum_{j in group i} e_j,  C_0 = 0
//   predicted time = C_G
// with t_j = layer j's bytes / bandwidth, e_j its compute time, o_c the per-copy call cost, o_h the
// host time per group during which the copy engine idles, and o_s the per-group cost before a group
// computes. In the artifact's form (netx-repo/PipeSwitch pipeswitch/frontend_schedule.py,
// _transfer_parameter) the controller issues a copy (Python), blocks on an event synchronize until
// it is done, sends a pipe message to the worker and only then issues the next copy: o_h = Python
// issue + event-sync wake-up + one-way message, the worker may start group i once the message
// arrived (S_i) and pays its recv (o_s). In the CUDA-backend form (event_wait) copies run back to
// back (o_h = 0) and o_s is an event wait. Both are the same recurrence, so one search serves both.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "gpumux/api/time.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux::policies::pipeswitch {

/// One layer as the grouping sees it.
struct LayerCost {
  DurationNs transfer_ns = 0;  ///< t_j: its bytes over the host link, without the call cost
  DurationNs compute_ns = 0;   ///< e_j: its forward time as one op (device or host launch)
};

/// Fixed costs paid once per group.
struct GroupOverheads {
  DurationNs copy_call_ns = 0;  ///< o_c: one copy call (cudaMemcpyAsync)
  DurationNs sync_ns = 0;       ///< o_s: host cost before the group computes, once it may
  /// o_h: host time per group that keeps the copy engine idle (0: copies back to back).
  DurationNs copy_gap_ns = 0;
};

/// Group start indices: the first is 0, strictly increasing, all < layer count.
using GroupStarts = std::vector<std::uint32_t>;

/// Finish time C_G of the pipelined transfer + compute of `layers` under `starts`.
/// Throws std::invalid_argument for starts that are not a valid partition.
[[nodiscard]] DurationNs predicted_time(std::span<const LayerCost> layers,
                                        std::span<const std::uint32_t> starts,
                                        GroupOverheads overheads);

/// Finish time without pipelining: every group is copied, then all of them compute.
[[nodiscard]] DurationNs predicted_sequential_time(std::span<const LayerCost> layers,
                                                   std::span<const std::uint32_t> starts,
                                                   GroupOverheads overheads);

struct SearchOptions {
  /// Heuristic 1: cut a branch whose lower bound on the finish time cannot beat the best.
  bool bound_pruning = true;
  /// Heuristic 2: skip group ends whose next layer's bytes would still arrive before the GPU
  /// finishes the previous group (growing such a group is free).
  bool min_size_pruning = true;
  /// gpumux's addition (not in the paper): cut a partial grouping whose (S, C) is no better in
  /// both than one already explored at the same layer. Exact, and what keeps the search fast
  /// on 300-layer models (without it Inception-v4 at batch 1 runs for minutes).
  bool dominance_pruning = true;
};

struct SearchStats {
  std::uint64_t nodes = 0;            ///< partial groupings visited
  std::uint64_t pruned_by_bound = 0;  ///< branches cut by heuristic 1
  std::uint64_t skipped_by_size = 0;  ///< group ends skipped by heuristic 2
  std::uint64_t pruned_by_dominance = 0;
};

struct GroupingResult {
  GroupStarts starts;
  DurationNs time_ns = 0;
  SearchStats stats;
};

/// The grouping with the smallest predicted_time(): depth-first enumeration of the next
/// group's end with PipeSwitch's two pruning heuristics plus a dominance check (all exact, see
/// grouping.cpp).
[[nodiscard]] GroupingResult optimal_grouping(std::span<const LayerCost> layers,
                                              GroupOverheads overheads, SearchOptions options = {});

/// Exhaustive reference over all 2^(n-1) partitions (tests only). Throws
/// std::invalid_argument above kBruteForceMaxLayers layers.
inline constexpr std::size_t kBruteForceMaxLayers = 24;
[[nodiscard]] GroupingResult brute_force_grouping(std::span<const LayerCost> layers,
                                                  GroupOverheads overheads);

/// The trivial groupings.
[[nodiscard]] GroupStarts per_layer_starts(std::size_t layers);
[[nodiscard]] GroupStarts whole_model_starts(std::size_t layers);

/// Per-layer costs of an inference forward pass of `model` at `batch` on a device: t_j from
/// the pinned host link, e_j = the layer's solo time as one op: the larger of its device time
/// (kernels plus launches) and its host launch time (per-kernel framework overhead plus
/// launch); aux layers, skipped at inference, cost 0. A group's op takes the larger of the
/// sums, so when some layers are host-bound the prediction is an upper bound (exact with no
/// framework overhead, as in the PipeSwitch experiments).
[[nodiscard]] std::vector<LayerCost> inference_layer_costs(const Model& model,
                                                           const CostModel& cost,
                                                           std::uint32_t batch);

/// o_c = the profile's per-copy latency; o_s = `sync_ns`; o_h = `copy_gap_ns`.
[[nodiscard]] GroupOverheads group_overheads(const CostModel& cost, DurationNs sync_ns,
                                             DurationNs copy_gap_ns = 0);

}  // namespace gpumux::policies::pipeswitch
