// The dispatch command (Context::dispatch, declared in engine_impl.hpp): a job's next compute
// op. Inference units may batch several waiting requests (D38); a dynamic service's ops are
// planned from their unit's members' drawn work (engine_serving.cpp, plan_pieces): layers past
// the batch's deepest exit run nothing, and a compacting early-exit model's op may be several
// chained ops. Every check comes before the first side effect
// (D21); only OutOfMemory comes after them, from the activations, before anything else changes.
#include <algorithm>
#include <span>
#include <string>

#include "command_helpers.hpp"
#include "engine_impl.hpp"

namespace gpumux {

namespace {

/// The compute purpose of a pass.
OpPurpose purpose_of(Pass pass) {
  return pass == Pass::Forward    ? OpPurpose::Forward
         : pass == Pass::Backward ? OpPurpose::Backward
                                  : OpPurpose::Update;
}

}  // namespace

OpHandle EngineImpl::dispatch(JobId job, StreamId stream, DispatchOptions options) {
  JobState& s = active_job(job, "dispatch");
  check_stream(stream, "dispatch");
  if (options.setup_ns < 0) fail("dispatch", "negative setup_ns");
  check_issued(options.after, "dispatch");
  const DeviceId device = streams_[index_of(stream)].device;
  if (!s.has_dispatchable_work()) {
    fail("dispatch", "job " + job_label(*s.spec) + " has no work to dispatch (" +
                         (s.training() ? "all iterations dispatched" : "no pending request") + ")");
  }
  // The unit's batch of requests: chosen by its first op, kept by the others (D38).
  const bool unit_start = s.dispatched.pass == Pass::Forward && s.dispatched.layers_done == 0;
  std::uint32_t members = 1;
  if (s.training()) {
    if (options.requests > 1) fail("dispatch", "requests > 1 batches an inference service");
  } else if (unit_start) {
    members = std::max<std::uint32_t>(1, options.requests);
    if (members > s.requests_waiting()) {
      fail("dispatch", "a batch of " + std::to_string(members) + " requests of job " +
                           job_label(*s.spec) + ", but " + std::to_string(s.requests_waiting()) +
                           " are waiting");
    }
  } else {
    members = s.open_batch;
    if (options.requests != 0 && options.requests != members) {
      fail("dispatch", "the unit in progress of job " + job_label(*s.spec) + " serves " +
                           std::to_string(members) + " requests; a later op keeps that batch");
    }
  }
  const LayerRange range = progress::range_for(s, s.dispatched, options.layers);
  // One op over `range`, unless a dynamic service's members decide otherwise (plan_pieces;
  // the common path stays free of it: dispatch is the engine's hottest command).
  const OpPiece single{s.model, range, s.spec->batch * (s.training() ? 1 : members)};
  const bool planned = s.inference() && s.spec->dynamic;
  if (planned) plan_pieces(s, range, members, pieces_);
  const std::span<const OpPiece> pieces =
      planned ? std::span<const OpPiece>(pieces_) : std::span<const OpPiece>(&single, 1);
  LayerRange needed = s.training() ? LayerRange{0, s.model->layer_count()} : pieces.front().layers;
  if (planned) needed.last = std::max(needed.last, pieces.back().layers.last);
  // Training state must be whole on the device; inference needs the layers it runs.
  if (!s.resident_or_loading(device, needed)) {
    fail("dispatch", "weights of job " + job_label(*s.spec) + " layers [" +
                         std::to_string(needed.first) + ", " + std::to_string(needed.last) +
                         ") are not on device " + std::to_string(raw(device)) +
                         " (load or migrate them first)");
  }
  auto& res = s.residency[index_of(device)];
  if (members > 1 && is_gpu(device) && res.activations.valid() && res.ops_in_flight > 0 &&
      res.activations.bytes < progress::ephemeral_bytes(s, members)) {
    fail("dispatch", "a batch of " + std::to_string(members) + " requests of job " +
                         job_label(*s.spec) +
                         " needs more activation memory than its batch in flight holds; "
                         "dispatch it when that batch completes");
  }

  const Pass pass = s.dispatched.pass;
  OpSpec spec = op_spec(job, device, stream, OpKind::Compute, purpose_of(pass));
  add_context_dep(spec, stream, "dispatch");
  if (s.has_last_op) add_dep(spec, s.last_op, "dispatch");
  // Wait for the loads (or migration) bringing in these layers.
  for (std::uint32_t i = needed.first; res.loading > 0 && i < needed.last; ++i) {
    if (res.layers[i] == Residency::Loading) add_dep(spec, res.loading_op[i], "dispatch");
  }
  for (const OpHandle& h : options.after) {
    if (h.valid()) add_dep(spec, h.op, "dispatch");
  }

  // Every check passed: only now allocate the activations (may throw OutOfMemory).
  placement_.ensure_activations(s, device, members);
  s.open_batch = members;
  OpCostMemo& costs = cost_memos_[index_of(device)];
  s.device = device;
  OpId id{};
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const OpPiece& piece = pieces[i];
    const bool last = i + 1 == pieces.size();
    if (i > 0) {
      spec = op_spec(job, device, stream, OpKind::Compute, purpose_of(pass));
      add_dep(spec, id, "dispatch");  // the previous piece: a compacted batch runs in order
    }
    spec.model = piece.model;
    spec.layers = piece.layers;
    spec.pass = pass;
    spec.batch = piece.batch;
    spec.inference = s.inference();
    const OpCostMemo::Compute cost =
        pass == Pass::Update
            ? costs.update_compute(*s.model, s.spec->optimizer)
            : costs.op_compute(*piece.model, piece.layers, piece.batch, pass, s.inference());
    const OpKernels& kernels = cost.kernels;
    spec.solo_ns = kernels.solo_ns();
    spec.kernels = kernels.kernels;
    spec.gpu_ns = kernels.gpu_ns;
    spec.kernel_wait_ns = cost.kernel_wait_ns;  // divided once per op shape (memo)
    spec.kernel_wait_priority_ns = cost.kernel_wait_priority_ns;
    spec.setup_ns = i == 0 ? options.setup_ns : 0;
    spec.demand = cost.demand;
    if (is_gpu(device)) {
      spec.layer_offsets = res.offsets.data();
      spec.state_factor = static_cast<std::uint32_t>(progress::state_factor(s));
      spec.activation_offset = res.activations.offset;
    }
    OpInfo info = OpInfo::of(spec);
    info.before = s.dispatched;
    info.batch_requests = members;
    info.after = info.before;
    if (last) {
      info.after = progress::advance(s, s.dispatched, range.size(), &info.ends_unit, members);
    }
    info.counts_in_flight = true;
    if (last) s.dispatched = info.after;
    id = new_op(spec, info);
  }
  s.last_op = id;
  s.has_last_op = true;
  return OpHandle{id, true};
}

}  // namespace gpumux
