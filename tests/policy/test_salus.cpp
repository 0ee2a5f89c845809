// Salus (policies/salus): the lane manager's admission rule on hand-computed sizes, the
// iteration scheduler's choices on hand-built sessions, and the policy end to end: admission
// only when the ephemeral peak fits, pending and retry on release, at most one iteration in
// flight per lane, each scheduler's order, work conservation, rejection, invariants.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "salus/iteration_order.hpp"
#include "salus/lane_manager.hpp"
#include "test_support.hpp"

using namespace gpumux;
using namespace gpumux::policies::salus;

namespace {

const ModelCatalog& zoo() {
  static const ModelCatalog catalog(test::source_dir() / "traces" / "models");
  return catalog;
}

nlohmann::json training(const std::string& name, const std::string& model, int batch,
                        double arrival_s, int iterations) {
  return {{"name", name},   {"kind", "training"},     {"model", model},
          {"batch", batch}, {"arrival_s", arrival_s}, {"iterations", iterations}};
}

nlohmann::json salus_config(nlohmann::json params, nlohmann::json jobs,
                            const std::string& device = "v100-pcie3x16") {
  auto doc = test::make_config("salus", {{"jobs", std::move(jobs)}}, {device});
  doc["policy"]["params"] = std::move(params);
  return doc;
}

/// Job ids in the order their iterations (training) ended.
std::vector<std::uint32_t> iteration_sequence(const ExperimentResult& r) {
  std::vector<std::uint32_t> seq;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::IterationEnd) seq.push_back(e.job);
  }
  return seq;
}

std::string letters(const std::vector<std::uint32_t>& seq) {
  std::string s;
  for (auto j : seq) s += static_cast<char>('A' + j);
  return s;
}

TimeNs first_time(const ExperimentResult& r, EventKind kind, std::uint32_t job,
                  std::string_view label = {}) {
  for (const Event& e : r.log.events()) {
    if (e.kind == kind && e.job == job && (label.empty() || e.label == label)) return e.t_ns;
  }
  return -1;
}

/// P (training state: weights, gradients, momentum) and T (activations) as the engine sizes
/// them, from the zoo: the numbers a user's profiling run would report to Salus.
std::uint64_t persistent_of(const std::string& model) {
  return zoo().at(model).weight_bytes() * 3;
}
std::uint64_t ephemeral_of(const std::string& model, std::uint64_t batch) {
  return zoo().at(model).training_activation_bytes_per_sample() * batch;
}

}  // namespace

// ---- lane manager ---------------------------------------------------------------------------

TEST_CASE("lane manager: new lanes of exactly M, inflation by hand", "[salus]") {
  LaneManager lanes(10000, LaneMode::PerJob);
  // A: P=1000, T=2000: P' = 1100, M = ceil(1.05 * 3100) = 3255, peak = 2155.
  CHECK(LaneManager::inflated_persistent(1000) == 1100);
  CHECK(lanes.lane_demand(1000, 2000) == 3255);
  const auto a = lanes.admit(JobId{0}, 1000, 2000);
  REQUIRE(a);
  CHECK(lanes.find(*a)->size_bytes == 3255);
  CHECK(lanes.find(*a)->available_bytes == 2155);
  CHECK(lanes.find(*a)->max_peak_bytes() == 2155);
  CHECK(lanes.free_bytes() == 6745);
  // B: P=2000, T=3000: P' = 2200, M = ceil(1.05 * 5200) = 5460 -> free 1285.
  const auto b = lanes.admit(JobId{1}, 2000, 3000);
  REQUIRE(b);
  CHECK(lanes.find(*b)->size_bytes == 5460);
  CHECK(lanes.free_bytes() == 1285);
  // C: P=100, T=500: P' = 110, M = ceil(1.05 * 610) = ceil(640.5) = 641 -> free 644.
  const auto c = lanes.admit(JobId{2}, 100, 500);
  REQUIRE(c);
  CHECK(lanes.find(*c)->size_bytes == 641);
  CHECK(lanes.free_bytes() == 644);
  // D: P=200, T=1000: P' = 220, M = ceil(1.05 * 1220) = 1281 > 644. Existing lanes by
  // available: C 531, A 2155, B 3260; each needs 220 + max(1061, its peak) = 751, 2375,
  // 3480 > available: a lane sized for one job never takes a second with P' > 0. Pending.
  CHECK_FALSE(lanes.admit(JobId{3}, 200, 1000));
  CHECK(lanes.lanes().size() == 3);
  // A leaves: its lane is destroyed and its 3255 bytes return; D now gets a new lane.
  CHECK(lanes.release(JobId{0}));
  CHECK(lanes.free_bytes() == 3899);
  const auto d = lanes.admit(JobId{3}, 200, 1000);
  REQUIRE(d);
  CHECK(lanes.find(*d)->size_bytes == 1281);
  CHECK(lanes.free_bytes() == 2618);
  CHECK(lanes.lane_of(JobId{0}) == nullptr);
  CHECK_FALSE(lanes.release(JobId{0}));
}

