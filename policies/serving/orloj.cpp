// orloj: an Orloj-like (reconstructed) scheduler for serving dynamic DNNs under SLOs (Yu, Qiu,
// Jin, Chowdhury, "Orloj: Predictably Serving Unpredictable DNNs", arXiv 2209.00159).
// Each service's per-request execution time is an empirical distribution (the engine's
// request_times window: the solo-equivalent time of every completed request). When the GPU is
// free:
//  1. every waiting request that cannot finish even alone, now + q_min(a) > deadline, is
//     dropped (q_min: the drop_quantile percentile of its service's distribution);
//  2. for every service a and every allowed batch size b (powers of two up to max_batch, at
//     most the requests waiting) the candidate is its b earliest-deadline requests B;
//  3. the batch's time is the slowest member's, scaled by the batch's cost: with X_r ~ F_a
//     independent, T_B = g(b) max_r X_r and CDF_B(x) = F_a(x / g(b))^b, g(b) the profiled
//     batch cost over the single-request cost (estimate_batch_ns);
//  4. score(B) = sum_r CDF_B(deadline_r - now), the expected on-time finishes (or, with
//     score = all_finish, b x CDF_B(earliest deadline - now)); value(B) = score(B) / E[T_B];
//  5. the batch with the highest value runs; ties go to the earlier head deadline, then the
//     larger batch.
// Before a service's first completion, F_a is a point mass at its profiled single-request
// time (the whole model), as a profile taken when the model is loaded.
//
// Our reconstruction, not stated in the paper (its full text could not be obtained; only the
// abstract's claims are verified: per-request empirical distributions, a batch-aware score from the
// members' distributions, batching without a request's precise time): the score formula and value
// per unit of expected GPU time, one service per batch, independent members, the drop rule (q_min =
// 1st percentile), lock-step batches. Details and sources: docs/policies/serving.md.
#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "gpumux/api/enum_names.hpp"
#include "gpumux/io/params.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "serving/serving_policy.hpp"

namespace gpumux::policies {
namespace {

enum class OrlojScore : std::uint8_t { ExpectedFinishes, AllFinish };
constexpr EnumNames<OrlojScore, 2> kOrlojScoreNames{
    {{OrlojScore::ExpectedFinishes, "expected_finishes"}, {OrlojScore::AllFinish, "all_finish"}}};

class Orloj final : public ServingPolicy {
 public:
  explicit Orloj(const PolicyArgs& args) {
    read_policy_params(args, param_specs(), [this](ParamReader& p) {
      batches_ = power_of_two_batches(read_max_batch(p, 4096));
      drop_quantile_ = p.number_in("drop_quantile", 0.0, 100.0);
      drop_ = p.flag("drop");
      score_ = p.choice("score", kOrlojScoreNames);
    });
  }

  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs{
        max_batch_param(16, "largest batch; candidates are the powers of two up to it"),
        param::number("drop_quantile", "", 1.0,
                      "percentile of a service's request times below which a request cannot "
                      "finish: waiting requests whose deadline is nearer are dropped"),
        param::flag("drop", true, "drop hopeless requests (false: run them late)"),
        param::choice("score", kOrlojScoreNames, OrlojScore::ExpectedFinishes,
                      "batch score: expected on-time finishes, or b x P(all finish)")};
    return specs;
  }
  [[nodiscard]] std::string_view name() const noexcept override { return "orloj"; }

 protected:
  std::optional<BatchChoice> choose(Context& ctx, std::span<const JobId> services) override {
    const TimeNs now = ctx.now();
    std::optional<BatchChoice> best;
    double best_value = -1;
    TimeNs best_head = kTimeNever;
    for (JobId job : services) {
      const Distribution& f = distribution(ctx, job);
      if (drop_) drop_hopeless(ctx, job, f, now);
      const std::size_t waiting = ctx.job(job).requests_waiting();
      if (waiting == 0) continue;
      const double single = static_cast<double>(ctx.serving().estimate_batch_ns(job, gpu(), 1));
      for (std::uint32_t b : batches_) {
        if (b > waiting) break;
        const double g =
            static_cast<double>(ctx.serving().estimate_batch_ns(job, gpu(), b)) / single;
        double score = 0;
        TimeNs head = kTimeNever;
        for (std::uint32_t i = 0; i < b; ++i) {
          const TimeNs d = ctx.serving().request_deadline(ctx.job(job).waiting_request(i));
          head = std::min(head, d);
          if (score_ == OrlojScore::ExpectedFinishes) score += f.cdf_max(budget(d, now) / g, b);
        }
        if (score_ == OrlojScore::AllFinish) score = b * f.cdf_max(budget(head, now) / g, b);
        const double value = score / std::max(1.0, g * f.mean_max(b));
        const bool better =
            value > best_value ||
            (value == best_value &&
             (head < best_head || (head == best_head && best && b > best->requests)));
        if (better) {
          best = BatchChoice{job, b};
          best_value = value;
          best_head = head;
        }
      }
    }
    return best;
  }

