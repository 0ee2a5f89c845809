// No hang, ever (D31): a fault injected into the CUDA test double at a launch, a copy or
// an allocation during a run ends the run within a bounded time with an error that names the
// op and the CUDA error, and the platform is torn down (label fakecuda).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <array>
#include <string>

#include <catch2/catch.hpp>

#include "../../backend/cuda/kernels.h"
#include "fakecuda_rig.hpp"
#include "gpu_test_support.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/backend/cuda/cuda_check.hpp"
#include "gpumux/backend/cuda/cuda_platform.hpp"
#include "gpumux/fakecuda/fakecuda.hpp"
#include "gpumux/io/platform_registry.hpp"
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

// cuBLAS reports a launch refused by a faulted context as its own status; the message must
// still name the CUDA error behind it, as every other failed call's does (a launcher that
// meets the sticky error first in a GEMM would otherwise end the run without naming it).
TEST_CASE("cuda on fakecuda: a cuBLAS call refused after a GPU fault names the CUDA error",
          "[fakecuda]") {
  fake::reset();
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, 0) == cudaSuccess);
  cublasHandle_t h = nullptr;
  REQUIRE(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  REQUIRE(cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS);
  fake::inject_fault(fake::FaultKind::Launch, 1);
  REQUIRE(gpumux_noop(s) == 0);  // faults on the device, not here
  REQUIRE(cudaStreamSynchronize(s) == cudaErrorIllegalAddress);
  const std::array<float, 4> a{1, 2, 3, 4};
  std::array<float, 4> c{};
  const float one = 1.0f, zero = 0.0f;
  std::string message;
  try {
    GPUMUX_CUBLAS_TRY(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, a.data(), CUDA_R_32F,
                                   2, a.data(), CUDA_R_32F, 2, &zero, c.data(), CUDA_R_32F, 2,
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  } catch (const CudaError& e) {
    message = e.what();
  }
  INFO(message);
  CHECK_THAT(message, Catch::Matchers::Contains("CUBLAS_STATUS_EXECUTION_FAILED"));
  CHECK_THAT(message, Catch::Matchers::Contains("cudaErrorIllegalAddress"));
  CHECK_THAT(message, Catch::Matchers::Contains("an illegal memory access was encountered"));
  (void)cublasDestroy(h);
  (void)cudaStreamDestroy(s);
  fake::reset();
}
