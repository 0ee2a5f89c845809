// Salus' central claims (its abstract; SymbioticLab/Salus card27x.py setups), reproduced in
// simulation on small configurations of the paper's GPU class: a P100 (p100-pcie3x16) with memory
// capped at 14 GiB, as the paper's experiments capped physical memory. The full-size runs are
// experiments/configs/ salus_{jct,hp,inference}.json with the sweeps of the same names. Numbers in
// the comments are what gpumux measures; the paper's are its abstract's.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace gpumux;

namespace {

nlohmann::json p100_config(const std::string& policy, nlohmann::json params,
                           nlohmann::json workload) {
  auto doc = test::make_config(policy, std::move(workload), {"p100-pcie3x16"});
  doc["devices"][0]["memory_gib"] = 14;
  doc["policy"]["params"] = std::move(params);
  return doc;
}

double mean_jct_s(const ExperimentResult& r) {
  return r.summary["training"]["mean_jct_s"];
}
double makespan_s(const ExperimentResult& r) {
  return r.summary["jobs_overall"]["makespan_s"];
}

nlohmann::json identical_jobs(const std::string& model, int batch, int jobs, int iterations) {
  nlohmann::json list = nlohmann::json::array();
  for (int i = 0; i < jobs; ++i) {
    list.push_back({{"name", "hp-" + std::to_string(i)},
                    {"kind", "training"},
                    {"model", model},
                    {"batch", batch},
                    {"arrival_s", 0.0},
                    {"iterations", iterations}});
  }
  return {{"jobs", list}};
}

}  // namespace

TEST_CASE("Salus SRTF improves mean JCT over FIFO (paper: 3.19x), gpumux: ~1.5x", "[salus]") {
  // 20 jobs of the 15 Salus workloads (traces/workloads/salus_20jobs.jsonl: the 100-job
  // trace's recipe at 1/20 length), arriving faster than one GPU serves them.
  const nlohmann::json workload = {{"files", {"traces/workloads/salus_20jobs.jsonl"}}};
  const auto fifo_tf =
      test::run_config(p100_config("exclusive", nlohmann::json::object(), workload));
  const auto srtf =
      test::run_config(p100_config("salus", {{"sched", "srtf"}, {"lanes", "single"}}, workload));
  const auto preempt =
      test::run_config(p100_config("salus", {{"sched", "preempt"}, {"lanes", "single"}}, workload));
  const auto fifo =
      test::run_config(p100_config("salus", {{"sched", "fifo"}, {"lanes", "single"}}, workload));
  for (const auto* r : {&fifo_tf, &srtf, &preempt, &fifo}) REQUIRE(r->run.jobs_finished == 20);

  // Measured: stock-TF FIFO (exclusive) 196.3 s, Salus FIFO 208.2 s, SRTF 132.7 s,
  // PREEMPT 132.7 s (no interference in one lane: used time = predicted time).
  const double vs_tf = mean_jct_s(fifo_tf) / mean_jct_s(srtf);
  const double vs_salus_fifo = mean_jct_s(fifo) / mean_jct_s(srtf);
  CHECK(vs_tf == Approx(1.48).margin(0.03));
  CHECK(vs_salus_fifo == Approx(1.57).margin(0.03));
  CHECK(mean_jct_s(preempt) == Approx(mean_jct_s(srtf)).epsilon(0.01));
  // Not the paper's 3.19x. Salus admits a job only when its persistent memory plus the lane's
  // largest ephemeral peak fit (14 GiB here): about five jobs are admitted at a time and the
  // rest wait for memory in arrival order, so SRTF reorders only that window. Most of a
  // job's JCT is that wait (salus.queue_s), which no in-lane scheduler can shorten.
  CHECK(srtf.summary["policy_metrics"]["salus.queue_s"]["mean"].get<double>() > 30.0);
  CHECK(srtf.summary["policy_metrics"]["salus.admitted"]["max"].get<double>() <= 10.0);
  // Time sharing is work conserving: same total work, same makespan (within the per-
  // iteration dispatch overhead and the model loads).
  CHECK(makespan_s(srtf) == Approx(makespan_s(fifo_tf)).epsilon(0.01));

  // Part of the gap is gpumux's one-piece arena: jobs also wait for a free block large enough
  // (salus.arena_wait_s). Lanes of 14 GiB in a 64 GiB arena emulate a page-mapped allocator
  // that never fragments: SRTF 111.5 s, 1.76x over stock-TF FIFO -- still short of 3.19x.
  auto paged = p100_config(
      "salus", {{"sched", "srtf"}, {"lanes", "single"}, {"lane_memory_gib", 14}}, workload);
  paged["devices"][0]["memory_gib"] = 64;
  const auto srtf_paged = test::run_config(paged);
  REQUIRE(srtf_paged.run.jobs_finished == 20);
  CHECK(srtf.summary["policy_metrics"].contains("salus.arena_wait_s"));
  CHECK_FALSE(srtf_paged.summary["policy_metrics"].contains("salus.arena_wait_s"));
  CHECK(mean_jct_s(fifo_tf) / mean_jct_s(srtf_paged) == Approx(1.76).margin(0.03));
}

