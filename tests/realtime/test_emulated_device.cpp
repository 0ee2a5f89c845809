// EmulatedDevice: the simulator's stream semantics in wall-clock time, with real threads.
#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "gpumux/backend/emulated_device.hpp"
#include "gpumux/backend/weight_fill.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "test_support.hpp"

using namespace gpumux;

namespace {

constexpr TimeNs kMs = 1'000'000;

DeviceProfile gpu_profile() {
  DeviceProfile p;
  p.name = "test-gpu";
  p.kind = DeviceKind::Gpu;
  p.memory_bytes = std::uint64_t{1} << 30;
  p.h2d_gbps = 1.0;  // 1 byte per ns: 1 MiB takes 1.05 ms
  p.d2h_gbps = 2.0;
  p.peer_gbps = 2.0;
  p.h2d_latency_ns = 200'000;
  p.d2h_latency_ns = 100'000;
  p.pageable_factor = 0.5;
  return p;
}

DeviceProfile cpu_profile() {
  DeviceProfile p;
  p.name = "test-cpu";
  p.kind = DeviceKind::Cpu;
  p.memory_bytes = std::uint64_t{1} << 30;
  return p;
}

// Records every notification; checks each runs on the runtime thread and each op ends once.
class Recorder final : public DeviceObserver {
 public:
  explicit Recorder(std::thread::id runtime_thread) : thread_(runtime_thread) {}
  void on_op_started(OpId op, TimeNs when_ns) override {
    check_thread();
    if (ended_.count(op) != 0) throw std::logic_error("start after end");
    if (!started_.emplace(op, when_ns).second) throw std::logic_error("started twice");
    if (start_hook_) start_hook_(op);
  }
  void on_op_finished(const OpRecord& r) override {
    check_thread();
    if (!ended_.emplace(r.op, r).second) throw std::logic_error("op reported twice");
    order_.push_back(r.op);
    if (hook_) hook_(r);
  }
  [[nodiscard]] bool is_complete(OpId op) const noexcept override {
    const auto it = ended_.find(op);
    return it != ended_.end() && it->second.status == OpStatus::Ok;
  }
  std::map<OpId, TimeNs> started_;
  std::map<OpId, OpRecord> ended_;
  std::vector<OpId> order_;
  std::function<void(const OpRecord&)> hook_;
  std::function<void(OpId)> start_hook_;
  int wrong_thread_ = 0;

 private:
  void check_thread() {
    if (std::this_thread::get_id() != thread_) ++wrong_thread_;
  }
  std::thread::id thread_;
};

EmulatedDeviceOptions small() {
  EmulatedDeviceOptions o;
  o.arena_bytes = std::uint64_t{32} << 20;
  return o;
}

struct Rig {
  RealRuntime rt;
  HostWeightStore store{std::size_t{8} << 20};
  EmulatedDevice dev;
  Recorder rec{std::this_thread::get_id()};
  explicit Rig(DeviceProfile p = gpu_profile(), EmulatedDeviceOptions o = small())
      : dev(DeviceId{0}, std::move(p), rt, store, o) {
    dev.set_observer(&rec);
    dev.add_context(ContextId{0}, {});
  }
};

OpSpec sleep_op(std::uint64_t id, std::uint32_t job, std::uint32_t stream, DurationNs solo) {
  OpSpec op;
  op.id = OpId{id};
  op.job = JobId{job};
  op.device = DeviceId{0};
  op.stream = StreamId{stream};
  op.kind = OpKind::Compute;
  op.purpose = OpPurpose::Forward;
  op.solo_ns = solo;
  return op;
}

const Model& zoo(const char* name) {
  static ModelCatalog catalog(test::source_dir() / "traces" / "models");
  return catalog.at(name);
}

}  // namespace

TEST_CASE("EmulatedDevice: an op of solo 20 ms takes at least 20 ms of wall time", "[realtime]") {
  Rig rig;
  rig.dev.add_stream(StreamId{0}, ContextId{0}, {0, 2});
  const auto t0 = std::chrono::steady_clock::now();
  rig.dev.submit(sleep_op(0, 0, 0, 20 * kMs));
  rig.rt.run();
  const auto wall = std::chrono::steady_clock::now() - t0;
  REQUIRE(rig.rec.ended_.count(OpId{0}) == 1);
  const OpRecord& r = rig.rec.ended_.at(OpId{0});
  CHECK(r.status == OpStatus::Ok);
  CHECK(r.duration_ns() >= 20 * kMs);
  CHECK(r.started_ns >= r.submitted_ns);
  CHECK(rig.rec.started_.at(OpId{0}) == r.started_ns);
  CHECK(wall >= std::chrono::milliseconds(20));
  CHECK(rig.rec.wrong_thread_ == 0);
  CHECK(rig.rt.pending() == 0);
}

