// nexus: Nexus's (SOSP'19) per-model batching and early drop on one GPU, on the serving frame
// (serving_policy.hpp). Each service gets a profiled batch size: the largest b <= max_batch
// whose profiled batch time (the cost model's full-work batch) fits slo_fraction x its SLO, so
// a request that just missed a batch waits at most one batch and runs in the next, within the
// SLO. Services take turns round-robin (in arrival order); on its turn a service first drops
// the head requests that would miss their deadline even if their batch ran now (early drop:
// now + estimate(b') > deadline, b' = min(profiled b, waiting)), then runs a batch of b'.
//
// From Nexus's abstract: profiled batch latency per model and early drop. Recalled, not verified:
// the batch fits half the SLO (slo_fraction 0.5) and a GPU runs its sessions in turn within a duty
// cycle (round-robin here; the cycle's length is not modelled). Our choices: early drop uses the
// profiled estimate (a dynamic model's full-work batch, an upper bound), batch size 1 when even it
// misses, max_batch 64. Not modelled: cluster placement, several GPUs, query analysis, prefix
// batching. Details: docs/policies/serving.md.
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

class Nexus final : public ServingPolicy {
 public:
  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs{
        max_batch_param(64, "largest profiled batch size"),
        param::number("slo_fraction", "", 0.5,
                      "share of the SLO one batch may take, in (0, 1] (Nexus: 1/2)")};
    return specs;
  }

  explicit Nexus(const PolicyArgs& args) {
    read_policy_params(args, param_specs(), [this](ParamReader& p) {
      max_batch_ = read_max_batch(p);
      slo_fraction_ = p.number_in("slo_fraction", 0.0, 1.0, Ends::OpenLow);
    });
  }

  [[nodiscard]] std::string_view name() const noexcept override { return "nexus"; }

 protected:
  std::optional<BatchChoice> choose(Context& ctx, std::span<const JobId>) override {
    const std::vector<JobId>& all = services();
    const std::size_t n = all.size();
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t pos = (next_ + k) % n;
      const JobId job = all[pos];
      if (const std::uint32_t b = batch_after_early_drop(ctx, job); b > 0) {
        next_ = pos + 1;
        ctx.record("nexus.batch", static_cast<double>(b));
        return BatchChoice{job, b};
      }
    }
    return std::nullopt;
  }

 private:
  /// Drops the service's hopeless head requests; returns the batch to run, 0 for none.
  std::uint32_t batch_after_early_drop(Context& ctx, JobId job) {
    for (;;) {
      const JobView v = ctx.job(job);
      if (!v.active() || v.requests_waiting() == 0) return 0;
      const std::uint32_t profiled = profiled_batch(ctx, job);
      const auto b =
          static_cast<std::uint32_t>(std::min<std::size_t>(profiled, v.requests_waiting()));
      const RequestId head = v.waiting_request(0);
      const TimeNs deadline = ctx.serving().request_deadline(head);
      if (deadline == kTimeNever ||
          ctx.now() + ctx.serving().estimate_batch_ns(job, gpu(), b) <= deadline) {
        return b;
      }
      ctx.serving().drop_request(head,
                                 "nexus: early drop, misses its deadline at the profiled batch");
    }
  }

  /// The largest b <= max_batch whose profiled batch time fits slo_fraction x SLO (at least
  /// 1; max_batch without an SLO), computed once per service.
  std::uint32_t profiled_batch(Context& ctx, JobId job) {
    if (index_of(job) >= profiled_.size()) profiled_.resize(index_of(job) + 1, 0);
    std::uint32_t& cached = profiled_[index_of(job)];
    if (cached > 0) return cached;
    const DurationNs slo = ctx.job(job).spec().slo_ns;
    std::uint32_t best = 1;
    if (slo <= 0) {
      best = max_batch_;
    } else {
      const double budget = slo_fraction_ * static_cast<double>(slo);
      for (std::uint32_t b = 1; b <= max_batch_; ++b) {
        if (static_cast<double>(ctx.serving().estimate_batch_ns(job, gpu(), b)) <= budget) best = b;
      }
    }
    ctx.record("nexus.profiled_batch", static_cast<double>(best));
    cached = best;
    return cached;
  }

  std::uint32_t max_batch_ = 64;
  double slo_fraction_ = 0.5;
  std::size_t next_ = 0;                 // round-robin position in services()
  std::vector<std::uint32_t> profiled_;  // by job index; 0 = not profiled yet
};

GPUMUX_REGISTER_POLICY("nexus", Nexus,
                       "serving: profiled batch fitting half the SLO, early drop, round-robin");

}  // namespace
}  // namespace gpumux::policies
