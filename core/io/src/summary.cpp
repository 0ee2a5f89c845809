// Summary metrics from the event log. Nothing here looks at policy or device state: sim and
// real runs are summarised by the same code.
#include "gpumux/io/summary.hpp"

#include <stdexcept>

#include "gpumux/engine/tuning_spec.hpp"
#include "gpumux/io/finite_json.hpp"
#include "summary_state.hpp"

#include <algorithm>
#include <cmath>
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

using summary_detail::count_requests;
using summary_detail::DeviceAcc;
using summary_detail::JobAcc;
using summary_detail::phases_begun;
using summary_detail::RequestCounts;
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
  std::uint64_t operator[](JobOutcome o) const { return n[static_cast<std::size_t>(o)]; }
};

/// The mean of `v`; 0 for none.
double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

// Statistics of no finished job do not exist: null, not 0 s.
nlohmann::json mean_or_null(const std::vector<double>& v) {
  return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(mean(v));
}

nlohmann::json percentile_or_null(const std::vector<double>& v, double p) {
  return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(percentile(v, p));
}

/// What the job rows add up, for the sections after "jobs".
struct JobTotals {
  std::vector<double> all_latency, gpu_shares;
  std::map<std::string, double> tenant_gpu;
  double total_gpu = 0, train_samples = 0, train_rate_sum = 0, goodput_sum = 0;
  std::uint64_t slo_total = 0, slo_met = 0, slo_judged = 0, train_iters = 0;
  std::uint64_t requests_arrived = 0, requests_unserved = 0, slo_services = 0, train_jobs = 0;
  std::uint64_t requests_dropped = 0, slo_arrived = 0;
  OutcomeCounts outcomes_all{}, outcomes_training{};
  std::vector<double> train_jct, all_jct;
  std::vector<Interval> train_present;  // [arrival, end or run end) of each training job
};

/// A job's times, as its row states them.
struct JobTimes {
  bool arrived = false, finished = false;
  TimeNs end_or_run = 0;  ///< its end, or the run's end
  double jct_s = 0, present_s = 0;
};

nlohmann::json run_section(const State& st) {
  return {{"end_s", ns_to_seconds(st.end_ns)},
          {"last_job_end_s", ns_to_seconds(st.last_job_end)},
          {"events", st.events},
          {"runtime_events", st.runtime_events},
          {"preemptions", st.preemptions},
          {"migrations", st.migrations},
          {"contexts_started", st.contexts_started},
          {"ops_dropped", st.dropped},
          {"ops_aborted", st.aborted}};
}

/// What happened to the job, in one word (JobOutcome).
JobOutcome outcome_of(const JobAcc& a) {
  return a.end_reason == EndReason::Finished   ? JobOutcome::Finished
         : a.end_reason == EndReason::Stopped  ? JobOutcome::Stopped
         : a.end_reason == EndReason::Rejected ? JobOutcome::Rejected
         : a.arrival < 0                       ? JobOutcome::NotArrived
         : a.first_start < 0                   ? JobOutcome::NeverStarted
                                               : JobOutcome::Unfinished;
}

/// A training job's columns of its row, and its part of the training totals.
void add_training_fields(nlohmann::json& r, const JobSpec& spec, const JobAcc& a,
                         const JobTimes& tm, JobOutcome outcome, JobTotals& t) {
  ++t.outcomes_training[outcome];
  ++t.train_jobs;
  r["iterations"] = a.iterations;
  const double window_s =
      ns_to_seconds(tm.end_or_run - (a.first_start < 0 ? tm.end_or_run : a.first_start));
  const double samples = static_cast<double>(a.iterations) * spec.batch;
  r["samples"] = samples;
  r["samples_per_s"] = window_s > 0 ? samples / window_s : 0.0;  // while it ran
  r["samples_per_s_present"] = ratio_or_null(samples, tm.present_s);
  if (tm.present_s > 0) t.train_rate_sum += samples / tm.present_s;
  if (tm.arrived) t.train_present.emplace_back(a.arrival, tm.end_or_run);
  t.train_samples += samples;
  t.train_iters += a.iterations;
  if (tm.finished) t.train_jct.push_back(tm.jct_s);
}

/// A service's SLO columns (it has an SLO), and its part of the SLO totals.
void add_slo_fields(nlohmann::json& r, const JobSpec& spec, const JobAcc& a,
                    const RequestCounts& rc, double present_s, JobTotals& t) {
  const std::uint64_t served = a.latencies_ms.size();
  ++t.slo_services;
  const std::uint64_t judged = served + rc.slo_missed_unserved;
  r["slo_ms"] = ns_to_ms(spec.slo_ns);
  r["slo_met"] = a.slo_met;
  r["slo_attainment"] = ratio_or_null(static_cast<double>(a.slo_met), static_cast<double>(served));
  r["slo_attainment_arrived"] =
      ratio_or_null(static_cast<double>(a.slo_met), static_cast<double>(judged));
  r["goodput_per_s"] = ratio_or_null(static_cast<double>(a.slo_met), present_s);
  // Finish rate (D38): on time / arrived; dropped, late and unserved requests all fail.
  r["finish_rate"] = ratio_or_null(static_cast<double>(a.slo_met), static_cast<double>(rc.arrived));
  r["late_rate"] =
      ratio_or_null(static_cast<double>(served - a.slo_met), static_cast<double>(rc.arrived));
  t.slo_arrived += rc.arrived;
  if (present_s > 0) t.goodput_sum += static_cast<double>(a.slo_met) / present_s;
  t.slo_total += served;
  t.slo_judged += judged;
  t.slo_met += a.slo_met;
}

