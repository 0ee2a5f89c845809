// The "pipeswitch" policy on hand-built situations: what a switch costs (computed by hand from
// the V100 profile), the pipeline order on the event log, preemption at a layer boundary, every
// variant, memory pressure. The paper's central claim is in test_pipeswitch_claim.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "pipeswitch/grouping.hpp"
#include "test_support.hpp"

using namespace gpumux;
namespace ps = gpumux::policies::pipeswitch;
using nlohmann::json;

namespace {

constexpr DurationNs kSwitchMessagesNs = 2 * 100'000;  // two IPC messages, 100 us each
// The artifact's per-group host work (policy defaults, docs/policies/pipeswitch.md).
constexpr DurationNs kIssueNs = 13'500;               // python_copy_us: issue of the next copy
constexpr DurationNs kMessageNs = 7'000 + 15'000;     // event_sync_us + pipe_message_us
constexpr DurationNs kRecvNs = 3'000;                 // pipe_recv_us
constexpr DurationNs kGapNs = kIssueNs + kMessageNs;  // copy engine idle per group: 35.5 us

const ModelCatalog& zoo() {
  static const ModelCatalog catalog(test::source_dir() / "traces" / "models");
  return catalog;
}

DeviceProfile profile(const std::string& name) {
  return find_device_profile(test::source_dir() / "traces" / "devices", name);
}

json training(const std::string& name, const std::string& model, int batch, int iterations,
              double arrival_s = 0.0) {
  return {{"name", name},   {"kind", "training"},     {"model", model},
          {"batch", batch}, {"arrival_s", arrival_s}, {"iterations", iterations}};
}

json inference(const std::string& name, const std::string& model, int batch,
               std::vector<double> requests) {
  return {{"name", name},   {"kind", "inference"}, {"model", model},
          {"batch", batch}, {"arrival_s", 0.0},    {"requests", requests}};
}

ExperimentResult run(json params, json jobs, std::vector<std::string> devices = {"v100-pcie3x16"},
                     double horizon_s = 0) {
  json doc = test::make_config("pipeswitch", {{"jobs", std::move(jobs)}}, std::move(devices));
  doc["policy"]["params"] = std::move(params);
  if (horizon_s > 0) doc["horizon_s"] = horizon_s;
  return test::run_config(doc);
}

std::uint32_t job_index(const ExperimentResult& r, const std::string& name) {
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    if (r.jobs[i].name == name) return static_cast<std::uint32_t>(i);
  }
  FAIL("no job " << name);
  return 0;
}

/// Request latencies of a job, ns, in completion order.
std::vector<DurationNs> latencies(const ExperimentResult& r, std::uint32_t job) {
  std::vector<DurationNs> out;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::RequestEnd && e.job == job) out.push_back(e.b);
  }
  return out;
}

DurationNs lone_request_ns(json params = json::object(), const std::string& model = "resnet152") {
  const auto r = run(std::move(params), json::array({inference("infer", model, 8, {0.1})}));
  const auto l = latencies(r, job_index(r, "infer"));
  REQUIRE(l.size() == 1);
  return l[0];
}

struct Interval {
  TimeNs start = 0, end = 0;
  std::uint32_t first = 0, last = 0;
  OpPurpose purpose = OpPurpose::Other;
  OpStatus status = OpStatus::Ok;
};

/// Finished ops of a job with the given kind, in end order.
std::vector<Interval> ops_of(const ExperimentResult& r, std::uint32_t job, OpKind kind) {
  std::vector<Interval> out;
  for (const Event& e : r.log.events()) {
    if (e.kind != EventKind::OpEnd || e.job != job || e.op_kind != kind) continue;
    out.push_back({e.a, e.t_ns, e.first_layer, e.last_layer, e.purpose, e.status});
  }
  return out;
}

