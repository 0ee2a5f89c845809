// Olympian (Middleware '18) and its stock TF-Serving baseline: the token mechanism on
// hand-built situations, then the paper's central claims on small configurations.
#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "test_support.hpp"

using namespace gpumux;
using nlohmann::json;

namespace {

struct ComputeOp {
  std::uint32_t job;
  TimeNs start, end;
  [[nodiscard]] DurationNs duration() const { return end - start; }
};

/// Completed compute ops in start order.
std::vector<ComputeOp> compute_ops(const ExperimentResult& r) {
  std::vector<ComputeOp> ops;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::OpEnd && e.op_kind == OpKind::Compute && e.status == OpStatus::Ok &&
        e.job != kNoJob) {
      ops.push_back({e.job, e.a, e.t_ns});
    }
  }
  std::stable_sort(ops.begin(), ops.end(),
                   [](const ComputeOp& a, const ComputeOp& b) { return a.start < b.start; });
  return ops;
}

/// Maximal runs of consecutive compute ops of one job: (job, ops, summed duration).
struct Run {
  std::uint32_t job;
  std::size_t ops;
  DurationNs busy_ns;
};
std::vector<Run> runs_of(const std::vector<ComputeOp>& ops) {
  std::vector<Run> runs;
  for (const ComputeOp& op : ops) {
    if (runs.empty() || runs.back().job != op.job) runs.push_back({op.job, 0, 0});
    ++runs.back().ops;
    runs.back().busy_ns += op.duration();
  }
  return runs;
}

/// GPU time each job's compute ops got within [from, to) (ops never overlap on the one
/// stream Olympian and tf_serving use), as shares of the total.
std::map<std::uint32_t, double> shares(const std::vector<ComputeOp>& ops, TimeNs from, TimeNs to) {
  std::map<std::uint32_t, double> busy;
  double total = 0;
  for (const ComputeOp& op : ops) {
    const TimeNs a = std::max(op.start, from), b = std::min(op.end, to);
    if (b <= a) continue;
    busy[op.job] += static_cast<double>(b - a);
    total += static_cast<double>(b - a);
  }
  for (auto& [job, t] : busy) t /= total;
  return busy;
}

json service(const std::string& name, const std::string& model, int batch, double at_s,
             int requests, json extra = json::object()) {
  json j = {{"name", name},   {"kind", "inference"}, {"model", model},
            {"batch", batch}, {"arrival_s", 0.0},    {"requests", json::array()}};
  for (int i = 0; i < requests; ++i) j["requests"].push_back(at_s);
  for (auto& [k, v] : extra.items()) j[k] = v;
  return j;
}

json config(const std::string& policy, json params, json jobs,
            const std::string& device = "v100-pcie3x16", double memory_gib = 0) {
  json doc = test::make_config(policy, {{"jobs", std::move(jobs)}}, {device});
  doc["policy"]["params"] = std::move(params);
  if (memory_gib > 0) doc["devices"][0]["memory_gib"] = memory_gib;
  return doc;
}

double end_s(const ExperimentResult& r, std::size_t job) {
  return r.summary["jobs"][job]["end_s"].get<double>();
}

/// Solo forward time of a model at a batch, node (layer) by node, from the cost model.
DurationNs solo_request_ns(const std::string& device, const std::string& model, int batch) {
  const auto root = test::source_dir();
  const DeviceProfile p = find_device_profile(root / "traces" / "devices", device);
  const ModelCatalog catalog(root / "traces" / "models");
  const Model& m = catalog.at(model);
  const CostModel cm(p, CostOptions{});
  DurationNs t = 0;
  for (std::uint32_t i = 0; i < m.layer_count(); ++i) {
    t += cm.op_ns(m, LayerRange{i, i + 1}, static_cast<std::uint32_t>(batch), Pass::Forward, true);
  }
  return t;
}

}  // namespace

// ---- the mechanism, on hand-built situations -----------------------------------------------

