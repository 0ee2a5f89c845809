// Platform "cuda"'s host logic on the CUDA test double (label fakecuda): arena offsets, the
// order of a pipelined load, stream priorities, and completions that race their launches.
#include <atomic>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "fakecuda_rig.hpp"
#include "gpu_test_support.hpp"
#include "gpumux/backend/cuda/cuda_platform.hpp"
#include "gpumux/fakecuda/fakecuda.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/model/model.hpp"

using namespace gpumux;
using namespace fakecuda_test;
namespace fake = gpumux::fakecuda;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

bool all_zero(const std::byte* p, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    if (p[i] != std::byte{0}) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("cuda on fakecuda: copies land at their arena offsets, across GPUs too", "[fakecuda]") {
  fake::reset({.devices = 2});
  {
    PlatformSetup setup = gpu_test::gpu_setup();
    setup.profiles.push_back(setup.profiles.front());
    setup.params["arena_gib"] = 1;
    CudaPlatform platform(setup);
    CudaDevice& gpu0 = *platform.gpu(0);
    CudaDevice& gpu1 = *platform.gpu(1);
    gpu_test::Recorder rec;
    for (CudaDevice* d : {&gpu0, &gpu1}) {
      d->set_observer(&rec);
      d->add_context(ContextId{0}, {});
      d->add_stream(StreamId{0}, ContextId{0}, {0, 2});
    }
    const Model& m = gpu_test::catalog().at("resnet18");
    const LayerRange range{2, 9};
    const std::uint64_t bytes = m.weight_bytes(range);
    OpSpec in = load(0, 0, m, range, 1 * kMiB);  // GPU 0 at 1 MiB
    OpSpec across = op(1, 0, OpKind::CopyD2D);   // GPU 0 at 1 MiB -> GPU 1 at 3 MiB
    across.purpose = OpPurpose::MigrateState;
    across.bytes = bytes;
    across.source_offset = 1 * kMiB;
    across.weight_offset = 3 * kMiB;
    across.peer = DeviceId{1};
    across.after.add(OpId{0});
    OpSpec out = op(2, 0, OpKind::CopyD2H);  // GPU 1 at 3 MiB -> its pinned state buffer
    out.device = DeviceId{1};
    out.purpose = OpPurpose::MigrateState;
    out.bytes = bytes;
    out.source_offset = 3 * kMiB;
    out.after.add(OpId{1});
    gpu0.submit(in);
    gpu0.submit(across);
    platform.real_runtime().run();
    gpu1.submit(out);  // after its dependency on the other GPU (no engine here to tell it)
    platform.real_runtime().run();
    REQUIRE(rec.ended.size() == 3);
    for (const auto& [id, r] : rec.ended) CHECK(r.status == OpStatus::Ok);
    const std::byte* want = platform.store().pinned(m).data() + m.weight_bytes({0, range.first});
    const auto* a0 = static_cast<const std::byte*>(gpu0.arena_base());
    const auto* a1 = static_cast<const std::byte*>(gpu1.arena_base());
    CHECK(std::memcmp(a0 + 1 * kMiB, want, bytes) == 0);
    CHECK(std::memcmp(a1 + 3 * kMiB, want, bytes) == 0);
    CHECK(std::memcmp(gpu1.state_buffer().get(bytes).data(), want, bytes) == 0);
    // Nothing outside the destinations was written.
    CHECK(all_zero(a0, 1 * kMiB));
    CHECK(all_zero(a0 + 1 * kMiB + bytes, 1 * kMiB));
    CHECK(all_zero(a1, 3 * kMiB));
    CHECK(all_zero(a1 + 3 * kMiB + bytes, 1 * kMiB));
  }
  fake::reset();
}

TEST_CASE(
    "cuda on fakecuda: a pipelined load computes group g after its copy, while later "
    "groups copy",
    "[fakecuda]") {
  // Copies at 0.25 GB/s (the double's pacing): 4 MiB groups take 16.8 ms each, so group 0's
  // compute (waiting on the GPU for its copy's event) ends while later groups still copy,
  // with 67 ms to spare for the launches (instant kernels) on a loaded machine.
  fake::reset({.copy_gbps = 0.25});
  CudaPlatform platform(gpu_test::gpu_setup());
  CudaDevice& dev = *platform.gpu(0);
  gpu_test::Recorder rec;
  dev.set_observer(&rec);
  dev.add_context(ContextId{0}, {});
  dev.add_stream(StreamId{0}, ContextId{0}, {0, 4});  // copies
  dev.add_stream(StreamId{1}, ContextId{0}, {5, 4});  // compute
  const Model& m = gpu_test::catalog().at("resnet50");
  std::vector<std::uint64_t> offsets(m.layer_count());
  std::vector<LayerRange> groups;
  std::uint64_t off = 0, group_bytes = 0;
  std::uint32_t first = 0;
  for (std::uint32_t i = 0; i < m.layer_count() && groups.size() < 5; ++i) {
    offsets[i] = off;
    off += (m.layer(i).weight_bytes + 255) & ~std::uint64_t{255};
    group_bytes += m.layer(i).weight_bytes;
    if (group_bytes >= 4 * kMiB) {
      groups.push_back({first, i + 1});
      first = i + 1;
      group_bytes = 0;
    }
  }
  REQUIRE(groups.size() == 5);
  std::uint64_t id = 0;
  for (const LayerRange r : groups) {
    OpSpec l = load(id++, 0, m, r, offsets[r.first]);
    l.layer_offsets = offsets.data();
    OpSpec f = forward(id++, 1, m, r);
    f.layer_offsets = offsets.data();
    f.activation_offset = (off + kMiB) & ~std::uint64_t{255};
    f.after.add(l.id);
    dev.submit(l);
    dev.submit(f);
  }
  platform.real_runtime().run();
  REQUIRE(rec.ended.size() == 10);
  for (std::uint64_t g = 0; g < 5; ++g) {
    const OpRecord& l = rec.ended.at(OpId{2 * g});
    const OpRecord& c = rec.ended.at(OpId{2 * g + 1});
    CHECK(l.status == OpStatus::Ok);
    CHECK(c.status == OpStatus::Ok);
    // The compute waited for its group's copy (1 us: the float milliseconds of event times).
    CHECK(c.started_ns + 1000 >= l.finished_ns);
    CHECK(l.finished_ns - l.started_ns >= 16'000'000);  // >= 4 MiB at 0.25 GB/s
    if (g > 0) {
      CHECK(l.started_ns + 1000 >= rec.ended.at(OpId{2 * g - 2}).finished_ns);  // in order
      CHECK(c.started_ns + 1000 >= rec.ended.at(OpId{2 * g - 1}).finished_ns);
    }
  }
  // Pipelined: group 0's compute ended before the last group's copy did.
  CHECK(rec.ended.at(OpId{1}).finished_ns < rec.ended.at(OpId{8}).finished_ns);
}

TEST_CASE("cuda on fakecuda: queued work of a higher-priority stream runs first", "[fakecuda]") {
  fake::reset();
  CudaPlatform platform(gpu_test::gpu_setup());
  CudaDevice& dev = *platform.gpu(0);
  gpu_test::Recorder rec;
  dev.set_observer(&rec);
  dev.add_context(ContextId{0}, {});
  dev.add_stream(StreamId{0}, ContextId{0}, {0, 4});  // CUDA priority 0
  dev.add_stream(StreamId{1}, ContextId{0}, {5, 4});  // CUDA priority -5 (most urgent)
  const Model& m = gpu_test::catalog().at("resnet18");
  const LayerRange layers{0, 6};
  // One op alone: how many kernels and GEMMs it launches (after the set-up's own launches).
  const std::uint64_t base = fake::counters().launches;
  const std::size_t logged = fake::execution_log().size();
  dev.submit(forward(0, 0, m, layers));
  platform.real_runtime().run();
  const std::uint64_t per_op = fake::counters().launches - base;
  REQUIRE(per_op > 0);
  // Hold the GPU, queue three ops on the ordinary stream, then three on the urgent one.
  fake::hold(0, true);
  for (std::uint64_t i = 1; i <= 3; ++i) dev.submit(forward(i, 0, m, layers));
  for (std::uint64_t i = 4; i <= 6; ++i) dev.submit(forward(i, 1, m, layers));
  std::atomic<bool> released{false};
  std::thread release([&] {  // once all six are on the GPU
    while (fake::counters().launches < base + 7 * per_op) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    fake::hold(0, false);
    released = true;
  });
  platform.real_runtime().run();
  release.join();
  REQUIRE(released);
  REQUIRE(rec.ended.size() == 7);
  std::vector<fake::Executed> held;
  const std::vector<fake::Executed> log = fake::execution_log();
  for (std::size_t i = logged; i < log.size(); ++i) {
    if (log[i].kind == 'k') held.push_back(log[i]);
  }
  REQUIRE(held.size() == 7 * per_op);
  held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(per_op));  // the first op
  for (std::size_t i = 0; i < held.size(); ++i) {
    INFO("kernel " << i << " of " << held.size());
    CHECK(held[i].priority == (i < 3 * per_op ? -5 : 0));
  }
  // The kernel order above is the test. The ops' reported finish times are not compared: an
  // op whose start is reported late ends no earlier than that report (cuda_device.cpp), so
  // under load an urgent op's reported end could trail op 1's by microseconds (seen 1 in 40
  // runs at load 3.5, 2026-11-26) although its kernels ran first.
  for (std::uint64_t i = 4; i <= 6; ++i) CHECK(rec.ended.at(OpId{i}).status == OpStatus::Ok);
}

