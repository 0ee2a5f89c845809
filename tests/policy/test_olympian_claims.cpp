// Olympian's central claims (its abstract; docs/policies/olympian.md) on small configurations of
// the paper's setups, on the GTX 1080 Ti profile (the paper's GPU is recalled as a GTX
// 1080-class card, not verified). The
// full configurations are experiments/configs/olympian_*.json and experiments/sweeps/olympian_*.
// Where gpumux does not reproduce a claim, the test asserts what it measures and says why.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace gpumux;
using nlohmann::json;

namespace {

constexpr double kRequestsAt = 1.0;  // clients send at 1 s, after the warm-up

json service(const std::string& name, const std::string& model, int batch, double at_s,
             int requests, json extra = json::object()) {
  json j = {{"name", name},   {"kind", "inference"}, {"model", model},
            {"batch", batch}, {"arrival_s", 0.0},    {"requests", json::array()}};
  for (int i = 0; i < requests; ++i) j["requests"].push_back(at_s);
  for (auto& [k, v] : extra.items()) j[k] = v;
  return j;
}

ExperimentResult run(const std::string& policy, json params, json jobs) {
  json doc = test::make_config(policy, {{"jobs", std::move(jobs)}}, {"gtx1080ti"});
  doc["policy"]["params"] = std::move(params);
  // gpumux holds a request's peak activations for the whole request, TF frees tensors after
  // their last use: more memory stands in for that (no timing depends on it).
  doc["devices"][0]["memory_gib"] = 32;
  return test::run_config(doc);
}

/// 10 identical Inception-v3 clients (batch 100), `requests` each, after a warm-up service
/// of 2 requests that builds the profile (profile_requests 2).
json ten_clients(int requests) {
  json jobs = json::array({service("warmup", "inception_v3", 100, 0.0, 2)});
  for (int i = 0; i < 10; ++i) {
    jobs.push_back(
        service("client-" + std::to_string(i), "inception_v3", 100, kRequestsAt, requests));
  }
  return jobs;
}

/// Ends of the jobs whose name starts with `prefix`.
std::vector<double> ends(const ExperimentResult& r, const std::string& prefix) {
  std::vector<double> e;
  for (const auto& j : r.summary["jobs"]) {
    if (j["name"].get<std::string>().rfind(prefix, 0) == 0) e.push_back(j["end_s"].get<double>());
  }
  return e;
}

/// (last - first client end) / (last client end - request time).
double spread(const ExperimentResult& r) {
  const auto e = ends(r, "client-");
  const auto [lo, hi] = std::minmax_element(e.begin(), e.end());
  return (*hi - *lo) / (*hi - kRequestsAt);
}

double makespan(const ExperimentResult& r) {
  const auto e = ends(r, "client-");
  return *std::max_element(e.begin(), e.end()) - kRequestsAt;
}

/// Each job's share of the GPU time given from `from` to the first job's end (while all
/// compete); valid for policies whose compute ops never overlap (one stream).
std::map<std::uint32_t, double> contended_shares(const ExperimentResult& r, TimeNs from) {
  TimeNs to = kTimeNever;
  for (const auto& j : r.summary["jobs"])
    to = std::min(to, seconds_to_ns(j["end_s"].get<double>()));
  std::map<std::uint32_t, double> busy;
  double total = 0;
  for (const Event& e : r.log.events()) {
    if (e.kind != EventKind::OpEnd || e.op_kind != OpKind::Compute || e.job == kNoJob) continue;
    const TimeNs a = std::max(e.a, from), b = std::min(e.t_ns, to);
    if (b <= a) continue;
    busy[e.job] += static_cast<double>(b - a);
    total += static_cast<double>(b - a);
  }
  for (auto& [job, t] : busy) t /= total;
  return busy;
}

}  // namespace

