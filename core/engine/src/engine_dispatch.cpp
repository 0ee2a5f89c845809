// The dispatch command (Context::dispatch, declared in engine_impl.hpp): a job's next compute
// op. Inference units may batch several waiting requests (D38); a dynamic service's ops are
// planned from their unit's members' drawn work (engine_serving.cpp, plan_pieces): layers past
// the batch's deepest exit run nothing, and a compacting early-exit model's op may be several
// chained ops. A training job on several GPUs (set_replicas) issues each op on every replica,
// with its all-reduce and barrier around the update (dispatch_replicated). Every check comes
// before the first side effect
// (D21); only OutOfMemory comes after them, from the activations, before anything else changes.
#include <algorithm>
#include <span>
#include <string>
#include <vector>

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

std::uint32_t EngineImpl::training_unit(const JobState& s, const DispatchOptions& options) const {
  if (options.requests > 1) {
    fail("dispatch",
         "requests > 1 batches an inference service; job " + job_label(*s.spec) + " trains");
  }
  return 1;
}

inline std::uint32_t EngineImpl::batch_of(const JobState& s, const DispatchOptions& options) const {
  // The unit's batch of requests: chosen by its first op, kept by the others (D38).
  if (s.dispatched.pass == Pass::Forward && s.dispatched.layers_done == 0) {
    const std::uint32_t members = std::max<std::uint32_t>(1, options.requests);
    if (members > 1 && members > s.requests_waiting()) {
      fail("dispatch", "a batch of " + std::to_string(members) + " requests of job " +
                           job_label(*s.spec) + ", but " + std::to_string(s.requests_waiting()) +
                           " are waiting");
    }
    return members;
  }
  if (options.requests != 0 && options.requests != s.open_batch) {
    fail("dispatch", "the unit in progress of job " + job_label(*s.spec) + " serves " +
                         std::to_string(s.open_batch) + " requests; a later op keeps that batch");
  }
  return s.open_batch;
}

inline void EngineImpl::check_dispatch_memory(const JobState& s, DeviceId device, LayerRange needed,
                                              std::uint32_t members) const {
  if (!s.resident_or_loading(device, needed)) {
    fail("dispatch", "weights of job " + job_label(*s.spec) + " layers [" +
                         std::to_string(needed.first) + ", " + std::to_string(needed.last) +
                         ") are not on device " + std::to_string(raw(device)) +
                         " (load or migrate them first)");
  }
  const auto& res = s.residency[index_of(device)];
  if (members > 1 && is_gpu(device) && res.activations.valid() && res.ops_in_flight > 0 &&
      res.activations.bytes < progress::ephemeral_bytes(s, members)) {
    fail("dispatch", "a batch of " + std::to_string(members) + " requests of job " +
                         job_label(*s.spec) +
                         " needs more activation memory than its batch in flight holds; "
                         "dispatch it when that batch completes");
  }
}

inline OpSpec EngineImpl::compute_spec(const JobState& s, StreamId stream, DeviceId device,
                                       LayerRange needed, const DispatchOptions& options) const {
  OpSpec spec = op_spec(s.id, device, stream, OpKind::Compute, purpose_of(s.dispatched.pass));
  add_context_dep(spec, stream, "dispatch");
  if (s.has_last_op) add_dep(spec, s.last_op, "dispatch");
  // Wait for the loads (or migration) bringing in these layers.
  const auto& res = s.residency[index_of(device)];
  for (std::uint32_t i = needed.first; res.loading > 0 && i < needed.last; ++i) {
    if (res.layers[i] == Residency::Loading) add_dep(spec, res.loading_op[i], "dispatch");
  }
  for (const OpHandle& h : options.after) {
    if (h.valid()) add_dep(spec, h.op, "dispatch");
  }
  return spec;
}

