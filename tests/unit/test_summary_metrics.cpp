// summary.cpp on a hand-written event log: job outcomes (rejected, never started, not
// arrived), training throughput over the time a job was present, no latency for a service
// that served nothing (null, never 0 ms), SLO attainment counting unserved requests, goodput,
// and PipeSwitch Fig. 6's per-phase request count. Every expected number is worked out in the
// comments from the events below (docs/metrics.md defines the metrics).
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "gpumux/io/csv_reader.hpp"
#include "gpumux/io/summary.hpp"
#include "gpumux/io/summary_csv.hpp"

using namespace gpumux;

namespace {

TimeNs s_(double seconds) {
  return seconds_to_ns(seconds);
}

struct Log {
  EventLog log;
  void add(EventKind kind, double t_s, std::uint32_t job, std::int64_t a = 0, std::int64_t b = 0,
           std::string_view label = {}) {
    Event e;
    e.kind = kind;
    e.t_ns = s_(t_s);
    e.job = job;
    e.a = a;
    e.b = b;
    e.label = log.intern(label);
    log.add(e);
  }
  void op_start(double t_s, std::uint32_t job) { add(EventKind::OpStart, t_s, job); }
  void request(std::uint32_t job, std::int64_t id, double sent_s, double latency_s) {
    add(EventKind::RequestArrival, sent_s, job, id);
    Event e;  // in integer ns, so that end - latency is the arrival exactly
    e.kind = EventKind::RequestEnd;
    e.t_ns = s_(sent_s) + s_(latency_s);
    e.job = job;
    e.a = id;
    e.b = s_(latency_s);
    log.add(e);
  }
};

JobSpec training(const std::string& name, double arrival_s) {
  JobSpec j;
  j.name = name;
  j.kind = JobKind::Training;
  j.model = std::string("m");  // (assigning a literal trips GCC 12 -Wrestrict at -O3)
  j.batch = 4;
  j.arrival_ns = s_(arrival_s);
  j.iterations = 100;
  return j;
}

JobSpec service(const std::string& name, std::vector<double> requests_s, double slo_ms) {
  JobSpec j;
  j.name = name;
  j.kind = JobKind::Inference;
  j.model = std::string("m");  // (assigning a literal trips GCC 12 -Wrestrict at -O3)
  j.batch = 1;
  for (double t : requests_s) j.requests_ns.push_back(s_(t));
  j.slo_ns = static_cast<DurationNs>(slo_ms * 1e6);
  return j;
}

const nlohmann::json& job(const nlohmann::json& summary, const std::string& name) {
  for (const auto& j : summary["jobs"]) {
    if (j["name"] == name) return j;
  }
  FAIL("no job " << name);
  return summary;
}

}  // namespace