TEST_CASE("EmulatedDevice: stream order and max_in_flight", "[realtime]") {
  Rig rig;
  rig.dev.add_stream(StreamId{0}, ContextId{0}, {0, 2});
  for (std::uint64_t i = 0; i < 5; ++i) rig.dev.submit(sleep_op(i, 0, 0, 3 * kMs));
  CHECK(rig.dev.in_flight(StreamId{0}) == 2);
  CHECK(rig.dev.queued(StreamId{0}) == 3);
  std::size_t max_in_flight_seen = 0;
  rig.rec.hook_ = [&](const OpRecord&) {
    max_in_flight_seen = std::max(max_in_flight_seen, rig.dev.in_flight(StreamId{0}));
  };
  rig.rt.run();
  REQUIRE(rig.rec.order_.size() == 5);
  for (std::uint64_t i = 0; i < 5; ++i) CHECK(rig.rec.order_[i] == OpId{i});
  for (std::uint64_t i = 1; i < 5; ++i) {
    // Only the head executes: an op starts after its predecessor on the stream finished.
    CHECK(rig.rec.ended_.at(OpId{i}).started_ns >= rig.rec.ended_.at(OpId{i - 1}).finished_ns);
  }
  CHECK(max_in_flight_seen <= 2);
  CHECK(rig.dev.in_flight(StreamId{0}) == 0);
  CHECK(rig.dev.queued(StreamId{0}) == 0);
  CHECK(rig.rec.wrong_thread_ == 0);
}

TEST_CASE("EmulatedDevice: streams overlap and dependencies cross streams", "[realtime]") {
  Rig rig;
  rig.dev.add_stream(StreamId{0}, ContextId{0}, {0, 1});
  rig.dev.add_stream(StreamId{1}, ContextId{0}, {0, 1});
  rig.dev.add_stream(StreamId{2}, ContextId{0}, {0, 1});
  rig.dev.submit(sleep_op(0, 0, 0, 60 * kMs));  // A
  OpSpec b = sleep_op(1, 1, 1, 5 * kMs);        // B waits for A
  b.after.add(OpId{0});
  rig.dev.submit(b);
  rig.dev.submit(sleep_op(2, 2, 2, 60 * kMs));  // C overlaps A
  rig.rt.run();
  const auto& r = rig.rec.ended_;
  REQUIRE(r.size() == 3);
  CHECK(r.at(OpId{1}).started_ns >= r.at(OpId{0}).finished_ns);
  CHECK(r.at(OpId{2}).started_ns < r.at(OpId{0}).finished_ns);  // concurrent streams overlap
  CHECK(r.at(OpId{0}).started_ns < r.at(OpId{2}).finished_ns);
}

TEST_CASE("EmulatedDevice: a dependency on another device is re-checked on dependencies_changed",
          "[realtime]") {
  Rig rig;
  rig.dev.add_stream(StreamId{0}, ContextId{0}, {0, 1});
  OpSpec op = sleep_op(1, 0, 0, kMs);
  op.after.add(OpId{99});  // "completes" elsewhere after 10 ms
  rig.dev.submit(op);
  rig.rt.schedule_at(10 * kMs, [&] {
    OpRecord other;
    other.op = OpId{99};
    rig.rec.ended_.emplace(OpId{99}, other);
    rig.dev.dependencies_changed();
  });
  rig.rt.run();
  REQUIRE(rig.rec.ended_.count(OpId{1}) == 1);
  CHECK(rig.rec.ended_.at(OpId{1}).started_ns >= 10 * kMs);
}