TEST_CASE("olympian passes the token after a quantum of profiled cost", "[olympian]") {
  // Two ResNet-152 (batch 8) requests sent at 100 ms, when both models are loaded; the cost
  // model is the profile (profile_requests 0), so a node's cost is its measured duration on
  // the one stream. Depth 1: the holder has one node on the GPU at a time.
  const DurationNs quantum = 1'000'000;
  const json params = {{"quantum_us", 1000}, {"depth", 1}, {"profile_requests", 0}};
  const auto r = test::run_config(
      config("olympian", params,
             {service("a", "resnet152", 8, 0.1, 1), service("b", "resnet152", 8, 0.1, 1)}));
  REQUIRE(r.run.jobs_finished == 2);
  const auto ops = compute_ops(r);
  REQUIRE(ops.size() == 2 * 313);
  DurationNs max_node = 0;
  for (const auto& op : ops) max_node = std::max(max_node, op.duration());
  CHECK(max_node < quantum / 2);  // nodes are small next to the quantum

  // Runs alternate a, b, a, ...; each but the last of each job consumed a quantum: it ends
  // at the first node that takes the account to >= Q, which starts with a carry < max_node.
  const auto runs = runs_of(ops);
  REQUIRE(runs.size() > 20);
  std::vector<DurationNs> full;
  for (std::size_t i = 0; i + 2 < runs.size(); ++i) {
    CHECK(runs[i].job != runs[i + 1].job);
    full.push_back(runs[i].busy_ns);
  }
  for (DurationNs busy : full) {
    CHECK(busy > quantum - max_node);
    CHECK(busy < quantum + max_node);
  }
  // The carry evens out: on average a turn is the quantum (within max_node / turns).
  const double mean = std::accumulate(full.begin(), full.end(), 0.0) / full.size();
  CHECK(mean == Approx(1e6).margin(static_cast<double>(max_node) / full.size()));

  // Overheads, exactly: a 1 us yield check before every scheduled node; a woken run also
  // waits for the thread wake-up (the v100 profile's event_ns, 4 us), which depth 1 leaves
  // exposed. The first node of all starts at once: 100 ms + its own check.
  CHECK(ops.front().start == 100'000'000 + 1'000);
  for (std::size_t i = 1; i < ops.size(); ++i) {
    const DurationNs gap = ops[i].start - ops[i - 1].end;
    CHECK(gap == (ops[i].job == ops[i - 1].job ? 1'000 : 5'000));
  }
  // One token pass per run boundary, plus the final release, each recorded with how long the
  // token was held.
  CHECK(r.summary["policy_metrics"]["olympian.token_hold_us"]["count"].get<std::size_t>() ==
        runs.size());
}

TEST_CASE("olympian depth 2 hides the wake-up behind the old holder's in-flight node",
          "[olympian]") {
  const json params = {{"quantum_us", 1000}, {"depth", 2}, {"profile_requests", 0}};
  const auto r = test::run_config(
      config("olympian", params,
             {service("a", "resnet152", 8, 0.1, 1), service("b", "resnet152", 8, 0.1, 1)}));
  const auto ops = compute_ops(r);
  TimeNs a_end = 0;
  for (const auto& op : ops) {
    if (op.job == 0) a_end = std::max(a_end, op.end);
  }
  // With a second node already issued, the old holder's kernel keeps the GPU busy while the
  // new holder wakes (4 us < any node), so every gap is the 1 us yield check; only when A's
  // request ends is nothing in flight, and B's wake-up shows (1 + 4 us).
  for (std::size_t i = 1; i < ops.size(); ++i) {
    CHECK(ops[i].start - ops[i - 1].end == (ops[i - 1].end == a_end ? 5'000 : 1'000));
  }
  // A turn ends one in-flight node late, but that node is charged to the old holder, whose
  // next turn is shorter: a turn still averages the quantum.
  const auto runs = runs_of(ops);
  DurationNs max_node = 0, busy = 0;
  for (const auto& op : ops) max_node = std::max(max_node, op.duration());
  for (std::size_t i = 0; i + 2 < runs.size(); ++i) {
    CHECK(runs[i].busy_ns < 1'000'000 + 2 * max_node);
    busy += runs[i].busy_ns;
  }
  CHECK(static_cast<double>(busy) / (runs.size() - 2) ==
        Approx(1e6).margin(2.0 * max_node / (runs.size() - 2)));
}

TEST_CASE("olympian weighted_fair shares the GPU by weight", "[olympian]") {
  // Three identical Inception-v3 (batch 32) services of weight 1, 2 and 3, ten requests each;
  // while all three compete (until the first finishes) their GPU time follows 1:2:3.
  const json params = {{"mode", "weighted_fair"}, {"profile_requests", 0}};
  const auto r =
      test::run_config(config("olympian", params,
                              {service("w1", "inception_v3", 32, 0.1, 10, {{"weight", 1}}),
                               service("w2", "inception_v3", 32, 0.1, 10, {{"weight", 2}}),
                               service("w3", "inception_v3", 32, 0.1, 10, {{"weight", 3}})}));
  REQUIRE(r.run.jobs_finished == 3);
  const double first_end = std::min({end_s(r, 0), end_s(r, 1), end_s(r, 2)});
  CHECK(first_end == end_s(r, 2));  // the heaviest weight finishes first
  const auto s = shares(compute_ops(r), 100'000'000, seconds_to_ns(first_end));
  for (std::uint32_t j = 0; j < 3; ++j) {
    INFO("job " << j << " share " << s.at(j));
    CHECK(s.at(j) == Approx((j + 1) / 6.0).epsilon(0.05));
  }
  // Fair mode ignores the weights.
  const auto f =
      test::run_config(config("olympian", {{"mode", "fair"}, {"profile_requests", 0}},
                              {service("w1", "inception_v3", 32, 0.1, 10, {{"weight", 1}}),
                               service("w3", "inception_v3", 32, 0.1, 10, {{"weight", 3}})}));
  CHECK(end_s(f, 0) == Approx(end_s(f, 1)).epsilon(0.01));
}

TEST_CASE("olympian priority gives the token to the highest priority at once", "[olympian]") {
  // A low-priority ResNet-152 service (2 requests) is running when a high-priority ResNet-50
  // request arrives at 105 ms. Depth 1: the high one waits only for the low one's node on the
  // GPU, then runs alone; it registered just now, so it pays no wake-up.
  const json params = {{"mode", "priority"}, {"depth", 1}, {"profile_requests", 0}};
  const json jobs = {service("low", "resnet152", 8, 0.1, 2),
                     service("high", "resnet50", 8, 0.105, 1, {{"priority", 5}})};
  const auto r = test::run_config(config("olympian", params, jobs));
  REQUIRE(r.run.jobs_finished == 2);
  const auto ops = compute_ops(r);
  TimeNs high_first = kTimeNever, high_last = 0;
  DurationNs low_max = 0;
  for (const auto& op : ops) {
    if (op.job == 1) {
      high_first = std::min(high_first, op.start);
      high_last = std::max(high_last, op.end);
    } else {
      low_max = std::max(low_max, op.duration());
    }
  }
  for (const auto& op : ops) {
    if (op.job == 0) CHECK((op.end <= high_first || op.start >= high_last));
  }
  // latency = rest of the low node in flight + 109 nodes x (node + 1 us check)
  const DurationNs solo = solo_request_ns("v100-pcie3x16", "resnet50", 8);
  const double latency_ms = r.summary["jobs"][1]["latency"]["max_ms"].get<double>();
  CHECK(latency_ms >= ns_to_ms(solo + 109 * 1'000));
  CHECK(latency_ms <= ns_to_ms(solo + 109 * 1'000 + low_max));
  CHECK(end_s(r, 1) < end_s(r, 0));

  // Under fair sharing the same request shares the GPU with the low one: about twice as long.
  const auto f = test::run_config(
      config("olympian", {{"mode", "fair"}, {"depth", 1}, {"profile_requests", 0}}, jobs));
  CHECK(f.summary["jobs"][1]["latency"]["max_ms"].get<double>() > 1.8 * ns_to_ms(solo));
}

TEST_CASE("olympian profiles each model on its first requests, unscheduled", "[olympian]") {
  // Services A (3 requests) and B (1 request) of one model and batch; profile_requests 2.
  // Runs that start before two warm-up requests have completed run unscheduled, as stock
  // TF-Serving: no token, no yield check; the profile then holds each node's measured time.
  const json params = {{"profile_requests", 2}};
  const auto r = test::run_config(
      config("olympian", params,
             {service("a", "resnet50", 8, 0.1, 3), service("b", "resnet50", 8, 0.1, 1)}));
  REQUIRE(r.run.jobs_finished == 2);
  const auto& pm = r.summary["policy_metrics"];
  REQUIRE(pm.contains("olympian.profiled_request_ms"));
  CHECK(pm["olympian.profiled_request_ms"]["count"] == 1);
  // Every node was measured alone on the one stream: the profile is the solo request time.
  const DurationNs solo = solo_request_ns("v100-pcie3x16", "resnet50", 8);
  CHECK(pm["olympian.profiled_request_ms"]["mean"].get<double>() == Approx(ns_to_ms(solo)));

  // A's request completions split the run into phases.
  std::vector<TimeNs> a_done;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::RequestEnd && e.job == 0) a_done.push_back(e.t_ns);
  }
  REQUIRE(a_done.size() == 3);
  const auto ops = compute_ops(r);
  bool interleaved = false;
  for (std::size_t i = 1; i < ops.size(); ++i) {
    const DurationNs gap = ops[i].start - ops[i - 1].end;
    if (ops[i].end <= a_done[0]) {
      // Warm-up: A and B issue freely (2 nodes each), their nodes interleave back to back.
      CHECK(gap == 0);
      interleaved = interleaved || ops[i].job != ops[i - 1].job;
    } else if (ops[i].start >= a_done[1]) {
      // A's third request is scheduled: a 1 us yield check before each node.
      CHECK(gap == 1'000);
    }
  }
  CHECK(interleaved);
  // The token was never passed: B ended during the warm-up and A's scheduled run was alone,
  // so the only record is A's release when its last request ended.
  CHECK(pm["olympian.token_hold_us"]["count"] == 1);
}

TEST_CASE("olympian and tf_serving reject what they cannot serve, with a reason", "[olympian]") {
  const json train = {{"name", "t"}, {"kind", "training"}, {"model", "resnet50"},
                      {"batch", 8},  {"arrival_s", 0.0},   {"iterations", 2}};
  for (const std::string policy : {"olympian", "tf_serving"}) {
    DYNAMIC_SECTION(policy) {
      const auto r = test::run_config(
          config(policy, json::object(), {train, service("s", "resnet50", 8, 0.0, 2)}));
      CHECK(r.run.jobs_rejected == 1);
      CHECK(r.run.jobs_finished == 1);
      CHECK(r.summary["jobs"][0]["status"].get<std::string>().rfind("rejected: ", 0) == 0);
      // Requests whose activations never fit are rejected, not left hanging: 2 GiB device,
      // VGG-16 at batch 64 needs ~0.5 GiB of weights and ~1.6 GiB of activations.
      const auto m = test::run_config(config(policy, json::object(),
                                             json::array({service("v", "vgg16", 64, 0.0, 1)}),
                                             "v100-pcie3x16", 2.0));
      CHECK(m.run.jobs_rejected == 1);
    }
  }
}

TEST_CASE("olympian reads its parameters strictly", "[olympian]") {
  const json jobs = json::array({service("s", "resnet50", 8, 0.0, 1)});
  CHECK_THROWS_WITH(test::run_config(config("olympian", {{"quantum", 1000}}, jobs)),
                    Catch::Contains("policy.params.quantum"));
  CHECK_THROWS_WITH(test::run_config(config("olympian", {{"quantum_us", 0}}, jobs)),
                    Catch::Contains("policy.params.quantum_us"));
  CHECK_THROWS_WITH(test::run_config(config("olympian", {{"mode", "lottery"}}, jobs)),
                    Catch::Contains("policy.params.mode"));
  CHECK_THROWS_WITH(test::run_config(config("olympian", {{"depth", 0}}, jobs)),
                    Catch::Contains("policy.params.depth"));
  CHECK_THROWS_WITH(test::run_config(config("tf_serving", {{"streams", "many"}}, jobs)),
                    Catch::Contains("policy.params.streams"));
}

TEST_CASE("olympian and tf_serving keep the invariants on the standard traces, GPU only",
          "[olympian]") {
  // The conformance suite runs them with a GPU and a CPU; this is the GPU-only device list,
  // in every mode (weighted_fair and priority read the traces' weights and priorities).
  const auto root = test::source_dir();
  const DeviceProfile gpu = find_device_profile(root / "traces" / "devices", "v100-pcie3x16");
  const std::vector<std::pair<std::string, json>> variants = {
      {"olympian", json::object()},
      {"olympian", {{"mode", "weighted_fair"}, {"depth", 1}, {"overshoot", "repay"}}},
      {"olympian", {{"mode", "priority"}, {"profile_requests", 1}}},
      {"tf_serving", json::object()},
      {"tf_serving", {{"streams", "per_client"}}}};
  for (const auto& [policy, params] : variants) {
    for (const auto& trace : test::standard_traces()) {
      DYNAMIC_SECTION(policy << " " << params.dump() << " on " << trace) {
        json doc = test::make_config(policy, {{"files", {trace}}}, {"v100-pcie3x16"});
        doc["policy"]["params"] = params;
        const auto first = test::run_config(doc);
        const auto violations = test::check_invariants(first, {gpu.memory_bytes}, {false}, true);
        for (const auto& v : violations) UNSCOPED_INFO(v);
        CHECK(violations.empty());
        CHECK(first.run.jobs_unfinished == 0);
        CHECK(first.run.jobs_finished + first.run.jobs_rejected == first.jobs.size());
        CHECK(test::events_jsonl(first) == test::events_jsonl(test::run_config(doc)));
      }
    }
  }
}