std::vector<std::string> invariant_violations(const ExperimentResult& r,
                                              const std::vector<std::string>& devices) {
  std::vector<std::uint64_t> capacity;
  std::vector<bool> is_cpu;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const DeviceProfile p = profile(devices[d]);
    capacity.push_back(p.memory_bytes);
    is_cpu.push_back(p.kind == DeviceKind::Cpu);
  }
  return test::check_invariants(r, capacity, is_cpu, true);
}

}  // namespace

TEST_CASE("a lone request costs the switch messages plus the predicted pipeline", "[pipeswitch]") {
  const DeviceProfile p = profile("v100-pcie3x16");
  const CostModel cost(p, CostOptions{});
  const Model& m = zoo().at("resnet152");
  const LayerRange all{0, m.layer_count()};
  const auto layers = ps::inference_layer_costs(m, cost, 8);
  const ps::GroupOverheads o = ps::group_overheads(cost, kRecvNs, kGapNs);
  CHECK(o.copy_call_ns == 8'500);
  CHECK(o.sync_ns == 3'000);
  CHECK(o.copy_gap_ns == 35'500);

  // Whole model, the artifact's way: the messages and the copy's Python issue, one copy (8.5 us
  // + 241 MB at 9.6 GB/s), the event sync and the pipe message, the worker's recv, the forward.
  const DurationNs whole = kSwitchMessagesNs + kIssueNs + cost.h2d_ns(m.weight_bytes(), false) +
                           kMessageNs + kRecvNs + cost.op_ns(m, all, 8, Pass::Forward, true);
  CHECK(lone_request_ns({{"grouping", "whole"}}) == whole);
  // The prediction rounds each layer's copy up to a ns, the simulator the group's: <= 1 ns/layer.
  const DurationNs predicted_whole = ps::predicted_time(layers, ps::GroupStarts{0}, o);
  CHECK(kSwitchMessagesNs + predicted_whole - whole >= 0);
  CHECK(kSwitchMessagesNs + predicted_whole - whole <= m.layer_count());
  CHECK(ns_to_ms(whole) == Approx(46.8).margin(0.1));  // 25.1 ms of copy + 21.4 ms of compute

  // Per layer: 313 copies and 313 syncs; the simulator matches the recurrence to the ns.
  const auto per_layer = ps::per_layer_starts(layers.size());
  CHECK(lone_request_ns({{"grouping", "per_layer"}}) ==
        kSwitchMessagesNs + ps::predicted_time(layers, per_layer, o));
  // Without pipelining: every copy, then every layer.
  CHECK(lone_request_ns({{"grouping", "no_pipeline"}}) ==
        kSwitchMessagesNs + ps::predicted_sequential_time(layers, per_layer, o));

  // Optimal and artifact groupings: one copy per group rounds its bytes once, the prediction
  // once per layer, so they agree within a ns per layer.
  const auto best = ps::optimal_grouping(layers, o);
  const DurationNs optimal = lone_request_ns();
  CHECK(std::llabs(optimal - kSwitchMessagesNs - best.time_ns) <= m.layer_count());
  const DurationNs artifact = lone_request_ns({{"grouping", "artifact"}});
  CHECK(std::llabs(artifact - kSwitchMessagesNs -
                   ps::predicted_time(layers, m.grouping("pipeswitch").starts, o)) <=
        m.layer_count());
  // The ordering the paper's Fig. 7 shows, per-layer paying 313 x 44 us of per-group cost on
  // the copy path (11.1 ms when the copy path is the bottleneck).
  const DurationNs per_layer_ns = lone_request_ns({{"grouping", "per_layer"}});
  CHECK(optimal <= artifact);
  CHECK(artifact < per_layer_ns);
  CHECK(ns_to_ms(per_layer_ns - optimal) > 5.0);
  CHECK(per_layer_ns < whole);
  CHECK(whole < lone_request_ns({{"grouping", "no_pipeline"}}));
}

TEST_CASE("group_transfer: event_wait is the CUDA-backend form", "[pipeswitch]") {
  const DeviceProfile p = profile("v100-pcie3x16");
  const CostModel cost(p, CostOptions{});
  const Model& m = zoo().at("resnet152");
  const LayerRange all{0, m.layer_count()};
  const auto layers = ps::inference_layer_costs(m, cost, 8);
  const ps::GroupOverheads o = ps::group_overheads(cost, p.event_ns);
  CHECK(o.copy_gap_ns == 0);
  const json ew{{"group_transfer", "event_wait"}};
  const auto with = [&](json extra) {
    json params = ew;
    if (extra.is_object()) params.update(extra);
    return lone_request_ns(params);
  };
  // Back-to-back copies; each group waits on an event (the profile's event_ns).
  const DurationNs whole = kSwitchMessagesNs + cost.h2d_ns(m.weight_bytes(), false) + p.event_ns +
                           cost.op_ns(m, all, 8, Pass::Forward, true);
  CHECK(with({{"grouping", "whole"}}) == whole);
  const auto per_layer = ps::per_layer_starts(layers.size());
  CHECK(with({{"grouping", "per_layer"}}) ==
        kSwitchMessagesNs + ps::predicted_time(layers, per_layer, o));
  CHECK(with({{"grouping", "no_pipeline"}}) ==
        kSwitchMessagesNs + ps::predicted_sequential_time(layers, per_layer, o));
  const auto best = ps::optimal_grouping(layers, o);
  CHECK(std::llabs(with({}) - kSwitchMessagesNs - best.time_ns) <= m.layer_count());
  CHECK(with({{"grouping", "whole"}, {"group_sync_us", 1000}}) == whole - p.event_ns + 1'000'000);
}

TEST_CASE("a per-layer load pays the artifact's host work between copies", "[pipeswitch]") {
  // superres (4 layers), batch 1, one group per layer, a lone request at 0.1 s.
  const auto r =
      run({{"grouping", "per_layer"}}, json::array({inference("infer", "superres", 1, {0.1})}));
  const std::uint32_t job = job_index(r, "infer");
  const auto loads = ops_of(r, job, OpKind::CopyH2D);
  const auto computes = ops_of(r, job, OpKind::Compute);
  REQUIRE(loads.size() == 4);
  REQUIRE(computes.size() == 4);
  // The first copy: after the two switch messages and its Python issue.
  CHECK(loads[0].start == 100'000'000 + kSwitchMessagesNs + kIssueNs);
  for (std::size_t g = 0; g < 4; ++g) {
    INFO("group " << g);
    CHECK(loads[g].first == g);
    // The controller blocks on the copy's event (7 us), sends the message (15 us) and issues
    // the next copy in Python (13.5 us): the copy engine idles 35.5 us between copies.
    if (g > 0) CHECK(loads[g].start - loads[g - 1].end == kGapNs);
    // The worker computes the group once the message arrived and its recv returned (3 us),
    // and not before the previous group finished.
    const TimeNs ready = loads[g].end + kMessageNs;
    const TimeNs previous = g == 0 ? 0 : computes[g - 1].end;
    CHECK(computes[g].start == std::max(ready, previous) + kRecvNs);
  }
}

TEST_CASE("memory and host-memory variants cost what the profile says", "[pipeswitch]") {
  const DeviceProfile p = profile("v100-pcie3x16");
  const CostModel cost(p, CostOptions{});
  const Model& m = zoo().at("resnet152");
  const std::uint64_t bytes = m.weight_bytes();
  const DurationNs whole = lone_request_ns({{"grouping", "whole"}});

  // One cudaMalloc per tensor before the copy: 777 tensors (155 convs, 155 BNs with their 2
  // running statistics, fc weight and bias), each 50 us + 1 ms per GiB.
  const std::uint64_t tensors = m.tensors(LayerRange{0, m.layer_count()});
  CHECK(tensors == 777);
  const std::uint64_t aligned = (bytes + 255) / 256 * 256;
  const DurationNs mallocs = static_cast<DurationNs>(tensors) * p.malloc_ns(aligned / tensors);
  CHECK(lone_request_ns({{"grouping", "whole"}, {"memory", "per_allocation"}}) == whole + mallocs);
  CHECK(ns_to_ms(mallocs) == Approx(39.1).margin(0.1));

  // Pageable host memory: the copy runs at 0.45 x 9.6 GB/s.
  const DurationNs pageable = cost.h2d_ns(bytes, true) - cost.h2d_ns(bytes, false);
  CHECK(lone_request_ns({{"grouping", "whole"}, {"host_memory", "pageable"}}) == whole + pageable);

  // With the optimal grouping the extra costs overlap compute only partly, but still cost.
  const DurationNs optimal = lone_request_ns();
  CHECK(lone_request_ns({{"memory", "per_allocation"}}) > optimal);
  CHECK(lone_request_ns({{"host_memory", "pageable"}}) > optimal);
}

TEST_CASE("switching variants cost what the profile says", "[pipeswitch]") {
  const DeviceProfile p = profile("v100-pcie3x16");
  const CostModel cost(p, CostOptions{});
  const Model& m = zoo().at("resnet152");
  const LayerRange all{0, m.layer_count()};
  const DurationNs forward = cost.op_ns(m, all, 8, Pass::Forward, true);
  const DurationNs whole = lone_request_ns({{"grouping", "whole"}});
  // One process: the old task's clean-up (device sync + cudaFree), then the whole model in one
  // copy and the forward after it: no pipelining, no per-group message, whatever the grouping.
  const DurationNs one =
      kSwitchMessagesNs + p.event_ns + p.free_ns + cost.h2d_ns(m.weight_bytes(), false) + forward;
  CHECK(lone_request_ns({{"switching", "one_context"}}) == one);
  CHECK(lone_request_ns({{"switching", "one_context"}, {"grouping", "per_layer"}}) == one);
  CHECK(ns_to_ms(one - lone_request_ns()) > 15.0);  // the pipelining it loses
  // Kill and restart: a cold process that builds the model (construction 0.1 s + 15 ms per
  // 10^6 parameters, the read of 241 MB at 1.3 GB/s), then model.to('cuda') from pageable
  // memory and the forward.
  const DurationNs build = p.model_build_ns(m);
  const double by_hand = 100e6 + 15.0 * static_cast<double>(m.params()) +
                         static_cast<double>(m.weight_bytes()) / 1.3;  // about 1.188 s
  CHECK(std::abs(static_cast<double>(build) - by_hand) <= 1.0);
  CHECK(lone_request_ns({{"switching", "kill_restart"}}) ==
        p.process_start_ns + p.context_create_ns + build + cost.h2d_ns(m.weight_bytes(), true) +
            forward);
  // The messages and the host costs are parameters.
  CHECK(lone_request_ns({{"grouping", "whole"}, {"ipc_message_us", 0}}) ==
        whole - kSwitchMessagesNs);
  CHECK(lone_request_ns({{"grouping", "whole"}, {"python_copy_us", 0}}) == whole - kIssueNs);
  CHECK(lone_request_ns({{"grouping", "whole"}, {"event_sync_us", 0}}) == whole - 7'000);
  CHECK(lone_request_ns({{"grouping", "whole"}, {"pipe_message_us", 0}}) == whole - 15'000);
  CHECK(lone_request_ns({{"grouping", "whole"}, {"pipe_recv_us", 10}}) == whole + 7'000);
  const json train = json::array({training("t", "vgg16", 8, 1)});
  CHECK_THROWS_WITH(run({{"pipe_message_us", -1}}, train),
                    Catch::Contains("policy.params.pipe_message_us"));
  CHECK_THROWS_WITH(run({{"group_transfer", "python"}}, train),
                    Catch::Contains("valid values: artifact, event_wait"));
}

TEST_CASE("one_context unloads training and loads the new model unpipelined", "[pipeswitch]") {
  const DeviceProfile p = profile("v100-pcie3x16");
  const CostModel cost(p, CostOptions{});
  const Model& m = zoo().at("resnet152");
  const auto r = run({{"switching", "one_context"}},
                     json::array({training("train", "resnet50", 8, 1000),
                                  inference("infer", "resnet152", 8, {0.5})}),
                     {"v100-pcie3x16"}, 1.0);
  const std::uint32_t train = job_index(r, "train");
  const std::uint32_t infer = job_index(r, "infer");
  // The training model is unloaded: its state and unfinished iteration are dropped at once.
  TimeNs discarded = -1;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::Preempt && e.job == train && e.label == "discard") discarded = e.t_ns;
  }
  REQUIRE(discarded >= 500'000'000);
  // Its last layer ran to the end; the clean-up and the messages follow, then one copy.
  TimeNs last_layer_end = 0;
  for (const Interval& t : ops_of(r, train, OpKind::Compute)) {
    if (t.status == OpStatus::Ok && t.end <= discarded) last_layer_end = t.end;
  }
  CHECK(last_layer_end == discarded);
  const auto loads = ops_of(r, infer, OpKind::CopyH2D);
  REQUIRE(loads.size() == 1);
  CHECK(loads[0].start == discarded + kSwitchMessagesNs + p.event_ns + p.free_ns);
  CHECK(loads[0].end - loads[0].start == cost.h2d_ns(m.weight_bytes(), false));
  const auto computes = ops_of(r, infer, OpKind::Compute);
  REQUIRE(computes.size() == 1);
  CHECK(computes[0].start == loads[0].end);
  // Training comes back by reloading its state whole.
  std::size_t train_loads = 0;
  for (const Interval& l : ops_of(r, train, OpKind::CopyH2D)) train_loads += l.start > discarded;
  CHECK(train_loads == 1);
}

TEST_CASE("kill_restart waits for the killed process to be reaped", "[pipeswitch]") {
  const DeviceProfile p = profile("v100-pcie3x16");
  const Model& m = zoo().at("resnet50");
  const auto r = run({{"switching", "kill_restart"}},
                     json::array({training("train", "resnet152", 8, 1000),
                                  inference("infer", "resnet50", 8, {4.0})}),
                     {"v100-pcie3x16"}, 8.0);
  const std::uint32_t train = job_index(r, "train");
  TimeNs killed = -1;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::Preempt && e.job == train && e.label == "kill") killed = e.t_ns;
  }
  REQUIRE(killed == 4'000'000'000);
  // The killed process's memory stays allocated until it is reaped, 0.3 s later.
  std::int64_t held = 0, reaped = 0;
  for (const Event& e : r.log.events()) {
    if (e.job != train) continue;
    if (e.kind == EventKind::Alloc && e.t_ns <= killed) held += e.a;
    if (e.kind == EventKind::Free && e.t_ns <= killed) held -= e.a;
    if (e.kind == EventKind::Free && e.t_ns > killed && e.t_ns < killed + p.process_reap_ns) {
      FAIL("memory freed before the reap at " << e.t_ns);
    }
    if (e.kind == EventKind::Free && e.label == "reaped") {
      CHECK(e.t_ns == killed + p.process_reap_ns);
      reaped += e.a;
    }
  }
  CHECK(held > 0);
  CHECK(reaped == held);
  // The new process is spawned once the old one is reaped (kill(); join()), and builds ResNet-50.
  TimeNs spawned = -1;
  DurationNs start_cost = 0;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::ContextCreate && e.t_ns > killed && spawned < 0) {
      spawned = e.t_ns;
      start_cost = e.b;
    }
  }
  CHECK(spawned == killed + p.process_reap_ns);
  CHECK(start_cost == p.process_start_ns + p.context_create_ns + p.model_build_ns(m));
}

TEST_CASE("compute of each group starts only after that group's copy", "[pipeswitch]") {
  for (const char* model : {"resnet152", "inception_v3", "bert_base_seq251"}) {
    for (const char* grouping : {"optimal", "artifact", "per_layer", "no_pipeline"}) {
      DYNAMIC_SECTION(model << ", grouping " << grouping) {
        const auto r = run({{"grouping", grouping}},
                           json::array({training("train", "resnet152", 8, 1000),
                                        inference("infer", model, 8, {0.5, 0.8})}),
                           {"v100-pcie3x16"}, 1.2);
        const std::uint32_t job = job_index(r, "infer");
        // Per request: the loads that ended before each compute op of the same layers.
        std::map<std::pair<std::uint32_t, std::uint32_t>, TimeNs> loaded;  // range -> end
        TimeNs last_load_end = 0;
        std::size_t computes = 0, requests = 0;
        for (const Event& e : r.log.events()) {
          if (e.job != job) continue;
          if (e.kind == EventKind::OpEnd && e.purpose == OpPurpose::LoadWeights) {
            REQUIRE(e.status == OpStatus::Ok);
            loaded[{e.first_layer, e.last_layer}] = e.t_ns;
            last_load_end = e.t_ns;
          } else if (e.kind == EventKind::OpStart && e.op_kind == OpKind::Compute) {
            ++computes;
            const auto it = loaded.find({e.first_layer, e.last_layer});
            REQUIRE(it != loaded.end());  // one copy per group, same layers as its compute
            CHECK(e.t_ns >= it->second);
            if (std::string(grouping) == "no_pipeline") CHECK(e.t_ns >= last_load_end);
          } else if (e.kind == EventKind::RequestEnd) {
            ++requests;
            loaded.clear();  // the model is re-sent for the next request
          }
        }
        CHECK(requests == 2);
        CHECK(computes >= 2);
        // Inference and training never compute at the same time.
        const auto infer_ops = ops_of(r, job, OpKind::Compute);
        std::size_t overlaps = 0;
        for (const Interval& t : ops_of(r, job_index(r, "train"), OpKind::Compute)) {
          if (t.status != OpStatus::Ok) continue;
          for (const Interval& i : infer_ops) overlaps += t.end > i.start && i.end > t.start;
        }
        CHECK(overlaps == 0);
      }
    }
  }
}

TEST_CASE("preemption stops training at a layer boundary and resumes it there", "[pipeswitch]") {
  for (const int layers_per_op : {1, 4}) {
    DYNAMIC_SECTION(layers_per_op << " layer(s) per training op") {
      const auto r = run({{"train_layers_per_op", layers_per_op}},
                         json::array({training("train", "resnet152", 8, 1000),
                                      inference("infer", "resnet152", 8, {0.5, 0.8})}),
                         {"v100-pcie3x16"}, 1.2);
      const std::uint32_t train = job_index(r, "train");
      const std::uint32_t infer = job_index(r, "infer");
      const auto train_ops = ops_of(r, train, OpKind::Compute);
      const auto loads = ops_of(r, infer, OpKind::CopyH2D);
      std::vector<TimeNs> arrivals, ends;
      for (const Event& e : r.log.events()) {
        if (e.job != infer) continue;
        if (e.kind == EventKind::RequestArrival) arrivals.push_back(e.t_ns);
        if (e.kind == EventKind::RequestEnd) ends.push_back(e.t_ns);
      }
      REQUIRE(arrivals.size() == 2);
      REQUIRE(ends.size() == 2);
      for (std::size_t q = 0; q < 2; ++q) {
        INFO("request " << q);
        // At most one training op was on the GPU when the request came; it completed.
        std::vector<Interval> running;
        for (const Interval& t : train_ops) {
          if (t.status == OpStatus::Ok && t.start <= arrivals[q] && t.end > arrivals[q]) {
            running.push_back(t);
          }
        }
        REQUIRE(running.size() <= 1);
        const TimeNs stopped = running.empty() ? arrivals[q] : running[0].end;
        if (!running.empty() && running[0].purpose != OpPurpose::Update) {
          CHECK(running[0].last - running[0].first <= static_cast<std::uint32_t>(layers_per_op));
        }
        // Queued training work was dropped at the arrival, not run.
        bool dropped = false;
        std::size_t ran_during = 0;
        for (const Interval& t : train_ops) {
          dropped = dropped || (t.status == OpStatus::Dropped && t.end == arrivals[q]);
          ran_during += t.status == OpStatus::Ok && t.start > arrivals[q] && t.start < ends[q];
        }
        CHECK(dropped);
        CHECK(ran_during == 0);
        // The first copy of the model starts after the stop and the two messages.
        TimeNs first_load = kTimeNever;
        for (const Interval& l : loads) {
          if (l.start >= arrivals[q] && l.start < first_load) first_load = l.start;
        }
        CHECK(first_load == stopped + kSwitchMessagesNs + kIssueNs);
        // Training continues where it stopped: the next op is adjacent to the last completed
        // one (no layer redone, none skipped).
        const Interval* before = nullptr;
        const Interval* after = nullptr;
        for (const Interval& t : train_ops) {
          if (t.status != OpStatus::Ok) continue;
          if (t.end <= stopped) before = &t;
          if (t.start >= ends[q] && after == nullptr) after = &t;
        }
        REQUIRE(before != nullptr);
        REQUIRE(after != nullptr);
        CHECK(after->start - ends[q] < 1'000'000);  // within 1 ms of the reply
        if (before->purpose == OpPurpose::Forward && after->purpose == OpPurpose::Forward) {
          CHECK(after->first == before->last);
        } else if (before->purpose == OpPurpose::Backward &&
                   after->purpose == OpPurpose::Backward) {
          CHECK(after->last == before->first);
        }
      }
    }
  }
}

TEST_CASE("every pipeswitch variant serves a mixed workload", "[pipeswitch]") {
  const std::vector<json> variants{{{"grouping", "optimal"}},
                                   {{"grouping", "per_layer"}},
                                   {{"grouping", "whole"}},
                                   {{"grouping", "no_pipeline"}},
                                   {{"grouping", "artifact"}},
                                   {{"memory", "per_allocation"}},
                                   {{"host_memory", "pageable"}},
                                   {{"switching", "one_context"}},
                                   {{"switching", "kill_restart"}},
                                   {{"train_layers_per_op", 3}},
                                   {{"grouping", "whole"},
                                    {"memory", "per_allocation"},
                                    {"host_memory", "pageable"},
                                    {"switching", "one_context"}}};
  const std::vector<std::string> devices{"v100-pcie3x16"};
  for (const json& v : variants) {
    DYNAMIC_SECTION(v.dump()) {
      const auto r = run(v,
                         json::array({training("train", "resnet50", 16, 6),
                                      inference("infer", "resnet152", 8, {0.05, 0.12, 0.2}),
                                      inference("bert", "bert_base", 8, {0.06})}),
                         devices);
      const auto bad = invariant_violations(r, devices);
      for (const auto& b : bad) UNSCOPED_INFO(b);
      CHECK(bad.empty());
      CHECK(r.run.jobs_finished == 3);
      CHECK(r.summary["inference"]["count"] == 4);
      CHECK(r.summary["jobs"][job_index(r, "train")]["iterations"] == 6);
    }
  }
  SECTION("unknown parameters and values are errors") {
    CHECK_THROWS_WITH(run({{"groupin", "optimal"}}, json::array({training("t", "vgg16", 8, 1)})),
                      Catch::Contains("policy.params.groupin"));
    CHECK_THROWS_WITH(run({{"switching", "fast"}}, json::array({training("t", "vgg16", 8, 1)})),
                      Catch::Contains("valid values: active_standby, one_context, kill_restart"));
  }
}

TEST_CASE("pipeswitch handles training-only, inference-only and several jobs of each",
          "[pipeswitch]") {
  // With or without a CPU device, first or last: the policy uses the GPU and ignores the CPU.
  const std::vector<std::vector<std::string>> device_lists{
      {"v100-pcie3x16"}, {"t4-pcie3x8"}, {"xeon-2x18", "v100-pcie3x16"}};
  for (const auto& devices : device_lists) {
    for (const auto& trace : test::standard_traces()) {
      DYNAMIC_SECTION(trace << " on " << devices.front() << " (" << devices.size() << " devices)") {
        json doc = test::make_config("pipeswitch", {{"files", {trace}}}, devices);
        const auto r = test::run_config(doc);
        const auto bad = invariant_violations(r, devices);
        for (const auto& b : bad) UNSCOPED_INFO(b);
        CHECK(bad.empty());
        CHECK(r.run.jobs_unfinished == 0);
        CHECK(r.run.jobs_rejected == 0);  // everything fits a 16 GiB GPU one task at a time
      }
    }
  }
  SECTION("without a GPU every job is rejected with a reason") {
    const auto r = test::run_config(
        test::make_config("pipeswitch", {{"files", {test::standard_traces()[0]}}}, {"xeon-2x18"}));
    CHECK(r.run.jobs_rejected == r.jobs.size());
    CHECK(r.summary["jobs"][0]["status"] == "rejected: pipeswitch needs a GPU device");
  }
  SECTION("jobs that cannot fit are rejected with a reason") {
    json doc = test::make_config("pipeswitch",
                                 {{"jobs", json::array({training("big", "vgg16", 64, 2),
                                                        inference("ok", "resnet50", 1, {0.01})})}});
    doc["devices"][0]["memory_gib"] = 1.0;
    const auto r = test::run_config(doc);
    CHECK(r.run.jobs_rejected == 1);
    CHECK(r.run.jobs_finished == 1);
    CHECK(r.summary["jobs"][job_index(r, "big")]["status"].get<std::string>().rfind(
              "rejected: needs", 0) == 0);
  }
}

TEST_CASE("when memory is short the preempted job's state makes room", "[pipeswitch]") {
  // ResNet-50 training (batch 32) and BERT-base inference (batch 8) each fit; together not.
  const auto bytes = [](const Model& m, bool train, std::uint32_t batch) {
    const std::uint64_t state = train ? 3 * m.weight_bytes() : m.weight_bytes();
    const std::uint64_t act = (train ? m.training_activation_bytes_per_sample()
                                     : m.inference_activation_bytes_per_sample()) *
                              batch;
    return state + act;
  };
  const std::uint64_t train = bytes(zoo().at("resnet50"), true, 32);
  const std::uint64_t infer = bytes(zoo().at("bert_base"), false, 8);
  const std::uint64_t capacity = std::max(train, infer) + (std::min(train, infer) / 2);
  REQUIRE(capacity < train + infer);
  json doc = test::make_config(
      "pipeswitch", {{"jobs", json::array({training("train", "resnet50", 32, 8),
                                           inference("bert", "bert_base", 8, {0.2, 0.5})})}});
  doc["devices"][0]["memory_gib"] = static_cast<double>(capacity) / (1u << 30);
  const auto r = test::run_config(doc);
  CHECK(r.run.jobs_finished == 2);
  CHECK(r.summary["inference"]["count"] == 2);
  CHECK(r.summary["jobs"][job_index(r, "train")]["iterations"] == 8);
  std::vector<std::uint64_t> cap{capacity};
  const auto bad = test::check_invariants(r, cap, {false}, true);
  for (const auto& b : bad) UNSCOPED_INFO(b);
  CHECK(bad.empty());
  std::size_t kills = 0;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::Preempt && e.label == "discard") ++kills;
  }
  CHECK(kills == 2);  // once per request: the training state leaves (at once), then comes back
}
