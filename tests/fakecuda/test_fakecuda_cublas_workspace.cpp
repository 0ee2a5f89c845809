// Per-stream cuBLAS workspaces (D54): GEMMs of concurrent streams never share the handle's
// default workspace, which cuBLAS documents as non-deterministic across streams.
#include <map>
#include <set>
#include <vector>

#include <catch2/catch.hpp>

#include "fakecuda_rig.hpp"
#include "gpu_test_support.hpp"
#include "gpumux/backend/cuda/cuda_layer_executor.hpp"
#include "gpumux/backend/cuda/cuda_platform.hpp"
#include "gpumux/fakecuda/fakecuda.hpp"
#include "gpumux/model/model.hpp"

using namespace gpumux;
using namespace fakecuda_test;
namespace fake = gpumux::fakecuda;

namespace {

/// Workspace pointers used per stream number, over `calls` from index `from` on.
std::map<std::uint64_t, std::set<const void*>> workspaces_by_stream(
    const std::vector<fake::GemmCall>& calls, std::size_t from) {
  std::map<std::uint64_t, std::set<const void*>> by;
  for (std::size_t i = from; i < calls.size(); ++i) {
    CHECK(calls[i].workspace != nullptr);  // never the default pool
    CHECK(calls[i].workspace_bytes == kCublasWorkspaceBytes);
    by[calls[i].stream].insert(calls[i].workspace);
  }
  return by;
}

}  // namespace

TEST_CASE("cuda executor on fakecuda: each stream's GEMMs use that stream's own workspace",
          "[fakecuda]") {
  fake::reset();
  {
    CudaLayerExecutor ex(0, {Precision::Fp32, std::size_t{8} << 20});
    cudaStream_t a = nullptr, b = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking) == cudaSuccess);
    REQUIRE(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking) == cudaSuccess);
    const std::uint64_t before = fake::counters().device_bytes_in_use;
    ex.prepare_stream(a);  // at set-up: 32 MiB, once
    ex.prepare_stream(a);
    CHECK(fake::counters().device_bytes_in_use - before == kCublasWorkspaceBytes);
    DeviceBuffer x(4 * 16 * 16), w(4 * 16 * 16), y(4 * 16 * 16);
    const std::size_t from = fake::gemm_calls().size();
    // a, b, a, b: the handle is re-bound each time; b's workspace comes at its first GEMM.
    for (cudaStream_t s : {a, b, a, b}) {
      ex.gemm(x.data(), w.data(), static_cast<float*>(y.data()), 16, 16, 16, s);
    }
    CHECK(ex.stream_workspace_bytes() == 2 * kCublasWorkspaceBytes);
    REQUIRE(cudaStreamSynchronize(a) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(b) == cudaSuccess);
    const auto calls = fake::gemm_calls();
    REQUIRE(calls.size() - from == 4);
    const auto by = workspaces_by_stream(calls, from);
    REQUIRE(by.size() == 2);
    const void* wa = *by.begin()->second.begin();
    const void* wb = *by.rbegin()->second.begin();
    CHECK(by.begin()->second.size() == 1);  // the same one for both of a's GEMMs
    CHECK(by.rbegin()->second.size() == 1);
    CHECK(wa != wb);
    // Neither overlaps the other (each is kCublasWorkspaceBytes long).
    const auto* pa = static_cast<const std::byte*>(wa);
    const auto* pb = static_cast<const std::byte*>(wb);
    CHECK((pa + kCublasWorkspaceBytes <= pb || pb + kCublasWorkspaceBytes <= pa));
    ex.unbind_stream();
    (void)cudaStreamDestroy(a);
    (void)cudaStreamDestroy(b);
  }
}

TEST_CASE("cuda on fakecuda: two streams' compute ops use two distinct cuBLAS workspaces",
          "[fakecuda]") {
  fake::reset();
  CudaPlatform platform(gpu_test::gpu_setup());
  CudaDevice& dev = *platform.gpu(0);
  gpu_test::Recorder rec;
  dev.set_observer(&rec);
  dev.add_context(ContextId{0}, {});
  const std::uint64_t before = fake::counters().device_bytes_in_use;
  dev.add_stream(StreamId{0}, ContextId{0}, {0, 4});
  dev.add_stream(StreamId{1}, ContextId{0}, {0, 4});
  // Allocated when the streams are added, not while the run is timed.
  CHECK(fake::counters().device_bytes_in_use - before == 2 * kCublasWorkspaceBytes);
  const Model& m = gpu_test::catalog().at("resnet18");
  const std::size_t from = fake::gemm_calls().size();
  dev.submit(forward(0, 0, m, {0, 6}));
  dev.submit(forward(1, 1, m, {0, 6}));
  platform.real_runtime().run();
  REQUIRE(rec.ended.size() == 2);
  const auto by = workspaces_by_stream(fake::gemm_calls(), from);
  REQUIRE(by.size() == 2);
  std::set<const void*> all;
  for (const auto& [stream, ws] : by) {
    CHECK(ws.size() == 1);
    all.insert(ws.begin(), ws.end());
  }
  CHECK(all.size() == 2);
}
