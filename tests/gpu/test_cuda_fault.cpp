// A GPU fault ends a run, never hangs it (D31; label gpu: needs a GPU). The cuda
// platform's launcher of op 40 enqueues a kernel that writes through an address nothing owns
// (platform_params.fault_at_op): the context keeps an illegal-address error, CUDA would run no
// more host functions, and the completion poller or the next CUDA call must surface it. The
// run must end within the shell's timeout with exit 1, say which op and which error, and leave
// no result folder (results are renamed into place only at the end).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

#include <catch2/catch.hpp>

#include "../../backend/cuda/kernels.h"
#include "../cli/cli_harness.hpp"
#include "gpu_test_support.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/backend/cuda/cuda_check.hpp"

using namespace cli_test;

TEST_CASE("cuda: a GPU fault ends the run with exit 1, naming the op, with no result folder",
          "[gpu]") {
  gpu_test::require_gpu();
  const fs::path out = scratch() / "faulted";
  // timeout(1): a hang fails the test (exit 124) instead of stalling the suite.
  const Outcome r = gpumux_shell("timeout 120 '" + std::string(GPUMUX_BINARY) +
                                 "' run -q experiments/configs/default.json --set platform=cuda "
                                 "--set devices.0.profile=h100-sxm --set policy.name=pipeswitch "
                                 "--set horizon_s=5 --set platform_params.fault_at_op=40 --out '" +
                                 out.string() + "'");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Matchers::Contains("op "));
  CHECK_THAT(r.output, Catch::Matchers::Contains("illegal memory access"));
  CHECK_FALSE(fs::exists(out));
}

// After a fault, cuBLAS refuses launches with its own status; the message must still name the
// context's error (throw_cublas_error asks cudaGetLastError), as the CUDA test double's case in
// tests/fakecuda/test_fakecuda_faults.cpp checks on the CPU. Its own process (ctest runs each
// case alone): the fault poisons the context for the rest of the process.
TEST_CASE("cuda: a cuBLAS call refused after a GPU fault names the CUDA error", "[gpu]") {
  gpu_test::require_gpu();
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  cublasHandle_t h = nullptr;
  REQUIRE(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  REQUIRE(cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS);
  float* d = nullptr;
  REQUIRE(cudaMalloc(&d, 16 * sizeof(float)) == cudaSuccess);
  REQUIRE(gpumux_fault(s) == 0);  // faults on the device, not at the launch
  CHECK(cudaStreamSynchronize(s) == cudaErrorIllegalAddress);
  const float one = 1.0f, zero = 0.0f;
  std::string message = "(no exception)";
  try {
    GPUMUX_CUBLAS_TRY(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, d, CUDA_R_32F, 2, d,
                                   CUDA_R_32F, 2, &zero, d + 8, CUDA_R_32F, 2, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT));
  } catch (const gpumux::CudaError& e) {
    message = e.what();
  }
  INFO(message);
  CHECK_THAT(message, Catch::Matchers::Contains("cuBLAS error"));
  CHECK_THAT(message, Catch::Matchers::Contains("cudaErrorIllegalAddress"));
}
