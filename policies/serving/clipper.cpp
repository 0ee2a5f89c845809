// clipper: Clipper's (NSDI'17) adaptive batching on one GPU, on the serving frame
// (serving_policy.hpp). Each service keeps a batch-size limit, found by AIMD: it starts at 1;
// after each batch of the service, if the batch met its latency objective (its oldest member's
// latency, completion minus arrival, within the service's SLO) the limit grows by
// additive_step, else it is multiplied by decrease_factor; it stays in [1, max_batch]. A batch
// is the oldest min(floor(limit), waiting) requests. Across services the one whose head
// request arrived first goes next (FIFO). Nothing is ever dropped: a late request still runs.
//
// AIMD batch sizing per model against a latency objective (Clipper, NSDI'17); FIFO and no drops are
// our reading of Orloj's Clipper-like baseline. decrease_factor 0.9 and additive_step 1 are Clipper
// §4.3's values as recalled (not verified); the objective checked is the oldest member's end-to-end
// latency (queueing counts); max_batch 64 is our cap, not Clipper's. Not modelled: delayed
// batching, the prediction cache, model selection, containers/RPC. Details:
// docs/policies/serving.md.
//
// Thread rules: policy hooks, runtime thread (gpumux/api/policy.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "gpumux/io/params.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "serving/serving_policy.hpp"

namespace gpumux::policies {
namespace {

class Clipper final : public ServingPolicy {
 public:
  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs{
        max_batch_param(64, "largest batch size the limit may reach"),
        param::number("additive_step", "", 1.0, "limit increase after a batch on time, > 0"),
        param::number("decrease_factor", "", 0.9,
                      "limit multiplier after a late batch, in (0, 1) (Clipper: 10% backoff)")};
    return specs;
  }

  explicit Clipper(const PolicyArgs& args) {
    read_policy_params(args, param_specs(), [this](ParamReader& p) {
      max_batch_ = static_cast<double>(read_max_batch(p));
      step_ = p.positive("additive_step", p.number("additive_step"));
      factor_ = p.number_in("decrease_factor", 0.0, 1.0, Ends::Open);
    });
  }

  [[nodiscard]] std::string_view name() const noexcept override { return "clipper"; }

 protected:
  std::optional<BatchChoice> choose(Context& ctx, std::span<const JobId> services) override {
    std::optional<RequestId> head;  // the oldest waiting request of all services
    for (JobId j : services) {
      const RequestId r = ctx.job(j).waiting_request(0);
      if (!head || raw(r) < raw(*head)) head = r;  // ids are in arrival order
    }
    if (!head) return std::nullopt;
    const JobId job = ctx.serving().request_job(*head);
    State& s = state(job);
    const auto limit = static_cast<std::size_t>(std::floor(s.limit));
    const auto n = static_cast<std::uint32_t>(std::min(limit, ctx.job(job).requests_waiting()));
    s.oldest_deadline = ctx.serving().request_deadline(*head);
    ctx.record("clipper.batch", static_cast<double>(n));
    return BatchChoice{job, n};
  }

  void on_batch_done(Context& ctx, JobId job, std::uint32_t, DurationNs) override {
    State& s = state(job);
    const bool on_time = s.oldest_deadline == kTimeNever || ctx.now() <= s.oldest_deadline;
    s.limit = on_time ? std::min(max_batch_, s.limit + step_) : std::max(1.0, s.limit * factor_);
    ctx.record("clipper.limit", s.limit);
  }

 private:
  struct State {
    double limit = 1.0;                   // AIMD batch-size limit
    TimeNs oldest_deadline = kTimeNever;  // of the batch in flight's oldest member
  };

  State& state(JobId job) {
    if (index_of(job) >= states_.size()) states_.resize(index_of(job) + 1);
    return states_[index_of(job)];
  }

  double max_batch_ = 64.0;
  double step_ = 1.0;
  double factor_ = 0.9;
  std::vector<State> states_;  // by job index
};

GPUMUX_REGISTER_POLICY("clipper", Clipper,
                       "serving: FIFO, AIMD batch size per service against its SLO, no drop");

}  // namespace
}  // namespace gpumux::policies
