// Summary metrics from the event log. Nothing here looks at policy or device state: sim and
// real runs are summarised by the same code.
#include "gpumux/io/summary.hpp"

#include <stdexcept>

#include "gpumux/engine/tuning_spec.hpp"
#include "gpumux/io/finite_json.hpp"
#include "summary_state.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <ostream>

namespace gpumux {

double percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0.0;
  // Nearest rank: the smallest value with at least p% of the samples at or below it. The
  // value at that rank is what a full sort would put there (linear time, not n log n).
  const double rank = std::ceil(p / 100.0 * static_cast<double>(samples.size()));
  const std::size_t idx =
      std::min(rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1, samples.size() - 1);
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(idx),
                   samples.end());
  return samples[idx];
}

double jain_index(const std::vector<double>& shares) {
  if (shares.empty()) return 1.0;
  double sum = 0, sum_sq = 0;
  for (double s : shares) {
    sum += s;
    sum_sq += s * s;
  }
  if (sum_sq == 0) return 1.0;
  return sum * sum / (static_cast<double>(shares.size()) * sum_sq);
}

using summary_detail::DeviceAcc;
using summary_detail::JobAcc;
using summary_detail::State;

namespace {

using Interval = std::pair<TimeNs, TimeNs>;

/// Total length of the union of intervals.
TimeNs union_length(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  TimeNs total = 0, cur_start = 0, cur_end = -1;
  for (const auto& [s, e] : v) {
    if (e <= s) continue;
    if (s > cur_end) {
      if (cur_end > cur_start) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (cur_end > cur_start) total += cur_end - cur_start;
  return total;
}

/// Latency statistics; with no sample every statistic is null (no request served has no
/// latency, and 0 ms would read as "instant").
nlohmann::json latency_stats(const std::vector<double>& ms) {
  nlohmann::json j;
  j["count"] = ms.size();
  const nlohmann::json none(nullptr);
  if (ms.empty()) {
    for (const char* k : {"mean_ms", "p50_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms", "min_ms"}) {
      j[k] = none;
    }
    return j;
  }
  double sum = 0;
  for (double v : ms) sum += v;
  j["mean_ms"] = sum / static_cast<double>(ms.size());
  j["p50_ms"] = percentile(ms, 50);
  j["p95_ms"] = percentile(ms, 95);
  j["p99_ms"] = percentile(ms, 99);
  j["p999_ms"] = percentile(ms, 99.9);
  j["max_ms"] = *std::max_element(ms.begin(), ms.end());
  j["min_ms"] = *std::min_element(ms.begin(), ms.end());
  return j;
}

/// The latency CDF of a service: its latency at every 5th percentile, p0 (the fastest) to
/// p100 (the slowest), nearest rank; null with no request served.
nlohmann::json latency_cdf(std::vector<double> ms) {
  if (ms.empty()) return nullptr;
  std::sort(ms.begin(), ms.end());
  nlohmann::json out = nlohmann::json::array();
  for (int p = 0; p <= 100; p += 5) {
    // p x n first: exact, so a whole rank stays whole (0.55 x 100 is 55.00000000000001).
    const double rank = std::ceil(static_cast<double>(p) * static_cast<double>(ms.size()) / 100.0);
    const std::size_t idx =
        std::min(rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1, ms.size() - 1);
    out.push_back(ms[idx]);
  }
  return out;
}

/// num / den, or null when den is not positive (a rate or share of nothing).
nlohmann::json ratio_or_null(double num, double den) {
  return den > 0 ? nlohmann::json(num / den) : nlohmann::json(nullptr);
}

/// Jobs per outcome.
struct OutcomeCounts {
  std::array<std::uint64_t, kJobOutcomeNames.size()> n{};
  std::uint64_t& operator[](JobOutcome o) { return n[static_cast<std::size_t>(o)]; }
};

struct RequestCounts {
  std::uint64_t arrived = 0, unserved = 0, slo_missed_unserved = 0;
};

/// Requests that arrived before the run's end, and those of them never served. An open-loop
/// service's arrivals come from its spec: requests due after the service was rejected are never
/// logged, but they arrived and were not served. A closed-loop client's come from the log.
/// An unserved request whose SLO deadline passed before the end counts as an SLO miss; one
/// whose deadline lies beyond the end is not judged.
RequestCounts count_requests(const JobSpec& spec, JobAcc& a, TimeNs end_ns) {
  std::vector<TimeNs> arrivals;
  if (spec.closed_loop.enabled) {
    arrivals = a.arrivals;
  } else {
    for (TimeNs t : spec.requests_ns) {
      if (t <= end_ns) arrivals.push_back(t);
    }
    // Never fewer than logged (a platform may log what the spec does not list).
    if (arrivals.size() < a.arrivals.size()) arrivals = a.arrivals;
  }
  std::sort(arrivals.begin(), arrivals.end());
  std::sort(a.served_arrivals.begin(), a.served_arrivals.end());
  RequestCounts c;
  c.arrived = arrivals.size();
  // A served request's logged arrival is its spec time in the simulator, and a little later
  // on a real platform (its timer fired late: 7-36 us on the H100 machine, 2026-11-25). So
  // the requests due at t are matched by served arrivals in [t, next due time).
  std::size_t k = 0;
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    const TimeNs t = arrivals[i];
    const auto next =
        std::upper_bound(arrivals.begin() + static_cast<std::ptrdiff_t>(i), arrivals.end(), t);
    const TimeNs until = next == arrivals.end() ? std::numeric_limits<TimeNs>::max() : *next;
    while (k < a.served_arrivals.size() && a.served_arrivals[k] < t) ++k;
    if (k < a.served_arrivals.size() && a.served_arrivals[k] < until) {
      ++k;  // served
      continue;
    }
    ++c.unserved;
    if (spec.slo_ns > 0 && t + spec.slo_ns < end_ns) ++c.slo_missed_unserved;
  }
  return c;
}

/// Number of "on" phases of a closed-loop client that began before `until` (and before the
/// client's end).
std::uint64_t phases_begun(const ClosedLoop& c, TimeNs until) {
  if (c.on_ns <= 0) return 0;
  const TimeNs stop = std::min(until, c.end_ns);
  if (stop <= c.start_ns) return 0;
  const DurationNs period = c.on_ns + c.off_ns;
  return static_cast<std::uint64_t>((stop - c.start_ns + period - 1) / period);
}

}  // namespace

SummaryAccumulator::SummaryAccumulator(const std::vector<JobSpec>& jobs, std::size_t device_count,
                                       bool bounded)
    : s_(std::make_unique<State>()) {
  s_->jobs = &jobs;
  s_->bounded = bounded;
  s_->acc.resize(jobs.size());
  s_->devices.resize(device_count);
  for (const JobSpec& j : jobs) {
    if (j.trial && j.trial->tuning->index >= s_->tuning.size()) {
      s_->tuning.resize(j.trial->tuning->index + 1);
    }
  }
}

SummaryAccumulator::~SummaryAccumulator() = default;

std::size_t SummaryAccumulator::open_busy_pieces() const noexcept {
  std::size_t n = 0;
  for (const auto& d : s_->devices) {
    n += d.compute.open_pieces() + d.h2d.open_pieces() + d.d2h.open_pieces();
  }
  return n;
}

std::uint64_t SummaryAccumulator::late_intervals() const noexcept {
  std::uint64_t n = 0;
  for (const auto& d : s_->devices) n += d.compute.late() + d.h2d.late() + d.d2h.late();
  return n;
}

nlohmann::json summarize(const EventLog& log, const std::vector<JobSpec>& jobs,
                         std::size_t device_count) {
  // A log may come from anywhere (a file, a test), in any order: keep every busy piece.
  SummaryAccumulator acc(jobs, device_count, /*bounded=*/false);
  for (const Event& e : log.events()) acc.on_event(e);
  return acc.finish();
}

nlohmann::json SummaryAccumulator::finish() {
  if (finished_) throw std::logic_error("SummaryAccumulator::finish called twice");
  finished_ = true;
  State& st = *s_;
  const std::vector<JobSpec>& jobs = *st.jobs;
  const std::size_t device_count = st.devices.size();
  std::vector<JobAcc>& acc = st.acc;
  const TimeNs end_ns = st.end_ns;
  const TimeNs last_job_end = st.last_job_end;
  const TimeNs makespan = end_ns;
  const double makespan_s = ns_to_seconds(makespan);

  nlohmann::json out;
  out["run"] = {{"end_s", makespan_s},
                {"last_job_end_s", ns_to_seconds(last_job_end)},
                {"events", st.events},
                {"runtime_events", st.runtime_events},
                {"preemptions", st.preemptions},
                {"migrations", st.migrations},
                {"contexts_started", st.contexts_started},
                {"ops_dropped", st.dropped},
                {"ops_aborted", st.aborted}};

  nlohmann::json job_rows = nlohmann::json::array();
  std::vector<double> all_latency, gpu_shares;
  std::map<std::string, double> tenant_gpu;
  double total_gpu = 0, train_samples = 0, train_rate_sum = 0, goodput_sum = 0;
  std::uint64_t slo_total = 0, slo_met = 0, slo_judged = 0, train_iters = 0;
  std::uint64_t requests_arrived = 0, requests_unserved = 0, slo_services = 0, train_jobs = 0;
  std::uint64_t requests_dropped = 0, slo_arrived = 0;
  OutcomeCounts outcomes_all{}, outcomes_training{};
  std::vector<double> train_jct, all_jct;
  std::vector<Interval> train_present;  // [arrival, end or run end) of each training job
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const JobSpec& spec = jobs[i];
    JobAcc& a = acc[i];
    nlohmann::json r;
    r["name"] = spec.name;
    r["kind"] = std::string(to_string(spec.kind));
    r["model"] = spec.model;
    r["batch"] = spec.batch;
    r["tenant"] = spec.tenant;
    r["status"] = a.status;
    // What happened to the job, in one word (JobOutcome).
    const bool arrived = a.arrival >= 0;
    const bool finished = a.end_reason == EndReason::Finished;
    const JobOutcome outcome = finished                              ? JobOutcome::Finished
                               : a.end_reason == EndReason::Stopped  ? JobOutcome::Stopped
                               : a.end_reason == EndReason::Rejected ? JobOutcome::Rejected
                               : !arrived                            ? JobOutcome::NotArrived
                               : a.first_start < 0                   ? JobOutcome::NeverStarted
                                                                     : JobOutcome::Unfinished;
    r["outcome"] = to_string(outcome);
    ++outcomes_all[outcome];
    r["arrival_s"] = ns_to_seconds(spec.arrival_ns);
    r["end_s"] = a.end < 0 ? nlohmann::json(nullptr) : nlohmann::json(ns_to_seconds(a.end));
    const TimeNs end_or_run = a.end < 0 ? makespan : a.end;
    const double jct_s = ns_to_seconds(end_or_run - spec.arrival_ns);
    r["jct_s"] = jct_s;
    // Time the job was present: arrival to its end (finished or rejected) or the run's end.
    const double present_s =
        arrived ? ns_to_seconds(std::max<TimeNs>(0, end_or_run - a.arrival)) : 0.0;
    r["present_s"] = present_s;
    r["gpu_time_s"] = ns_to_seconds(a.gpu_ns);
    if (finished) all_jct.push_back(jct_s);
    total_gpu += ns_to_seconds(a.gpu_ns);
    tenant_gpu[spec.tenant] += ns_to_seconds(a.gpu_ns);
    if (arrived) gpu_shares.push_back(ns_to_seconds(a.gpu_ns));
    if (spec.kind == JobKind::Training) {
      ++outcomes_training[outcome];
      ++train_jobs;
      r["iterations"] = a.iterations;
      const double window_s =
          ns_to_seconds(end_or_run - (a.first_start < 0 ? end_or_run : a.first_start));
      const double samples = static_cast<double>(a.iterations) * spec.batch;
      r["samples"] = samples;
      r["samples_per_s"] = window_s > 0 ? samples / window_s : 0.0;  // while it ran
      r["samples_per_s_present"] = ratio_or_null(samples, present_s);
      if (present_s > 0) train_rate_sum += samples / present_s;
      if (arrived) train_present.emplace_back(a.arrival, end_or_run);
      train_samples += samples;
      train_iters += a.iterations;
      if (finished) train_jct.push_back(jct_s);
    } else {
      const std::uint64_t served = a.latencies_ms.size();
      const RequestCounts rc = count_requests(spec, a, makespan);
      r["requests"] = served;
      r["requests_arrived"] = rc.arrived;
      r["requests_unserved"] = rc.unserved;
      r["latency"] = latency_stats(a.latencies_ms);
      r["latency_cdf_ms"] = latency_cdf(a.latencies_ms);
      r["requests_dropped"] = a.dropped;
      r["drop_rate"] =
          ratio_or_null(static_cast<double>(a.dropped), static_cast<double>(rc.arrived));
      requests_arrived += rc.arrived;
      requests_unserved += rc.unserved;
      requests_dropped += a.dropped;
      if (spec.slo_ns > 0) {
        ++slo_services;
        const std::uint64_t judged = served + rc.slo_missed_unserved;
        r["slo_ms"] = ns_to_ms(spec.slo_ns);
        r["slo_met"] = a.slo_met;
        r["slo_attainment"] =
            ratio_or_null(static_cast<double>(a.slo_met), static_cast<double>(served));
        r["slo_attainment_arrived"] =
            ratio_or_null(static_cast<double>(a.slo_met), static_cast<double>(judged));
        r["goodput_per_s"] = ratio_or_null(static_cast<double>(a.slo_met), present_s);
        // Finish rate (D38): on time / arrived; dropped, late and unserved requests all fail.
        r["finish_rate"] =
            ratio_or_null(static_cast<double>(a.slo_met), static_cast<double>(rc.arrived));
        r["late_rate"] =
            ratio_or_null(static_cast<double>(served - a.slo_met), static_cast<double>(rc.arrived));
        slo_arrived += rc.arrived;
        if (present_s > 0) goodput_sum += static_cast<double>(a.slo_met) / present_s;
        slo_total += served;
        slo_judged += judged;
        slo_met += a.slo_met;
      }
      const ClosedLoop& c = spec.closed_loop;
      if (c.enabled && c.on_ns > 0) {
        const std::uint64_t phases = phases_begun(c, makespan);
        r["phases"] = {{"on_s", ns_to_seconds(c.on_ns)},
                       {"off_s", ns_to_seconds(c.off_ns)},
                       {"count", phases},
                       {"requests_in_phase", a.in_phase},
                       {"requests_in_phase_per_s",
                        ratio_or_null(static_cast<double>(a.in_phase),
                                      static_cast<double>(phases) * ns_to_seconds(c.on_ns))}};
      }
      all_latency.insert(all_latency.end(), a.latencies_ms.begin(), a.latencies_ms.end());
    }
    job_rows.push_back(r);
  }
  out["jobs"] = job_rows;

