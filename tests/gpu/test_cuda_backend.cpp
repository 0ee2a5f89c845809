// Platform "cuda" on a real GPU (label `gpu`: run with `ctest -L gpu` on a GPU machine; CI has
// none). Every test first checks that a GPU is present and fails with a clear message if not.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <random>
#include <vector>

#include <cuda_runtime.h>
#include <catch2/catch.hpp>

#include "gpu_test_support.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/api/policy.hpp"
#include "gpumux/backend/cpu_executor.hpp"
#include "gpumux/backend/cuda/cuda_arena.hpp"
#include "gpumux/backend/cuda/cuda_check.hpp"
#include "gpumux/backend/cuda/cuda_layer_executor.hpp"
#include "gpumux/backend/cuda/cuda_platform.hpp"
#include "gpumux/backend/cuda/warm_up.hpp"
#include "gpumux/backend/layer_plan.hpp"
#include "gpumux/backend/weight_fill.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/model/model.hpp"
#include "test_support.hpp"

using namespace gpumux;
using gpu_test::catalog;
using gpu_test::gpu_setup;
using gpu_test::Recorder;
using gpu_test::require_gpu;

namespace {

double rel_error(const std::vector<float>& got, const std::vector<float>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    num += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    den += double(want[i]) * want[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

std::uint16_t to_bf16(float f) {  // round to nearest even
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}
float from_bf16(std::uint16_t h) {
  const std::uint32_t u = std::uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Host floats -> device buffer in the executor's input precision; `host` is rounded in place
// to what the device sees.
DeviceBuffer upload(std::vector<float>& host, bool bf16) {
  DeviceBuffer d(host.size() * (bf16 ? 2 : 4));
  if (bf16) {
    std::vector<std::uint16_t> h(host.size());
    for (std::size_t i = 0; i < host.size(); ++i) {
      h[i] = to_bf16(host[i]);
      host[i] = from_bf16(h[i]);
    }
    GPUMUX_CUDA_TRY(cudaMemcpy(d.data(), h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  } else {
    GPUMUX_CUDA_TRY(cudaMemcpy(d.data(), host.data(), host.size() * 4, cudaMemcpyHostToDevice));
  }
  return d;
}

std::vector<float> download(const DeviceBuffer& d, std::size_t n) {
  std::vector<float> h(n);
  GPUMUX_CUDA_TRY(cudaMemcpy(h.data(), d.data(), n * 4, cudaMemcpyDeviceToHost));
  return h;
}

std::vector<float> random_vec(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

}  // namespace

TEST_CASE("CUDA arena allocation and release", "[gpu]") {
  require_gpu();
  GPUMUX_CUDA_TRY(cudaSetDevice(0));
  std::size_t free0 = 0, total = 0;
  GPUMUX_CUDA_TRY(cudaMemGetInfo(&free0, &total));
  {
    CudaArena arena(0, std::uint64_t{1} << 30);
    CHECK(arena.capacity() == (std::uint64_t{1} << 30));
    CHECK(arena.base() != nullptr);
    std::size_t free1 = 0;
    GPUMUX_CUDA_TRY(cudaMemGetInfo(&free1, &total));
    CHECK(free0 - free1 >= (std::size_t{1} << 30));
    std::uint64_t bytes = std::uint64_t{1} << 31;  // clamped to the arena
    CHECK(arena.address(std::uint64_t{1} << 29, &bytes) ==
          static_cast<std::byte*>(arena.base()) + (std::uint64_t{1} << 29));
    CHECK(bytes == (std::uint64_t{1} << 29));
    CHECK(CudaArena::fit(0, std::uint64_t{1} << 50, 0) <= free1);
  }
  std::size_t free2 = 0;
  GPUMUX_CUDA_TRY(cudaMemGetInfo(&free2, &total));
  CHECK(free2 + (std::size_t{64} << 20) >= free0);  // released
}

TEST_CASE("CUDA out of memory is reported as OutOfMemory", "[gpu]") {
  require_gpu();
  CHECK_THROWS_AS(CudaArena(0, std::uint64_t{1} << 50), OutOfMemory);
  PlatformSetup setup = gpu_setup();
  setup.params["arena_gib"] = 1 << 20;  // a PiB
  CHECK_THROWS_AS(CudaPlatform(setup), OutOfMemory);
}

TEST_CASE("the device fill kernel writes what fill_weights writes", "[gpu]") {
  require_gpu();
  const std::size_t bytes = 400004;
  DeviceBuffer d(bytes);
  fill_device_weights(d.data(), bytes, 1234, nullptr);
  GPUMUX_CUDA_TRY(cudaDeviceSynchronize());
  std::vector<std::byte> got(bytes), want(bytes);
  GPUMUX_CUDA_TRY(cudaMemcpy(got.data(), d.data(), bytes, cudaMemcpyDeviceToHost));
  fill_weights(want.data(), bytes, 1234);
  CHECK(std::memcmp(got.data(), want.data(), bytes) == 0);
}

TEST_CASE("CUDA layer primitives match the Eigen executor", "[gpu][exact]") {
  require_gpu();
  struct Case {
    Precision precision;
    double tolerance;
  };
  const Case cases[] = {{Precision::Fp32, 1e-3}, {Precision::Bf16, 1e-2}, {Precision::Tf32, 5e-3}};
  // Shapes from the zoo: a ResNet-18 conv as implicit GEMM, a BERT linear, BERT attention.
  const Model& r18 = catalog().at("resnet18");
  const Model& bert = catalog().at("bert_base");
  GemmShape conv = r18.layer(3).gemms.at(0);     // layer1.0.conv1: 3136 x 576 x 64
  GemmShape linear = bert.layer(4).gemms.at(0);  // query: 128 x 768 x 768
  GemmShape attention{};
  for (const Layer& l : bert.layers()) {
    if (l.kind == LayerKind::Attention) {
      attention = l.gemms.at(0);
      break;
    }
  }
  REQUIRE(attention.count > 1);
  cudaStream_t s = nullptr;
  GPUMUX_CUDA_TRY(cudaSetDevice(0));
  GPUMUX_CUDA_TRY(cudaStreamCreate(&s));
  for (const Case& c : cases) {
    CudaExecutorOptions o;
    o.precision = c.precision;
    o.workspace_bytes = std::size_t{64} << 20;
    CudaLayerExecutor exec(0, o);
    const bool half = exec.input_bytes() == 2;
    for (const GemmShape& g : {conv, linear, attention}) {
      DYNAMIC_SECTION(to_string(c.precision)
                      << " " << g.m << "x" << g.k << "x" << g.n << " x" << g.count) {
        std::mt19937 rng(11);
        const std::size_t rows = g.m * 2, k = g.k, n = g.n, cnt = g.count;  // batch 2
        auto x = random_vec(cnt * rows * k, rng);                           // fresh random inputs
        auto w = random_vec(cnt * k * n, rng);
        auto dy = random_vec(cnt * rows * n, rng);
        DeviceBuffer dx_in = upload(x, half), dw_in = upload(w, half), ddy = upload(dy, half);
        DeviceBuffer dyout(cnt * rows * n * 4), ddx(cnt * rows * k * 4), ddw(k * n * 4);
        exec.gemm(dx_in.data(), dw_in.data(), static_cast<float*>(dyout.data()), rows, k, n, s, cnt,
                  rows * k, k * n, rows * n);
        exec.gemm_dx(ddy.data(), dw_in.data(), static_cast<float*>(ddx.data()), rows, k, n, s, cnt,
                     rows * n, k * n, rows * k);
        exec.gemm_dw(dx_in.data(), ddy.data(), static_cast<float*>(ddw.data()), rows, k, n, s, cnt,
                     rows * k, rows * n);
        GPUMUX_CUDA_TRY(cudaStreamSynchronize(s));
        std::vector<float> y(cnt * rows * n), dx(cnt * rows * k), dw(k * n, 0.0f), tmp(k * n);
        for (std::size_t i = 0; i < cnt; ++i) {
          cpu::gemm(x.data() + i * rows * k, w.data() + i * k * n, y.data() + i * rows * n, rows, k,
                    n);
          cpu::gemm_dx(dy.data() + i * rows * n, w.data() + i * k * n, dx.data() + i * rows * k,
                       rows, k, n);
          cpu::gemm_dw(x.data() + i * rows * k, dy.data() + i * rows * n, tmp.data(), rows, k, n);
          for (std::size_t j = 0; j < k * n; ++j) dw[j] += tmp[j];
        }
        CHECK(rel_error(download(dyout, y.size()), y) < c.tolerance);
        CHECK(rel_error(download(ddx, dx.size()), dx) < c.tolerance);
        CHECK(rel_error(download(ddw, dw.size()), dw) < c.tolerance);

        // Fused bias + ReLU and the momentum update (fp32 everywhere).
        std::vector<float> bias = random_vec(n, rng);
        std::vector<float> bias_copy = bias;
        DeviceBuffer dbias = upload(bias_copy, false);
        exec.bias_relu(static_cast<float*>(dyout.data()), static_cast<const float*>(dbias.data()),
                       cnt * rows, n, s);
        std::vector<float> ywant = download(dyout, y.size());  // before: y from the GPU
        GPUMUX_CUDA_TRY(cudaStreamSynchronize(s));
        std::vector<float> yref = y;
        cpu::bias_relu(yref.data(), bias.data(), cnt * rows, n);
        CHECK(rel_error(ywant, yref) < c.tolerance);
        std::vector<float> wf = random_vec(k * n, rng), gf = random_vec(k * n, rng),
                           vf = random_vec(k * n, rng);
        std::vector<float> wf2 = wf, gf2 = gf, vf2 = vf;
        DeviceBuffer dwf = upload(wf2, false), dgf = upload(gf2, false), dvf = upload(vf2, false);
        exec.momentum(static_cast<float*>(dwf.data()), static_cast<const float*>(dgf.data()),
                      static_cast<float*>(dvf.data()), k * n, s);
        GPUMUX_CUDA_TRY(cudaStreamSynchronize(s));
        cpu::momentum_update(wf.data(), gf.data(), vf.data(), k * n, kLearningRate, kMomentum);
        CHECK(rel_error(download(dwf, k * n), wf) < 1e-6);
        CHECK(rel_error(download(dvf, k * n), vf) < 1e-6);
      }
    }
  }
  GPUMUX_CUDA_TRY(cudaStreamDestroy(s));
}

TEST_CASE("CUDA copies deliver the right bytes", "[gpu]") {
  require_gpu();
  CudaPlatform platform(gpu_setup());
  CudaDevice& dev = *platform.gpu(0);
  Recorder rec;
  dev.set_observer(&rec);
  dev.add_context(ContextId{0}, {});
  dev.add_stream(StreamId{0}, ContextId{0}, {0, 2});
  const Model& m = catalog().at("resnet50");
  const LayerRange range{10, 60};
  const std::uint64_t bytes = m.weight_bytes(range);
  const std::uint64_t first = m.weight_bytes(LayerRange{0, range.first});
  OpSpec load;
  load.id = OpId{0};
  load.device = DeviceId{0};
  load.stream = StreamId{0};
  load.kind = OpKind::CopyH2D;
  load.purpose = OpPurpose::LoadWeights;
  load.model = &m;
  load.layers = range;
  load.bytes = bytes;
  load.weight_offset = std::uint64_t{1} << 20;
  OpSpec pageable = load;  // the same bytes from pageable memory, elsewhere
  pageable.id = OpId{1};
  pageable.pageable = true;
  pageable.weight_offset = std::uint64_t{512} << 20;
  OpSpec back = load;  // and back to the host
  back.id = OpId{2};
  back.kind = OpKind::CopyD2H;
  back.purpose = OpPurpose::MigrateState;
  back.source_offset = load.weight_offset;
  back.after.add(OpId{0});
  dev.submit(load);
  dev.submit(pageable);
  dev.submit(back);
  platform.real_runtime().run();
  REQUIRE(rec.ended.size() == 3);
  for (const auto& [id, r] : rec.ended) CHECK(r.status == OpStatus::Ok);
  const std::span<const std::byte> store = platform.store().pinned(m);
  std::vector<std::byte> got(bytes);
  for (const std::uint64_t off : {load.weight_offset, pageable.weight_offset}) {
    GPUMUX_CUDA_TRY(cudaMemcpy(got.data(), static_cast<std::byte*>(dev.arena_base()) + off, bytes,
                               cudaMemcpyDeviceToHost));
    CHECK(std::memcmp(got.data(), store.data() + first, bytes) == 0);
  }
  CHECK(std::memcmp(dev.state_buffer().get(bytes).data(), store.data() + first, bytes) == 0);
  // Device times: the copy cannot beat the link by much, and events are in order.
  const OpRecord& r = rec.ended.at(OpId{0});
  CHECK(r.started_ns >= r.submitted_ns);
  CHECK(r.finished_ns > r.started_ns);
  CHECK(static_cast<double>(bytes) / static_cast<double>(r.duration_ns()) < 80.0);  // < 80 GB/s
}

TEST_CASE("CUDA pipelining overlaps the copy of group i+1 with the compute of group i", "[gpu]") {
  require_gpu();
  // Load-bound on purpose (groups of >= 32 MiB, batch 1): each compute g and the copy of group
  // g+1 both become ready when copy g ends, so on a GPU that overlaps streams they must run
  // together. (With small groups the copies run far ahead and overlap only by chance: 8 MiB
  // groups crossed an H100's PCIe 5 in 170 us, faster than their computes were launched.)
  CudaPlatform platform(gpu_setup({{"preload", {"resnet152"}}}));
  CudaDevice& dev = *platform.gpu(0);
  // The first pass of a fresh context loads cuBLAS's kernels (149 ms for group 0 on an H100,
  // 2026-11-25, longer than every copy together): warm up as a platform with a workload does.
  warm_up(dev.executor(), dev.ordinal(), catalog(), {ModelUse{"resnet152", 1, false, 1}},
          dev.arena_base(), dev.arena().capacity());
  Recorder rec;
  dev.set_observer(&rec);
  dev.add_context(ContextId{0}, {});
  dev.add_stream(StreamId{0}, ContextId{0}, {0, 4});  // copies
  dev.add_stream(StreamId{1}, ContextId{0}, {5, 4});  // compute
  const Model& m = catalog().at("resnet152");
  std::vector<std::uint64_t> offsets(m.layer_count());
  std::vector<LayerRange> groups;
  std::uint64_t off = 0, group_bytes = 0;
  std::uint32_t first = 0;
  for (std::uint32_t i = 0; i < m.layer_count(); ++i) {
    offsets[i] = off;
    off += (m.layer(i).weight_bytes + 255) & ~std::uint64_t{255};
    group_bytes += m.layer(i).weight_bytes;
    if (group_bytes >= (std::uint64_t{32} << 20) && groups.size() < 8) {
      groups.push_back({first, i + 1});
      first = i + 1;
      group_bytes = 0;
    }
  }
  REQUIRE(groups.size() >= 4);
  const std::uint64_t activations = (off + (std::uint64_t{1} << 20)) & ~std::uint64_t{255};
  std::uint64_t id = 0;
  std::vector<OpId> loads, computes;
  for (const LayerRange r : groups) {
    OpSpec load;
    load.id = OpId{id++};
    load.device = DeviceId{0};
    load.stream = StreamId{0};
    load.kind = OpKind::CopyH2D;
    load.purpose = OpPurpose::LoadWeights;
    load.model = &m;
    load.layers = r;
    load.bytes = m.weight_bytes(r);
    load.weight_offset = offsets[r.first];
    load.layer_offsets = offsets.data();
    OpSpec fwd;
    fwd.id = OpId{id++};
    fwd.device = DeviceId{0};
    fwd.stream = StreamId{1};
    fwd.kind = OpKind::Compute;
    fwd.purpose = OpPurpose::Forward;
    fwd.model = &m;
    fwd.layers = r;
    fwd.batch = 1;
    fwd.inference = true;
    fwd.layer_offsets = offsets.data();
    fwd.activation_offset = activations;
    fwd.after.add(load.id);
    dev.submit(load);
    dev.submit(fwd);
    loads.push_back(load.id);
    computes.push_back(fwd.id);
  }
  platform.real_runtime().run();
  REQUIRE(rec.ended.size() == 2 * groups.size());
  // Pipelining, whichever side is the bottleneck: the copies and the computes overlap, so the
  // whole takes clearly less than both in sequence, and every compute but the last runs while
  // some later group's copy does, or after all copies ended (compute-bound: the H100 session
  // of 2026-11-25 had 0.69 ms computes behind 0.65 ms copies of 32 MiB groups).
  DurationNs copies = 0, computes_ns = 0;
  std::size_t overlapped = 0;
  const TimeNs begin = rec.ended.at(loads.front()).started_ns;
  const TimeNs end = rec.ended.at(computes.back()).finished_ns;
  const TimeNs copies_end = rec.ended.at(loads.back()).finished_ns;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const OpRecord& load = rec.ended.at(loads[g]);
    const OpRecord& c = rec.ended.at(computes[g]);
    // Printed (not only on failure): the timeline is what a GPU session is for.
    std::cout << "group " << g << ": copy " << load.started_ns << "-" << load.finished_ns
              << ", compute " << c.started_ns << "-" << c.finished_ns << '\n';
    CHECK(c.started_ns >= load.finished_ns - 2000);  // compute after its load
    copies += load.finished_ns - load.started_ns;
    computes_ns += c.finished_ns - c.started_ns;
    bool with_a_copy = c.started_ns >= copies_end;
    for (std::size_t h = g + 1; h < groups.size() && !with_a_copy; ++h) {
      const OpRecord& later = rec.ended.at(loads[h]);
      with_a_copy = later.started_ns < c.finished_ns && later.finished_ns > c.started_ns;
    }
    if (g + 1 < groups.size() && with_a_copy) ++overlapped;
  }
  INFO("groups " << groups.size() << ": span " << end - begin << " ns, copies " << copies
                 << " ns, computes " << computes_ns << " ns, overlapped " << overlapped);
  CHECK(static_cast<double>(end - begin) < 0.8 * static_cast<double>(copies + computes_ns));
  CHECK(overlapped == groups.size() - 1);
}

TEST_CASE("CUDA preemption drops queued work and the job resumes", "[gpu]") {
  require_gpu();
  CudaPlatform platform(gpu_setup());
  CudaDevice& dev = *platform.gpu(0);
  Recorder rec;
  dev.set_observer(&rec);
  dev.add_context(ContextId{0}, {});
  dev.add_stream(StreamId{0}, ContextId{0}, {0, 1});
  const Model& m = catalog().at("resnet50");
  std::vector<std::uint64_t> offsets(m.layer_count(), 0);  // all layers share one region
  auto fwd = [&](std::uint64_t id) {
    OpSpec op;
    op.id = OpId{id};
    op.job = JobId{1};
    op.device = DeviceId{0};
    op.stream = StreamId{0};
    op.kind = OpKind::Compute;
    op.purpose = OpPurpose::Forward;
    op.model = &m;
    op.layers = LayerRange{0, m.layer_count()};
    op.batch = 16;
    op.inference = true;
    op.layer_offsets = offsets.data();
    op.activation_offset = std::uint64_t{1} << 30;
    return op;
  };
  for (std::uint64_t i = 0; i < 5; ++i) dev.submit(fwd(i));
  CHECK(dev.in_flight(StreamId{0}) == 1);
  CHECK(dev.drop_pending(JobId{1}) == 4);  // the issued head keeps running
  platform.real_runtime().run();
  CHECK(rec.ended.at(OpId{0}).status == OpStatus::Ok);
  for (std::uint64_t i = 1; i < 5; ++i) CHECK(rec.ended.at(OpId{i}).status == OpStatus::Dropped);
  for (std::uint64_t i = 5; i < 8; ++i) dev.submit(fwd(i));  // resumes
  platform.real_runtime().run();
  for (std::uint64_t i = 5; i < 8; ++i) CHECK(rec.ended.at(OpId{i}).status == OpStatus::Ok);
  // abort: reported at once, the GPU finishes what was enqueued, nothing is reported twice.
  for (std::uint64_t i = 8; i < 11; ++i) dev.submit(fwd(i));
  CHECK(dev.abort(JobId{1}) == 3);
  platform.real_runtime().run();
  for (std::uint64_t i = 8; i < 11; ++i) CHECK(rec.ended.at(OpId{i}).status == OpStatus::Aborted);
  CHECK(platform.real_runtime().pending() == 0);
}
