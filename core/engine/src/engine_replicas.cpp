// Data-parallel training: the set_replicas and resize commands (Context, declared in
// engine_impl.hpp) and the host ops a job on several GPUs adds to its iteration (the gradient
// all-reduce, the barriers). The replicated dispatch itself is in engine_dispatch.cpp.
//
// The all-reduce is a host op on each replica's compute stream: it holds the stream for the
// ring's time (collective_cost.hpp) but takes no SMs and no memory bandwidth of its GPU, so a
// job sharing the GPU is not slowed by it (NCCL's kernels are; not modelled, an assumption).
// Every check comes before the first side effect (D21).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "command_helpers.hpp"
#include "engine_impl.hpp"
#include "gpumux/model/collective_cost.hpp"
#include "gpumux/model/resize_cost.hpp"

namespace gpumux {

DurationNs EngineImpl::allreduce_ns(const JobState& s, const std::vector<DeviceId>& devices,
                                    const char* command) const {
  if (devices.size() <= 1) return 0;
  const std::uint64_t bytes = gradient_bytes(*s.model, options_.cost.precision);
  Topology topology;
  if (options_.topology) {
    topology = *options_.topology;
  } else {
    // A plain devices list: one node whose GPU-to-GPU link is the profiles' peer link (D39's
    // default); with unlike GPUs, the slowest replica's (the ring waits for its slowest step).
    topology.gpus_per_node = static_cast<std::uint32_t>(devices_.size());
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const Link l = intra_node_default(device(devices[i]));
      if (l.gbit_per_s <= 0) {
        fail(command, "device " + std::to_string(raw(devices[i])) +
                          " has no GPU-to-GPU link (its profile's link.peer_gbps is 0)");
      }
      const Link& slowest = topology.intra_node;
      if (i == 0 || l.gbit_per_s < slowest.gbit_per_s ||
          (l.gbit_per_s == slowest.gbit_per_s && l.latency_ns > slowest.latency_ns)) {
        topology.intra_node = l;
      }
    }
  }
  try {
    return ring_allreduce_ns(topology, devices, bytes);
  } catch (const std::invalid_argument& e) {
    fail(command, e.what());
  }
}

std::vector<DeviceId> EngineImpl::check_replicas(const JobState& s,
                                                 std::span<const StreamId> streams,
                                                 const char* command) const {
  if (!s.training()) {
    fail(command, "job " + job_label(*s.spec) +
                      " is an inference service; only a training "
                      "job runs data-parallel on several GPUs");
  }
  if (streams.empty()) fail(command, "no compute stream given (one per GPU, the primary first)");
  std::vector<DeviceId> devices;
  devices.reserve(streams.size());
  for (const StreamId st : streams) {
    check_stream(st, command);
    const DeviceId d = streams_[index_of(st)].device;
    if (!is_gpu(d)) {
      fail(command, "stream " + std::to_string(raw(st)) + " is on device " +
                        std::to_string(raw(d)) + ", not a GPU");
    }
    if (std::find(devices.begin(), devices.end(), d) != devices.end()) {
      fail(command,
           "two replicas on device " + std::to_string(raw(d)) + " (one compute stream per GPU)");
    }
    devices.push_back(d);
  }
  return devices;
}

void EngineImpl::apply_replicas(JobState& s, std::span<const StreamId> streams,
                                const std::vector<DeviceId>& devices) {
  // Activations sized for the old per-GPU batch go (nothing of the job runs: checked).
  for (const DeviceId d : gpus_) {
    if (s.residency[index_of(d)].ops_in_flight == 0) placement_.release_activations(s, d);
  }
  s.device = devices.front();
  s.replica_streams.clear();
  s.replica_devices.clear();
  s.replica_last_op.clear();
  s.replica_has_last.clear();
  s.replica_batch = 0;
  s.allreduce_ns = 0;
  if (streams.size() == 1) return;  // one GPU: the single-GPU job it was
  s.replica_streams.assign(streams.begin(), streams.end());
  s.replica_devices = devices;
  s.replica_last_op.assign(streams.size(), OpId{});
  s.replica_has_last.assign(streams.size(), false);
  s.replica_batch = per_gpu_batch(s.spec->batch, static_cast<std::uint32_t>(streams.size()));
  s.allreduce_ns = allreduce_ns(s, devices, "set_replicas");  // checked by the caller
}