inline OpId EngineImpl::issue_compute(JobState& s, OpSpec& spec, const OpPiece& piece,
                                      DurationNs setup_ns, std::uint32_t advance_layers,
                                      std::uint32_t members, bool replica) {
  const Pass pass = s.dispatched.pass;
  const DeviceId device = spec.device;
  spec.model = piece.model;
  spec.layers = piece.layers;
  spec.pass = pass;
  spec.batch = s.training() ? s.samples_per_gpu() : piece.batch;
  spec.inference = s.inference();
  OpCostMemo& costs = cost_memos_[index_of(device)];
  const OpCostMemo::Compute cost =
      pass == Pass::Update
          ? costs.update_compute(*s.model, s.spec->optimizer)
          : costs.op_compute(*piece.model, piece.layers, spec.batch, pass, s.inference());
  const OpKernels& kernels = cost.kernels;
  spec.solo_ns = kernels.solo_ns();
  spec.kernels = kernels.kernels;
  spec.gpu_ns = kernels.gpu_ns;
  spec.kernel_wait_ns = cost.kernel_wait_ns;  // divided once per op shape (memo)
  spec.kernel_wait_priority_ns = cost.kernel_wait_priority_ns;
  spec.setup_ns = setup_ns;
  spec.demand = cost.demand;
  auto& res = s.residency[index_of(device)];
  if (is_gpu(device)) {
    spec.layer_offsets = res.offsets.data();
    spec.state_factor = static_cast<std::uint32_t>(progress::state_factor(s));
    spec.activation_offset = res.activations.offset;
  }
  OpInfo info = OpInfo::of(spec);
  info.before = s.dispatched;
  info.batch_requests = members;
  info.counts_in_flight = true;
  info.replica = replica;
  // A planned batch's earlier pieces leave the cursor where it is; the last one moves it.
  info.after = advance_layers == 0
                   ? info.before
                   : progress::advance(s, s.dispatched, advance_layers, &info.ends_unit, members);
  s.dispatched = info.after;
  return new_op(spec, info);
}

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
  const std::uint32_t members = s.training() ? training_unit(s, options) : batch_of(s, options);
  const LayerRange range = progress::range_for(s, s.dispatched, options.layers);
  if (s.inference() && s.spec->dynamic) [[unlikely]] {
    return dispatch_planned(s, stream, device, options, range, members);
  }
  if (s.replica_streams.size() > 1) [[unlikely]] {
    return dispatch_replicated(s, stream, options, range);
  }
  // One op over `range` (the common path: dispatch is the engine's hottest command).
  // Training state must be whole on the device; inference needs the layers it runs.
  const LayerRange needed = s.training() ? LayerRange{0, s.model->layer_count()} : range;
  check_dispatch_memory(s, device, needed, members);
  OpSpec spec = compute_spec(s, stream, device, needed, options);
  // Every check passed: only now allocate the activations (may throw OutOfMemory).
  placement_.ensure_activations(s, device, members);
  s.open_batch = members;
  s.device = device;
  const OpId id = issue_compute(s, spec, OpPiece{s.model, range, s.spec->batch * members},
                                options.setup_ns, range.size(), members);
  s.last_op = id;
  s.has_last_op = true;
  return OpHandle{id, true};
}

OpHandle EngineImpl::dispatch_planned(JobState& s, StreamId stream, DeviceId device,
                                      const DispatchOptions& options, LayerRange range,
                                      std::uint32_t members) {
  plan_pieces(s, range, members, pieces_);
  const LayerRange needed{pieces_.front().layers.first, pieces_.back().layers.last};
  check_dispatch_memory(s, device, needed, members);
  OpSpec spec = compute_spec(s, stream, device, needed, options);
  placement_.ensure_activations(s, device, members);
  s.open_batch = members;
  s.device = device;
  OpId id{};
  for (std::size_t i = 0; i < pieces_.size(); ++i) {
    if (i > 0) {
      spec = op_spec(s.id, device, stream, OpKind::Compute, purpose_of(s.dispatched.pass));
      add_dep(spec, id, "dispatch");  // the previous piece: a compacted batch runs in order
    }
    const bool last = i + 1 == pieces_.size();
    id = issue_compute(s, spec, pieces_[i], i == 0 ? options.setup_ns : 0, last ? range.size() : 0,
                       members);
  }
  s.last_op = id;
  s.has_last_op = true;
  return OpHandle{id, true};
}

