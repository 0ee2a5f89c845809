// Summary metrics from the event log. Nothing here looks at policy or device state: sim and
// real runs are summarised by the same code.
#include "gpumux/summary.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>

namespace gpumux {

double percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0.0;
  std::sort(samples.begin(), samples.end());
  // Nearest rank: the smallest value with at least p% of the samples at or below it.
  const double rank = std::ceil(p / 100.0 * static_cast<double>(samples.size()));
  const std::size_t idx = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return samples[std::min(idx, samples.size() - 1)];
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

nlohmann::json latency_stats(const std::vector<double>& ms) {
  nlohmann::json j;
  double sum = 0;
  for (double v : ms) sum += v;
  j["count"] = ms.size();
  j["mean_ms"] = ms.empty() ? 0.0 : sum / static_cast<double>(ms.size());
  j["p50_ms"] = percentile(ms, 50);
  j["p95_ms"] = percentile(ms, 95);
  j["p99_ms"] = percentile(ms, 99);
  j["p999_ms"] = percentile(ms, 99.9);
  j["max_ms"] = ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end());
  j["min_ms"] = ms.empty() ? 0.0 : *std::min_element(ms.begin(), ms.end());
  return j;
}

struct JobAcc {
  TimeNs arrival = -1, first_start = -1, end = -1;
  std::string status = "unfinished";
  std::uint64_t iterations = 0;
  TimeNs gpu_ns = 0;
  std::vector<double> latencies_ms;
  std::uint64_t slo_met = 0;
};

}  // namespace

