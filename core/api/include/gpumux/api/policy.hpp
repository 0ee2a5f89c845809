// The user-facing API: a Policy reacts to hooks and issues commands through a Context.
// Rules (the same on every platform):
//  - hooks run on one thread, one at a time; a policy never sees a clock, a thread or a
//    cudaStream_t, only ctx.now();
//  - commands take effect immediately and are validated; a nonsensical command (dispatching a
//    finished job, running layers whose weights are not on the device, an unknown stream,
//    waiting for an op never issued) throws PolicyError naming the policy and the command,
//    which ends the run; a refused command has changed nothing (D21);
//  - memory is finite: memory().load() and dispatch() may throw OutOfMemory, which a policy
//    may catch (e.g. to reject the job).
// See docs/writing-a-policy.md for a complete example; a policy registers itself with
// GPUMUX_REGISTER_POLICY (gpumux/io/policy_registry.hpp).
#pragma once

#include <string_view>

#include "gpumux/api/context.hpp"
#include "gpumux/api/op.hpp"

namespace gpumux {

class Policy {
 public:
  virtual ~Policy() = default;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  virtual void on_start(Context&) {}
  virtual void on_job_arrival(Context&, JobId) {}
  virtual void on_request_arrival(Context&, JobId, RequestId) {}
  virtual void on_op_complete(Context&, const OpRecord&) {}
  virtual void on_request_complete(Context&, JobId, RequestId) {}
  virtual void on_iteration_end(Context&, JobId) {}
  /// Also for a tuning trial its tuner stopped (EndReason::Stopped: done, not rejected).
  virtual void on_job_finish(Context&, JobId) {}
  /// A paused tuning trial (JobView::paused) was promoted: it has work again.
  virtual void on_job_resumed(Context&, JobId) {}
  virtual void on_timer(Context&, TimerId, std::uint64_t /*tag*/) {}
};

}  // namespace gpumux
