// The CUDA test double itself (backend/testing/fakecuda): the CUDA behaviour the backend's
// tests rely on, checked with numbers worked out by hand.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "../../backend/cuda/kernels.h"
#include "gpumux/fakecuda/fakecuda.hpp"

namespace fake = gpumux::fakecuda;

namespace {

cudaStream_t make_stream(int priority) {
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority) == cudaSuccess);
  return s;
}

void count_call(void* counter) {
  ++*static_cast<int*>(counter);
}

}  // namespace

TEST_CASE("fakecuda: a wait on an event orders a kernel after another stream's copy",
          "[fakecuda]") {
  fake::reset({.kernel_ns = 1000, .copy_gbps = 0.001});  // 4 KiB copy: 4 us... x1000 = 4.1 ms
  cudaStream_t copies = make_stream(0), compute = make_stream(0);
  cudaEvent_t done = nullptr;
  REQUIRE(cudaEventCreate(&done) == cudaSuccess);
  std::vector<std::byte> src(4096, std::byte{7}), dst(4096);
  REQUIRE(cudaMemcpyAsync(dst.data(), src.data(), 4096, cudaMemcpyHostToDevice, copies) == 0);
  REQUIRE(cudaEventRecord(done, copies) == cudaSuccess);
  REQUIRE(cudaStreamWaitEvent(compute, done, 0) == cudaSuccess);
  REQUIRE(gpumux_noop(compute) == 0);
  REQUIRE(cudaStreamSynchronize(compute) == cudaSuccess);
  const auto log = fake::execution_log();
  REQUIRE(log.size() == 2);
  CHECK(log[0].kind == 'c');
  CHECK(log[1].kind == 'k');
  CHECK(log[1].start_ns >= log[0].end_ns);  // the kernel waited for the whole 4.1 ms copy
  CHECK(log[0].end_ns - log[0].start_ns >= 4'096'000);
  CHECK(dst == src);
  CHECK(cudaEventQuery(done) == cudaSuccess);
  CHECK(cudaEventDestroy(done) == cudaSuccess);
  CHECK(cudaStreamDestroy(copies) == cudaSuccess);
  CHECK(cudaStreamDestroy(compute) == cudaSuccess);
}

TEST_CASE("fakecuda: pending work of a higher-priority stream goes first", "[fakecuda]") {
  fake::reset();
  cudaStream_t low = make_stream(0), high = make_stream(-5);
  fake::hold(0, true);  // queue everything first
  for (int i = 0; i < 3; ++i) REQUIRE(gpumux_noop(low) == 0);
  for (int i = 0; i < 3; ++i) REQUIRE(gpumux_noop(high) == 0);
  fake::hold(0, false);
  REQUIRE(cudaStreamSynchronize(low) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(high) == cudaSuccess);
  const auto log = fake::execution_log();
  REQUIRE(log.size() == 6);
  // Queued later, the urgent stream's three kernels run before the others' three.
  for (int i = 0; i < 3; ++i) CHECK(log[static_cast<std::size_t>(i)].priority == -5);
  for (int i = 3; i < 6; ++i) CHECK(log[static_cast<std::size_t>(i)].priority == 0);
  CHECK(cudaStreamDestroy(low) == cudaSuccess);
  CHECK(cudaStreamDestroy(high) == cudaSuccess);
}

TEST_CASE("fakecuda: after a fault no host function runs and every call returns the error",
          "[fakecuda]") {
  fake::reset();
  cudaStream_t s = make_stream(0);
  cudaEvent_t e = nullptr;
  REQUIRE(cudaEventCreate(&e) == cudaSuccess);
  int calls = 0;
  fake::inject_fault(fake::FaultKind::Launch, 2);
  fake::hold(0, true);  // all of it queued before the fault (after it, enqueuing fails too)
  REQUIRE(cudaLaunchHostFunc(s, count_call, &calls) == cudaSuccess);
  REQUIRE(gpumux_noop(s) == 0);
  REQUIRE(gpumux_noop(s) == 0);  // the second launch faults on the device, not here
  REQUIRE(cudaLaunchHostFunc(s, count_call, &calls) == cudaSuccess);
  REQUIRE(cudaEventRecord(e, s) == cudaSuccess);
  fake::hold(0, false);
  CHECK(cudaStreamSynchronize(s) == cudaErrorIllegalAddress);
  CHECK(calls == 1);  // the host function behind the fault never ran
  CHECK(fake::counters().host_functions == 1);
  CHECK(cudaEventQuery(e) == cudaErrorIllegalAddress);  // not "not ready": the poller sees it
  CHECK(cudaGetLastError() == cudaErrorIllegalAddress);
  CHECK(cudaGetLastError() == cudaErrorIllegalAddress);  // sticky: not cleared
  void* p = nullptr;
  CHECK(cudaMalloc(&p, 256) == cudaErrorIllegalAddress);
  CHECK(gpumux_noop(s) == cudaErrorIllegalAddress);
  CHECK(std::string(cudaGetErrorString(cudaErrorIllegalAddress)) ==
        "an illegal memory access was encountered");
  (void)cudaEventDestroy(e);
  (void)cudaStreamDestroy(s);
  fake::reset();
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("fakecuda: the Nth allocation fails and the error is not sticky", "[fakecuda]") {
  fake::reset({.memory_bytes = std::uint64_t{1} << 30});
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  fake::inject_fault(fake::FaultKind::Alloc, 2);
  CHECK(cudaMalloc(&a, 768u << 20) == cudaSuccess);
  CHECK(cudaHostAlloc(&b, 4096, cudaHostAllocPortable) == cudaErrorMemoryAllocation);
  CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
  CHECK(cudaGetLastError() == cudaSuccess);
  std::size_t free_bytes = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess);
  CHECK(total == (std::size_t{1} << 30));
  CHECK(free_bytes == (std::size_t{256} << 20));                   // 1024 - 768 MiB
  CHECK(cudaMalloc(&c, 512u << 20) == cudaErrorMemoryAllocation);  // more than is free
  CHECK(cudaFree(a) == cudaSuccess);
  REQUIRE(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess);
  CHECK(free_bytes == total);
  CHECK(fake::counters().device_bytes_in_use == 0);
}