 private:
  /// A service's request-time distribution: its samples, sorted (ns).
  struct Distribution {
    std::vector<double> sorted;
    std::uint64_t version = ~std::uint64_t{0};  // the window's total_added() it was built at
    /// P(max of b independent draws <= x) = F(x)^b.
    [[nodiscard]] double cdf_max(double x, std::uint32_t b) const {
      const auto at_or_below = std::upper_bound(sorted.begin(), sorted.end(), x) - sorted.begin();
      const double f = static_cast<double>(at_or_below) / static_cast<double>(sorted.size());
      return std::pow(f, static_cast<double>(b));
    }
    /// E[max of b independent draws] of the empirical distribution: the k-th smallest of n
    /// samples is the max with probability (k/n)^b - ((k-1)/n)^b.
    [[nodiscard]] double mean_max(std::uint32_t b) const {
      const auto n = static_cast<double>(sorted.size());
      double mean = 0, below = 0;
      for (std::size_t k = 0; k < sorted.size(); ++k) {
        const double at = std::pow(static_cast<double>(k + 1) / n, static_cast<double>(b));
        mean += sorted[k] * (at - below);
        below = at;
      }
      return mean;
    }
    /// The q-th percentile (nearest rank).
    [[nodiscard]] double quantile(double q) const {
      const double rank = std::ceil(q / 100.0 * static_cast<double>(sorted.size()));
      const std::size_t i = std::min(rank < 1 ? std::size_t{0} : static_cast<std::size_t>(rank) - 1,
                                     sorted.size() - 1);
      return sorted[i];
    }
  };

  static double budget(TimeNs deadline, TimeNs now) {
    return deadline == kTimeNever ? 1e30 : static_cast<double>(deadline - now);
  }

  const Distribution& distribution(Context& ctx, JobId job) {
    Distribution& d = dists_[job];
    const ExecTimeWindow& w = ctx.serving().request_times(job);
    if (w.total_added() == d.version && !d.sorted.empty()) return d;
    d.version = w.total_added();
    d.sorted.clear();
    if (w.empty()) {
      d.sorted.push_back(static_cast<double>(ctx.serving().estimate_batch_ns(job, gpu(), 1)));
    } else {
      for (DurationNs s : w.samples()) d.sorted.push_back(static_cast<double>(s));
      std::sort(d.sorted.begin(), d.sorted.end());
    }
    return d;
  }

  void drop_hopeless(Context& ctx, JobId job, const Distribution& f, TimeNs now) {
    const auto q_min = static_cast<TimeNs>(f.quantile(drop_quantile_));
    // Waiting requests are in arrival (= deadline) order: the hopeless ones come first.
    while (ctx.job(job).requests_waiting() > 0) {
      const RequestId r = ctx.job(job).waiting_request(0);
      const TimeNs d = ctx.serving().request_deadline(r);
      if (d == kTimeNever || now + q_min <= d) break;
      ctx.serving().drop_request(r, "orloj: cannot finish even alone");
    }
  }

  std::vector<std::uint32_t> batches_;
  double drop_quantile_ = 1.0;
  bool drop_ = true;
  OrlojScore score_ = OrlojScore::ExpectedFinishes;
  std::map<JobId, Distribution> dists_;
};

GPUMUX_REGISTER_POLICY("orloj", Orloj,
                       "Orloj-like (reconstructed): SLO-aware batching of dynamic DNNs from "
                       "per-request execution-time distributions; drops hopeless requests");

}  // namespace
}  // namespace gpumux::policies