TEST_CASE("lane manager: shared lanes by increasing available memory", "[salus]") {
  // P = 0 makes P' = 0, the only way a lane sized for one job has room for a second.
  LaneManager lanes(3000, LaneMode::PerJob);
  const auto l1 = lanes.admit(JobId{0}, 0, 1000);  // M = 1050
  const auto l2 = lanes.admit(JobId{1}, 0, 1800);  // M = 1890; free 60
  REQUIRE(l1);
  REQUIRE(l2);
  CHECK(lanes.free_bytes() == 60);
  // T=900: M = 945 > 60. Lanes by available: l1 (1050) first: max(945, 1050) <= 1050.
  CHECK(lanes.admit(JobId{2}, 0, 900) == l1);
  // T=1500: M = 1575. l1: 1575 > 1050; l2: max(1575, 1890) <= 1890.
  CHECK(lanes.admit(JobId{3}, 0, 1500) == l2);
  CHECK(lanes.find(*l2)->residents.size() == 2);
  // T=2000: M = 2100 fits no lane.
  CHECK_FALSE(lanes.admit(JobId{4}, 0, 2000));
  // Leaving a shared lane does not destroy it while a job remains.
  CHECK_FALSE(lanes.release(JobId{0}));
  CHECK(lanes.find(*l1)->residents.size() == 1);
  CHECK(lanes.release(JobId{2}));
  CHECK(lanes.free_bytes() == 1110);

  SECTION("SALUS_DISABLE_SHARED_LANE: step 2 never places a job") {
    LaneManager exclusive(3000, LaneMode::PerJob, /*share_lanes=*/false);
    REQUIRE(exclusive.admit(JobId{0}, 0, 1000));
    REQUIRE(exclusive.admit(JobId{1}, 0, 1800));
    CHECK_FALSE(exclusive.admit(JobId{2}, 0, 900));
  }
  CHECK_THROWS_AS(LaneManager(3000, LaneMode::Single, false), std::invalid_argument);
}

TEST_CASE("lane manager: one whole-GPU lane shares one ephemeral region", "[salus]") {
  LaneManager lanes(10000, LaneMode::Single);
  // A: P' = 1100, peak = 3255 - 1100 = 2155; lane of 10000, available 8900.
  REQUIRE(lanes.admit(JobId{0}, 1000, 2000));
  const LaneManager::Lane& lane = lanes.lanes().front();
  CHECK(lane.size_bytes == 10000);
  CHECK(lanes.free_bytes() == 0);
  // B: P' = 2200, peak = 3260: 2200 + max(3260, 2155) = 5460 <= 8900 -> available 6700.
  REQUIRE(lanes.admit(JobId{1}, 2000, 3000));
  CHECK(lanes.lanes().front().available_bytes == 6700);
  // C: P' = 3300, M = ceil(1.05 * 5300) = 5565, peak 2265: 3300 + 3260 = 6560 <= 6700.
  REQUIRE(lanes.admit(JobId{2}, 3000, 2000));
  CHECK(lanes.lanes().front().available_bytes == 3400);
  // D: P' = 110, M = ceil(1.05 * 3110) = 3266, peak 3156: 110 + 3260 = 3370 <= 3400.
  REQUIRE(lanes.admit(JobId{3}, 100, 3000));
  CHECK(lanes.lanes().front().available_bytes == 3290);
  // E: P' = 110, M = 221, peak 111: 110 + max(111, 3260) = 3370 > 3290 -> pending.
  CHECK_FALSE(lanes.admit(JobId{4}, 100, 100));
  // Invariant: sum of P' + the largest peak fits the lane (5460 ... here 6710 + 3260).
  const auto& l = lanes.lanes().front();
  std::uint64_t sum_p = 0;
  for (const auto& r : l.residents) sum_p += r.persistent_bytes;
  CHECK(sum_p == 6710);
  CHECK(sum_p + l.max_peak_bytes() <= l.size_bytes);
  // B leaves: available 5490, largest peak now D's 3156: E fits (110 + 3156 <= 5490).
  CHECK_FALSE(lanes.release(JobId{1}));
  CHECK(lanes.lanes().front().available_bytes == 5490);
  CHECK(lanes.admit(JobId{4}, 100, 100));
}