void EngineImpl::set_replicas(JobId job, std::span<const StreamId> compute_streams) {
  JobState& s = active_job(job, "set_replicas");
  const std::vector<DeviceId> devices = check_replicas(s, compute_streams, "set_replicas");
  (void)allreduce_ns(s, devices, "set_replicas");  // refuses GPUs without a peer link
  if (s.unit_in_progress() || s.dispatched != s.completed) {
    fail("set_replicas", "job " + job_label(*s.spec) +
                             " has an iteration in progress or in flight; set its replicas at "
                             "an iteration boundary once its ops have completed (or resize it)");
  }
  apply_replicas(s, compute_streams, devices);
}

OpHandle EngineImpl::resize(JobId job, std::span<const StreamId> compute_streams) {
  JobState& s = active_job(job, "resize");
  const std::vector<DeviceId> devices = check_replicas(s, compute_streams, "resize");
  (void)allreduce_ns(s, devices, "resize");
  // The checkpoint interval: a trial's epoch; any other job keeps only its start.
  const std::uint64_t per_epoch = s.spec->trial ? s.spec->trial->tuning->iterations_per_epoch()
                                                : std::max<std::uint64_t>(1, s.iterations_target);
  const ResizeCost cost =
      resize_cost(device(devices.front()), *s.model, s.spec->optimizer, options_.cost.precision,
                  ResizeProgress{s.iterations_done, per_epoch, 0});
  const std::uint32_t from = s.width();

  // Stop: the workers are killed (as preempt Kill): their ops abort, their memory returns to
  // each pool once the process is reaped.
  abort_job_ops(s);
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    const DeviceId dev{static_cast<std::uint16_t>(d)};
    const DurationNs reap = is_gpu(dev) ? devices_[d]->profile().process_reap_ns : 0;
    placement_.abandon(s, dev, reap, s.residency[d].ops_in_flight);
  }
  // Back to the last checkpoint; the lost iterations run again at the new width.
  s.iterations_done -= cost.rollback_iterations;
  s.dispatched = s.completed = Cursor{s.iterations_done, Pass::Forward, 0};
  s.unit_device_ns = 0;
  s.open_batch = 1;
  apply_replicas(s, compute_streams, devices);

  // Restart, paid once (the new workers start in parallel): every replica's next op waits.
  const DurationNs restart_ns = saturating_add(cost.stop_ns, cost.restart_ns);
  events_.job_resize(job, devices.front(), from, s.width(), cost.rollback_iterations, restart_ns);
  const OpId restart = host_op(s, compute_streams.front(), OpPurpose::StartContext, restart_ns, {},
                               s.dispatched, s.dispatched, false);
  s.last_op = restart;
  s.has_last_op = true;
  std::fill(s.replica_last_op.begin(), s.replica_last_op.end(), restart);
  std::fill(s.replica_has_last.begin(), s.replica_has_last.end(), true);
  return OpHandle{restart, true};
}

OpId EngineImpl::host_op(JobState& s, StreamId stream, OpPurpose purpose, DurationNs duration_ns,
                         std::span<const OpId> deps, const Cursor& before, const Cursor& after,
                         bool ends_unit) {
  std::vector<OpId> wait(deps.begin(), deps.end());
  // More than an op may wait for: zero-length barriers over groups of them first.
  while (wait.size() > DepList::kCapacity) {
    std::vector<OpId> joined;
    for (std::size_t i = 0; i < wait.size(); i += DepList::kCapacity) {
      const std::size_t n = std::min(DepList::kCapacity, wait.size() - i);
      if (n == 1) {
        joined.push_back(wait[i]);  // a group of one needs no barrier
        continue;
      }
      joined.push_back(host_op(s, stream, OpPurpose::Barrier, 0,
                               std::span<const OpId>(wait).subspan(i, n), before, before, false));
    }
    wait = std::move(joined);
  }
  OpSpec spec = op_spec(s.id, streams_[index_of(stream)].device, stream, OpKind::Host, purpose);
  spec.solo_ns = duration_ns;
  for (const OpId d : wait) add_dep(spec, d, "dispatch");  // at most kCapacity: cannot fail
  OpInfo info = OpInfo::of(spec);
  info.counts_in_flight = true;
  info.replica = !ends_unit;
  info.before = before;
  info.after = after;
  info.ends_unit = ends_unit;
  return new_op(spec, info);
}

}  // namespace gpumux