nlohmann::json summarize(const EventLog& log, const std::vector<JobSpec>& jobs,
                         std::size_t device_count) {
  std::vector<JobAcc> acc(jobs.size());
  std::vector<std::vector<Interval>> compute(device_count), h2d(device_count), d2h(device_count);
  std::vector<std::int64_t> mem_now(device_count, 0), mem_peak(device_count, 0);
  std::vector<std::uint64_t> slices(device_count, 0);
  std::map<std::string, std::vector<double>> metrics;
  std::uint64_t preemptions = 0, migrations = 0, contexts_started = 0, dropped = 0, aborted = 0;
  TimeNs end_ns = 0, last_job_end = 0;
  std::uint64_t runtime_events = 0;

  for (const Event& e : log.events()) {
    end_ns = std::max(end_ns, e.t_ns);
    const bool has_job = e.job != kNoJob && e.job < jobs.size();
    switch (e.kind) {
      case EventKind::JobArrival:
        if (has_job) acc[e.job].arrival = e.t_ns;
        break;
      case EventKind::OpStart:
        if (has_job && acc[e.job].first_start < 0) acc[e.job].first_start = e.t_ns;
        break;
      case EventKind::OpEnd: {
        if (e.status == OpStatus::Dropped) ++dropped;
        if (e.status == OpStatus::Aborted) ++aborted;
        if (e.device >= device_count) break;
        const Interval iv{e.a, e.t_ns};
        if (e.op_kind == OpKind::Compute) {
          compute[e.device].push_back(iv);
          if (has_job && e.status == OpStatus::Ok) acc[e.job].gpu_ns += e.t_ns - e.a;
        } else if (e.op_kind == OpKind::CopyH2D) {
          h2d[e.device].push_back(iv);
        } else if (e.op_kind == OpKind::CopyD2H || e.op_kind == OpKind::CopyD2D) {
          d2h[e.device].push_back(iv);
        }
        break;
      }
      case EventKind::RequestEnd:
        if (has_job) {
          const double ms = static_cast<double>(e.b) * 1e-6;
          acc[e.job].latencies_ms.push_back(ms);
          const DurationNs slo = jobs[e.job].slo_ns;
          if (slo > 0 && e.b <= slo) ++acc[e.job].slo_met;
        }
        break;
      case EventKind::IterationEnd:
        if (has_job) acc[e.job].iterations = static_cast<std::uint64_t>(e.a);
        break;
      case EventKind::JobEnd:
        if (has_job) {
          acc[e.job].end = e.t_ns;
          acc[e.job].status = std::string(e.label);
          if (e.label != "horizon") last_job_end = std::max(last_job_end, e.t_ns);
        }
        break;
      case EventKind::Alloc:
        if (e.device < device_count) {
          mem_now[e.device] += e.a;
          mem_peak[e.device] = std::max(mem_peak[e.device], mem_now[e.device]);
        }
        break;
      case EventKind::Free:
        if (e.device < device_count) mem_now[e.device] -= e.a;
        break;
      case EventKind::ContextCreate:
        if (e.b > 0) ++contexts_started;
        break;
      case EventKind::Preempt: ++preemptions; break;
      case EventKind::Migrate: ++migrations; break;
      case EventKind::PolicyMetric: metrics[std::string(e.label)].push_back(e.value); break;
      case EventKind::DeviceNote:
        if (e.device < device_count && e.label == "timeslice") ++slices[e.device];
        break;
      case EventKind::RunEnd: runtime_events = static_cast<std::uint64_t>(e.a); break;
      default: break;
    }
  }
  const TimeNs makespan = end_ns;
  const double makespan_s = ns_to_seconds(makespan);

  nlohmann::json out;
  out["run"] = {{"end_s", makespan_s},
                {"last_job_end_s", ns_to_seconds(last_job_end)},
                {"events", log.size()},
                {"runtime_events", runtime_events},
                {"preemptions", preemptions},
                {"migrations", migrations},
                {"contexts_started", contexts_started},
                {"ops_dropped", dropped},
                {"ops_aborted", aborted}};

  nlohmann::json job_rows = nlohmann::json::array();
  std::vector<double> all_latency, gpu_shares;
  std::map<std::string, double> tenant_gpu;
  double total_gpu = 0, train_samples = 0;
  std::uint64_t slo_total = 0, slo_met = 0, train_iters = 0;
  std::vector<double> train_jct, all_jct;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const JobSpec& spec = jobs[i];
    const JobAcc& a = acc[i];
    nlohmann::json r;
    r["name"] = spec.name;
    r["kind"] = std::string(to_string(spec.kind));
    r["model"] = spec.model;
    r["batch"] = spec.batch;
    r["tenant"] = spec.tenant;
    r["status"] = a.status;
    r["arrival_s"] = ns_to_seconds(spec.arrival_ns);
    r["end_s"] = a.end < 0 ? nlohmann::json(nullptr) : nlohmann::json(ns_to_seconds(a.end));
    const TimeNs end_or_run = a.end < 0 ? makespan : a.end;
    const double jct_s = ns_to_seconds(end_or_run - spec.arrival_ns);
    r["jct_s"] = jct_s;
    r["gpu_time_s"] = ns_to_seconds(a.gpu_ns);
    if (a.status == "finished") all_jct.push_back(jct_s);
    total_gpu += ns_to_seconds(a.gpu_ns);
    tenant_gpu[spec.tenant] += ns_to_seconds(a.gpu_ns);
    if (a.arrival >= 0) gpu_shares.push_back(ns_to_seconds(a.gpu_ns));
    if (spec.kind == JobKind::Training) {
      r["iterations"] = a.iterations;
      const double window_s = ns_to_seconds(end_or_run - (a.first_start < 0 ? end_or_run : a.first_start));
      const double samples = static_cast<double>(a.iterations) * spec.batch;
      r["samples_per_s"] = window_s > 0 ? samples / window_s : 0.0;
      train_samples += samples;
      train_iters += a.iterations;
      if (a.status == "finished") train_jct.push_back(jct_s);
    } else {
      r["requests"] = a.latencies_ms.size();
      r["latency"] = latency_stats(a.latencies_ms);
      if (spec.slo_ns > 0) {
        r["slo_attainment"] =
            a.latencies_ms.empty() ? 0.0
                                   : static_cast<double>(a.slo_met) /
                                         static_cast<double>(a.latencies_ms.size());
        slo_total += a.latencies_ms.size();
        slo_met += a.slo_met;
      }
      all_latency.insert(all_latency.end(), a.latencies_ms.begin(), a.latencies_ms.end());
    }
    job_rows.push_back(r);
  }
  out["jobs"] = job_rows;

  nlohmann::json inf = latency_stats(all_latency);
  inf["slo_attainment"] =
      slo_total == 0 ? nlohmann::json(nullptr)
                     : nlohmann::json(static_cast<double>(slo_met) / static_cast<double>(slo_total));
  out["inference"] = inf;

  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  out["training"] = {{"iterations", train_iters},
                     {"samples", train_samples},
                     {"samples_per_s", makespan_s > 0 ? train_samples / makespan_s : 0.0},
                     {"mean_jct_s", mean(train_jct)},
                     {"finished", train_jct.size()}};
  out["jobs_overall"] = {{"finished", all_jct.size()},
                         {"mean_jct_s", mean(all_jct)},
                         {"p50_jct_s", percentile(all_jct, 50)},
                         {"p95_jct_s", percentile(all_jct, 95)},
                         {"makespan_s", ns_to_seconds(last_job_end)}};

  nlohmann::json tenants = nlohmann::json::object();
  for (const auto& [t, g] : tenant_gpu) tenants[t] = total_gpu > 0 ? g / total_gpu : 0.0;
  out["fairness"] = {{"jain_gpu_time", jain_index(gpu_shares)}, {"tenant_gpu_share", tenants}};

  nlohmann::json devs = nlohmann::json::array();
  for (std::size_t d = 0; d < device_count; ++d) {
    const double denom = makespan > 0 ? static_cast<double>(makespan) : 1.0;
    devs.push_back({{"device", d},
                    {"compute_utilisation", static_cast<double>(union_length(compute[d])) / denom},
                    {"h2d_utilisation", static_cast<double>(union_length(h2d[d])) / denom},
                    {"d2h_utilisation", static_cast<double>(union_length(d2h[d])) / denom},
                    {"memory_peak_bytes", mem_peak[d]},
                    {"timeslice_switches", slices[d]}});
  }
  out["devices"] = devs;

  nlohmann::json pm = nlohmann::json::object();
  for (const auto& [name, v] : metrics) {
    pm[name] = {{"count", v.size()},
                {"mean", mean(v)},
                {"min", *std::min_element(v.begin(), v.end())},
                {"max", *std::max_element(v.begin(), v.end())},
                {"p50", percentile(v, 50)},
                {"p99", percentile(v, 99)}};
  }
  out["policy_metrics"] = pm;
  return out;
}