TEST_CASE("claim: identical clients finish within 10% of each other under fair sharing",
          "[olympian][claims]") {
  const auto jobs = ten_clients(2);
  const auto olympian = run("olympian", {{"mode", "fair"}, {"profile_requests", 2}}, jobs);
  REQUIRE(olympian.run.jobs_finished == 11);
  // Paper (as recalled, not verified): Olympian's clients finish nearly together. gpumux: within
  // 0.1%.
  CHECK(spread(olympian) < 0.10);
  CHECK(spread(olympian) < 0.001);

  // Paper (as recalled): under stock TF-Serving their finish times spread widely. Not reproduced:
  // in gpumux the sessions' nodes reach the one compute stream in a regular round robin (each
  // issues its next node when one completes; no CPU-side thread scheduling is modelled), so
  // identical clients get identical service and finish together too. Time slicing between processes
  // is just as even (1 ms slices, round robin).
  CHECK(spread(run("tf_serving", json::object(), jobs)) < 0.001);
  CHECK(spread(run("time_slicing", json::object(), jobs)) < 0.002);
  // The metric does tell schedules apart: back to back, the first client ends after 1/10.
  CHECK(spread(run("exclusive", json::object(), jobs)) > 0.85);
}

TEST_CASE("claim: interleaving costs under 2% of the makespan at a 1-2 ms quantum",
          "[olympian][claims]") {
  // Overhead = makespan under Olympian / under stock TF-Serving (no scheduler; identical
  // warm-up) - 1, for 10 clients x 2 requests x 210 nodes of Inception-v3 (batch 100).
  const auto jobs = ten_clients(2);
  const double reference = makespan(run("tf_serving", json::object(), jobs));
  // Nothing is lost to TF-Serving itself: the stream never idles, so its makespan is the sum
  // of the 20 requests' solo times.
  CHECK(reference == Approx(20 * 0.174698828).epsilon(1e-6));
  const double checks_s = 10 * 2 * 210 * 1e-6;  // a 1 us yield check before every node
  for (const int quantum_us : {1000, 2000}) {
    DYNAMIC_SECTION("quantum " << quantum_us << " us") {
      std::vector<double> lost_by_depth;
      for (const int depth : {1, 2}) {
        const auto r =
            run("olympian", {{"quantum_us", quantum_us}, {"depth", depth}, {"profile_requests", 2}},
                jobs);
        const double overhead = makespan(r) / reference - 1;
        const auto passes =
            r.summary["policy_metrics"]["olympian.token_hold_us"]["count"].get<double>();
        INFO("depth " << depth << ": overhead " << overhead * 100 << " %, passes " << passes);
        CHECK(overhead < 0.02);  // paper's abstract: < 2 %
        // What it consists of: the yield checks, plus a 4 us wake-up per token pass that the
        // GPU waits for only when nothing of the old holder is in flight.
        const double lost_s = makespan(r) - reference;
        CHECK(lost_s >= checks_s - 1e-9);
        CHECK(lost_s <= checks_s + passes * 4e-6 + 1e-9);
        lost_by_depth.push_back(lost_s);
      }
      // A node in flight hides most wake-ups (the lost overlap of depth 1).
      CHECK(lost_by_depth[1] < lost_by_depth[0]);
    }
  }
}

TEST_CASE("claim: weighted fair sharing follows the weights", "[olympian][claims]") {
  // Two identical Inception-v3 clients (batch 100, 5 requests) of weight 10 and 1 (the code's
  // weight for high-priority jobs); share = GPU time while both run (until the first ends).
  const json jobs = {service("w10", "inception_v3", 100, kRequestsAt, 5, {{"weight", 10}}),
                     service("w1", "inception_v3", 100, kRequestsAt, 5, {{"weight", 1}})};
  const json base = {{"mode", "weighted_fair"}, {"profile_requests", 0}};
  const auto from = seconds_to_ns(kRequestsAt);

  // Paper (abstract): shares follow the weights (here 10/11 = 0.909). Not reproduced at the default
  // quantum (1 ms) and depth (2): Inception-v3's gpumux nodes at batch 100 take 0.83 ms on
  // average, close to the quantum, and each turn of the weight-1 client also runs the node it
  // had in flight; the code debits one quantum per turn however far a turn overshot it, so the
  // weight-1 client gets about two nodes per turn: 10:1 becomes about 5.5:1.
  auto s = contended_shares(run("olympian", base, jobs), from);
  CHECK(s.at(0) == Approx(0.847).margin(0.01));
  // Repaying the overshoot (overshoot = repay, deficit round robin; an extension) restores
  // the weights to within 5% ...
  json repay = base;
  repay["overshoot"] = "repay";
  s = contended_shares(run("olympian", repay, jobs), from);
  CHECK(s.at(0) == Approx(10.0 / 11).epsilon(0.05));
  CHECK(s.at(1) == Approx(1.0 / 11).epsilon(0.05));
  // ... and so does a quantum well above the node size with nothing in flight at a pass.
  json coarse = base;
  coarse["quantum_us"] = 2000;
  coarse["depth"] = 1;
  s = contended_shares(run("olympian", coarse, jobs), from);
  CHECK(s.at(0) == Approx(10.0 / 11).epsilon(0.05));
  CHECK(s.at(1) == Approx(1.0 / 11).epsilon(0.05));
}