OpHandle EngineImpl::dispatch_replicated(JobState& s, StreamId stream,
                                         const DispatchOptions& options, LayerRange range) {
  const std::size_t w = s.replica_streams.size();
  if (stream != s.replica_streams[0]) {
    fail("dispatch", "job " + job_label(*s.spec) + " trains on " + std::to_string(w) +
                         " GPUs: dispatch it on its primary stream " +
                         std::to_string(raw(s.replica_streams[0])) + " (set_replicas)");
  }
  const LayerRange all{0, s.model->layer_count()};
  for (const DeviceId d : s.replica_devices) check_dispatch_memory(s, d, all, 1);
  const bool update = s.dispatched.pass == Pass::Update;
  // Each replica's op waits for the job's previous op there; an update waits for its
  // replica's all-reduce instead (added below: a slot is kept free for it).
  std::vector<OpSpec> specs;
  specs.reserve(w);
  for (std::size_t i = 0; i < w; ++i) {
    const StreamId st = s.replica_streams[i];
    const DeviceId dev = s.replica_devices[i];
    OpSpec spec = op_spec(s.id, dev, st, OpKind::Compute, purpose_of(s.dispatched.pass));
    add_context_dep(spec, st, "dispatch");
    const bool has_last = i == 0 ? s.has_last_op : s.replica_has_last[i];
    if (has_last && !update) add_dep(spec, i == 0 ? s.last_op : s.replica_last_op[i], "dispatch");
    const auto& res = s.residency[index_of(dev)];
    for (std::uint32_t l = 0; res.loading > 0 && l < all.last; ++l) {
      if (res.layers[l] == Residency::Loading) add_dep(spec, res.loading_op[l], "dispatch");
    }
    for (const OpHandle& h : options.after) {
      if (h.valid()) add_dep(spec, h.op, "dispatch");
    }
    if (update && spec.after.size() >= DepList::kCapacity) {
      fail("dispatch", "an op may wait for at most " + std::to_string(DepList::kCapacity) +
                           " unfinished ops, one of them the all-reduce; wait for fewer");
    }
    specs.push_back(spec);
  }
  // Every check passed: the activations on every replica (all or none: OutOfMemory).
  std::vector<bool> fresh(w, false);
  try {
    for (std::size_t i = 0; i < w; ++i) {
      fresh[i] = !s.residency[index_of(s.replica_devices[i])].activations.valid();
      placement_.ensure_activations(s, s.replica_devices[i], 1);
    }
  } catch (const OutOfMemory&) {
    for (std::size_t i = 0; i < w; ++i) {
      if (fresh[i]) placement_.release_activations(s, s.replica_devices[i]);
    }
    throw;
  }
  s.open_batch = 1;
  s.device = s.replica_devices[0];
  const OpPiece piece{s.model, range, s.samples_per_gpu()};
  if (!update) {
    // Replicas first (their ops leave the cursor), then the primary's, which moves it.
    for (std::size_t i = 1; i < w; ++i) {
      s.replica_last_op[i] = issue_compute(s, specs[i], piece, options.setup_ns, 0, 1, true);
      s.replica_has_last[i] = true;
    }
    s.last_op = issue_compute(s, specs[0], piece, options.setup_ns, range.size(), 1, false);
    s.has_last_op = true;
    return OpHandle{s.last_op, true};
  }
  // The update pass: the gradient all-reduce on every replica once every backward pass has
  // ended, each replica's update after it, then a barrier that ends the iteration.
  const Cursor at = s.dispatched;
  std::vector<OpId> ops;
  for (std::size_t i = 0; i < w; ++i) {
    const bool has_last = i == 0 ? s.has_last_op : s.replica_has_last[i];
    if (has_last) ops.push_back(i == 0 ? s.last_op : s.replica_last_op[i]);
  }
  if (ops.size() > DepList::kCapacity) {
    // One barrier over every backward pass, which each all-reduce waits for.
    ops = {host_op(s, s.replica_streams[0], OpPurpose::Barrier, 0, ops, at, at, false)};
  }
  for (std::size_t i = 0; i < w; ++i) {
    const OpId reduce =
        host_op(s, s.replica_streams[i], OpPurpose::AllReduce, s.allreduce_ns, ops, at, at, false);
    add_dep(specs[i], reduce, "dispatch");  // a slot was kept free above
  }
  std::vector<OpId> updates(w);
  for (std::size_t i = 0; i < w; ++i) {
    updates[i] = issue_compute(s, specs[i], piece, options.setup_ns, 0, 1, true);
    if (i > 0) s.replica_last_op[i] = updates[i];
    if (i > 0) s.replica_has_last[i] = true;
  }
  bool ends_unit = false;
  const Cursor next = progress::advance(s, at, range.size(), &ends_unit, 1);
  s.last_op = host_op(s, s.replica_streams[0], OpPurpose::Barrier, 0, updates, at, next, true);
  s.has_last_op = true;
  s.dispatched = next;
  return OpHandle{s.last_op, true};
}

}  // namespace gpumux
