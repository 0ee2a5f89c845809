// stop_and_start: every switch kills the running job's process and cold-starts the next one:
// process start + context creation + whole-model transfer, then compute. Inference requests
// preempt training; when no request is left, training is cold-started again (its unfinished
// iteration is lost with the killed process). That restart waits for the arrivals of the same
// instant (a zero-delay timer, as pipeswitch.cpp does): a closed-loop client's next request
// arrives at the very time the previous one ends and finds its own process still there, instead
// of killing a training process that was started for 0 ns and cold-starting itself again.
//
// Faithfulness notes (PipeSwitch OSDI'20 §2/§6, baseline "Stop-and-start"; the artifact's
// kill_restart/kill_restart.py): `active_worker.kill(); join()`, then spawn a process that
// imports the framework, builds the model (`torch.hub.load`), moves it to the GPU and runs.
// So the new process is spawned once the killed one is reaped (the profile's process_reap_ns:
// its device memory is released only then, sgl-project/sglang PR 36589), and its start builds
// the job's model (ContextStart::ColdProcess with the job: construction per parameter plus the
// weight read, D10). Training state is reloaded from the host (no checkpoint cost).
#include <deque>
#include <optional>

#include "common/job_runner.hpp"
#include "gpumux/io/params.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/model/device_profile.hpp"

namespace gpumux::policies {
namespace {

class StopAndStart final : public Policy {
 public:
  explicit StopAndStart(const PolicyArgs& args) {
    read_policy_params(args, param_specs(), [this](ParamReader& p) {
      per_tensor_malloc_ = p.flag("per_tensor_malloc");
    });
  }

  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs{param::flag(
        "per_tensor_malloc", false, "one cudaMalloc per tensor on the switch path, not the pool")};
    return specs;
  }
  [[nodiscard]] std::string_view name() const noexcept override { return "stop_and_start"; }

  void on_job_arrival(Context& ctx, JobId job) override {
    if (reject_without_gpu(ctx, job, name())) return;
    if (ctx.job(job).training()) {
      training_.push_back(job);
      if (!active_) switch_to(ctx, job);
    }
  }
  void on_request_arrival(Context& ctx, JobId job, RequestId) override {
    requests_.push_back(job);
    if (active_ && *active_ == job) {
      keep_busy(ctx, job, s_.compute, 1);
    } else if (!active_ || ctx.job(*active_).training()) {
      switch_to(ctx, next_target(ctx));
    }
  }
  void on_op_complete(Context& ctx, const OpRecord& r) override {
    if (active_ && *active_ == r.job && ctx.job(r.job).training())
      keep_busy(ctx, r.job, s_.compute);
  }
  void on_request_complete(Context& ctx, JobId job, RequestId) override {
    requests_.pop_front();
    if (!requests_.empty() && requests_.front() == job) {
      keep_busy(ctx, job, s_.compute, 1);  // same model: its process stays
      return;
    }
    const auto next = next_target(ctx);
    if (!requests_.empty()) {
      switch_to(ctx, next);  // another service's request: switch now
      return;
    }
    // No request pending: decide once this instant's arrivals are in.
    if (!decide_pending_) {
      decide_pending_ = true;
      ctx.set_timer(0, kDecideTag);
    }
  }
  void on_timer(Context& ctx, TimerId, std::uint64_t tag) override {
    if (tag == kDecideTag) decide_pending_ = false;
    if (tag != kDecideTag && tag != kReapedTag) return;
    if (const auto next = next_target(ctx)) switch_to(ctx, next);
  }
  void on_job_finish(Context& ctx, JobId job) override {
    std::erase(training_, job);
    if (active_ && *active_ == job) {
      active_.reset();
      if (const auto next = next_target(ctx)) switch_to(ctx, next);
    }
  }

 private:
  std::optional<JobId> next_target(Context& ctx) {
    while (!requests_.empty() && !ctx.job(requests_.front()).active()) requests_.pop_front();
    if (!requests_.empty()) return requests_.front();
    for (JobId t : training_) {
      if (ctx.job(t).active()) return t;
    }
    return std::nullopt;
  }

  void switch_to(Context& ctx, std::optional<JobId> target) {
    if (!target || (active_ && *active_ == *target)) return;
    const DeviceId gpu = ctx.gpus().front();  // a target arrived, so there is a GPU
    if (active_ && ctx.job(*active_).active()) {
      ctx.preempt(*active_, PreemptMode::Kill);
      active_.reset();
      const DurationNs reap = ctx.device(gpu).process_reap_ns;
      if (reap > 0) {  // join(): spawn once the killed process is reaped (a timer resumes)
        reaped_at_ = ctx.now() + reap;
        ctx.set_timer(reap, kReapedTag);
        return;
      }
    }
    if (ctx.now() < reaped_at_) return;  // still reaping: the timer spawns the next target
    active_ = target;
    const ContextId c =
        ctx.streams().create_context(gpu, ContextOptions{}, ContextStart::ColdProcess, *target);
    s_ = open_streams(ctx, c, 2);
    LoadOptions lo;
    lo.per_tensor_malloc = per_tensor_malloc_;
    load_whole(ctx, *target, s_.copy, lo);
    keep_busy(ctx, *target, s_.compute, ctx.job(*target).training() ? 2 : 1);
  }

  static constexpr std::uint64_t kDecideTag = 1;
  static constexpr std::uint64_t kReapedTag = 2;

  bool per_tensor_malloc_ = false;
  bool decide_pending_ = false;  // a zero-delay decision timer is set
  TimeNs reaped_at_ = 0;         // no new process before the killed one is reaped
  std::optional<JobId> active_;
  ProcessStreams s_;
  std::deque<JobId> requests_;  // one entry per pending request, FIFO
  std::vector<JobId> training_;
};

GPUMUX_REGISTER_POLICY("stop_and_start", StopAndStart,
                       "every switch kills the running process and cold-starts the next");

}  // namespace
}  // namespace gpumux::policies