TEST_CASE("claim: fair sharing equalises GPU time across the heterogeneous mix",
          "[olympian][claims]") {
  // The authors' mix (USC-NSL/TF-Serving-Downloads client), one client per model, 5 requests each,
  // profiles from the cost model (profile_requests 0).
  const std::vector<std::pair<std::string, int>> mix = {
      {"inception_v3", 150}, {"googlenet", 200}, {"resnet50", 144}, {"resnet101", 128},
      {"resnet152", 100},    {"alexnet", 256},   {"vgg16", 120}};
  json jobs = json::array();
  for (const auto& [model, batch] : mix)
    jobs.push_back(service(model, model, batch, kRequestsAt, 5));
  const auto from = seconds_to_ns(kRequestsAt);
  const std::uint32_t vgg = 6, alexnet = 5;

  // Paper (as recalled): equal GPU-duration shares (1/7 = 0.143 each). Not reproduced at a 1 ms
  // quantum with the code's accounting: VGG-16's nodes at batch 120 take 22 ms on average
  // (AlexNet's 4 ms), far beyond the quantum, and a turn is at least one node, so VGG-16 gets
  // a 22 ms node per round while the others get ~1-2 ms: its share is 0.65, exactly what the
  // node-level round robin of stock TF-Serving gives it.
  const auto fair = contended_shares(run("olympian", {{"profile_requests", 0}}, jobs), from);
  const auto stock = contended_shares(run("tf_serving", json::object(), jobs), from);
  CHECK(fair.at(vgg) == Approx(0.652).margin(0.01));
  for (const auto& [job, share] : fair) CHECK(share == Approx(stock.at(job)).margin(0.005));

  // With the overshoot repaid (an extension), every model gets its seventh within 5%.
  const auto repay = run("olympian", {{"profile_requests", 0}, {"overshoot", "repay"}}, jobs);
  for (const auto& [job, share] : contended_shares(repay, from)) {
    INFO("job " << job);
    CHECK(share == Approx(1.0 / 7).epsilon(0.05));
  }
  // The services then end in order of their work: AlexNet (0.24 s) first, VGG-16 (2.4 s) last.
  const auto e = ends(repay, "");
  CHECK(*std::min_element(e.begin(), e.end()) == e[alexnet]);
  CHECK(*std::max_element(e.begin(), e.end()) == e[vgg]);
  // The code's threshold (51,200 cost units) read as 51.2 ms of GPU time also evens the
  // shares out, to within 25% (turns are then longer than any node).
  const auto coarse = contended_shares(
      run("olympian", {{"profile_requests", 0}, {"quantum_us", 51200}}, jobs), from);
  for (const auto& [job, share] : coarse) CHECK(share == Approx(1.0 / 7).epsilon(0.25));
}

TEST_CASE("claim: priority serves high-priority jobs first", "[olympian][claims]") {
  // Inception-v3 and ResNet-152 at priority 5 among five low-priority models of the mix: the
  // two high ones share the GPU (equal priorities take turns) and both end before any low one.
  const std::vector<std::tuple<std::string, int, int>> mix = {
      {"inception_v3", 150, 5}, {"googlenet", 200, 0}, {"resnet50", 144, 0},
      {"resnet101", 128, 0},    {"resnet152", 100, 5}, {"alexnet", 256, 0}};
  json jobs = json::array();
  for (const auto& [model, batch, prio] : mix) {
    jobs.push_back(service(model, model, batch, kRequestsAt, 2, {{"priority", prio}}));
  }
  const auto r = run("olympian", {{"mode", "priority"}, {"profile_requests", 0}}, jobs);
  const auto e = ends(r, "");
  const double high_last = std::max(e[0], e[4]);
  for (std::size_t j : {1, 2, 3, 5}) CHECK(e[j] > high_last);
  // The two high ones are served as if alone together: 2 x (262 + 358) ms of work, plus the
  // low nodes already issued when they registered and the per-node checks (< 1%).
  CHECK(high_last - kRequestsAt == Approx(2 * (0.26154 + 0.35805)).epsilon(0.01));
}