TEST_CASE("fakecuda: the reference GEMM is cuBLAS's column-major product", "[fakecuda]") {
  fake::reset({.arithmetic = fake::Arithmetic::Exact});
  cublasHandle_t h = nullptr;
  REQUIRE(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  cudaStream_t s = make_stream(0);
  REQUIRE(cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS);
  // Column-major A (2x3) = [1 2 3; 4 5 6] is {1,4,2,5,3,6}; B (3x2) = [1 0; 0 1; 1 1].
  const std::array<float, 6> a{1, 4, 2, 5, 3, 6}, b{1, 0, 1, 0, 1, 1};
  std::array<float, 4> c{100, 100, 100, 100};
  const float alpha = 2.0f, beta = 0.5f;
  // C = 2 A B + 0.5 C: A B = [1+3 2+3; 4+6 5+6] = [4 5; 10 11] -> [58 60; 70 72].
  REQUIRE(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &alpha, a.data(), CUDA_R_32F, 2,
                       b.data(), CUDA_R_32F, 3, &beta, c.data(), CUDA_R_32F, 2, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(c == std::array<float, 4>{58, 70, 60, 72});
  // Transposed operands, bf16 inputs: C = A^T A^T... here C (3x3) = A^T (3x2) x A (2x3) with
  // A given as bf16 (small integers are exact): A^T A = [17 22 27; 22 29 36; 27 36 45].
  std::array<std::uint16_t, 6> a16{};
  for (std::size_t i = 0; i < 6; ++i) {
    std::uint32_t u = 0;
    std::memcpy(&u, &a[i], 4);
    a16[i] = static_cast<std::uint16_t>(u >> 16);
  }
  std::array<float, 9> d{};
  const float one = 1.0f, zero = 0.0f;
  REQUIRE(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 3, 3, 2, &one, a16.data(), CUDA_R_16BF, 2,
                       a16.data(), CUDA_R_16BF, 2, &zero, d.data(), CUDA_R_32F, 3,
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(d == std::array<float, 9>{17, 22, 27, 22, 29, 36, 27, 36, 45});
  CHECK(fake::counters().launches == 2);
  CHECK(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS);
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE("fakecuda: peer copies and the legacy null stream", "[fakecuda]") {
  fake::reset({.devices = 2, .memory_bytes = std::uint64_t{1} << 30});
  void* on0 = nullptr;
  void* on1 = nullptr;
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  REQUIRE(cudaMalloc(&on0, 1024) == cudaSuccess);
  REQUIRE(gpumux_fill_weights(on0, 256, 42, 0, nullptr) == 0);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);  // device 1's streams do not wait for it
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  REQUIRE(cudaMalloc(&on1, 1024) == cudaSuccess);
  int can = 0;
  REQUIRE(cudaDeviceCanAccessPeer(&can, 1, 0) == cudaSuccess);
  CHECK(can == 1);
  CHECK(cudaDeviceEnablePeerAccess(0, 0) == cudaSuccess);
  CHECK(cudaDeviceEnablePeerAccess(0, 0) == cudaErrorPeerAccessAlreadyEnabled);
  (void)cudaGetLastError();
  cudaStream_t s = make_stream(0);  // on device 1
  REQUIRE(cudaMemcpyPeerAsync(on1, 1, on0, 0, 1024, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  std::array<std::byte, 1024> got{};
  REQUIRE(cudaMemcpy(got.data(), on1, 1024, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(std::memcmp(got.data(), on0, 1024) == 0);
  CHECK(std::any_of(got.begin(), got.end(), [](std::byte b) { return b != std::byte{0}; }));
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
  CHECK(cudaFree(on1) == cudaSuccess);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  CHECK(cudaFree(on0) == cudaSuccess);
  fake::reset();
}
