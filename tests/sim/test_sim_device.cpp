// SimDevice: the device semantics every platform implements, checked against hand-computed
// times on a hand-built profile (no files). Units: ns; bandwidth in bytes per ns (= GB/s).
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpumux/model/device_profile.hpp"
#include "gpumux/sim/sim_device.hpp"
#include "gpumux/sim/sim_runtime.hpp"

using namespace gpumux;

namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

// A GPU: 12 B/ns each way, 10 us per-copy latency, pageable copies at half speed, peer copies
// at 6 B/ns, 1 ms time slices with free switches, no interference.
DeviceProfile gpu_profile() {
  DeviceProfile p;
  p.name = "test-gpu";
  p.kind = DeviceKind::Gpu;
  p.h2d_gbps = 12.0;
  p.d2h_gbps = 12.0;
  p.peer_gbps = 6.0;
  p.h2d_latency_ns = us_to_ns(10);
  p.d2h_latency_ns = us_to_ns(10);
  p.pageable_factor = 0.5;
  p.timeslice_ns = ms_to_ns(1);
  p.context_switch_ns = 0;
  p.mps_efficiency = 1.0;
  p.concurrent_efficiency = 1.0;
  return p;
}

DeviceProfile cpu_profile() {
  DeviceProfile p;
  p.name = "test-cpu";
  p.kind = DeviceKind::Cpu;
  p.sm_count = 16;
  return p;
}

// Records what the device reports. `after_finish` lets a test re-enter the device.
class Recorder final : public DeviceObserver {
 public:
  void on_op_started(OpId op, TimeNs when_ns) override {
    REQUIRE(started.count(op) == 0);
    started[op] = when_ns;
    events.push_back("start " + std::to_string(raw(op)));
  }
  void on_op_finished(const OpRecord& r) override {
    REQUIRE(finished.count(r.op) == 0);  // exactly once
    finished[r.op] = r;
    events.push_back("end " + std::to_string(raw(r.op)));
    if (after_finish) after_finish(r);
  }
  [[nodiscard]] bool is_complete(OpId op) const noexcept override {
    const auto it = finished.find(op);
    return it != finished.end() && it->second.status == OpStatus::Ok;
  }
  void on_device_note(DeviceId, TimeNs when_ns, std::string_view what,
                      std::int64_t value) override {
    if (what == "timeslice") slices.emplace_back(when_ns, value);
  }

  [[nodiscard]] TimeNs start(std::uint64_t op) const { return started.at(OpId{op}); }
  [[nodiscard]] TimeNs end(std::uint64_t op) const { return finished.at(OpId{op}).finished_ns; }
  [[nodiscard]] OpStatus status(std::uint64_t op) const { return finished.at(OpId{op}).status; }

  std::map<OpId, TimeNs> started;
  std::map<OpId, OpRecord> finished;
  std::vector<std::string> events;
  std::vector<std::pair<TimeNs, std::int64_t>> slices;
  std::function<void(const OpRecord&)> after_finish;
};

OpSpec make_op(std::uint64_t id, std::uint32_t stream, OpKind kind, std::uint32_t job = 0) {
  OpSpec op;
  op.id = OpId{id};
  op.job = JobId{job};
  op.stream = StreamId{stream};
  op.kind = kind;
  return op;
}

OpSpec compute(std::uint64_t id, std::uint32_t stream, DurationNs solo_ns, double demand = 1.0,
               std::uint32_t job = 0) {
  OpSpec op = make_op(id, stream, OpKind::Compute, job);
  op.solo_ns = solo_ns;
  op.demand = demand;
  return op;
}

OpSpec copy(std::uint64_t id, std::uint32_t stream, OpKind kind, std::uint64_t bytes,
            bool pageable = false) {
  OpSpec op = make_op(id, stream, kind);
  op.bytes = bytes;
  op.pageable = pageable;
  return op;
}

OpSpec host(std::uint64_t id, std::uint32_t stream, DurationNs ns, std::uint32_t job = 0) {
  OpSpec op = make_op(id, stream, OpKind::Host, job);
  op.solo_ns = ns;
  return op;
}

// A runtime, a recorder and one device.
struct Rig {
  explicit Rig(DeviceProfile profile) : dev(DeviceId{0}, std::move(profile), rt) {
    dev.set_observer(&obs);
  }
  void context(std::uint32_t ctx, bool mps = false) { dev.add_context(ContextId{ctx}, {mps}); }
  void stream(std::uint32_t s, std::uint32_t ctx, int priority = 0, std::uint32_t depth = 2) {
    dev.add_stream(StreamId{s}, ContextId{ctx}, StreamOptions{priority, depth});
  }
  // One context 0 with `n` streams 0..n-1.
  void streams(std::uint32_t n) {
    context(0);
    for (std::uint32_t s = 0; s < n; ++s) stream(s, 0);
  }
  void at(TimeNs t, std::function<void()> fn) {
    rt.schedule_at(t, [fn = std::make_shared<std::function<void()>>(std::move(fn))] { (*fn)(); });
  }