  const nlohmann::json none(nullptr);
  nlohmann::json inf = latency_stats(all_latency);
  inf["requests_arrived"] = requests_arrived;
  inf["requests_unserved"] = requests_unserved;
  inf["slo_attainment"] =
      ratio_or_null(static_cast<double>(slo_met), static_cast<double>(slo_total));
  inf["slo_met"] = slo_services == 0 ? none : nlohmann::json(slo_met);
  inf["slo_attainment_arrived"] =
      ratio_or_null(static_cast<double>(slo_met), static_cast<double>(slo_judged));
  inf["goodput_per_s"] = slo_services == 0 ? none : nlohmann::json(goodput_sum);
  inf["requests_dropped"] = requests_dropped;
  inf["drop_rate"] =
      ratio_or_null(static_cast<double>(requests_dropped), static_cast<double>(requests_arrived));
  inf["finish_rate"] =
      ratio_or_null(static_cast<double>(slo_met), static_cast<double>(slo_arrived));
  inf["late_rate"] =
      ratio_or_null(static_cast<double>(slo_total - slo_met), static_cast<double>(slo_arrived));
  out["inference"] = inf;

  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  // Statistics of no finished job do not exist: null, not 0 s.
  auto mean_or_null = [&](const std::vector<double>& v) {
    return v.empty() ? none : nlohmann::json(mean(v));
  };
  auto percentile_or_null = [&](const std::vector<double>& v, double p) {
    return v.empty() ? none : nlohmann::json(percentile(v, p));
  };
  const double train_present_s = ns_to_seconds(union_length(train_present));
  out["training"] = {
      {"iterations", train_iters},
      {"samples", train_samples},
      {"samples_per_s_over_run", makespan_s > 0 ? train_samples / makespan_s : 0.0},
      {"samples_per_s_present_sum", train_rate_sum},
      {"present_s", train_present_s},
      {"samples_per_s_while_present", ratio_or_null(train_samples, train_present_s)},
      {"mean_jct_s", mean_or_null(train_jct)},
      {to_string(JobOutcome::Finished), train_jct.size()},
      {"jobs", train_jobs},
      {to_string(JobOutcome::Rejected), outcomes_training[JobOutcome::Rejected]},
      {to_string(JobOutcome::Unfinished), outcomes_training[JobOutcome::Unfinished]},
      {to_string(JobOutcome::NeverStarted), outcomes_training[JobOutcome::NeverStarted]},
      {to_string(JobOutcome::NotArrived), outcomes_training[JobOutcome::NotArrived]},
      {to_string(JobOutcome::Stopped), outcomes_training[JobOutcome::Stopped]}};
  out["jobs_overall"] = {
      {"jobs", jobs.size()},
      {to_string(JobOutcome::Finished), all_jct.size()},
      {to_string(JobOutcome::Rejected), outcomes_all[JobOutcome::Rejected]},
      {to_string(JobOutcome::Unfinished), outcomes_all[JobOutcome::Unfinished]},
      {to_string(JobOutcome::NeverStarted), outcomes_all[JobOutcome::NeverStarted]},
      {to_string(JobOutcome::NotArrived), outcomes_all[JobOutcome::NotArrived]},
      {to_string(JobOutcome::Stopped), outcomes_all[JobOutcome::Stopped]},
      {"mean_jct_s", mean_or_null(all_jct)},
      {"p50_jct_s", percentile_or_null(all_jct, 50)},
      {"p95_jct_s", percentile_or_null(all_jct, 95)},
      {"makespan_s", ns_to_seconds(last_job_end)}};

