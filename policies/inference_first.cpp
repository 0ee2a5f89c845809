// inference_first: the example policy of docs/writing-a-policy.md. Every job keeps its model
// resident in one shared process; inference requests always go first: when one arrives, the
// training jobs' queued work is dropped (their in-flight pass finishes) and they resume when
// no request is waiting. Dispatches at pass granularity, so a request waits at most for the
// training pass already on the GPU.
//
// Faithfulness notes: not a published system; a teaching example and a simple priority
// baseline between `time_slicing` and PipeSwitch (no pipelining, no standby workers).
#include <vector>

#include "common/job_runner.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/io/params.hpp"
#include "gpumux/io/policy_registry.hpp"

namespace gpumux::policies {
namespace {

class InferenceFirst final : public Policy {
 public:
  explicit InferenceFirst(const PolicyArgs& args) {
    read_policy_params(args, param_specs(), [this](ParamReader& p) {
      layers_per_op_ = p.integer_in<std::uint32_t>("layers_per_op", 0, 1000000);
    });
  }

  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs{
        param::integer("layers_per_op", 0, "layers per dispatched op (0 = a whole pass)")};
    return specs;
  }
  [[nodiscard]] std::string_view name() const noexcept override { return "inference_first"; }

  void on_start(Context& ctx) override { s_ = open_first_gpu_streams(ctx, /*compute_depth=*/1); }

  void on_job_arrival(Context& ctx, JobId job) override {
    if (reject_without_gpu(ctx, job, name())) return;
    try {
      load_whole(ctx, job, s_.copy);  // weights stay resident for the job's lifetime
    } catch (const OutOfMemory& e) {
      ctx.reject(job, e.what());
      return;
    }
    (ctx.job(job).training() ? training_ : inference_).push_back(job);
    schedule(ctx);
  }

  void on_request_arrival(Context& ctx, JobId, RequestId) override {
    for (JobId t : training_) {
      if (ctx.job(t).active()) ctx.preempt(t, PreemptMode::DropQueued);
    }
    schedule(ctx);
  }

  void on_op_complete(Context& ctx, const OpRecord&) override { schedule(ctx); }

 private:
  /// Issues one op when the compute stream is idle: a waiting request first, else training.
  void schedule(Context& ctx) {
    if (ctx.streams().queued(s_.compute) + ctx.streams().in_flight(s_.compute) > 0) return;
    // Only jobs whose arrival hook ran (their weights are loading): the engine may show a job
    // as arrived before its hook is delivered.
    std::vector<JobId> candidates = inference_;
    candidates.insert(candidates.end(), training_.begin(), training_.end());
    std::vector<JobId> no_room;  // their activations do not fit next to what is held now
    for (JobId job : candidates) {
      if (!ctx.job(job).has_dispatchable_work()) continue;
      try {
        ctx.dispatch(job, s_.compute, DispatchOptions{layers_per_op_, {}});
        return;
      } catch (const OutOfMemory&) {
        no_room.push_back(job);
      }
    }
    // Nothing could run and nothing is running: memory will not free up for these jobs.
    for (JobId job : no_room) {
      if (ctx.job(job).active()) ctx.reject(job, "out of memory: its activations never fit");
    }
  }

  std::uint32_t layers_per_op_ = 0;  // 0 = whole passes
  ProcessStreams s_;
  std::vector<JobId> training_, inference_;
};

GPUMUX_REGISTER_POLICY("inference_first", InferenceFirst,
                       "example: resident models, inference requests preempt training");

}  // namespace
}  // namespace gpumux::policies
