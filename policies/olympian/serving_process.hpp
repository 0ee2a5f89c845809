// One TF-Serving process on the first GPU, shared by Olympian and the stock TF-Serving
// baseline: TF's single compute stream for that GPU (stock TF 1.x runs every session's kernels
// on one compute stream per device, in the order they are enqueued), one copy stream for
// loading servables, and admission (inference models only, loaded when the service arrives).
#pragma once

#include <optional>
#include <string>

#include "common/job_runner.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/io/params.hpp"

namespace gpumux::policies::olympian {

/// How a session issues its model's graph: `depth` nodes of a run queued or running at once,
/// `layers_per_node` model layers per node. Olympian and stock TF-Serving declare and read the
/// two parameters alike.
struct NodeIssue {
  std::uint32_t depth = 2;
  std::uint32_t layers_per_node = 1;

  /// Reads `depth` (in [1, 1024]) and `layers_per_node` (>= 1, at most 1e5).
  static NodeIssue read(ParamReader& p) {
    NodeIssue n;
    n.depth = p.integer_in<std::uint32_t>("depth", 1, 1024);
    n.layers_per_node = p.integer_in<std::uint32_t>("layers_per_node", 1, 100000);
    return n;
  }
};

class ServingProcess {
 public:
  /// Room for every session's queued kernels; only the head of a stream runs anyway.
  static constexpr std::uint32_t kStreamSlots = 64;

  /// Finds the first GPU and opens the process's streams in its default context.
  void start(Context& ctx) {
    if (ctx.gpus().empty()) return;
    gpu_ = ctx.gpus().front();
    const ContextId c = ctx.streams().default_context(*gpu_);
    compute_ = ctx.streams().create_stream(c, StreamOptions{0, kStreamSlots});
    copy_ = ctx.streams().create_stream(c, StreamOptions{0, 1});
  }

  /// Admits a service: loads its model (the servable) onto the GPU, or rejects the job with a
  /// reason (no GPU, a training job, weights that do not fit). Returns whether it was admitted.
  bool admit(Context& ctx, JobId job, std::string_view policy) {
    if (!gpu_) {
      ctx.reject(job, std::string(policy) + " needs a GPU device; none is configured");
      return false;
    }
    if (ctx.job(job).training()) {
      ctx.reject(job,
                 std::string(policy) + " serves inference only (TF-Serving); training is not run");
      return false;
    }
    try {
      load_whole(ctx, job, copy_);
    } catch (const OutOfMemory& e) {
      ctx.reject(job, std::string("out of memory loading the model: ") + e.what());
      return false;
    }
    return true;
  }

  /// Whether the GPU has no kernel queued or running (nothing will free memory by finishing).
  [[nodiscard]] bool idle(const Context& ctx) const {
    return ctx.streams().queued(compute_) + ctx.streams().in_flight(compute_) == 0;
  }

  [[nodiscard]] bool has_gpu() const noexcept { return gpu_.has_value(); }
  [[nodiscard]] DeviceId gpu() const { return *gpu_; }
  [[nodiscard]] StreamId compute() const noexcept { return compute_; }

 private:
  std::optional<DeviceId> gpu_;
  StreamId compute_{}, copy_{};
};

}  // namespace gpumux::policies::olympian