/// A service's columns of its row (requests, latency, SLO, closed-loop phases), and its part
/// of the inference totals.
void add_service_fields(nlohmann::json& r, const JobSpec& spec, JobAcc& a, TimeNs makespan,
                        double present_s, JobTotals& t) {
  const std::uint64_t served = a.latencies_ms.size();
  const RequestCounts rc = count_requests(spec, a, makespan);
  r["requests"] = served;
  r["requests_arrived"] = rc.arrived;
  r["requests_unserved"] = rc.unserved;
  r["latency"] = latency_stats(a.latencies_ms);
  r["latency_cdf_ms"] = latency_cdf(a.latencies_ms);
  r["requests_dropped"] = a.dropped;
  r["drop_rate"] = ratio_or_null(static_cast<double>(a.dropped), static_cast<double>(rc.arrived));
  t.requests_arrived += rc.arrived;
  t.requests_unserved += rc.unserved;
  t.requests_dropped += a.dropped;
  if (spec.slo_ns > 0) add_slo_fields(r, spec, a, rc, present_s, t);
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
  t.all_latency.insert(t.all_latency.end(), a.latencies_ms.begin(), a.latencies_ms.end());
}

/// One job's row of "jobs"; adds the job to the totals.
nlohmann::json job_row(const JobSpec& spec, JobAcc& a, TimeNs makespan, JobTotals& t) {
  nlohmann::json r;
  r["name"] = spec.name;
  r["kind"] = std::string(to_string(spec.kind));
  r["model"] = spec.model;
  r["batch"] = spec.batch;
  r["tenant"] = spec.tenant;
  r["status"] = a.status;
  JobTimes tm;
  tm.arrived = a.arrival >= 0;
  tm.finished = a.end_reason == EndReason::Finished;
  const JobOutcome outcome = outcome_of(a);
  r["outcome"] = to_string(outcome);
  ++t.outcomes_all[outcome];
  r["arrival_s"] = ns_to_seconds(spec.arrival_ns);
  r["end_s"] = a.end < 0 ? nlohmann::json(nullptr) : nlohmann::json(ns_to_seconds(a.end));
  tm.end_or_run = a.end < 0 ? makespan : a.end;
  tm.jct_s = ns_to_seconds(tm.end_or_run - spec.arrival_ns);
  r["jct_s"] = tm.jct_s;
  // Time the job was present: arrival to its end (finished or rejected) or the run's end.
  tm.present_s = tm.arrived ? ns_to_seconds(std::max<TimeNs>(0, tm.end_or_run - a.arrival)) : 0.0;
  r["present_s"] = tm.present_s;
  r["gpu_time_s"] = ns_to_seconds(a.gpu_ns);
  if (tm.finished) t.all_jct.push_back(tm.jct_s);
  t.total_gpu += ns_to_seconds(a.gpu_ns);
  t.tenant_gpu[spec.tenant] += ns_to_seconds(a.gpu_ns);
  if (tm.arrived) t.gpu_shares.push_back(ns_to_seconds(a.gpu_ns));
  if (spec.kind == JobKind::Training) {
    add_training_fields(r, spec, a, tm, outcome, t);
  } else {
    add_service_fields(r, spec, a, makespan, tm.present_s, t);
  }
  return r;
}

nlohmann::json inference_section(const JobTotals& t) {
  const nlohmann::json none(nullptr);
  nlohmann::json inf = latency_stats(t.all_latency);
  inf["requests_arrived"] = t.requests_arrived;
  inf["requests_unserved"] = t.requests_unserved;
  inf["slo_attainment"] =
      ratio_or_null(static_cast<double>(t.slo_met), static_cast<double>(t.slo_total));
  inf["slo_met"] = t.slo_services == 0 ? none : nlohmann::json(t.slo_met);
  inf["slo_attainment_arrived"] =
      ratio_or_null(static_cast<double>(t.slo_met), static_cast<double>(t.slo_judged));
  inf["goodput_per_s"] = t.slo_services == 0 ? none : nlohmann::json(t.goodput_sum);
  inf["requests_dropped"] = t.requests_dropped;
  inf["drop_rate"] = ratio_or_null(static_cast<double>(t.requests_dropped),
                                   static_cast<double>(t.requests_arrived));
  inf["finish_rate"] =
      ratio_or_null(static_cast<double>(t.slo_met), static_cast<double>(t.slo_arrived));
  inf["late_rate"] = ratio_or_null(static_cast<double>(t.slo_total - t.slo_met),
                                   static_cast<double>(t.slo_arrived));
  return inf;
}

