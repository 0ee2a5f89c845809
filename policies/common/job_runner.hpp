// Small helpers shared by policies: keeping a job's work flowing on a stream, loading a
// whole model, and reading policy parameters strictly.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "gpumux/api/policy.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/params.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux::policies {

/// Dispatches the job's work (whole passes, or `layers` at a time) until `depth` of its ops
/// are queued or in flight on `stream`, or it has nothing to dispatch. Returns ops issued.
inline std::size_t keep_busy(Context& ctx, JobId job, StreamId stream, std::size_t depth = 2,
                             std::uint32_t layers = 0) {
  std::size_t issued = 0;
  const JobView s = ctx.job(job);  // a view reads the job as it is now
  // Asked once: each dispatch adds one op to the stream, and no op leaves a stream inside a
  // hook (devices report finished ops from their own events, never from submit), so the
  // count goes up by one per dispatch (two virtual queries per op saved).
  std::size_t outstanding = ctx.streams().queued(stream) + ctx.streams().in_flight(stream);
  while (s.has_dispatchable_work() && outstanding < depth) {
    ctx.dispatch(job, stream, DispatchOptions{layers, {}});
    ++issued;
    ++outstanding;
  }
  return issued;
}

/// Loads every layer of a job that is not yet on the stream's device, in one copy.
inline OpHandle load_whole(Context& ctx, JobId job, StreamId copy_stream, LoadOptions o = {}) {
  const JobView s = ctx.job(job);
  const DeviceId d = ctx.streams().device_of(copy_stream);
  const LayerRange all{0, s.model().layer_count()};
  if (s.resident_or_loading(d, all)) return OpHandle{};
  return ctx.memory().load(job, copy_stream, all, std::move(o));
}

/// Pops jobs off the front of a FIFO until one is still active (with `needs_work`, also has
/// work to dispatch) and returns it; nullopt once the FIFO is empty.
inline std::optional<JobId> pop_next_active(Context& ctx, std::deque<JobId>& fifo,
                                            bool needs_work = false) {
  while (!fifo.empty()) {
    const JobId job = fifo.front();
    fifo.pop_front();
    const JobView s = ctx.job(job);
    if (s.active() && (!needs_work || s.has_dispatchable_work())) return job;
  }
  return std::nullopt;
}

/// The GPU a single-GPU baseline serves: the platform's first; nullopt on a CPU-only platform.
inline std::optional<DeviceId> first_gpu(const Context& ctx) {
  if (ctx.gpus().empty()) return std::nullopt;
  return ctx.gpus().front();
}

/// Rejects `job` when the platform has no GPU (`policy` names who needs one); returns whether
/// it did.
inline bool reject_without_gpu(Context& ctx, JobId job, std::string_view policy) {
  if (!ctx.gpus().empty()) return false;
  ctx.reject(job, std::string(policy) + " needs a GPU device; none is configured");
  return true;
}

/// A policy's params object read through its declaration (the same list it registers):
/// undeclared keys are errors naming the file and "policy.params.<key>".
inline ParamReader policy_params(const PolicyArgs& args, const ParamSpecs& specs) {
  return ParamReader(args.params, args.file, "policy.params", specs);
}

/// Reads a policy's params through `specs` with `read(ParamReader&)`, then refuses the keys
/// `specs` does not declare.
template <class Read>
void read_policy_params(const PolicyArgs& args, const ParamSpecs& specs, Read&& read) {
  ParamReader p = policy_params(args, specs);
  read(p);
  p.finish();
}

/// The declaration of a simple baseline whose one parameter is `depth` (default 2).
inline ParamSpecs depth_specs(const char* help) {
  return ParamSpecs{param::integer("depth", 2, help)};
}

/// The most ops a baseline keeps queued or in flight per job: a stream's max_in_flight is
/// 32 bits, and 1024 is the bound of the other per-stream depths (olympian's depth,
/// switchflow's in_flight; our choice).
inline constexpr std::int64_t kMaxDepth = 1024;

/// The `depth` parameter of the simple baselines: ops of one job queued or in flight, in
/// [1, kMaxDepth].
inline std::size_t read_depth(ParamReader& p) {
  return p.integer_in<std::size_t>("depth", 1, kMaxDepth);
}

/// The params of a baseline declared by depth_specs(): its depth.
inline std::size_t read_depth(const PolicyArgs& args, const ParamSpecs& specs) {
  std::size_t depth = 0;
  read_policy_params(args, specs, [&](ParamReader& p) { depth = read_depth(p); });
  return depth;
}

/// A process's compute stream (at most `compute_depth` ops in flight) and copy stream.
struct ProcessStreams {
  StreamId compute{}, copy{};
};

/// Opens the compute and copy streams of context `c`, both at priority 0.
inline ProcessStreams open_streams(Context& ctx, ContextId c, std::size_t compute_depth,
                                   std::uint32_t copy_depth = 1) {
  return {
      ctx.streams().create_stream(c, StreamOptions{0, static_cast<std::uint32_t>(compute_depth)}),
      ctx.streams().create_stream(c, StreamOptions{0, copy_depth})};
}

/// The streams of a single-GPU baseline, in the first GPU's default context; empty ids on a
/// CPU-only platform (where every job is rejected on arrival).
inline ProcessStreams open_first_gpu_streams(Context& ctx, std::size_t compute_depth,
                                             std::uint32_t copy_depth = 1) {
  const auto gpu = first_gpu(ctx);
  if (!gpu) return {};
  return open_streams(ctx, ctx.streams().default_context(*gpu), compute_depth, copy_depth);
}

}  // namespace gpumux::policies