TEST_CASE("summary: outcomes, throughput while present, empty latency, SLO and goodput",
          "[summary]") {
  std::vector<JobSpec> jobs = {
      training("t_ok", 0),                               // 0: runs from 2 s, 5 iterations by 10 s
      training("t_rej", 1),                              // 1: rejected at its arrival
      training("t_wait", 2),                             // 2: waits to the end, never runs
      training("t_late", 30),                            // 3: arrives after the run's end (20 s)
      service("svc", {1, 2, 3, 19.95}, /*slo_ms=*/100),  // 4
      service("idle", {5}, /*slo_ms=*/0),                // 5: serves nothing
  };
  JobSpec cl = service("cl", {}, 0);  // 6: PipeSwitch Fig. 6's client
  cl.closed_loop.enabled = true;
  cl.closed_loop.start_ns = s_(1);
  cl.closed_loop.end_ns = s_(6);
  cl.closed_loop.on_ns = s_(1);
  cl.closed_loop.off_ns = s_(1);
  jobs.push_back(cl);

  Log l;
  for (std::uint32_t j : {0u, 4u, 5u, 6u}) l.add(EventKind::JobArrival, 0, j);
  l.add(EventKind::JobArrival, 1, 1);
  l.add(EventKind::JobEnd, 1, 1, 0, 0, "rejected: memory");
  l.add(EventKind::JobArrival, 2, 2);
  l.op_start(2, 0);
  for (int i = 1; i <= 5; ++i) l.add(EventKind::IterationEnd, 2 + i, 0, i);
  l.add(EventKind::JobEnd, 10, 0, 0, 0, "finished");
  // svc: 1 s served in 50 ms (meets the SLO), 2 s in 150 ms (misses), 3 s and 19.95 s never.
  l.op_start(1, 4);
  l.request(4, 0, 1, 0.05);
  l.request(4, 1, 2, 0.15);
  l.add(EventKind::RequestArrival, 3, 4, 2);
  l.add(EventKind::RequestArrival, 19.95, 4, 3);
  l.add(EventKind::RequestArrival, 5, 5, 4);
  // cl: phases [1, 2), [3, 4), [5, 6). Sent 1.0 ends 1.5 (in its phase), sent 1.5 ends 2.2
  // (after its phase ended at 2.0), sent 3.0 ends 3.9 (in).
  l.op_start(1, 6);
  l.request(6, 5, 1.0, 0.5);
  l.request(6, 6, 1.5, 0.7);
  l.request(6, 7, 3.0, 0.9);
  for (std::uint32_t j : {2u, 3u, 4u, 5u, 6u}) l.add(EventKind::JobEnd, 20, j, 0, 0, "horizon");
  l.add(EventKind::RunEnd, 20, kNoJob);

  const nlohmann::json s = summarize(l.log, jobs, 1);

  // Outcomes.
  CHECK(job(s, "t_ok")["outcome"] == "finished");
  CHECK(job(s, "t_rej")["outcome"] == "rejected");
  CHECK(job(s, "t_wait")["outcome"] == "never_started");
  CHECK(job(s, "t_late")["outcome"] == "not_arrived");
  CHECK(job(s, "svc")["outcome"] == "unfinished");
  CHECK(job(s, "idle")["outcome"] == "never_started");
  const auto& all = s["jobs_overall"];
  CHECK(all["jobs"] == 7);
  CHECK(all["finished"] == 1);
  CHECK(all["rejected"] == 1);
  CHECK(all["never_started"] == 2);
  CHECK(all["not_arrived"] == 1);
  CHECK(all["unfinished"] == 2);
  const auto& tr = s["training"];
  CHECK(tr["jobs"] == 4);
  CHECK(tr["rejected"] == 1);
  CHECK(tr["never_started"] == 1);
  CHECK(tr["not_arrived"] == 1);

  // Training: t_ok did 5 x 4 = 20 samples, present 0-10 s: 2/s (while it ran, 2-10 s: 2.5/s).
  CHECK(job(s, "t_ok")["present_s"].get<double>() == Approx(10));
  CHECK(job(s, "t_ok")["samples_per_s_present"].get<double>() == Approx(2.0));
  CHECK(job(s, "t_ok")["samples_per_s"].get<double>() == Approx(2.5));
  // t_rej was present 0 s: no rate. t_wait was present 18 s and did nothing: 0/s.
  CHECK(job(s, "t_rej")["samples_per_s_present"].is_null());
  CHECK(job(s, "t_wait")["present_s"].get<double>() == Approx(18));
  CHECK(job(s, "t_wait")["samples_per_s_present"].get<double>() == 0.0);
  CHECK(tr["samples_per_s_present_sum"].get<double>() == Approx(2.0));
  CHECK(tr["samples_per_s_over_run"].get<double>() ==
        Approx(20.0 / 20.0));  // samples over the run's end

  // svc: 4 arrived, 2 served, 2 unserved. SLO met by 1 of 2 served = 0.5; of the unserved, the
  // one at 3 s missed its deadline (3.1 s < 20 s) and the one at 19.95 s is not judged
  // (20.05 s > 20 s): 1 of 3 = 0.333. Goodput: 1 request in SLO over 20 s present = 0.05/s.
  const auto& svc = job(s, "svc");
  CHECK(svc["requests"] == 2);
  CHECK(svc["requests_arrived"] == 4);
  CHECK(svc["requests_unserved"] == 2);
  CHECK(svc["slo_met"] == 1);
  CHECK(svc["slo_attainment"].get<double>() == Approx(0.5));
  CHECK(svc["slo_attainment_arrived"].get<double>() == Approx(1.0 / 3));
  CHECK(svc["goodput_per_s"].get<double>() == Approx(0.05));
  CHECK(svc["latency"]["mean_ms"].get<double>() == Approx(100));

  // idle: nothing served, so no latency (null, not 0 ms) and no SLO keys (it has no SLO).
  const auto& idle = job(s, "idle");
  CHECK(idle["requests"] == 0);
  CHECK(idle["requests_arrived"] == 1);
  CHECK(idle["requests_unserved"] == 1);
  for (const char* k : {"mean_ms", "p50_ms", "p99_ms", "min_ms", "max_ms"}) {
    INFO(k);
    CHECK(idle["latency"][k].is_null());
  }
  CHECK_FALSE(idle.contains("slo_attainment"));
  CHECK_FALSE(idle.contains("goodput_per_s"));

  // cl: 3 phases began before the client's end at 6 s; 2 requests ended inside their phase:
  // 2 / (3 x 1 s) = 0.667 per second. All 3 were served.
  const auto& ph = job(s, "cl")["phases"];
  CHECK(ph["count"] == 3);
  CHECK(ph["requests_in_phase"] == 2);
  CHECK(ph["requests_in_phase_per_s"].get<double>() == Approx(2.0 / 3));
  CHECK(job(s, "cl")["requests"] == 3);

  // Run-wide inference: 2 + 0 + 3 served of 4 + 1 + 3 arrived; the SLO values are svc's.
  const auto& inf = s["inference"];
  CHECK(inf["count"] == 5);
  CHECK(inf["requests_arrived"] == 8);
  CHECK(inf["requests_unserved"] == 3);
  CHECK(inf["slo_attainment"].get<double>() == Approx(0.5));
  CHECK(inf["slo_attainment_arrived"].get<double>() == Approx(1.0 / 3));
  CHECK(inf["goodput_per_s"].get<double>() == Approx(0.05));

  // summary.csv: idle's latency cells are empty, never 0 (no identity columns here).
  std::ostringstream csv;
  write_summary_csv(s, {}, csv);
  // Read back with the CSV reader gpumux reads every CSV with (RFC 4180).
  const std::string text = csv.str();
  CsvReader reader(text, "summary.csv");
  std::vector<std::string> names, cells, row;
  REQUIRE(reader.next(names));
  while (reader.next(row)) {
    if (!row.empty() && row.front() == "idle") cells = row;
  }
  REQUIRE_FALSE(cells.empty());
  REQUIRE(cells.size() == names.size());
  auto cell = [&](const std::string& column) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == column) return cells[i];
    }
    FAIL("no column " << column);
    return std::string();
  };
  CHECK(cell("requests") == "0");
  CHECK(cell("latency_p50_ms").empty());
  CHECK(cell("latency_p99_ms").empty());
  CHECK(cell("latency_mean_ms").empty());
  CHECK(cell("outcome") == "never_started");
}