  nlohmann::json tenants = nlohmann::json::object();
  for (const auto& [t, g] : tenant_gpu) tenants[t] = total_gpu > 0 ? g / total_gpu : 0.0;
  out["fairness"] = {{"jain_gpu_time", jain_index(gpu_shares)}, {"tenant_gpu_share", tenants}};

  nlohmann::json devs = nlohmann::json::array();
  for (std::size_t d = 0; d < device_count; ++d) {
    const double denom = makespan > 0 ? static_cast<double>(makespan) : 1.0;
    const DeviceAcc& dev = st.devices[d];
    devs.push_back({{"device", d},
                    {"compute_utilisation", static_cast<double>(dev.compute.total()) / denom},
                    {"h2d_utilisation", static_cast<double>(dev.h2d.total()) / denom},
                    {"d2h_utilisation", static_cast<double>(dev.d2h.total()) / denom},
                    {"memory_peak_bytes", dev.mem_peak},
                    {"timeslice_switches", dev.slices}});
  }
  out["devices"] = devs;
  out["tuning"] = summary_detail::tuning_section(st);

  nlohmann::json pm = nlohmann::json::object();
  for (const auto& [name, v] : st.metrics) {
    pm[name] = {{"count", v.size()},
                {"mean", mean(v)},
                {"min", *std::min_element(v.begin(), v.end())},
                {"max", *std::max_element(v.begin(), v.end())},
                {"p50", percentile(v, 50)},
                {"p99", percentile(v, 99)}};
  }
  out["policy_metrics"] = pm;
  // JSON has no NaN or infinity: such a number is written as null, and "non_finite" names
  // it (present only then; docs/outputs.md).
  if (nlohmann::json bad = null_non_finite(out); !bad.empty()) out["non_finite"] = std::move(bad);
  return out;
}

}  // namespace gpumux
