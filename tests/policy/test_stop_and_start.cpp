// stop_and_start with a closed-loop client (PipeSwitch Fig. 6's inference phase): the client
// sends its next request at the very instant the previous one ends. The policy must not
// cold-start training at that instant and kill it again for the next request: only the first
// request of a burst pays the restart, the rest find their process and weights in place, and
// training is restarted once, after the last request.
//
// By hand, on the V100 profile (traces/devices/v100-pcie3x16.json), ResNet-152 batch 8:
//   reap of the killed training process  300   ms   (process_reap_ns: the new process is
//                                                      spawned after join(), D10)
//   process start                       2059   ms   (interpreter 59 + import 1000 + library
//                                                      init 1000: DeviceProfile::process_start_ns)
//   CUDA context                          84.3 ms   (context_create_ns)
//   model build                         1188   ms   (DeviceProfile::model_build_ns: construction
//                                                      per 10^6 parameters + weight read)
//   weights 60,192,808 x 4 B / 9.6 GB/s   25.08 ms + 8.5 us per copy (h2d_gbps, h2d_latency_ns)
//   context switch from training           0.05 ms  (context_switch_ns)
//   forward pass                          ~21.4 ms  (the ready model's latency)
// First request: 300 + 2059 + 84.3 + 1188 + 25.1 + 0.05 + 21.4 = about 3678 ms. Each next
// request of the burst: the forward pass alone, about 21.4 ms. Contexts started: training at 0,
// the inference process once training is reaped, training again after the burst = 3. Before
// the fix every request paid the cold start and 7 contexts were started (training restarted
// between requests).
#include <catch2/catch.hpp>

#include <vector>

#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "test_support.hpp"

using namespace gpumux;
using nlohmann::json;

namespace {

constexpr double kBurstStartS = 10.0;  // training has run since its cold start (about 2.74 s)
constexpr int kBurst = 3;

struct BurstRun {
  std::vector<TimeNs> end_ns;          // request ends, in order
  std::vector<DurationNs> latency_ns;  // request latencies, in order
  std::vector<TimeNs> context_starts;  // times of contexts started with a start-up cost
  std::uint64_t preemptions = 0;
};

BurstRun run_burst() {
  const json jobs = json::array({{{"name", "train"},
                                  {"kind", "training"},
                                  {"model", "resnet152"},
                                  {"batch", 8},
                                  {"arrival_s", 0.0},
                                  {"iterations", 1000000}}});
  const json services = json::array(
      {{{"name", "svc"},
        {"model", "resnet152"},
        {"batch", 8},
        {"arrivals",
         {{"generator", "closed_loop"}, {"start_s", kBurstStartS}, {"count", kBurst}}}}});
  json doc = test::make_config("stop_and_start", {{"jobs", jobs}, {"services", services}});
  doc["horizon_s"] = 20.0;
  const ExperimentResult r = test::run_config(doc);
  BurstRun out;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::RequestEnd) {
      out.end_ns.push_back(e.t_ns);
      out.latency_ns.push_back(e.b);
    } else if (e.kind == EventKind::ContextCreate && e.b > 0) {
      out.context_starts.push_back(e.t_ns);
    } else if (e.kind == EventKind::Preempt) {
      ++out.preemptions;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("stop_and_start: a closed-loop burst pays one restart, not one per request",
          "[stop_and_start]") {
  const auto root = test::source_dir();
  const ModelCatalog models(root / "traces" / "models");
  const DeviceProfile v100 = find_device_profile(root / "traces" / "devices", "v100-pcie3x16");
  const Model& m = models.at("resnet152");
  const CostModel cost(v100, CostOptions{});
  const DurationNs compute = cost.op_ns(m, LayerRange{0, m.layer_count()}, 8, Pass::Forward, true);
  const DurationNs transfer = cost.h2d_ns(m.weight_bytes(), /*pageable=*/false);
  const DurationNs cold = v100.process_reap_ns + v100.process_start_ns + v100.context_create_ns +
                          v100.model_build_ns(m) + transfer + v100.context_switch_ns + compute;
  // The hand numbers of the header, to the millisecond.
  CHECK(ns_to_ms(cold) == Approx(3678).margin(2));
  CHECK(ns_to_ms(compute) == Approx(21.4).margin(0.5));

  const BurstRun r = run_burst();
  REQUIRE(r.latency_ns.size() == kBurst);
  CHECK(r.latency_ns[0] == cold);
  // The next requests arrive as the previous ones end and find the inference process: the
  // forward pass only (before the fix: `cold` again, each time).
  for (int i = 1; i < kBurst; ++i) {
    INFO("request " << i);
    CHECK(r.latency_ns[i] == compute);
  }
  // Training at 0, the inference process at the first request, training after the burst.
  REQUIRE(r.context_starts.size() == 3);
  CHECK(r.context_starts[0] == 0);
  CHECK(r.context_starts[1] == seconds_to_ns(kBurstStartS) + v100.process_reap_ns);
  CHECK(r.context_starts[2] == r.end_ns.back());
  // One kill: training at the first request (the service finished; nothing killed it).
  CHECK(r.preemptions == 1);
}