TEST_CASE("EmulatedDevice: drop_pending drops queued ops only and abort stops issued ones",
          "[realtime]") {
  SECTION("drop_pending") {
    Rig rig;
    rig.dev.add_stream(StreamId{0}, ContextId{0}, {0, 1});
    for (std::uint64_t i = 0; i < 4; ++i) rig.dev.submit(sleep_op(i, 7, 0, 5 * kMs));
    const std::size_t dropped = rig.dev.drop_pending(JobId{7});
    CHECK(dropped == 3);
    CHECK(rig.rec.ended_.size() == 3);  // reported synchronously
    for (std::uint64_t i = 1; i < 4; ++i) {
      CHECK(rig.rec.ended_.at(OpId{i}).status == OpStatus::Dropped);
    }
    rig.rt.run();
    REQUIRE(rig.rec.ended_.count(OpId{0}) == 1);
    CHECK(rig.rec.ended_.at(OpId{0}).status == OpStatus::Ok);  // the issued op ran to its end
    CHECK(rig.rec.ended_.at(OpId{0}).duration_ns() >= 5 * kMs);
  }
  SECTION("abort cancels the executing op at once") {
    Rig rig;
    rig.dev.add_stream(StreamId{0}, ContextId{0}, {0, 2});
    rig.dev.submit(sleep_op(0, 3, 0, 2000 * kMs));
    rig.dev.submit(sleep_op(1, 3, 0, 2000 * kMs));
    rig.dev.submit(sleep_op(2, 4, 0, 2 * kMs));  // another job, behind them on the stream
    std::size_t aborted = 0;
    bool running_reported_at_abort = true;
    rig.rec.start_hook_ = [&](OpId op) {
      if (op == OpId{0})
        rig.rt.schedule_after(10 * kMs, [&] {
          aborted = rig.dev.abort(JobId{3});
          // The queued op is reported at once; the running one only when its worker has let
          // go of it (device.hpp, abort semantics), which is never inside this callback.
          CHECK(rig.rec.ended_.count(OpId{1}) == 1);
          running_reported_at_abort = rig.rec.ended_.count(OpId{0}) == 1;
        });
    };
    const auto t0 = std::chrono::steady_clock::now();
    rig.rt.run();
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1000));
    CHECK(aborted == 2);
    CHECK_FALSE(running_reported_at_abort);
    const OpRecord& a = rig.rec.ended_.at(OpId{0});
    CHECK(a.status == OpStatus::Aborted);
    CHECK(a.started_ns < a.finished_ns);  // it had started
    CHECK(rig.rec.ended_.at(OpId{1}).status == OpStatus::Aborted);
    CHECK(rig.rec.ended_.at(OpId{2}).status == OpStatus::Ok);
    CHECK(rig.rec.ended_.at(OpId{2}).started_ns >= a.finished_ns);
  }
}