TEST_CASE("lane manager: M is capped at the GPU", "[salus]") {
  LaneManager lanes(1000, LaneMode::PerJob);
  // P' = 660, 1.05 * 1160 = 1218 > 1000: the job gets the whole GPU, peak 340.
  CHECK(lanes.lane_demand(600, 500) == 1000);
  REQUIRE(lanes.admit(JobId{0}, 600, 500));
  CHECK(lanes.lanes().front().size_bytes == 1000);
  CHECK(lanes.lanes().front().max_peak_bytes() == 340);
  // P=1: P' = 2, and 2 + max(4 - 2, 340) > 340 available: pending.
  CHECK_FALSE(lanes.admit(JobId{1}, 1, 1));
  // P=0 (P' = 0) shares the whole-GPU lane's ephemeral region: 0 + 340 <= 340.
  CHECK(lanes.admit(JobId{2}, 0, 1));
}

// ---- iteration order ----------------------------------------------------------------------

TEST_CASE("iteration order of each scheduling policy on hand-built sessions", "[salus]") {
  // job, seq, runnable, pending_since, used, iterations, remaining, expected_total
  std::vector<Session> s(4);
  s[0] = {JobId{10}, 0, true, 300, 900, 9, 5000, 6000};  // oldest; most used
  s[1] = {JobId{11}, 1, true, 100, 200, 4, 800, 2000};   // pending longest; least remaining
  s[2] = {JobId{12}, 2, false, 0, 50, 1, 100, 200};      // not runnable (no work / loading)
  s[3] = {JobId{13}, 3, true, 200, 100, 2, 3000, 4000};  // least used of the runnable
  using V = std::vector<std::size_t>;
  CHECK(iteration_order(SchedPolicy::Pack, s, true) == V{1, 3, 0});
  CHECK(iteration_order(SchedPolicy::Fair, s, true) == V{3, 1, 0});
  CHECK(iteration_order(SchedPolicy::Rr, s, true) == V{3, 1, 0});
  CHECK(iteration_order(SchedPolicy::Srtf, s, true) == V{1, 3, 0});
  // FIFO: the oldest session first, then work conservation in PACK order.
  CHECK(iteration_order(SchedPolicy::Fifo, s, true) == V{0, 1, 3});
  // PREEMPT: expected - used: 5100, 1800, 150 (not runnable), 3900 -> job 12 is the pick;
  // it cannot run, so work conservation falls back to PACK order.
  CHECK(iteration_order(SchedPolicy::Preempt, s, true) == V{1, 3, 0});
  // Without work conservation only the policy's own pick may run, if it can.
  CHECK(iteration_order(SchedPolicy::Preempt, s, false).empty());
  CHECK(iteration_order(SchedPolicy::Fair, s, false).empty());  // job 12 used least
  CHECK(iteration_order(SchedPolicy::Fifo, s, false) == V{0});
  CHECK(iteration_order(SchedPolicy::Pack, s, false) == V{1});
  CHECK(iteration_order(SchedPolicy::Srtf, s, false).empty());
  CHECK(iteration_order(SchedPolicy::Pack, std::vector<Session>{}, true).empty());
  // Ties break by admission order.
  std::vector<Session> tie(2);
  tie[0] = {JobId{1}, 5, true, 7, 7, 7, 7, 7};
  tie[1] = {JobId{2}, 4, true, 7, 7, 7, 7, 7};
  for (auto p : {SchedPolicy::Pack, SchedPolicy::Fair, SchedPolicy::Rr, SchedPolicy::Srtf,
                 SchedPolicy::Fifo, SchedPolicy::Preempt}) {
    CHECK(iteration_order(p, tie, true).front() == 1);
  }
  CHECK(parse_sched("srtf") == SchedPolicy::Srtf);
  CHECK_FALSE(parse_sched("sjf"));
  CHECK(to_string(SchedPolicy::Preempt) == "preempt");
}