void write_summary_csv(const nlohmann::json& summary, std::ostream& out) {
  out << "name,kind,model,batch,status,jct_s,gpu_time_s,iterations,samples_per_s,requests,"
         "latency_p50_ms,latency_p99_ms,latency_mean_ms,slo_attainment\n";
  auto num = [](const nlohmann::json& j, const char* key) -> std::string {
    if (!j.contains(key) || j[key].is_null()) return "";
    return j[key].dump();
  };
  for (const auto& r : summary["jobs"]) {
    out << r["name"].get<std::string>() << ',' << r["kind"].get<std::string>() << ','
        << r["model"].get<std::string>() << ',' << r["batch"].dump() << ','
        << r["status"].get<std::string>() << ',' << num(r, "jct_s") << ','
        << num(r, "gpu_time_s") << ',' << num(r, "iterations") << ',' << num(r, "samples_per_s")
        << ',' << num(r, "requests") << ',';
    if (r.contains("latency")) {
      out << r["latency"]["p50_ms"].dump() << ',' << r["latency"]["p99_ms"].dump() << ','
          << r["latency"]["mean_ms"].dump();
    } else {
      out << ",,";
    }
    out << ',' << num(r, "slo_attainment") << '\n';
  }
  const auto& inf = summary["inference"];
  const auto& tr = summary["training"];
  out << "ALL,,,,," << summary["jobs_overall"]["mean_jct_s"].dump() << ",,"
      << tr["iterations"].dump() << ',' << tr["samples_per_s"].dump() << ','
      << inf["count"].dump() << ',' << inf["p50_ms"].dump() << ',' << inf["p99_ms"].dump() << ','
      << inf["mean_ms"].dump() << ',' << (inf["slo_attainment"].is_null() ? "" : inf["slo_attainment"].dump())
      << '\n';
}

}  // namespace gpumux
