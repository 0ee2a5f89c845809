#include "tuning/trial_executor.hpp"

#include <string>

#include "common/job_runner.hpp"

namespace gpumux::policies {

void TrialExecutor::on_job_arrival(Context& ctx, JobId job) {
  if (reject_without_gpu(ctx, job, name())) return;
  waiting_.push_back(job);
  advance(ctx);
}

void TrialExecutor::on_request_arrival(Context& ctx, JobId job, RequestId /*request*/) {
  keep(ctx, job);
}

void TrialExecutor::on_op_complete(Context& ctx, const OpRecord& r) {
  keep(ctx, r.job);
}

void TrialExecutor::on_iteration_end(Context& ctx, JobId job) {
  const std::optional<Home> home = home_of(job);
  if (!home) return;
  if (!ctx.job(job).paused()) {
    on_running_iteration_end(ctx, job);
    return;
  }
  // Paused at its budget: nothing of it is in flight; its checkpoint leaves the GPU.
  for (const DeviceId gpu : home->gpus) ctx.evict(job, gpu);
  release(job);
  advance(ctx);
}

void TrialExecutor::on_job_finish(Context& ctx, JobId job) {
  release(job);
  advance(ctx);
}

void TrialExecutor::on_job_resumed(Context& ctx, JobId job) {
  if (home_of(job)) {
    keep(ctx, job);  // promoted before it left its GPU
    return;
  }
  waiting_.push_back(job);
  advance(ctx);
}

void TrialExecutor::keep(Context& ctx, JobId job) {
  if (const std::optional<Home> home = home_of(job)) keep_busy(ctx, job, home->compute, depth_);
}

}  // namespace gpumux::policies
