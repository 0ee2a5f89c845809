// Shared mechanism of the `time_slicing` and `mps` baselines: every job gets its own
// (already running) process with its model resident, and submits its work as soon as it has
// any; the device decides who runs (time slices between contexts, or MPS spatial sharing).
#pragma once

#include <map>

#include "common/job_runner.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/io/policy_registry.hpp"

namespace gpumux::policies {

class ResidentSharing : public Policy {
 public:
  ResidentSharing(const PolicyArgs& args, bool mps)
      : mps_(mps), depth_(read_depth(args, param_specs())) {}

  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs =
        depth_specs("ops of one job queued or in flight on its compute stream");
    return specs;
  }

  void on_job_arrival(Context& ctx, JobId job) override {
    if (reject_without_gpu(ctx, job, name())) return;
    const ContextId c =
        ctx.streams().create_context(ctx.gpus().front(), ContextOptions{mps_}, ContextStart::Warm);
    const ProcessStreams s = open_streams(ctx, c, depth_);
    streams_[job] = s;
    try {
      load_whole(ctx, job, s.copy);
      pump(ctx, job);
    } catch (const OutOfMemory& e) {
      ctx.reject(job, std::string("out of memory: ") + e.what());
    }
  }
  void on_request_arrival(Context& ctx, JobId job, RequestId) override { pump(ctx, job); }
  void on_op_complete(Context& ctx, const OpRecord& r) override { pump(ctx, r.job); }

 private:
  void pump(Context& ctx, JobId job) {
    auto it = streams_.find(job);
    if (it == streams_.end() || !ctx.job(job).active()) return;
    try {
      keep_busy(ctx, job, it->second.compute, depth_);
    } catch (const OutOfMemory& e) {
      if (ctx.job(job).ops_in_flight() == 0) {
        ctx.reject(job, std::string("out of memory: ") + e.what());
      }
    }
  }
  bool mps_;
  std::size_t depth_ = 2;
  std::map<JobId, ProcessStreams> streams_;
};

}  // namespace gpumux::policies
