// ready_model: the lower bound on inference latency. Each inference model is loaded onto the
// GPU when its service arrives and requests are served one at a time with nothing else on
// the GPU; training jobs are rejected (they would compete).
//
// Faithfulness notes (PipeSwitch OSDI'20 §6, baseline "Ready model"; the artifact's
// ready_model/ready_model.py): an inference process whose model is already resident and no
// competing task. Simplified: one process serves every inference model (they share the GPU
// FIFO, which PipeSwitch's single-model experiment never exercises).
#include <deque>

#include "common/job_runner.hpp"
#include "gpumux/io/policy_registry.hpp"

namespace gpumux::policies {
namespace {

class ReadyModel final : public Policy {
 public:
  explicit ReadyModel(const PolicyArgs& args) { policy_params(args, ParamSpecs{}).finish(); }
  [[nodiscard]] std::string_view name() const noexcept override { return "ready_model"; }

  void on_start(Context& ctx) override { s_ = open_first_gpu_streams(ctx, 2, 2); }

  void on_job_arrival(Context& ctx, JobId job) override {
    if (reject_without_gpu(ctx, job, name())) return;
    if (ctx.job(job).training()) {
      ctx.reject(job, "ready_model runs inference alone (lower bound); training is not run");
      return;
    }
    load_whole(ctx, job, s_.copy);  // resident before the first request (arrives later)
  }

  void on_request_arrival(Context& ctx, JobId job, RequestId) override {
    queue_.push_back(job);
    serve(ctx);
  }
  void on_request_complete(Context& ctx, JobId, RequestId) override {
    busy_ = false;
    serve(ctx);
  }

 private:
  void serve(Context& ctx) {
    if (busy_) return;
    if (const auto job = pop_next_active(ctx, queue_, /*needs_work=*/true)) {
      ctx.dispatch(*job, s_.compute);
      busy_ = true;
    }
  }
  ProcessStreams s_;
  std::deque<JobId> queue_;  // one entry per pending request, FIFO across services
  bool busy_ = false;
};

GPUMUX_REGISTER_POLICY(
    "ready_model", ReadyModel,
    "inference with its model resident and nothing else on the GPU (lower bound)");

}  // namespace
}  // namespace gpumux::policies
