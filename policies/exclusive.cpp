// exclusive: FIFO by arrival; one job owns the GPU until it finishes (its model loaded once
// when it starts, evicted when it ends). No sharing, no preemption.
//
// Faithfulness notes: the "TF FIFO (no sharing)" baseline of Salus (stock TF, one job at a time;
// SymbioticLab/Salus benchmark scripts, e.g. card272.py). An inference service counts as one job
// that holds the GPU until its last request is answered, as a dedicated serving process would.
#include <deque>

#include "common/job_runner.hpp"
#include "gpumux/io/policy_registry.hpp"

namespace gpumux::policies {
namespace {

class Exclusive final : public Policy {
 public:
  explicit Exclusive(const PolicyArgs& args) : depth_(read_depth(args, param_specs())) {}

  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs = depth_specs("ops of the running job queued or in flight");
    return specs;
  }
  [[nodiscard]] std::string_view name() const noexcept override { return "exclusive"; }

  void on_start(Context& ctx) override { s_ = open_first_gpu_streams(ctx, depth_); }
  void on_job_arrival(Context& ctx, JobId job) override {
    if (reject_without_gpu(ctx, job, name())) return;
    fifo_.push_back(job);
    advance(ctx);
  }
  void on_request_arrival(Context& ctx, JobId job, RequestId) override {
    if (running_ && *running_ == job) keep_busy(ctx, job, s_.compute, depth_);
  }
  void on_op_complete(Context& ctx, const OpRecord& r) override {
    if (running_ && *running_ == r.job) keep_busy(ctx, r.job, s_.compute, depth_);
  }
  void on_job_finish(Context& ctx, JobId job) override {
    if (running_ && *running_ == job) running_.reset();
    advance(ctx);
  }

 private:
  void advance(Context& ctx) {
    if (running_) return;
    running_ = pop_next_active(ctx, fifo_);
    if (!running_) return;
    load_whole(ctx, *running_, s_.copy);
    keep_busy(ctx, *running_, s_.compute, depth_);
  }
  std::size_t depth_ = 2;
  ProcessStreams s_;
  std::deque<JobId> fifo_;
  std::optional<JobId> running_;
};

GPUMUX_REGISTER_POLICY("exclusive", Exclusive,
                       "FIFO; one job owns the GPU until it finishes (no sharing)");

}  // namespace
}  // namespace gpumux::policies