// ---- the policy end to end -----------------------------------------------------------------

TEST_CASE("salus admits a job only when its ephemeral peak fits, retries on release", "[salus]") {
  // Three resnet50 BS 32 jobs, lanes sized by hand; the GPU holds two lanes and a half.
  const std::uint64_t p = persistent_of("resnet50");
  const std::uint64_t t = ephemeral_of("resnet50", 32);
  const std::uint64_t p_inflated = (p * 11 + 9) / 10;
  const std::uint64_t m = ((p_inflated + t) * 105 + 99) / 100;
  CHECK(p == 307'321'824);  // (25,557,032 params + 53,120 BN buffers) x 4 B x 3
  const double gib = static_cast<double>(m * 5 / 2) / 1073741824.0;
  auto doc = salus_config({{"sched", "pack"}}, {training("A", "resnet50", 32, 0.0, 3),
                                                training("B", "resnet50", 32, 0.0, 6),
                                                training("C", "resnet50", 32, 0.0, 3)});
  doc["devices"][0]["memory_gib"] = gib;
  const ExperimentResult r = test::run_config(doc);
  REQUIRE(r.run.jobs_finished == 3);
  // A and B get a lane at once; C is pending until A leaves, then admitted at that instant.
  CHECK(first_time(r, EventKind::Alloc, 0, "weights") == 0);
  CHECK(first_time(r, EventKind::Alloc, 1, "weights") == 0);
  const TimeNs a_end = first_time(r, EventKind::JobEnd, 0);
  CHECK(a_end > 0);
  CHECK(first_time(r, EventKind::Alloc, 2, "weights") == a_end);
  CHECK(r.summary["policy_metrics"]["salus.lanes"]["max"] == 2.0);
  CHECK(r.summary["policy_metrics"]["salus.queue_s"]["max"].get<double>() ==
        Approx(ns_to_seconds(a_end)));
  // Memory never exceeds the GPU (the conformance invariants).
  const auto bad =
      test::check_invariants(r, {static_cast<std::uint64_t>(gib * 1073741824.0)}, {false}, true);
  CHECK(bad.empty());
}

TEST_CASE("salus runs at most one iteration per lane, lanes run concurrently", "[salus]") {
  const nlohmann::json jobs = {training("A", "resnet18", 16, 0.0, 4),
                               training("B", "mobilenet_v2", 16, 0.0, 4),
                               training("C", "resnet18", 8, 0.001, 3)};
  for (const std::string lanes : {"single", "per_job"}) {
    DYNAMIC_SECTION("lanes " << lanes) {
      const ExperimentResult r =
          test::run_config(salus_config({{"lanes", lanes}, {"sched", "pack"}}, jobs));
      REQUIRE(r.run.jobs_finished == 3);
      // On each stream, a job's ops are submitted only when no other job has an op
      // outstanding there, and an iteration (its forward op from layer 0) only when nothing is
      // outstanding at all: one iteration in flight per lane.
      std::map<std::uint32_t, std::map<std::uint32_t, int>> outstanding;  // stream -> job -> n
      std::set<std::uint32_t> compute_streams;
      int violations = 0;
      for (const Event& e : r.log.events()) {
        if (e.op_kind != OpKind::Compute || e.job == kNoJob) continue;
        if (e.kind == EventKind::OpSubmit) {
          const bool starts_iteration = e.purpose == OpPurpose::Forward && e.first_layer == 0;
          for (const auto& [job, n] : outstanding[e.stream]) {
            if ((job != e.job || starts_iteration) && n > 0) ++violations;
          }
          ++outstanding[e.stream][e.job];
          compute_streams.insert(e.stream);
        } else if (e.kind == EventKind::OpEnd) {
          --outstanding[e.stream][e.job];
        }
      }
      CHECK(violations == 0);
      if (lanes == "single") {
        CHECK(compute_streams.size() == 1);
      } else {
        CHECK(compute_streams.size() == 3);
        // Different lanes overlap in time (spatial sharing through concurrent streams).
        TimeNs a_first = -1, b_first = -1, a_last = 0;
        for (const Event& e : r.log.events()) {
          if (e.kind != EventKind::OpStart || e.op_kind != OpKind::Compute) continue;
          if (e.job == 0 && a_first < 0) a_first = e.t_ns;
          if (e.job == 1 && b_first < 0) b_first = e.t_ns;
          if (e.job == 0) a_last = e.t_ns;
        }
        CHECK(b_first < a_last);
      }
    }
  }
}

