#include "tuning/trial_executor.hpp"

#include <string>

#include "common/job_runner.hpp"
#include "gpumux/api/errors.hpp"

namespace gpumux::policies {

void TrialExecutor::on_job_arrival(Context& ctx, JobId job) {
  if (reject_without_gpu(ctx, job, name())) return;
  waiting_.push_back(job);
  advance(ctx);
}

void TrialExecutor::on_request_arrival(Context& ctx, JobId job, RequestId /*request*/) {
  keep_or_fail(ctx, job);
}

void TrialExecutor::on_op_complete(Context& ctx, const OpRecord& r) {
  keep_or_fail(ctx, r.job);
}

void TrialExecutor::on_iteration_end(Context& ctx, JobId job) {
  const std::optional<Home> home = home_of(job);
  if (!home) return;
  if (!ctx.job(job).paused()) {
    on_running_iteration_end(ctx, job);
    return;
  }
  // Paused at its budget: nothing of it is in flight; its checkpoint leaves the GPU.
  for (const DeviceId gpu : home->gpus) ctx.memory().evict(job, gpu);
  release(job);
  advance(ctx);
}

void TrialExecutor::on_job_finish(Context& ctx, JobId job) {
  release(job);
  advance(ctx);
}

void TrialExecutor::on_job_resumed(Context& ctx, JobId job) {
  if (home_of(job)) {
    keep_or_fail(ctx, job);  // promoted before it left its GPU
    return;
  }
  waiting_.push_back(job);
  advance(ctx);
}

void TrialExecutor::keep(Context& ctx, JobId job) {
  if (const std::optional<Home> home = home_of(job)) keep_busy(ctx, job, home->compute, depth_);
}

bool TrialExecutor::run_or_fail(Context& ctx, JobId job, const std::function<void()>& place) {
  try {
    place();
    return true;
  } catch (const OutOfMemory& e) {
    if (!ctx.job(job).trial()) throw;
    release(job);
    ctx.reject(job, std::string("the trial does not fit: ") + e.what());
    return false;
  }
}

void TrialExecutor::keep_or_fail(Context& ctx, JobId job) {
  if (!run_or_fail(ctx, job, [&] { keep(ctx, job); })) advance(ctx);
}

}  // namespace gpumux::policies
