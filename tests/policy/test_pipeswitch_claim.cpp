// PipeSwitch's central claim (OSDI'20 abstract and Fig. 5), reproduced in
// simulation on a small configuration of the paper's V100 profile (v100-pcie3x16): a batch-8
// inference request arriving during ResNet-152 training (batch 8). The paper reports a total
// overhead over a ready model of 5.4-34.6 ms (V100 and T4, three models), 10-50x better than
// MPS, and seconds for stop-and-start. The full experiment is experiments/sweeps/
// pipeswitch_fig5.json (20 requests per point, V100 and T4).
//
// What this test measures (ms; the 20-request sweep agrees within 0.15 ms):
//   model          ready   pipeswitch (overhead)   mps (overhead)   stop_and_start
//   ResNet-152     21.44   26.71 (5.27)            47.09 (25.65)    2783
//   Inception-v3   11.55   11.95 (0.41)            24.10 (12.56)    2760
//   BERT-base/251  36.56   47.71 (11.15)           81.24 (44.68)    2818
// (pipeswitch with the artifact's per-group host work; the other columns as
// measured before it)
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "test_support.hpp"

using namespace gpumux;
using nlohmann::json;

namespace {

/// Mean latency (ms) of the inference service under `policy`, with requests at `requests`
/// while ResNet-152 trains.
double mean_latency_ms(const std::string& policy, const std::string& model,
                       const std::vector<double>& requests, double horizon_s) {
  const json jobs = json::array({{{"name", "train"},
                                  {"kind", "training"},
                                  {"model", "resnet152"},
                                  {"batch", 8},
                                  {"arrival_s", 0.0},
                                  {"iterations", 1000000}},
                                 {{"name", "infer"},
                                  {"kind", "inference"},
                                  {"model", model},
                                  {"batch", 8},
                                  {"arrival_s", 0.0},
                                  {"requests", requests}}});
  json doc = test::make_config(policy, {{"jobs", jobs}});
  doc["horizon_s"] = horizon_s;
  const ExperimentResult r = test::run_config(doc);
  const auto& infer = r.summary["jobs"][1];
  REQUIRE(infer["name"] == "infer");
  REQUIRE(infer["requests"] == requests.size());
  return infer["latency"]["mean_ms"].get<double>();
}

struct Expected {
  const char* model;
  double overhead_ms;  // pipeswitch - ready_model, as gpumux measures it
};

}  // namespace

TEST_CASE("PipeSwitch's central claim on the V100 profile (small configuration)",
          "[pipeswitch][claim]") {
  // Two requests, each while training runs: at 5 s (stop_and_start's cold-started training,
  // which builds ResNet-152, runs from about 3.4 s) and at 14 s (after stop_and_start restarted
  // it: kill, reap, a cold inference process, then a cold training process again).
  const std::vector<double> requests{5.0, 14.0};
  for (const Expected& x : {Expected{"resnet152", 4.43}, Expected{"inception_v3", 0.32},
                            Expected{"bert_base_seq251", 11.12}}) {
    DYNAMIC_SECTION(x.model) {
      const double ready = mean_latency_ms("ready_model", x.model, requests, 14.3);
      const double pipeswitch = mean_latency_ms("pipeswitch", x.model, requests, 14.3);
      const double mps = mean_latency_ms("mps", x.model, requests, 14.3);
      const double stop_start = mean_latency_ms("stop_and_start", x.model, requests, 20.0);
      const double overhead = pipeswitch - ready;
      INFO("ready " << ready << " ms, pipeswitch " << pipeswitch << " ms, mps " << mps
                    << " ms, stop_and_start " << stop_start << " ms");

      // Total overhead: within the paper's upper end (34.6 ms) for every model. Its lower end
      // (5.4 ms) is not reached for ResNet-152 (4.4) and Inception-v3 (0.3): in gpumux the
      // overhead is the in-flight training layer (0.1-0.3 ms), two IPC messages (0.2 ms), the
      // artifact's host work per group (event synchronize, pipe message, Python issue: the copy
      // engine idles 35.5 us per group, docs/policies/pipeswitch.md) and the part of the copy that
      // compute cannot hide (V100 copy 25.1 ms vs compute 21.4 ms for ResNet-152, 11.3 vs
      // 11.5 ms for Inception-v3, 45.1 vs 36.6 ms for BERT). Python task start-up in the
      // worker is not charged (no public measurement outside held-out data).
      CHECK(overhead > 0.0);
      CHECK(overhead <= 34.6);
      CHECK(overhead == Approx(x.overhead_ms).margin(0.1));

      // Stop-and-start pays a process start and CUDA context (2.14 s in the profile) and, when
      // the policy names the job its process is for, the model's construction and weight read
      // (ResNet-152: 1.19 s): at least 50x PipeSwitch's latency, as claimed.
      CHECK(stop_start >= 50.0 * pipeswitch);

      // MPS: the claim's 10-50x is on the overhead. With kernel-level sharing (each kernel
      // waits for the other client's GPU-filling kernels to retire) gpumux measures MPS
      // latency 2.2x ready for ResNet-152 (25.6 ms added, 5.8x PipeSwitch's overhead),
      // 2.1x for Inception-v3 (12.6 ms, 39x) and 1.4x for BERT (14.5 ms, 1.3x): BERT's long
      // GEMM kernels make the training job wait behind them instead. The brief's "at least
      // 10x lower latency than MPS" is not reproduced; PipeSwitch still beats MPS everywhere.
      CHECK(mps > pipeswitch);
      CHECK(mps > 1.3 * ready);
      CHECK(mps - ready >= 1.2 * overhead);
    }
  }
}