TEST_CASE("Salus PACK beats sequential hyper-parameter exploration only for small models",
          "[salus]") {
  // Paper: 2.38x better GPU utilisation for hyper-parameter tuning (300 jobs x 500 iterations
  // of vae BS 64, superres BS 128, resnet50 BS 50). Here: fewer jobs, same per-job work.
  SECTION("vae BS 64: tiny kernels, lanes run side by side") {
    const auto workload = identical_jobs("vae", 64, 30, 500);
    const auto seq = test::run_config(p100_config("exclusive", nlohmann::json::object(), workload));
    const auto pack = test::run_config(p100_config("salus", {{"sched", "pack"}}, workload));
    REQUIRE(pack.run.jobs_finished == 30);
    // Measured: every job gets its own lane (P + T is a few MiB) and their ops share the GPU
    // by water-filling over their small demand: makespan 5.4 s -> 1.6 s.
    CHECK(makespan_s(seq) / makespan_s(pack) == Approx(3.4).margin(0.2));
  }
  SECTION("superres BS 128: each op saturates the GPU") {
    const auto workload = identical_jobs("superres", 128, 6, 50);
    const auto seq = test::run_config(p100_config("exclusive", nlohmann::json::object(), workload));
    const auto pack = test::run_config(p100_config("salus", {{"sched", "pack"}}, workload));
    REQUIRE(pack.run.jobs_finished == 6);
    // Three lanes of ~4.3 GiB fit; co-running ops gain nothing and pay the profile's
    // concurrent_efficiency (0.95): PACK is ~5 % slower than sequential. The paper's gain for
    // large models comes from GPU idle time between kernels and iterations (input pipeline,
    // framework gaps) that gpumux's fluid op model does not have.
    CHECK(makespan_s(seq) / makespan_s(pack) == Approx(0.95).margin(0.03));
  }
}

TEST_CASE("Salus consolidates 42 inference services on one GPU at near-dedicated latency",
          "[salus]") {
  // 14 models x 3 services, batch 1, 30 Poisson requests each at 0.5 req/s per service; one
  // whole-GPU lane with FAIR (the paper's setup), MPS on the same GPU, and each model alone
  // (the dedicated-GPU baseline: 42 GPUs).
  const std::vector<std::string> models{
      "alexnet",   "googlenet", "inception_v3", "inception_v4", "overfeat", "resnet50", "resnet101",
      "resnet152", "vgg11",     "vgg16",        "vgg19",        "vae",      "superres", "seq2seq"};
  auto service = [](const std::string& model, int i) {
    return nlohmann::json{
        {"name", model + "-" + std::to_string(i)},
        {"model", model},
        {"batch", 1},
        {"arrivals",
         {{"generator", "poisson"}, {"rate_per_s", 0.5}, {"start_s", 1.0}, {"count", 30}}}};
  };
  nlohmann::json all = nlohmann::json::array();
  for (const auto& m : models) {
    for (int i = 0; i < 3; ++i) all.push_back(service(m, i));
  }
  const auto salus = test::run_config(
      p100_config("salus", {{"sched", "fair"}, {"lanes", "single"}}, {{"services", all}}));
  const auto mps =
      test::run_config(p100_config("mps", nlohmann::json::object(), {{"services", all}}));
  REQUIRE(salus.run.jobs_finished == 42);  // one GPU holds all 42 (TF needs 42 GPUs)
  REQUIRE(mps.run.jobs_finished == 42);

  std::map<std::string, double> salus_ms, mps_ms;
  for (const auto& j : salus.summary["jobs"])
    salus_ms[j["model"]] += j["latency"]["mean_ms"].get<double>() / 3;
  for (const auto& j : mps.summary["jobs"])
    mps_ms[j["model"]] += j["latency"]["mean_ms"].get<double>() / 3;
  for (const auto& m : models) {
    DYNAMIC_SECTION(m) {
      const auto alone =
          test::run_config(p100_config("exclusive", nlohmann::json::object(),
                                       {{"services", nlohmann::json::array({service(m, 0)})}}));
      const double dedicated = alone.summary["inference"]["mean_ms"];
      // Measured: Salus adds its dispatch overhead (0.1 ms) plus rare queueing behind another
      // service's request; MPS adds only co-running interference. Both stay well under the
      // paper's 60 ms axis.
      CHECK(salus_ms[m] >= dedicated);
      CHECK(salus_ms[m] <= dedicated * 1.15 + 1.0);
      CHECK(mps_ms[m] <= dedicated * 1.15 + 1.0);
      CHECK(salus_ms[m] < 60.0);
    }
  }
}
