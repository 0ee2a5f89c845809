// The idle-GPU rule of the fluid executor (policies/tuning/fluid.cpp, Algorithm 1 of Fluid,
// MLSys'21): the waiting trials are the TrialGroup, their widths are water-filled over the
// IDLE GPUs only, and a packed trial never joins a running trial while an idle GPU is left
// that the plan does not need.
//
// Scenario (2 V100s, fluid_cifar_alexnet batch 4, an epoch = 2 iterations of about 1.5 ms
// solo; each trial its own random_search job of one trial; job ids in config order):
// - t = 0: an ordinary vae job (10 iterations, ends at 2.7 ms) takes GPU 0 whole.
// - t = 1 ms: trial B (32 epochs) arrives: group {B} on the one idle GPU, share 1: GPU 1
//   whole. t = 2 ms: trials A (16 epochs) and D (44 epochs) arrive and wait: no idle GPU, no
//   free slot.
// - 2.7 ms: the vae job ends, GPU 0 idle, group {D, A}, shares h * 1 / (h_D + h_A) < 1: both
//   width 1/2, D alone on GPU 0, then A beside it (the plan's own packed GPU): a packed pair.
// - A ends (73 ms), then B (102 ms): GPU 1 idle, D runs on alone on GPU 0 with a free slot.
// - t = 115 ms: trial C (2 epochs) arrives. Group {C} over the one idle GPU: share 1, width 1:
//   C takes GPU 1 whole. The old rule (widths over waiting + running trials on all GPUs) gave
//   C the share 2 h_C / (h_C + h_D,left) < 1, width 1/2, and the first GPU with a free slot:
//   GPU 0, beside D (measured with main at c6147ca: C on GPU 0, 119.9-127.2 ms, last trial
//   end 158.6 ms; with this rule C ends at 125.9 ms and the last trial at 157.3 ms).
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gpumux/api/events.hpp"
#include "test_support.hpp"
#include "tuning_test_support.hpp"

using namespace gpumux;
using gpumux::test::make_config;
using gpumux::test::run_config;
using gpumux::test::Span;
using gpumux::test::spans;
using gpumux::test::tuning_end;

namespace {

constexpr const char* kGpu = "v100-pcie3x16";
constexpr TimeNs kMs = 1'000'000;

nlohmann::json trial(const std::string& name, int epochs, double arrival_s) {
  return {{"name", name},
          {"tuner", "random_search"},
          {"params", {{"num_samples", 1}, {"max_epochs", epochs}}},
          {"search_space", {{"lr", {{"loguniform", {1e-4, 1.0}}}}}},
          {"model", "fluid_cifar_alexnet"},
          {"batch", 4},
          {"samples_per_epoch", 8},
          {"max_trials", 1},
          {"arrival_s", arrival_s}};
}

nlohmann::json vae(const std::string& name) {
  return {{"name", name}, {"kind", "training"}, {"model", "vae"},
          {"batch", 32},  {"arrival_s", 0.0},   {"iterations", 10}};
}

}  // namespace

TEST_CASE("fluid: a new trial takes an idle GPU, not the free slot beside a packed trial",
          "[fluid][tuning]") {
  const nlohmann::json tuning = nlohmann::json::array(
      {trial("B", 32, 0.001), trial("A", 16, 0.002), trial("D", 44, 0.002), trial("C", 2, 0.115)});
  const ExperimentResult r = run_config(make_config(
      "fluid", {{"jobs", nlohmann::json::array({vae("j0")})}, {"tuning", tuning}}, {kGpu, kGpu}));
  CHECK(r.run.jobs_unfinished == 0);
  const auto s = spans(r);
  REQUIRE(s.size() == 5);
  const Span b = s.at(1), a = s.at(2), d = s.at(3), c = s.at(4);
  // B whole on GPU 1; A and D the packed pair on GPU 0.
  CHECK(b.device == 1);
  CHECK(a.device == 0);
  CHECK(d.device == 0);
  CHECK(a.start < d.end);
  CHECK(d.start < a.end);
  // At C's arrival A and B have ended: GPU 1 idle, D alone on GPU 0 with a free slot.
  CHECK(a.end < 115 * kMs);
  CHECK(b.end < 115 * kMs);
  CHECK(d.end > 115 * kMs);
  // C on the idle GPU, started on arrival after its weights' copy (about 4.9 ms, the eps of
  // test_dynamic_fluid.cpp), while D still runs.
  CHECK(c.device == 1);
  CHECK(c.start < 125 * kMs);
  CHECK(c.start < d.end);
}

TEST_CASE("fluid under ASHA with a worker slot per GPU matches trial_per_gpu's time-to-target",
          "[fluid][tuning]") {
  // Hand reasoning: ASHA with max_concurrent = the 8 GPUs emits a trial only when one of its
  // slots frees, i.e. when a trial pauses, stops or ends and so leaves a GPU idle. Each such
  // group of one trial is water-filled over n >= 1 idle GPUs: share n >= 1, width min(n, d);
  // with d = 1, alone on an idle GPU: trial_per_gpu's placement, so the schedule and the
  // time-to-target are the same, not worse (the old rule packed it beside a running trial:
  // 0.62-0.79x, docs/figures.md). With d = 4 and model_d off a lone trial takes up to 4 GPUs
  // data-parallel over the config's 10 GbE (one GPU per node): measured slower (the ring
  // all-reduce of DCGAN's gradients costs more than the compute it splits; the paper's
  // beta = 1). The default model_d picks d from the cost model (the paper's Paleo-chosen d):
  // 1 here, so the schedule is trial_per_gpu's again.
  std::ifstream in(test::source_dir() / "experiments/configs/fluid_dcgan.json");
  REQUIRE(in);
  nlohmann::json doc = nlohmann::json::parse(in);
  doc["workload"]["tuning"][0]["tuner"] = "asha";
  doc["workload"]["tuning"][0]["params"] = {
      {"eta", 3}, {"max_epochs", 1000}, {"max_concurrent", 8}};
  doc["name"] = "fluid_dcgan_asha_test";
  doc["policy"]["name"] = "trial_per_gpu";
  const TimeNs base = tuning_end(run_config(doc));
  doc["policy"]["name"] = "fluid";
  doc["policy"]["params"] = {{"d", 1}};
  const TimeNs fluid = tuning_end(run_config(doc));
  REQUIRE(base > 0);
  REQUIRE(fluid > 0);
  CHECK(fluid == base);
  doc["policy"]["params"] = {{"d", 4}, {"model_d", false}};
  CHECK(tuning_end(run_config(doc)) > base);
  doc["policy"]["params"] = {{"d", 4}};
  CHECK(tuning_end(run_config(doc)) == base);
}