TEST_CASE("salus scheduling policies order iterations on a hand-built trace", "[salus]") {
  // One lane, three resnet18 jobs arriving together (loads end in order A, B, C, before A's
  // first iteration ends); A needs 6 iterations, B 2, C 4.
  const nlohmann::json jobs = {training("A", "resnet18", 32, 0.0, 6),
                               training("B", "resnet18", 32, 0.0, 2),
                               training("C", "resnet18", 32, 0.0, 4)};
  auto run = [&](const std::string& sched) {
    return letters(iteration_sequence(
        test::run_config(salus_config({{"lanes", "single"}, {"sched", sched}}, jobs))));
  };
  // A starts alone (the only job loaded); then:
  CHECK(run("fifo") == "AAAAAABBCCCC");     // the oldest job until it ends
  CHECK(run("srtf") == "ABBCCCCAAAAA");     // least remaining: B (2), C (4), A (5 left)
  CHECK(run("preempt") == "ABBCCCCAAAAA");  // same here: alone, used time = predicted time
  CHECK(run("pack") == "ABCABCACACAA");     // iterations in the order they became pending
  CHECK(run("rr") == "ABCABCACACAA");       // fewest iterations first, ties by age
  CHECK(run("fair") == "ABCABCACACAA");     // equal iterations: least used time = rr

  SECTION("fair equalises time, rr equalises iterations") {
    // A's iterations take ~4x B's: FAIR lets B run several per A iteration, RR alternates.
    const nlohmann::json mixed = {training("A", "resnet50", 64, 0.0, 4),
                                  training("B", "resnet18", 32, 0.0, 40)};
    auto seq = [&](const std::string& sched) {
      return letters(iteration_sequence(
          test::run_config(salus_config({{"lanes", "single"}, {"sched", sched}}, mixed))));
    };
    const std::string rr = seq("rr");
    const std::string fair = seq("fair");
    CHECK(rr.substr(0, 8) == "ABABABAB");
    // FAIR: after A's first iteration, B runs until its used time passes A's.
    const auto first_a_after = fair.find('A', 1);
    CHECK(first_a_after >= 4);
    // By the time A ends (its 4th iteration), B has had about as much GPU time as A.
    const auto a_done = fair.rfind('A');
    const auto b_before = std::count(fair.begin(), fair.begin() + static_cast<long>(a_done), 'B');
    CHECK(b_before >= 12);
  }
}

TEST_CASE("salus work conservation lets others fill in for an idle pick", "[salus]") {
  // FIFO: the oldest session is an inference service waiting for requests; a training job
  // arrives just after. With work conservation it trains between requests; without, the
  // lane waits for the service to end.
  const nlohmann::json jobs = {{{"name", "svc"},
                                {"kind", "inference"},
                                {"model", "resnet18"},
                                {"batch", 1},
                                {"arrival_s", 0.0},
                                {"requests", {0.05, 0.3}}},
                               training("T", "resnet18", 16, 0.001, 5)};
  const auto on = test::run_config(salus_config({{"lanes", "single"}, {"sched", "fifo"}}, jobs));
  const auto off = test::run_config(
      salus_config({{"lanes", "single"}, {"sched", "fifo"}, {"work_conserving", false}}, jobs));
  REQUIRE(on.run.jobs_finished == 2);
  REQUIRE(off.run.jobs_finished == 2);
  const TimeNs svc_end = first_time(off, EventKind::JobEnd, 0);
  CHECK(first_time(on, EventKind::JobEnd, 1) < ms_to_ns(300));
  CHECK(first_time(off, EventKind::OpStart, 1, {}) >= 0);
  TimeNs t_first_compute = -1;
  for (const Event& e : off.log.events()) {
    if (e.kind == EventKind::OpStart && e.job == 1 && e.op_kind == OpKind::Compute) {
      t_first_compute = e.t_ns;
      break;
    }
  }
  CHECK(t_first_compute >= svc_end);
}