  SimRuntime rt;
  Recorder obs;
  SimDevice dev;
};

}  // namespace

TEST_CASE("a host op is a pure delay", "[sim][device]") {
  // GPU, one stream: a 5 us host op submitted at 0 starts at 0 and ends at 5,000 ns.
  Rig r(gpu_profile());
  r.streams(1);
  r.dev.submit(host(1, 0, us_to_ns(5)));
  r.rt.run();
  CHECK(r.obs.start(1) == 0);
  CHECK(r.obs.end(1) == 5'000);
  const OpRecord& rec = r.obs.finished.at(OpId{1});
  CHECK(rec.status == OpStatus::Ok);
  CHECK(rec.kind == OpKind::Host);
  CHECK(rec.submitted_ns == 0);
  CHECK(rec.started_ns == 0);
}

TEST_CASE("a compute op alone runs at solo speed whatever its demand", "[sim][device]") {
  // GPU, one stream: solo 1,234,567 ns at demand 0.3 alone -> rate 0.3/0.3 = 1 -> ends at
  // exactly 1,234,567. Submitted at 2 ms (from an event): ends at 2 ms + solo.
  Rig r(gpu_profile());
  r.streams(1);
  r.dev.submit(compute(1, 0, 1'234'567, 0.3));
  r.at(ms_to_ns(2), [&] { r.dev.submit(compute(2, 0, 1'234'567, 1.0)); });
  r.rt.run();
  CHECK(r.obs.end(1) == 1'234'567);
  CHECK(r.obs.start(2) == 2'000'000);
  CHECK(r.obs.end(2) == 3'234'567);
}

TEST_CASE("a lone copy takes latency + bytes / bandwidth", "[sim][device][link]") {
  // 8 MiB H2D at 12 B/ns + 10 us: 10,000 + ceil(8,388,608 / 12 = 699,050.67) = 709,051 ns.
  // The same D2H alone: the same time.
  Rig r(gpu_profile());
  r.streams(1);
  r.dev.submit(copy(1, 0, OpKind::CopyH2D, 8 * kMiB));
  r.rt.run();
  CHECK(r.obs.start(1) == 0);
  CHECK(r.obs.end(1) == 709'051);
  r.dev.submit(copy(2, 0, OpKind::CopyD2H, 8 * kMiB));
  r.rt.run();
  CHECK(r.obs.end(2) - r.obs.start(2) == 709'051);
}

TEST_CASE("concurrent copies in one direction share the link", "[sim][device][link]") {
  // Two 8 MiB H2D copies on two streams, both at 0: each gets 6 B/ns after its latency, so
  // each ends at 10,000 + ceil(2 * 8,388,608 / 12 = 1,398,101.33) = 1,408,102 ns.
  Rig r(gpu_profile());
  r.streams(2);
  r.dev.submit(copy(1, 0, OpKind::CopyH2D, 8 * kMiB));
  r.dev.submit(copy(2, 1, OpKind::CopyH2D, 8 * kMiB));
  r.rt.run();
  CHECK(r.obs.end(1) == 1'408'102);
  CHECK(r.obs.end(2) == 1'408'102);
}

TEST_CASE("H2D and D2H copies do not interfere", "[sim][device][link]") {
  // 8 MiB H2D and 8 MiB D2H at once: separate copy engines, each 709,051 ns as if alone.
  Rig r(gpu_profile());
  r.streams(2);
  r.dev.submit(copy(1, 0, OpKind::CopyH2D, 8 * kMiB));
  r.dev.submit(copy(2, 1, OpKind::CopyD2H, 8 * kMiB));
  r.rt.run();
  CHECK(r.obs.end(1) == 709'051);
  CHECK(r.obs.end(2) == 709'051);
}

TEST_CASE("pageable copies are capped at bandwidth x pageable_factor", "[sim][device][link]") {
  // pageable_factor 0.25: a pageable copy gets at most 3 B/ns of the 12.
  // Alone: 3,000,000 B pageable -> 10,000 + 1,000,000 = 1,010,000 ns.
  // With a pinned copy: water-filling gives the pageable one its cap 3 and the pinned one 9.
  // Pinned 9,000,000 B ends at 10,000 + 9e6 / 9 = 1,010,000. The pageable 6,000,000 B has
  // done 3e6 by then and stays capped at 3 B/ns: 3e6 / 3 = 1e6 more -> 2,010,000.
  DeviceProfile p = gpu_profile();
  p.pageable_factor = 0.25;
  {
    Rig r(p);
    r.streams(1);
    r.dev.submit(copy(1, 0, OpKind::CopyH2D, 3'000'000, true));
    r.rt.run();
    CHECK(r.obs.end(1) == 1'010'000);
  }
  Rig r(p);
  r.streams(2);
  r.dev.submit(copy(1, 0, OpKind::CopyH2D, 6'000'000, true));
  r.dev.submit(copy(2, 1, OpKind::CopyH2D, 9'000'000, false));
  r.rt.run();
  CHECK(r.obs.end(2) == 1'010'000);
  CHECK(r.obs.end(1) == 2'010'000);
}

TEST_CASE("peer copies ride the D2H direction capped at peer_gbps", "[sim][device][link]") {
  // D2D of 6,000,000 B alone: d2h latency 10 us + 6e6 / 6 (peer cap) = 1,010,000 ns.
  // Then D2D (cap 6) and a pinned D2H (cap 12) of 6e6 B each together on the 12 B/ns D2H
  // direction: level 6 each, both end 1,010,000 after they start; an H2D copy alongside is
  // not slowed (12 B/ns: 10,000 + 500,000).
  Rig r(gpu_profile());
  r.streams(3);
  OpSpec d2d = copy(1, 0, OpKind::CopyD2D, 6'000'000);
  d2d.peer = DeviceId{1};
  r.dev.submit(d2d);
  r.rt.run();
  CHECK(r.obs.end(1) == 1'010'000);
  const TimeNs t0 = r.rt.now();
  d2d.id = OpId{2};
  r.dev.submit(d2d);
  r.dev.submit(copy(3, 1, OpKind::CopyD2H, 6'000'000));
  r.dev.submit(copy(4, 2, OpKind::CopyH2D, 6'000'000));
  r.rt.run();
  CHECK(r.obs.end(2) - t0 == 1'010'000);
  CHECK(r.obs.end(3) - t0 == 1'010'000);
  CHECK(r.obs.end(4) - t0 == 510'000);
}

TEST_CASE("stream order and max_in_flight", "[sim][device][stream]") {
  // Depth 1: A (1 ms) and B (2 ms) submitted at 0 on one stream. Right after submit A is
  // issued and B queued; B starts when A ends (1 ms) and ends at 3 ms.
  // Depth 2: both are issued at once, but B still starts only after A (stream order).
  for (std::uint32_t depth : {1u, 2u}) {
    Rig r(gpu_profile());
    r.context(0);
    r.stream(0, 0, 0, depth);
    r.dev.submit(compute(1, 0, ms_to_ns(1)));
    r.dev.submit(compute(2, 0, ms_to_ns(2)));
    CHECK(r.dev.in_flight(StreamId{0}) == depth);
    CHECK(r.dev.queued(StreamId{0}) == 2 - depth);
    r.rt.run(ms_to_ns(1) / 2);
    CHECK(r.dev.in_flight(StreamId{0}) == depth);
    r.rt.run();
    CHECK(r.obs.end(1) == 1'000'000);
    CHECK(r.obs.start(2) == 1'000'000);
    CHECK(r.obs.end(2) == 3'000'000);
    CHECK(r.dev.in_flight(StreamId{0}) == 0);
    CHECK(r.dev.queued(StreamId{0}) == 0);
  }
}

TEST_CASE("dependencies across streams of one device", "[sim][device][deps]") {
  // Stream 0: A = 8 MiB H2D (ends 709,051). Stream 1: B compute 1 ms after A, submitted at 0:
  // B starts when A ends, without any dependencies_changed() call, and ends 1 ms later.
  Rig r(gpu_profile());
  r.streams(2);
  r.dev.submit(copy(1, 0, OpKind::CopyH2D, 8 * kMiB));
  OpSpec b = compute(2, 1, ms_to_ns(1));
  b.after.add(OpId{1});
  r.dev.submit(b);
  r.rt.run();
  CHECK(r.obs.start(2) == 709'051);
  CHECK(r.obs.end(2) == 1'709'051);
}

TEST_CASE("dependencies across devices are re-checked on dependencies_changed",
          "[sim][device][deps]") {
  // Device 0: A compute 2 ms. Device 1: B compute 1 ms after A. One observer for both.
  // With the observer calling dev1.dependencies_changed() on every completion, B runs
  // 2..3 ms. Without it, B never starts (it waits, issued, forever).
  for (bool notify : {true, false}) {
    SimRuntime rt;
    Recorder obs;
    SimDevice dev0(DeviceId{0}, gpu_profile(), rt);
    SimDevice dev1(DeviceId{1}, gpu_profile(), rt);
    for (SimDevice* d : {&dev0, &dev1}) {
      d->set_observer(&obs);
      d->add_context(ContextId{0}, {});
      d->add_stream(StreamId{0}, ContextId{0}, {});
    }
    if (notify) obs.after_finish = [&](const OpRecord&) { dev1.dependencies_changed(); };
    dev0.submit(compute(1, 0, ms_to_ns(2)));
    OpSpec b = compute(2, 0, ms_to_ns(1));
    b.device = DeviceId{1};
    b.after.add(OpId{1});
    dev1.submit(b);
    rt.run();
    CHECK(obs.end(1) == 2'000'000);
    if (notify) {
      CHECK(obs.start(2) == 2'000'000);
      CHECK(obs.end(2) == 3'000'000);
    } else {
      CHECK(obs.started.count(OpId{2}) == 0);
      CHECK(dev1.in_flight(StreamId{0}) == 1);
    }
  }
}

TEST_CASE("setup_ns is paid before the op starts and uses no resource", "[sim][device]") {
  // One context, two streams. A: compute 1 ms with setup 300 us; X: compute 1 ms. Both
  // demand 1, submitted at 0. X runs alone at rate 1 until A starts at 300 us; then both
  // share (0.5 each): X has 700 us left -> ends at 300 + 1,400 = 1,700 us. A did 700 us by
  // then and finishes its last 300 us alone: ends at 2,000 us.
  Rig r(gpu_profile());
  r.streams(2);
  OpSpec a = compute(1, 0, ms_to_ns(1));
  a.setup_ns = us_to_ns(300);
  r.dev.submit(a);
  r.dev.submit(compute(2, 1, ms_to_ns(1)));
  r.rt.run();
  CHECK(r.obs.start(1) == 300'000);
  CHECK(r.obs.finished.at(OpId{1}).started_ns == 300'000);
  CHECK(r.obs.end(2) == 1'700'000);
  CHECK(r.obs.end(1) == 2'000'000);
}

TEST_CASE("host_round_trip_ns delays an op that waited in the host queue, not one issued ahead",
          "[sim][device]") {
  // Three 1 ms computes with 20 us set-up on one stream; round trip 50 us. Depth 1: op 2 is
  // issued when op 1 ends (1,020 us) and starts 50 + 20 us later, at 1,090 us; op 3 likewise
  // at 2,090 + 70 = 2,160 us, ending at 3,160 us. Depth 3: all three are issued at submit and
  // pay only their set-up: 20 / 1,040 / 2,060 us, the last ending at 3,060 us.
  for (const std::uint32_t depth : {1u, 3u}) {
    DeviceProfile p = gpu_profile();
    p.host_round_trip_ns = us_to_ns(50);
    Rig r(p);
    r.context(0);
    r.stream(0, 0, 0, depth);
    for (std::uint64_t i = 1; i <= 3; ++i) {
      OpSpec op = compute(i, 0, ms_to_ns(1));
      op.setup_ns = us_to_ns(20);
      r.dev.submit(op);
    }
    r.rt.run();
    CAPTURE(depth);
    if (depth == 1) {
      CHECK(r.obs.start(1) == 20'000);
      CHECK(r.obs.start(2) == 1'090'000);
      CHECK(r.obs.start(3) == 2'160'000);
      CHECK(r.obs.end(3) == 3'160'000);
    } else {
      CHECK(r.obs.start(2) == 1'040'000);
      CHECK(r.obs.start(3) == 2'060'000);
      CHECK(r.obs.end(3) == 3'060'000);
    }
  }
}

TEST_CASE(
    "host_round_trip_ns: an op issued behind a running one starts no earlier than its "
    "issue plus the round trip",
    "[sim][device]") {
  // Four 10 us computes, no set-up, depth 2, round trip 50 us. Ops 1 and 2 are issued at
  // submit: 0-10 and 10-20 us. Op 3 is issued when op 1 ends (10 us), so not before 60 us;
  // op 2 ends at 20 us and op 3 runs 60-70 us. Op 4, issued when op 2 ends (20 us), could start
  // at 70 us, when op 3 ends: 70-80 us.
  DeviceProfile p = gpu_profile();
  p.host_round_trip_ns = us_to_ns(50);
  Rig r(p);
  r.context(0);
  r.stream(0, 0, 0, 2);
  for (std::uint64_t i = 1; i <= 4; ++i) r.dev.submit(compute(i, 0, us_to_ns(10)));
  r.rt.run();
  CHECK(r.obs.start(2) == 10'000);
  CHECK(r.obs.start(3) == 60'000);
  CHECK(r.obs.start(4) == 70'000);
  CHECK(r.obs.end(4) == 80'000);
}

TEST_CASE("drop_pending drops only queued ops of the job", "[sim][device][preempt]") {
  // Depth 1 stream 0: job 1 ops A (1 ms, issued), B, C (queued), then job 2 op D (1 ms).
  // Stream 1 (depth 1): job 1 op E (2 ms, issued, running). drop_pending(job 1) at 0.5 ms
  // drops B and C (Dropped, started = finished = 0.5 ms). All ops have demand 0.5, so two at
  // a time fit the GPU at solo speed: A ends Ok at 1 ms, D runs 1..2 ms, E ends Ok at 2 ms.
  Rig r(gpu_profile());
  r.context(0);
  r.stream(0, 0, 0, 1);
  r.stream(1, 0, 0, 1);
  r.dev.submit(compute(1, 0, ms_to_ns(1), 0.5, 1));
  r.dev.submit(compute(2, 0, ms_to_ns(1), 0.5, 1));
  r.dev.submit(compute(3, 0, ms_to_ns(1), 0.5, 1));
  r.dev.submit(compute(4, 0, ms_to_ns(1), 0.5, 2));
  r.dev.submit(compute(5, 1, ms_to_ns(2), 0.5, 1));
  std::size_t dropped = 0;
  r.at(500'000, [&] {
    dropped = r.dev.drop_pending(JobId{1});
    // reported synchronously, before drop_pending returned
    CHECK(r.obs.finished.count(OpId{2}) == 1);
    CHECK(r.dev.queued(StreamId{0}) == 1);
  });
  r.rt.run();
  CHECK(dropped == 2);
  for (std::uint64_t op : {2, 3}) {
    CHECK(r.obs.status(op) == OpStatus::Dropped);
    CHECK(r.obs.finished.at(OpId{op}).started_ns == 500'000);
    CHECK(r.obs.end(op) == 500'000);
    CHECK(r.obs.started.count(OpId{op}) == 0);
  }
  CHECK(r.obs.status(1) == OpStatus::Ok);
  CHECK(r.obs.end(1) == 1'000'000);
  CHECK(r.obs.start(4) == 1'000'000);
  CHECK(r.obs.end(4) == 2'000'000);
  CHECK(r.obs.status(5) == OpStatus::Ok);
  CHECK(r.obs.end(5) == 2'000'000);
}

TEST_CASE("abort removes issued and queued ops and frees the GPU", "[sim][device][preempt]") {
  // One context, streams 0 and 1. Job 1: A compute 2 ms (stream 0) and B queued behind it.
  // Job 2: E compute 2 ms (stream 1). A and E (demand 1) share: rate 0.5. abort(job 1) at
  // 1 ms: A (started 0) and B (never started) are Aborted at 1 ms. E did 0.5 ms of work by
  // then and runs its 1.5 ms left alone: ends at 2.5 ms.
  Rig r(gpu_profile());
  r.context(0);
  r.stream(0, 0, 0, 1);
  r.stream(1, 0);
  r.dev.submit(compute(1, 0, ms_to_ns(2), 1.0, 1));
  r.dev.submit(compute(2, 0, ms_to_ns(2), 1.0, 1));
  r.dev.submit(compute(3, 1, ms_to_ns(2), 1.0, 2));
  std::size_t aborted = 0;
  r.at(ms_to_ns(1), [&] { aborted = r.dev.abort(JobId{1}); });
  r.rt.run();
  CHECK(aborted == 2);
  CHECK(r.obs.status(1) == OpStatus::Aborted);
  CHECK(r.obs.finished.at(OpId{1}).started_ns == 0);
  CHECK(r.obs.end(1) == 1'000'000);
  CHECK(r.obs.status(2) == OpStatus::Aborted);
  CHECK(r.obs.finished.at(OpId{2}).started_ns == 1'000'000);
  CHECK(r.obs.end(3) == 2'500'000);
  CHECK(r.dev.in_flight(StreamId{0}) == 0);
}

TEST_CASE("stream priority: the urgent op takes what it can use", "[sim][device][priority]") {
  // One context. High-priority stream (1) op H demand 1, 3 ms; low (0) op L demand 1, 2 ms.
  // H takes the whole GPU: ends at 3 ms; L is starved until then and ends at 5 ms.
  {
    Rig r(gpu_profile());
    r.context(0);
    r.stream(0, 0, 1);
    r.stream(1, 0, 0);
    r.dev.submit(compute(1, 0, ms_to_ns(3)));
    r.dev.submit(compute(2, 1, ms_to_ns(2)));
    r.rt.run();
    CHECK(r.obs.end(1) == 3'000'000);
    CHECK(r.obs.end(2) == 5'000'000);
  }
  // H demand 0.6 leaves 0.4 to L (demand 1 -> rate 0.4): by 3 ms L did 1.2 ms of its 2 ms
  // and finishes the last 0.8 ms alone: ends at 3.8 ms. H is at solo speed: 3 ms.
  Rig r(gpu_profile());
  r.context(0);
  r.stream(0, 0, 1);
  r.stream(1, 0, 0);
  r.dev.submit(compute(1, 0, ms_to_ns(3), 0.6));
  r.dev.submit(compute(2, 1, ms_to_ns(2), 1.0));
  r.rt.run();
  CHECK(r.obs.end(1) == 3'000'000);
  CHECK(r.obs.end(2) == 3'800'000);
}

TEST_CASE("MPS contexts share the GPU spatially with mps_efficiency", "[sim][device][mps]") {
  // Two MPS contexts, one stream each, ops of 10 ms, mps_efficiency 0.8.
  // Demand 1 each: share 0.5 -> rate 0.5 * 0.8 = 0.4 -> 2 * solo / eff = 25 ms.
  // Demand 0.4 each: shares 0.4 -> rate 1 * 0.8 -> solo / eff = 12.5 ms.
  DeviceProfile p = gpu_profile();
  p.mps_efficiency = 0.8;
  p.concurrent_efficiency = 0.5;  // must not apply to MPS
  for (double demand : {1.0, 0.4}) {
    Rig r(p);
    r.context(0, true);
    r.context(1, true);
    r.stream(0, 0);
    r.stream(1, 1);
    r.dev.submit(compute(1, 0, ms_to_ns(10), demand));
    r.dev.submit(compute(2, 1, ms_to_ns(10), demand));
    r.rt.run();
    const TimeNs expected = demand == 1.0 ? 25'000'000 : 12'500'000;
    CHECK(r.obs.end(1) == expected);
    CHECK(r.obs.end(2) == expected);
    CHECK(r.dev.context_switches() == 0);
  }
}

TEST_CASE("streams of one context interfere with concurrent_efficiency", "[sim][device]") {
  // One non-MPS context, two streams, demand 0.4 each, 10 ms, concurrent_efficiency 0.8:
  // both fit (0.8 <= 1) but interfere: rate 0.8 -> 12.5 ms.
  DeviceProfile p = gpu_profile();
  p.concurrent_efficiency = 0.8;
  Rig r(p);
  r.streams(2);
  r.dev.submit(compute(1, 0, ms_to_ns(10), 0.4));
  r.dev.submit(compute(2, 1, ms_to_ns(10), 0.4));
  r.rt.run();
  CHECK(r.obs.end(1) == 12'500'000);
  CHECK(r.obs.end(2) == 12'500'000);
}

TEST_CASE("time slicing between two contexts, free switches", "[sim][device][timeslice]") {
  // Two non-MPS contexts, each one compute op of 100 ms, timeslice 1 ms, switch cost 0.
  // Slices alternate A B A B ...: A's 100th slice is slice 199 -> A ends at 199 ms; B's
  // 100th is slice 200 -> B ends at 200 ms. 200 "timeslice" notes (the first activation at 0
  // included) alternate 0, 1, 0, 1 at 0, 1, 2, ... ms; 199 switches.
  Rig r(gpu_profile());
  r.context(0);
  r.context(1);
  r.stream(0, 0);
  r.stream(1, 1);
  r.dev.submit(compute(1, 0, ms_to_ns(100)));
  r.dev.submit(compute(2, 1, ms_to_ns(100)));
  r.rt.run();
  CHECK(r.obs.end(1) == ms_to_ns(199));
  CHECK(r.obs.end(2) == ms_to_ns(200));
  REQUIRE(r.obs.slices.size() == 200);
  for (std::size_t i = 0; i < r.obs.slices.size(); ++i) {
    CHECK(r.obs.slices[i].first == ms_to_ns(static_cast<std::int64_t>(i)));
    CHECK(r.obs.slices[i].second == static_cast<std::int64_t>(i % 2));
  }
  CHECK(r.dev.context_switches() == 199);
}

TEST_CASE("time slicing with a context-switch cost", "[sim][device][timeslice]") {
  // As above with c = 50 us per switch, during which no compute progresses. 199 switches in
  // all; A ends after 199 slices and 198 switches: 199 ms + 198 * 50 us = 208.9 ms; B after
  // 200 slices and 199 switches: 200 ms + 199 * 50 us = 209.95 ms.
  DeviceProfile p = gpu_profile();
  p.context_switch_ns = us_to_ns(50);
  Rig r(p);
  r.context(0);
  r.context(1);
  r.stream(0, 0);
  r.stream(1, 1);
  r.dev.submit(compute(1, 0, ms_to_ns(100)));
  r.dev.submit(compute(2, 1, ms_to_ns(100)));
  r.rt.run();
  CHECK(r.obs.end(1) == 208'900'000);
  CHECK(r.obs.end(2) == 209'950'000);
  CHECK(r.dev.context_switches() == 199);
  REQUIRE(r.obs.slices.size() >= 2);
  CHECK(r.obs.slices[1] == std::pair<TimeNs, std::int64_t>{1'050'000, 1});
}

TEST_CASE("a lone context runs unbounded, coming back to another costs a switch",
          "[sim][device][timeslice]") {
  // Switch cost 50 us. Context 0 runs a 5 ms op alone (no slicing: ends at 5 ms). At 6 ms
  // context 1 submits 1 ms: the GPU last held context 0 -> switch: 6.05..7.05 ms. At 8 ms
  // context 1 submits again: it held the GPU last -> no switch: 8..9 ms. Copies and host ops
  // of context 0 meanwhile are not time-sliced.
  DeviceProfile p = gpu_profile();
  p.context_switch_ns = us_to_ns(50);
  Rig r(p);
  r.context(0);
  r.context(1);
  r.stream(0, 0);
  r.stream(1, 1);
  r.stream(2, 0);
  r.dev.submit(compute(1, 0, ms_to_ns(5)));
  r.at(ms_to_ns(6), [&] {
    r.dev.submit(compute(2, 1, ms_to_ns(1)));
    r.dev.submit(host(3, 2, ms_to_ns(1)));
  });
  r.at(ms_to_ns(8), [&] { r.dev.submit(compute(4, 1, ms_to_ns(1))); });
  r.rt.run();
  CHECK(r.obs.end(1) == ms_to_ns(5));
  CHECK(r.obs.end(2) == 7'050'000);
  CHECK(r.obs.end(3) == 7'000'000);
  CHECK(r.obs.end(4) == 9'000'000);
  CHECK(r.dev.context_switches() == 1);
}

TEST_CASE("a newcomer preempts a context whose slice has expired", "[sim][device][timeslice]") {
  // Slice 1 ms, free switches. Context 0 runs A (10 ms) alone from 0: its slice expired at
  // 1 ms but nobody else wanted the GPU. B (context 1, 1 ms) arrives at 5 ms: the slice is
  // measured from when context 0 got the GPU (0), so B gets it at once: 5..6 ms. A resumes
  // with 5 ms left: ends at 11 ms.
  Rig r(gpu_profile());
  r.context(0);
  r.context(1);
  r.stream(0, 0);
  r.stream(1, 1);
  r.dev.submit(compute(1, 0, ms_to_ns(10)));
  r.at(ms_to_ns(5), [&] { r.dev.submit(compute(2, 1, ms_to_ns(1))); });
  r.rt.run();
  CHECK(r.obs.end(2) == ms_to_ns(6));
  CHECK(r.obs.end(1) == ms_to_ns(11));
  CHECK(r.dev.context_switches() == 2);
}

TEST_CASE("a context without runnable compute loses the GPU at once", "[sim][device][timeslice]") {
  // Free switches, slice 1 ms. Context 0: A 0.3 ms then nothing. Context 1: B 2 ms. The GPU
  // goes to context 0 first (registration order); when A ends at 0.3 ms context 1 gets it
  // right away: B ends at 2.3 ms.
  Rig r(gpu_profile());
  r.context(0);
  r.context(1);
  r.stream(0, 0);
  r.stream(1, 1);
  r.dev.submit(compute(1, 0, us_to_ns(300)));
  r.dev.submit(compute(2, 1, ms_to_ns(2)));
  r.rt.run();
  CHECK(r.obs.end(1) == 300'000);
  CHECK(r.obs.end(2) == 2'300'000);
}

TEST_CASE("a CPU device water-fills its cores without time slicing", "[sim][device][cpu]") {
  // CPU, two contexts (no slicing on a CPU). P: demand 0.5, 10 ms; Q: demand 1, 20 ms.
  // Water-filling capacity 1: P gets 0.5 (rate 1), Q 0.5 (rate 0.5). P ends at 10 ms; Q did
  // 5 ms and runs its 15 ms left alone: ends at 25 ms. Copies are rejected on a CPU.
  Rig r(cpu_profile());
  r.context(0);
  r.context(1);
  r.stream(0, 0);
  r.stream(1, 1);
  r.dev.submit(compute(1, 0, ms_to_ns(10), 0.5));
  r.dev.submit(compute(2, 1, ms_to_ns(20), 1.0));
  r.rt.run();
  CHECK(r.obs.end(1) == ms_to_ns(10));
  CHECK(r.obs.end(2) == ms_to_ns(25));
  CHECK_THROWS_AS(r.dev.submit(copy(3, 0, OpKind::CopyH2D, 1024)), std::logic_error);
}

TEST_CASE("the observer may re-enter the device from on_op_finished", "[sim][device]") {
  // Streams 0 and 1, demand 1. A (0.5 ms, stream 0) and B (job 7, 10 ms, stream 1) share the
  // GPU at rate 0.5: A ends at 1 ms. From inside A's on_op_finished the observer submits C
  // (2 ms) on stream 0 and aborts job 7: B is Aborted at 1 ms, reported before abort()
  // returned, and C runs alone: 1..3 ms.
  Rig r(gpu_profile());
  r.streams(2);
  r.dev.submit(compute(1, 0, us_to_ns(500), 1.0));
  r.dev.submit(compute(2, 1, ms_to_ns(10), 1.0, 7));
  r.obs.after_finish = [&](const OpRecord& rec) {
    if (rec.op != OpId{1}) return;
    r.dev.submit(compute(3, 0, ms_to_ns(2)));
    CHECK(r.dev.abort(JobId{7}) == 1);
    CHECK(r.obs.status(2) == OpStatus::Aborted);
  };
  r.rt.run();
  CHECK(r.obs.end(1) == 1'000'000);
  CHECK(r.obs.end(2) == 1'000'000);
  CHECK(r.obs.start(3) == 1'000'000);
  CHECK(r.obs.end(3) == 3'000'000);
}

TEST_CASE("zero-length ops start and finish at once, in order", "[sim][device]") {
  // A compute op of 0 ns and a 0-byte copy with latency 10 us: the first starts and ends at 0,
  // the second (same stream) starts at 0 and ends at 10 us. Starts precede ends.
  Rig r(gpu_profile());
  r.streams(1);
  r.dev.submit(compute(1, 0, 0));
  r.dev.submit(copy(2, 0, OpKind::CopyH2D, 0));
  r.rt.run();
  CHECK(r.obs.end(1) == 0);
  CHECK(r.obs.start(2) == 0);
  CHECK(r.obs.end(2) == 10'000);
  CHECK(r.obs.events == std::vector<std::string>{"start 1", "end 1", "start 2", "end 2"});
}

TEST_CASE("SimDevice validates its inputs", "[sim][device]") {
  Rig r(gpu_profile());
  r.context(0);
  CHECK_THROWS_AS(r.context(0), std::invalid_argument);
  CHECK_THROWS_AS(r.stream(0, 9), std::invalid_argument);
  r.stream(0, 0);
  CHECK_THROWS_AS(r.stream(0, 0), std::invalid_argument);
  CHECK_THROWS_AS(r.stream(1, 0, 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(r.dev.submit(compute(1, 5, 10)), std::invalid_argument);
  CHECK_THROWS_AS(r.dev.submit(compute(1, 0, 10, 0.0)), std::invalid_argument);
  CHECK_THROWS_AS(r.dev.submit(compute(1, 0, 10, 1.5)), std::invalid_argument);
  CHECK_THROWS_AS(r.dev.submit(compute(1, 0, -1)), std::invalid_argument);
  CHECK_THROWS_AS(r.dev.queued(StreamId{3}), std::invalid_argument);
  DeviceProfile bad = gpu_profile();
  bad.mps_efficiency = 0.0;
  CHECK_THROWS_AS(SimDevice(DeviceId{0}, bad, r.rt), std::invalid_argument);
  // A CPU profile has no link: pageable_factor 0 is fine there (as in traces/devices).
  DeviceProfile cpu = cpu_profile();
  cpu.pageable_factor = 0.0;
  CHECK_NOTHROW(SimDevice(DeviceId{1}, cpu, r.rt));
}

TEST_CASE("a mixed scenario is deterministic", "[sim][device]") {
  // Same inputs twice: identical records (bit-for-bit times), in the same order.
  auto scenario = [] {
    DeviceProfile p = gpu_profile();
    p.context_switch_ns = 7'777;
    p.concurrent_efficiency = 0.87;
    p.mps_efficiency = 0.93;
    Rig r(p);
    r.context(0);
    r.context(1, true);
    r.context(2, true);
    for (std::uint32_t s = 0; s < 6; ++s) r.stream(s, s % 3, static_cast<int>(s % 2));
    std::uint64_t id = 1;
    for (int k = 0; k < 30; ++k) {
      const auto s = static_cast<std::uint32_t>(k % 6);
      if (k % 4 == 3) {
        r.dev.submit(copy(id++, s, k % 8 == 3 ? OpKind::CopyH2D : OpKind::CopyD2H,
                          1'000'003 * static_cast<std::uint64_t>(k), k % 3 == 0));
      } else {
        r.dev.submit(compute(id++, s, 333'331 * (k + 1), 0.1 + 0.03 * k));
      }
    }
    r.rt.run();
    std::vector<TimeNs> out;
    for (const auto& [op, rec] : r.obs.finished) out.push_back(rec.finished_ns);
    out.push_back(static_cast<TimeNs>(r.dev.context_switches()));
    return std::make_pair(out, r.obs.events);
  };
  const auto a = scenario();
  const auto b = scenario();
  CHECK(a.first.size() == 31);
  CHECK(a == b);
}