TEST_CASE("EmulatedDevice: drops and aborts racing with completions lose and repeat nothing",
          "[realtime]") {
  std::mt19937_64 rng(1234);
  for (int rep = 0; rep < 15; ++rep) {
    Rig rig;
    constexpr std::uint32_t kStreams = 4;
    for (std::uint32_t s = 0; s < kStreams; ++s) {
      rig.dev.add_stream(StreamId{s}, ContextId{0}, {0, 1 + s % 3});
    }
    std::uniform_int_distribution<DurationNs> dur(50'000, 1'500'000);
    std::uint64_t next = 0;
    // Ops of 6 jobs spread over the streams; some wait for earlier ops of their job.
    std::map<std::uint32_t, OpId> last_of_job;
    for (int i = 0; i < 60; ++i) {
      const std::uint32_t job = static_cast<std::uint32_t>(rng() % 6);
      OpSpec op = sleep_op(next++, job, static_cast<std::uint32_t>(rng() % kStreams), dur(rng));
      if (rng() % 3 == 0 && last_of_job.count(job) != 0) op.after.add(last_of_job[job]);
      last_of_job[job] = op.id;
      rig.dev.submit(op);
    }
    // Drops and aborts at random moments, while workers are finishing ops.
    for (int k = 0; k < 8; ++k) {
      const JobId job{static_cast<std::uint32_t>(rng() % 6)};
      const bool kill = rng() % 2 == 0;
      rig.rt.schedule_at(static_cast<TimeNs>(rng() % (8 * kMs)), [&rig, job, kill] {
        if (kill) {
          rig.dev.abort(job);
        } else {
          rig.dev.drop_pending(job);
        }
      });
    }
    // Resubmit from inside completions too (the engine does), on the completing stream.
    int resubmitted = 0;
    rig.rec.hook_ = [&](const OpRecord& r) {
      if (r.status == OpStatus::Ok && resubmitted < 10 && raw(r.op) % 5 == 0) {
        ++resubmitted;
        rig.dev.submit(sleep_op(next++, 9, raw(r.stream), 100'000));
      }
    };
    rig.rt.run(5000 * kMs);
    // Ops whose dependency was dropped stay blocked (as in the simulator); a kill clears them.
    for (std::uint32_t j = 0; j < 10; ++j) rig.dev.abort(JobId{j});
    rig.rt.run(5000 * kMs);
    INFO("repetition " << rep);
    CHECK(rig.rec.ended_.size() == next);  // every op reported, exactly once (else it threw)
    CHECK(rig.rec.wrong_thread_ == 0);
    CHECK(rig.rt.pending() == 0);
    // A dependency-blocked op never runs before what it waits for; a started op was reported
    // started before its end.
    for (const auto& [id, r] : rig.rec.ended_) {
      if (r.status == OpStatus::Ok) CHECK(rig.rec.started_.count(id) == 1);
      CHECK(r.finished_ns >= r.started_ns);
    }
    for (std::uint32_t s = 0; s < kStreams; ++s) {
      CHECK(rig.dev.queued(StreamId{s}) == 0);
      CHECK(rig.dev.in_flight(StreamId{s}) == 0);
    }
  }
}

TEST_CASE("EmulatedDevice: copies move the bytes and take at least latency + bytes/bandwidth",
          "[realtime]") {
  Rig rig;
  rig.dev.add_stream(StreamId{0}, ContextId{0}, {0, 1});
  const Model& m = zoo("resnet18");
  const std::uint32_t first = 3;
  const std::uint64_t bytes = std::uint64_t{3} << 20;  // 3 MiB: 3.15 ms at 1 GB/s
  const std::uint64_t dst_offset = std::uint64_t{5} << 20;
  OpSpec load;
  load.id = OpId{0};
  load.job = JobId{0};
  load.device = DeviceId{0};
  load.stream = StreamId{0};
  load.kind = OpKind::CopyH2D;
  load.purpose = OpPurpose::LoadWeights;
  load.model = &m;
  load.layers = LayerRange{first, m.layer_count()};
  load.bytes = bytes;
  load.weight_offset = dst_offset;
  rig.dev.submit(load);
  rig.rt.run();
  const OpRecord& r = rig.rec.ended_.at(OpId{0});
  REQUIRE(r.status == OpStatus::Ok);
  CHECK(r.duration_ns() >= 200'000 + static_cast<DurationNs>(bytes));  // 1 byte per ns

  // The arena holds the model's weights from the first layer's offset on.
  const std::uint64_t src_offset = m.weight_bytes(LayerRange{0, first});
  std::vector<std::byte> expect(bytes);
  const std::span<const std::byte> store = rig.store.weights(m);
  REQUIRE(src_offset + bytes <= store.size());
  std::memcpy(expect.data(), store.data() + src_offset, bytes);
  const auto* arena = static_cast<const std::byte*>(rig.dev.arena_base());
  CHECK(std::memcmp(arena + dst_offset, expect.data(), bytes) == 0);
  // And the store is what fill_weights() says it is.
  std::uint32_t word;
  std::memcpy(&word, store.data() + 4 * 1000, 4);
  CHECK(word == weight_word(seed_for("resnet18"), 1000));

  // Back to the host: D2H writes the host state buffer, paced at 2 GB/s.
  OpSpec save = load;
  save.id = OpId{1};
  save.kind = OpKind::CopyD2H;
  save.purpose = OpPurpose::MigrateState;
  save.source_offset = dst_offset;
  save.layer_offsets = nullptr;
  save.bytes = bytes;
  rig.dev.submit(save);
  rig.rt.run();
  const OpRecord& s = rig.rec.ended_.at(OpId{1});
  CHECK(s.duration_ns() >= 100'000 + static_cast<DurationNs>(bytes / 2));
  REQUIRE(rig.dev.host_state().size() >= bytes);
  CHECK(std::memcmp(rig.dev.host_state().data(), expect.data(), bytes) == 0);

  // Pageable copies run at pageable_factor x bandwidth.
  OpSpec slow = load;
  slow.id = OpId{2};
  slow.pageable = true;
  slow.bytes = std::uint64_t{1} << 20;
  rig.dev.submit(slow);
  rig.rt.run();
  CHECK(rig.rec.ended_.at(OpId{2}).duration_ns() >= 200'000 + 2 * (1 << 20));
}

TEST_CASE("EmulatedDevice: two concurrent copies share the link", "[realtime]") {
  Rig rig;
  rig.dev.add_stream(StreamId{0}, ContextId{0}, {0, 1});
  rig.dev.add_stream(StreamId{1}, ContextId{0}, {0, 1});
  const Model& m = zoo("resnet18");
  for (std::uint32_t s = 0; s < 2; ++s) {
    OpSpec load;
    load.id = OpId{s};
    load.job = JobId{s};
    load.device = DeviceId{0};
    load.stream = StreamId{s};
    load.kind = OpKind::CopyH2D;
    load.purpose = OpPurpose::LoadWeights;
    load.model = &m;
    load.layers = LayerRange{0, m.layer_count()};
    load.bytes = std::uint64_t{4} << 20;
    load.weight_offset = s * (std::uint64_t{8} << 20);
    rig.dev.submit(load);
  }
  rig.rt.run();
  const TimeNs end =
      std::max(rig.rec.ended_.at(OpId{0}).finished_ns, rig.rec.ended_.at(OpId{1}).finished_ns);
  const TimeNs begin =
      std::min(rig.rec.ended_.at(OpId{0}).started_ns, rig.rec.ended_.at(OpId{1}).started_ns);
  CHECK(end - begin >= 200'000 + 2 * (4 << 20));  // 8 MiB through one 1 GB/s link
}

TEST_CASE("EmulatedDevice: a CPU device runs real Eigen compute", "[realtime]") {
  Rig rig(cpu_profile());
  rig.dev.add_stream(StreamId{0}, ContextId{0}, {0, 1});
  const Model& m = zoo("resnet18");
  OpSpec op = sleep_op(0, 0, 0, 1);  // predicted 1 ns: the duration is the real compute
  op.model = &m;
  op.layers = LayerRange{0, 4};
  op.batch = 1;
  rig.dev.submit(op);
  OpSpec bwd = op;
  bwd.id = OpId{1};
  bwd.pass = Pass::Backward;
  bwd.purpose = OpPurpose::Backward;
  rig.dev.submit(bwd);
  OpSpec upd = op;
  upd.id = OpId{2};
  upd.pass = Pass::Update;
  upd.purpose = OpPurpose::Update;
  rig.dev.submit(upd);
  rig.rt.run();
  REQUIRE(rig.rec.ended_.size() == 3);
  // conv1 alone is 12544 x 147 x 64 multiply-adds: far more than a nanosecond.
  CHECK(rig.rec.ended_.at(OpId{0}).duration_ns() > 100'000);
  CHECK(rig.rec.ended_.at(OpId{1}).duration_ns() > 100'000);
  CHECK(rig.rec.ended_.at(OpId{2}).status == OpStatus::Ok);
  OpSpec copy = op;
  copy.id = OpId{3};
  copy.kind = OpKind::CopyH2D;
  CHECK_THROWS_AS(rig.dev.submit(copy), std::logic_error);
}

TEST_CASE("EmulatedDevice: time_scale shrinks emulated durations", "[realtime]") {
  EmulatedDeviceOptions o = small();
  o.time_scale = 0.1;
  Rig rig(gpu_profile(), o);
  rig.dev.add_stream(StreamId{0}, ContextId{0}, {0, 1});
  rig.dev.submit(sleep_op(0, 0, 0, 200 * kMs));
  rig.rt.run();
  const DurationNs d = rig.rec.ended_.at(OpId{0}).duration_ns();
  CHECK(d >= 20 * kMs);
  CHECK(d < 150 * kMs);
}

TEST_CASE("EmulatedDevice rejects bad input like SimDevice", "[realtime]") {
  Rig rig;
  rig.dev.add_stream(StreamId{0}, ContextId{0}, {0, 1});
  CHECK_THROWS_AS(rig.dev.add_stream(StreamId{0}, ContextId{0}, {0, 1}), std::invalid_argument);
  CHECK_THROWS_AS(rig.dev.add_stream(StreamId{1}, ContextId{5}, {0, 1}), std::invalid_argument);
  CHECK_THROWS_AS(rig.dev.add_stream(StreamId{2}, ContextId{0}, {0, 0}), std::invalid_argument);
  CHECK_THROWS_AS(rig.dev.submit(sleep_op(0, 0, 9, 1)), std::invalid_argument);
  OpSpec bad = sleep_op(0, 0, 0, 1);
  bad.demand = 0;
  CHECK_THROWS_AS(rig.dev.submit(bad), std::invalid_argument);
  CHECK_THROWS_AS(rig.dev.queued(StreamId{42}), std::invalid_argument);
}