TEST_CASE("salus charges the per-iteration dispatch overhead", "[salus]") {
  // One job alone: JCT grows by exactly iterations x overhead (the setup of each first op).
  const auto jobs = nlohmann::json::array({training("A", "resnet18", 16, 0.0, 10)});
  const auto zero = test::run_config(salus_config({{"iteration_overhead_us", 0}}, jobs));
  const auto dflt = test::run_config(salus_config(nlohmann::json::object(), jobs));
  const auto big = test::run_config(salus_config({{"iteration_overhead_us", 1000}}, jobs));
  const TimeNs t0 = first_time(zero, EventKind::JobEnd, 0);
  CHECK(first_time(dflt, EventKind::JobEnd, 0) - t0 == 10 * us_to_ns(100));
  CHECK(first_time(big, EventKind::JobEnd, 0) - t0 == 10 * us_to_ns(1000));
}

TEST_CASE("salus rejects what can never fit and reads its params strictly", "[salus]") {
  auto doc = salus_config(nlohmann::json::object(), {training("big", "vgg16", 128, 0.0, 1),
                                                     training("ok", "resnet18", 8, 0.0, 2)});
  doc["devices"][0]["memory_gib"] = 4;
  const auto r = test::run_config(doc);
  CHECK(r.run.jobs_rejected == 1);
  CHECK(r.run.jobs_finished == 1);
  CHECK(r.summary["jobs"][0]["status"].get<std::string>().find("rejected") == 0);
  for (const auto& bad : {nlohmann::json{{"sched", "sjf"}}, nlohmann::json{{"lanes", "two"}},
                          nlohmann::json{{"lanes", "single"}, {"shared_lanes", false}},
                          nlohmann::json{{"iteration_overhead_us", -1}},
                          nlohmann::json{{"lane_memory_gib", 0}}, nlohmann::json{{"quantum", 1}}}) {
    CHECK_THROWS(test::run_config(
        salus_config(bad, nlohmann::json::array({training("a", "resnet18", 8, 0.0, 1)}))));
  }
}

TEST_CASE("salus keeps the invariants under every scheduler and lane mode", "[salus]") {
  // The conformance suite's check, for every scheduler and lane mode (it runs the defaults),
  // with a CPU device before the GPU too (Salus uses the first GPU and ignores CPUs).
  const auto root = test::source_dir();
  const std::vector<std::vector<std::string>> device_lists{{"v100-pcie3x16", "xeon-2x18"},
                                                           {"xeon-2x18", "v100-pcie3x16"}};
  for (const auto& devices : device_lists) {
    std::vector<std::uint64_t> capacity;
    std::vector<bool> is_cpu;
    for (const auto& d : devices) {
      const DeviceProfile p = find_device_profile(root / "traces" / "devices", d);
      capacity.push_back(p.memory_bytes);
      is_cpu.push_back(p.kind == DeviceKind::Cpu);
    }
    for (const std::string sched : {"pack", "fair", "rr", "fifo", "preempt", "srtf"}) {
      for (const std::string lanes : {"per_job", "single"}) {
        for (const auto& trace : test::standard_traces()) {
          DYNAMIC_SECTION(devices[0] << " " << sched << " " << lanes << " " << trace) {
            auto doc = test::make_config("salus", {{"files", {trace}}}, devices);
            doc["policy"]["params"] = {{"sched", sched}, {"lanes", lanes}};
            const auto r = test::run_config(doc);
            const auto bad = test::check_invariants(r, capacity, is_cpu, true);
            for (const auto& v : bad) UNSCOPED_INFO(v);
            CHECK(bad.empty());
            CHECK(r.run.jobs_unfinished == 0);
            CHECK(r.run.jobs_finished == r.jobs.size());
            CHECK(test::events_jsonl(r) == test::events_jsonl(test::run_config(doc)));
          }
        }
      }
    }
  }
  // Without a GPU every job is rejected with a reason.
  const auto r = test::run_config(test::make_config(
      "salus", {{"files", {"traces/workloads/small_mixed.jsonl"}}}, {"xeon-2x18"}));
  CHECK(r.run.jobs_rejected == r.jobs.size());
}
