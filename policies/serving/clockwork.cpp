// clockwork: Clockwork's (OSDI'20) controller rules on one GPU, on the serving frame
// (serving_policy.hpp). Each service's execution time per batch size is estimated from its own
// completions: the 99th percentile of the last 10 batches of that size; before a size has run,
// its profiled time (the cost model's full-work batch, as Clockwork profiles every batch size
// when it loads a model). When the GPU is free, the head is the earliest-deadline waiting
// request over all services (a service's requests share one SLO, so its queue is in deadline
// order and only queue heads compete); the batch is the largest allowed size b, no larger than
// the head's service has waiting, with now + estimate(b) + buffer <= the head's deadline. If
// even b = 1 misses it, the head is dropped and the choice repeats. Services without an SLO are
// never dropped and run, FIFO, only when no request with a deadline waits.
//
// From the source (malixian/clockwork src/clockwork/controller/infer5/infer5_scheduler.h): the p99
// of the last 10 measurements per (model, batch size), a buffer before the SLO, a configurable
// maximum batch. Our choices: batch sizes are powers of two up to max_batch (16), buffer_ms
// defaults to 0 (5 ms in Clockwork, which would reject every request under SLOs of a few ms), the
// drop rule. Not modelled: scheduling 10 ms ahead, the worker's late-action drop, model loading,
// several GPUs. Details: docs/policies/serving.md.
//
// Thread rules: policy hooks, runtime thread (gpumux/api/policy.hpp).
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "gpumux/io/params.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "serving/serving_policy.hpp"

namespace gpumux::policies {
namespace {

class Clockwork final : public ServingPolicy {
 public:
  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs{
        max_batch_param(16, "largest batch size; sizes are powers of two up to it"),
        param::duration("buffer_ms", TimeUnit::Milliseconds, 0.0,
                        "aim to finish this long before the head's deadline (Clockwork: 5 ms "
                        "for 100 ms SLOs)"),
        param::integer("estimate_window", 10, "measurements per batch size the estimate uses"),
        param::number("estimate_percentile", "", 99.0,
                      "percentile of those measurements taken as the estimate, in (0, 100]")};
    return specs;
  }

  explicit Clockwork(const PolicyArgs& args) {
    read_policy_params(args, param_specs(), [this](ParamReader& p) {
      batches_ = power_of_two_batches(read_max_batch(p));
      buffer_ns_ = p.duration("buffer_ms");
      window_ = p.integer_in<std::size_t>("estimate_window", 1, 1000);
      percentile_ = p.number_in("estimate_percentile", 0.0, 100.0, Ends::OpenLow);
    });
  }

  [[nodiscard]] std::string_view name() const noexcept override { return "clockwork"; }

 protected:
  std::optional<BatchChoice> choose(Context& ctx, std::span<const JobId> services) override {
    for (;;) {
      const std::optional<RequestId> head = earliest_deadline_head(ctx, services);
      if (!head) return std::nullopt;
      const JobId job = ctx.serving().request_job(*head);
      const TimeNs deadline = ctx.serving().request_deadline(*head);
      const std::size_t waiting = ctx.job(job).requests_waiting();
      std::uint32_t best = 0;
      for (std::uint32_t b : batches_) {
        if (b > waiting) break;
        if (deadline == kTimeNever || ctx.now() + estimate(ctx, job, b) + buffer_ns_ <= deadline) {
          best = b;  // the largest size that meets the deadline (estimates need not be monotone)
        }
      }
      if (best > 0) {
        ctx.record("clockwork.batch", static_cast<double>(best));
        return BatchChoice{job, best};
      }
      ctx.serving().drop_request(*head, "clockwork: cannot meet deadline");
    }
  }

 private:
  /// The waiting request with the earliest deadline (ties: the earlier arrival, i.e. the lower
  /// id); services without an SLO have kTimeNever, so they come last, in arrival order.
  static std::optional<RequestId> earliest_deadline_head(Context& ctx,
                                                         std::span<const JobId> services) {
    std::optional<RequestId> best;
    TimeNs best_deadline = kTimeNever;
    for (JobId j : services) {
      const JobView v = ctx.job(j);
      if (!v.active() || v.requests_waiting() == 0) continue;  // drops may have emptied it
      const RequestId r = v.waiting_request(0);
      const TimeNs d = ctx.serving().request_deadline(r);
      if (!best || d < best_deadline || (d == best_deadline && raw(r) < raw(*best))) {
        best = r;
        best_deadline = d;
      }
    }
    return best;
  }

  /// p-th percentile of the last `window_` batches of size b; the profiled time before any.
  [[nodiscard]] DurationNs estimate(Context& ctx, JobId job, std::uint32_t b) const {
    const ExecTimeWindow& w = ctx.serving().batch_times(job, b);
    if (w.empty()) return ctx.serving().estimate_batch_ns(job, gpu(), b);
    return w.percentile(percentile_, window_);
  }

  std::vector<std::uint32_t> batches_;
  DurationNs buffer_ns_ = 0;
  std::size_t window_ = 10;
  double percentile_ = 99.0;
};

GPUMUX_REGISTER_POLICY("clockwork", Clockwork,
                       "serving: EDF, largest batch meeting the head's deadline (p99 of last 10), "
                       "drop infeasible");

}  // namespace
}  // namespace gpumux::policies