nlohmann::json training_section(const JobTotals& t, double makespan_s) {
  const OutcomeCounts& o = t.outcomes_training;
  const double train_present_s = ns_to_seconds(union_length(t.train_present));
  return {{"iterations", t.train_iters},
          {"samples", t.train_samples},
          {"samples_per_s_over_run", makespan_s > 0 ? t.train_samples / makespan_s : 0.0},
          {"samples_per_s_present_sum", t.train_rate_sum},
          {"present_s", train_present_s},
          {"samples_per_s_while_present", ratio_or_null(t.train_samples, train_present_s)},
          {"mean_jct_s", mean_or_null(t.train_jct)},
          {to_string(JobOutcome::Finished), t.train_jct.size()},
          {"jobs", t.train_jobs},
          {to_string(JobOutcome::Rejected), o[JobOutcome::Rejected]},
          {to_string(JobOutcome::Unfinished), o[JobOutcome::Unfinished]},
          {to_string(JobOutcome::NeverStarted), o[JobOutcome::NeverStarted]},
          {to_string(JobOutcome::NotArrived), o[JobOutcome::NotArrived]},
          {to_string(JobOutcome::Stopped), o[JobOutcome::Stopped]}};
}

nlohmann::json jobs_overall_section(const JobTotals& t, std::size_t jobs, TimeNs last_job_end) {
  const OutcomeCounts& o = t.outcomes_all;
  return {{"jobs", jobs},
          {to_string(JobOutcome::Finished), t.all_jct.size()},
          {to_string(JobOutcome::Rejected), o[JobOutcome::Rejected]},
          {to_string(JobOutcome::Unfinished), o[JobOutcome::Unfinished]},
          {to_string(JobOutcome::NeverStarted), o[JobOutcome::NeverStarted]},
          {to_string(JobOutcome::NotArrived), o[JobOutcome::NotArrived]},
          {to_string(JobOutcome::Stopped), o[JobOutcome::Stopped]},
          {"mean_jct_s", mean_or_null(t.all_jct)},
          {"p50_jct_s", percentile_or_null(t.all_jct, 50)},
          {"p95_jct_s", percentile_or_null(t.all_jct, 95)},
          {"makespan_s", ns_to_seconds(last_job_end)}};
}

nlohmann::json fairness_section(const JobTotals& t) {
  nlohmann::json tenants = nlohmann::json::object();
  for (const auto& [name, g] : t.tenant_gpu) {
    tenants[name] = t.total_gpu > 0 ? g / t.total_gpu : 0.0;
  }
  return {{"jain_gpu_time", jain_index(t.gpu_shares)}, {"tenant_gpu_share", tenants}};
}

nlohmann::json devices_section(const State& st, TimeNs makespan) {
  nlohmann::json devs = nlohmann::json::array();
  for (std::size_t d = 0; d < st.devices.size(); ++d) {
    const double denom = makespan > 0 ? static_cast<double>(makespan) : 1.0;
    const DeviceAcc& dev = st.devices[d];
    devs.push_back({{"device", d},
                    {"compute_utilisation", static_cast<double>(dev.compute.total()) / denom},
                    {"h2d_utilisation", static_cast<double>(dev.h2d.total()) / denom},
                    {"d2h_utilisation", static_cast<double>(dev.d2h.total()) / denom},
                    {"memory_peak_bytes", dev.mem_peak},
                    {"timeslice_switches", dev.slices}});
  }
  return devs;
}

nlohmann::json policy_metrics_section(const State& st) {
  nlohmann::json pm = nlohmann::json::object();
  for (const auto& [name, v] : st.metrics) {
    pm[name] = {{"count", v.size()},
                {"mean", mean(v)},
                {"min", *std::min_element(v.begin(), v.end())},
                {"max", *std::max_element(v.begin(), v.end())},
                {"p50", percentile(v, 50)},
                {"p99", percentile(v, 99)}};
  }
  return pm;
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
  const TimeNs makespan = st.end_ns;
  const double makespan_s = ns_to_seconds(makespan);

  nlohmann::json out;
  out["run"] = run_section(st);
  JobTotals totals;
  nlohmann::json job_rows = nlohmann::json::array();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    job_rows.push_back(job_row(jobs[i], st.acc[i], makespan, totals));
  }
  out["jobs"] = job_rows;
  out["inference"] = inference_section(totals);
  out["training"] = training_section(totals, makespan_s);
  out["jobs_overall"] = jobs_overall_section(totals, jobs.size(), st.last_job_end);
  out["fairness"] = fairness_section(totals);
  out["devices"] = devices_section(st, makespan);
  out["tuning"] = summary_detail::tuning_section(st);
  out["policy_metrics"] = policy_metrics_section(st);
  // JSON has no NaN or infinity: such a number is written as null, and "non_finite" names
  // it (present only then; docs/outputs.md).
  if (nlohmann::json bad = null_non_finite(out); !bad.empty()) out["non_finite"] = std::move(bad);
  return out;
}

}  // namespace gpumux
