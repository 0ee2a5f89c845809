// Job progress: pure functions of a job's state and model. Cursor arithmetic (which layers
// the next op covers, where the cursor stands after it), the bytes a job moves and holds, and
// the cost estimates policies ask for. Nothing here changes state or emits events.
//
// Internal to gpumux_engine (the engine's dispatch path calls these per op, hence inline).
// Units: bytes, nanoseconds. Thread rules: none (pure).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "gpumux/api/job_state.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/op_cost_memo.hpp"

namespace gpumux::progress {

/// Device bytes a job keeps per weight byte: the weights alone (inference), or weights,
/// gradients and optimizer slots (training).
[[nodiscard]] inline std::uint64_t state_factor(const JobState& s) noexcept {
  return s.training() ? 2 + optimizer_slots(s.spec->optimizer) : 1;
}

/// The layers an op dispatched at cursor `c` covers: `layers` of them (0: the rest of the
/// pass), the whole model for an update.
[[nodiscard]] inline LayerRange range_for(const JobState& s, const Cursor& c,
                                          std::uint32_t layers) noexcept {
  const std::uint32_t n_layers = s.model->layer_count();
  if (c.pass == Pass::Update) return LayerRange{0, n_layers};
  const std::uint32_t left = n_layers - c.layers_done;
  const std::uint32_t n = layers == 0 ? left : std::min(layers, left);
  if (c.pass == Pass::Forward) return LayerRange{c.layers_done, c.layers_done + n};
  return LayerRange{n_layers - c.layers_done - n, n_layers - c.layers_done};  // backward
}

/// The cursor after an op of `layers` layers at `c`; sets `*ends_unit` when that op ends
/// the iteration or request. A unit that is a batch of `unit_step` requests moves the cursor
/// past all of them (D38).
[[nodiscard]] inline Cursor advance(const JobState& s, Cursor c, std::uint32_t layers,
                                    bool* ends_unit, std::uint32_t unit_step = 1) noexcept {
  const std::uint32_t n_layers = s.model->layer_count();
  *ends_unit = false;
  if (c.pass == Pass::Update) {
    *ends_unit = true;
    return Cursor{c.unit + 1, Pass::Forward, 0};
  }
  c.layers_done += layers;
  if (c.layers_done < n_layers) return c;
  if (c.pass == Pass::Forward && s.training()) return Cursor{c.unit, Pass::Backward, 0};
  if (c.pass == Pass::Backward) return Cursor{c.unit, Pass::Update, 0};
  *ends_unit = true;
  return Cursor{c.unit + unit_step, Pass::Forward, 0};
}

/// The cursor of a unit started over (after an abort loses the unit in progress).
[[nodiscard]] inline Cursor unit_start(const Cursor& completed) noexcept {
  return Cursor{completed.unit, Pass::Forward, 0};
}

/// Bytes copied to bring `range` onto a device: weights, plus optimizer slots for training
/// (gradients are produced on the device, not copied).
[[nodiscard]] inline std::uint64_t load_bytes(const JobState& s, LayerRange range) {
  const std::uint64_t w = s.model->weight_bytes(range);
  return s.training() ? w * (1 + optimizer_slots(s.spec->optimizer)) : w;
}

/// Bytes the job's whole state holds on a device while placed there.
[[nodiscard]] inline std::uint64_t persistent_bytes(const JobState& s) {
  return s.model->weight_bytes() * state_factor(s);
}

/// Bytes of activations an open unit holds (saturating, so an absurd model cannot look small):
/// the unit's batch of requests (JobState::open_batch) for inference.
[[nodiscard]] std::uint64_t ephemeral_bytes(const JobState& s) noexcept;
/// The same for a unit serving `requests` requests.
[[nodiscard]] std::uint64_t ephemeral_bytes(const JobState& s, std::uint32_t requests) noexcept;

/// The kernels of the op at cursor `c` over `r`, from the device's cost memo (a data-parallel
/// job's at its per-GPU batch).
[[nodiscard]] inline OpKernels op_kernels(const JobState& s, OpCostMemo& costs, const Cursor& c,
                                          LayerRange r) {
  if (c.pass == Pass::Update) return costs.update_kernels(*s.model, s.spec->optimizer);
  return costs.op_kernels(*s.model, r, s.samples_per_gpu(), c.pass, s.inference());
}

/// Solo time of the next op of `layers` layers (0: the rest of the pass).
[[nodiscard]] DurationNs estimate_next_ns(const JobState& s, OpCostMemo& costs,
                                          std::uint32_t layers);
/// Solo time of one whole unit (forward; training adds backward and update, and on several
/// GPUs the gradient all-reduce; compute at the per-GPU batch).
[[nodiscard]] DurationNs estimate_unit_ns(const JobState& s, OpCostMemo& costs);

}  // namespace gpumux::progress