TEST_CASE(
    "summary: a request served on a real platform matches its spec arrival though its "
    "timer fired late",
    "[summary]") {
  // Due at 1, 2, 2 and 5 s. A real platform logged the first three 3-7 us late (the H100
  // machine's timers, 2026-11-25) and served them; the one due at 5 s was never served.
  std::vector<JobSpec> jobs = {service("svc", {1, 2, 2, 5}, /*slo_ms=*/100)};
  Log l;
  l.add(EventKind::JobArrival, 0, 0);
  l.op_start(1, 0);
  l.request(0, 0, 1.000003, 0.01);
  l.request(0, 1, 2.000001, 0.01);
  l.request(0, 2, 2.000007, 0.02);
  l.add(EventKind::RequestArrival, 5.00001, 0, 3);
  l.add(EventKind::JobEnd, 10, 0, 0, 0, "horizon");
  l.add(EventKind::RunEnd, 10, kNoJob);
  const nlohmann::json s = summarize(l.log, jobs, 1);
  const auto& svc = job(s, "svc");
  CHECK(svc["requests"] == 3);
  CHECK(svc["requests_arrived"] == 4);
  CHECK(svc["requests_unserved"] == 1);
  // 3 served within 100 ms, 1 unserved past its deadline (5.1 s < 10 s): 3 of 4.
  CHECK(svc["slo_attainment_arrived"].get<double>() == Approx(0.75));
}

TEST_CASE("summary: no SLO in the workload gives null SLO values, no goodput", "[summary]") {
  std::vector<JobSpec> jobs = {service("a", {1}, 0)};
  Log l;
  l.add(EventKind::JobArrival, 0, 0);
  l.op_start(1, 0);
  l.request(0, 0, 1, 0.01);
  l.add(EventKind::JobEnd, 1.01, 0, 0, 0, "finished");
  l.add(EventKind::RunEnd, 1.01, kNoJob);
  const nlohmann::json s = summarize(l.log, jobs, 1);
  CHECK(s["inference"]["slo_attainment"].is_null());
  CHECK(s["inference"]["slo_attainment_arrived"].is_null());
  CHECK(s["inference"]["goodput_per_s"].is_null());
  CHECK(s["inference"]["p50_ms"].get<double>() == Approx(10));
  CHECK(s["training"]["samples_per_s_present_sum"].get<double>() == 0.0);
}
