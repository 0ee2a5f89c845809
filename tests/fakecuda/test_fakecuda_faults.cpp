// No hang, ever (issue 16): a fault injected into the CUDA test double at a launch, a copy or
// an allocation during a run ends the run within a bounded time with an error that names the
// op and the CUDA error, and the platform is torn down (label fakecuda).
#include <string>

#include <catch2/catch.hpp>

#include "fakecuda_rig.hpp"
#include "gpu_test_support.hpp"
#include "gpumux/backend/cuda/cuda_platform.hpp"
#include "gpumux/errors.hpp"
#include "gpumux/fakecuda/fakecuda.hpp"
#include "test_support.hpp"

using namespace gpumux;
namespace fake = gpumux::fakecuda;

namespace {

/// A training job and a service on one GPU under `exclusive`: a weight load per job and tens
/// of launches per pass on the double.
nlohmann::json small_run() {
  const nlohmann::json workload = {{"jobs",
                                    {{{"name", "train"},
                                      {"kind", "training"},
                                      {"model", "resnet18"},
                                      {"batch", 4},
                                      {"arrival_s", 0.0},
                                      {"iterations", 4}},
                                     {{"name", "svc"},
                                      {"kind", "inference"},
                                      {"model", "resnet18"},
                                      {"batch", 1},
                                      {"arrival_s", 0.0},
                                      {"requests", {0.01, 0.02}}}}}};
  nlohmann::json doc = test::make_config("exclusive", workload, {"h100-sxm"});
  doc["platform"] = "cuda";
  doc["platform_params"] = {{"preload", "none"}, {"warmup", false}, {"arena_gib", 2}};
  return doc;
}

/// How many calls of each kind the platform's set-up makes (so a fault lands inside the run);
/// `whole_run` gets those of the whole run.
fake::Counters setup_counts(const nlohmann::json& doc, fake::Counters* whole_run) {
  fake::reset();
  ExperimentResult r;
  fakecuda_test::within(std::chrono::seconds(120), [&] { r = test::run_config(doc); });
  const fake::Counters whole = fake::counters();
  REQUIRE(r.run.jobs_finished == 2);
  fake::reset();
  {
    PlatformSetup setup = gpu_test::gpu_setup({{"preload", "none"}, {"warmup", false}});
    setup.params["arena_gib"] = 2;
    const CudaPlatform platform(setup);
  }
  const fake::Counters at_setup = fake::counters();
  // The run must make more calls of every kind than its set-up, or the fault misses it.
  CHECK(whole.launches > at_setup.launches + 20);
  CHECK(whole.copies >= at_setup.copies + 2);  // the two jobs' weight loads
  CHECK(whole.allocations > at_setup.allocations);
  *whole_run = whole;
  return at_setup;
}

}  // namespace

TEST_CASE(
    "cuda on fakecuda: a fault at a launch, a copy or an allocation ends the run with "
    "the op and the error",
    "[fakecuda]") {
  const nlohmann::json doc = small_run();
  fake::Counters whole;
  const fake::Counters setup = setup_counts(doc, &whole);
  struct Case {
    const char* name;
    fake::FaultKind kind;
    std::uint64_t nth;
    const char* error;
  };
  const Case cases[] = {
      {"launch", fake::FaultKind::Launch, setup.launches + 20, "cudaErrorIllegalAddress"},
      {"copy", fake::FaultKind::Copy, setup.copies + 2, "cudaErrorIllegalAddress"},
      // The run's last allocation: its first ones are the streams' cuBLAS workspaces, made
      // when a policy adds a stream, outside any op.
      {"allocation", fake::FaultKind::Alloc, whole.allocations, "out of memory"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      fake::reset();
      fake::inject_fault(c.kind, c.nth);
      std::string message;
      const auto t0 = std::chrono::steady_clock::now();
      fakecuda_test::within(std::chrono::seconds(120), [&] {
        try {
          (void)test::run_config(doc);
        } catch (const Error& e) {  // CudaError or OutOfMemory: the CLI's exit 1
          message = e.what();
        }
      });
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      INFO(message);
      CHECK_THAT(message, Catch::Matchers::Contains("GPU 0: op "));
      CHECK_THAT(message, Catch::Matchers::Contains(c.error));
      CHECK(seconds < 60.0);
      CHECK(fake::counters().device_bytes_in_use == 0);  // the arena and workspace were freed
    }
  }
  fake::reset();
}
