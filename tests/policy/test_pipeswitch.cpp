// The "pipeswitch" policy on hand-built situations: what a switch costs (computed by hand from
// the V100 profile), the pipeline order on the event log, preemption at a layer boundary, every
// variant, memory pressure. The paper's central claim is in test_pipeswitch_claim.cpp.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "gpumux/cost_model.hpp"
#include "gpumux/device_profile.hpp"
#include "gpumux/model.hpp"
#include "pipeswitch/grouping.hpp"
#include "test_support.hpp"

using namespace gpumux;
namespace ps = gpumux::policies::pipeswitch;
using nlohmann::json;

namespace {

constexpr DurationNs kSwitchMessagesNs = 2 * 100'000;  // two IPC messages, 100 us each

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
  const ps::GroupOverheads o = ps::group_overheads(cost, p.event_ns);
  CHECK(o.copy_call_ns == 8'500);
  CHECK(o.sync_ns == 4'000);

  // Whole model: the messages, one copy (8.5 us + 241 MB at 9.6 GB/s), one sync, the forward.
  const DurationNs whole = kSwitchMessagesNs + cost.h2d_ns(m.weight_bytes(), false) + p.event_ns +
                           cost.op_ns(m, all, 8, Pass::Forward, true);
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
  // The ordering the paper's Fig. 7 shows.
  CHECK(optimal <= artifact);
  CHECK(artifact < lone_request_ns({{"grouping", "per_layer"}}));
  CHECK(lone_request_ns({{"grouping", "per_layer"}}) < whole);
  CHECK(whole < lone_request_ns({{"grouping", "no_pipeline"}}));
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
  const DurationNs whole = lone_request_ns({{"grouping", "whole"}});
  // One process: the old task's clean-up (device sync + cudaFree) is on the critical path.
  CHECK(lone_request_ns({{"grouping", "whole"}, {"switching", "one_context"}}) ==
        whole + p.event_ns + p.free_ns);
  // Kill and restart: a cold process and context instead of the two messages.
  CHECK(lone_request_ns({{"grouping", "whole"}, {"switching", "kill_restart"}}) ==
        whole - kSwitchMessagesNs + p.process_start_ns + p.context_create_ns);
  // The messages are a parameter.
  CHECK(lone_request_ns({{"grouping", "whole"}, {"ipc_message_us", 0}}) ==
        whole - kSwitchMessagesNs);
  CHECK(lone_request_ns({{"grouping", "whole"}, {"group_sync_us", 1000}}) ==
        whole - p.event_ns + 1'000'000);
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
        CHECK(first_load == stopped + kSwitchMessagesNs);
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
    if (e.kind == EventKind::Preempt && e.label == "kill") ++kills;
  }
  CHECK(kills == 2);  // once per request: the training state leaves, then comes back
}