TEST_CASE(
    "cuda on fakecuda: run() waits for every launch, even one whose completion came "
    "first",
    "[fakecuda]") {
  // Tiny copies finish on the double before their launcher posts that they were enqueued; a
  // run once ended then with work still queued (1 in 20 runs of the copies case, 2026-11-26).
  fake::reset();
  CudaPlatform platform(gpu_test::gpu_setup());
  CudaDevice& dev = *platform.gpu(0);
  gpu_test::Recorder rec;
  dev.set_observer(&rec);
  dev.add_context(ContextId{0}, {});
  dev.add_stream(StreamId{0}, ContextId{0}, {0, 1});
  constexpr std::uint64_t kOps = 300;
  for (std::uint64_t i = 0; i < kOps; ++i) {
    OpSpec o = op(i, 0, i % 2 == 0 ? OpKind::CopyD2H : OpKind::CopyH2D);
    o.purpose = OpPurpose::MigrateState;
    o.bytes = 256;
    o.source_offset = o.weight_offset = 4096 * (i % 16);
    dev.submit(o);
  }
  within(std::chrono::seconds(120), [&] { platform.real_runtime().run(); });
  CHECK(rec.ended.size() == kOps);
  CHECK(platform.real_runtime().pending() == 0);
}

TEST_CASE("cuda on fakecuda: an abort while the GPU holds the op is reported when it lets go",
          "[fakecuda]") {
  fake::reset();
  CudaPlatform platform(gpu_test::gpu_setup());
  CudaDevice& dev = *platform.gpu(0);
  gpu_test::Recorder rec;
  dev.set_observer(&rec);
  dev.add_context(ContextId{0}, {});
  dev.add_stream(StreamId{0}, ContextId{0}, {0, 2});
  const Model& m = gpu_test::catalog().at("resnet18");
  RealRuntime& rt = platform.real_runtime();
  const std::uint64_t launched_before = fake::counters().launches;
  fake::hold(0, true);  // op 0 reaches the GPU and stays there until the abort
  for (std::uint64_t i = 0; i < 4; ++i) dev.submit(forward(i, 0, m, {0, 4}));
  std::size_t removed = 0, reported_at_abort = 0;
  std::thread killer([&] {
    while (fake::counters().launches == launched_before) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    rt.post([&] {
      removed = dev.abort(JobId{1});
      reported_at_abort = rec.ended.size();
      fake::hold(0, false);  // the GPU finishes what was enqueued, then the op is reported
    });
  });
  within(std::chrono::seconds(120), [&] { rt.run(); });
  killer.join();
  CHECK(removed == 4);
  CHECK(reported_at_abort < 4);  // op 0 (on the GPU) was not reported inside abort()
  REQUIRE(rec.ended.size() == 4);
  for (const auto& [id, r] : rec.ended) {
    INFO("op " << raw(id));
    CHECK(r.status == OpStatus::Aborted);
  }
  CHECK(rt.pending() == 0);
}
