// The device contract of core/api/include/gpumux/api/device.hpp as one set of test bodies, compiled
// per platform (Ginkgo-style): a test file defines how to build its platform and expands
// GPUMUX_DEVICE_CONFORMANCE. Instantiated for sim and emulated (tests/conformance) and for
// cuda (tests/gpu, label gpu). Only orderings are checked, never durations: the same bodies
// hold in virtual and in wall-clock time.
//
// Thread rules: everything on the test's thread, which is the runtime thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "gpumux/api/device.hpp"
#include "gpumux/api/platform.hpp"
#include "gpumux/api/runtime.hpp"
#include "gpumux/model/device_profile.hpp"

namespace gpumux::conformance {

/// A platform under test and how to make ops it can run on its first device (a GPU).
struct DeviceRig {
  std::unique_ptr<Platform> platform;
  /// The kind of the "work" ops: Compute where a sleep-like compute op exists, else Host.
  OpKind work_kind = OpKind::Compute;
  [[nodiscard]] Device& device() const { return *platform->devices().at(0); }
  [[nodiscard]] Runtime& runtime() const { return platform->runtime(); }
};
using RigFactory = std::function<DeviceRig()>;

/// Records every notification and checks the observer rules of device.hpp as they arrive.
class ContractRecorder final : public DeviceObserver {
 public:
  explicit ContractRecorder(DeviceRig& rig) : rig_(rig) { rig.device().set_observer(this); }
  void on_op_started(OpId op, TimeNs when_ns) override {
    if (in_call_ != Call::None) violations.push_back("on_op_started from inside a device call");
    if (started.count(op) != 0) violations.push_back("started twice: " + id(op));
    if (finished.count(op) != 0) violations.push_back("started after its end: " + id(op));
    if (when_ns > rig_.runtime().now()) violations.push_back("start in the future: " + id(op));
    started[op] = when_ns;
    log.push_back("start " + id(op));
  }
  void on_op_finished(const OpRecord& r) override {
    if (in_call_ == Call::Submit || in_call_ == Call::Dependencies) {
      violations.push_back("on_op_finished from inside submit/dependencies_changed");
    }
    if (!finished.emplace(r.op, r).second) violations.push_back("reported twice: " + id(r.op));
    if (r.submitted_ns > r.started_ns || r.started_ns > r.finished_ns) {
      violations.push_back("times out of order: " + id(r.op));
    }
    if (r.status == OpStatus::Ok && started.count(r.op) == 0) {
      violations.push_back("finished Ok without a start: " + id(r.op));
    }
    if (r.status != OpStatus::Ok && started.count(r.op) == 0 && r.started_ns != r.finished_ns) {
      violations.push_back("never started but started != finished: " + id(r.op));
    }
    log.push_back("end " + id(r.op));
    if (after_finish) after_finish(r);
  }
  [[nodiscard]] bool is_complete(OpId op) const noexcept override {
    const auto it = finished.find(op);
    return it != finished.end() && it->second.status == OpStatus::Ok;
  }

  enum class Call { None, Submit, Drop, Abort, Dependencies };
  /// Device calls made through these wrappers are watched for forbidden re-entry.
  void submit(const OpSpec& op) {
    watched(Call::Submit, [&] { rig_.device().submit(op); });
  }
  std::size_t abort(JobId job) {
    std::size_t n = 0;
    watched(Call::Abort, [&] { n = rig_.device().abort(job); });
    return n;
  }
  std::size_t drop_pending(JobId job) {
    std::size_t n = 0;
    watched(Call::Drop, [&] { n = rig_.device().drop_pending(job); });
    return n;
  }
  void dependencies_changed() {
    watched(Call::Dependencies, [&] { rig_.device().dependencies_changed(); });
  }
  [[nodiscard]] std::size_t position(const std::string& entry) const {
    for (std::size_t i = 0; i < log.size(); ++i) {
      if (log[i] == entry) return i;
    }
    FAIL("not in the log: " << entry);
    return 0;
  }
  [[nodiscard]] const OpRecord& record(std::uint64_t op) const {
    const auto it = finished.find(OpId{op});
    if (it == finished.end()) FAIL("op " << op << " was never reported");
    return it->second;
  }

  std::map<OpId, TimeNs> started;
  std::map<OpId, OpRecord> finished;
  std::vector<std::string> log;
  std::vector<std::string> violations;
  std::function<void(const OpRecord&)> after_finish;

 private:
  static std::string id(OpId op) { return std::to_string(raw(op)); }
  template <class F>
  void watched(Call c, F f) {
    const Call outer = in_call_;
    in_call_ = c;
    f();
    in_call_ = outer;
  }
  DeviceRig& rig_;
  Call in_call_ = Call::None;
};

inline OpSpec work_op(const DeviceRig& rig, std::uint64_t id, std::uint32_t job,
                      std::uint32_t stream, DurationNs ns) {
  OpSpec op;
  op.id = OpId{id};
  op.job = JobId{job};
  op.device = rig.device().id();
  op.stream = StreamId{stream};
  op.kind = rig.work_kind;
  op.purpose = OpPurpose::Forward;
  op.solo_ns = ns;
  return op;
}

inline constexpr DurationNs kMs = 1'000'000;

/// One context, `n` streams (ids 0..n-1) with max_in_flight `depth`.
inline void add_streams(DeviceRig& rig, std::uint32_t n, std::uint32_t depth) {
  rig.device().add_context(ContextId{0}, {});
  for (std::uint32_t i = 0; i < n; ++i) {
    rig.device().add_stream(StreamId{i}, ContextId{0}, StreamOptions{0, depth});
  }
}

inline void fifo_within_a_stream(const RigFactory& make) {
  DeviceRig rig = make();
  ContractRecorder rec(rig);
  add_streams(rig, 1, 2);
  for (std::uint64_t i = 0; i < 5; ++i) rec.submit(work_op(rig, i, 1, 0, 2 * kMs));
  CHECK(rec.log.empty());  // nothing reported from inside submit()
  CHECK(rig.device().queued(StreamId{0}) + rig.device().in_flight(StreamId{0}) == 5);
  CHECK(rig.device().in_flight(StreamId{0}) <= 2);
  rig.runtime().run();
  for (std::uint64_t i = 0; i < 5; ++i) CHECK(rec.record(i).status == OpStatus::Ok);
  for (std::uint64_t i = 0; i + 1 < 5; ++i) {
    CHECK(rec.position("end " + std::to_string(i)) <
          rec.position("start " + std::to_string(i + 1)));
    CHECK(rec.record(i).finished_ns <= rec.record(i + 1).started_ns);
  }
  CHECK(rig.device().queued(StreamId{0}) + rig.device().in_flight(StreamId{0}) == 0);
  for (const auto& v : rec.violations) UNSCOPED_INFO(v);
  CHECK(rec.violations.empty());
}

inline void dependencies_across_streams(const RigFactory& make) {
  DeviceRig rig = make();
  ContractRecorder rec(rig);
  add_streams(rig, 2, 2);
  rec.submit(work_op(rig, 0, 1, 0, 5 * kMs));
  OpSpec dependent = work_op(rig, 1, 2, 1, 1 * kMs);
  dependent.after.add(OpId{0});
  rec.submit(dependent);
  rec.submit(work_op(rig, 2, 2, 1, 1 * kMs));  // behind the dependent op on its stream
  rig.runtime().run();
  for (std::uint64_t i = 0; i < 3; ++i) CHECK(rec.record(i).status == OpStatus::Ok);
  CHECK(rec.position("end 0") < rec.position("start 1"));
  CHECK(rec.record(0).finished_ns <= rec.record(1).started_ns);
  CHECK(rec.position("end 1") < rec.position("start 2"));  // FIFO behind a blocked head
  for (const auto& v : rec.violations) UNSCOPED_INFO(v);
  CHECK(rec.violations.empty());
}

/// A dependency on an op of another device: the head waits until is_complete() says so and
/// dependencies_changed() is called.
inline void dependency_released_by_dependencies_changed(const RigFactory& make) {
  DeviceRig rig = make();
  ContractRecorder rec(rig);
  add_streams(rig, 1, 1);
  OpSpec op = work_op(rig, 1, 1, 0, 1 * kMs);
  op.after.add(OpId{100});  // not an op of this device
  rec.submit(op);
  rig.runtime().schedule_after(2 * kMs, [&] {
    CHECK(rec.started.count(OpId{1}) == 0);
    OpRecord other;
    other.op = OpId{100};
    rec.finished[OpId{100}] = other;  // "completed elsewhere" (status Ok)
    rec.dependencies_changed();
  });
  rig.runtime().run();
  CHECK(rec.record(1).status == OpStatus::Ok);
  for (const auto& v : rec.violations) UNSCOPED_INFO(v);
  CHECK(rec.violations.empty());
}

/// abort(): queued ops reported Aborted before it returns; the running op reported when the
/// device has let go of it (device.hpp, abort semantics); nothing after it on its stream
/// starts before that report, so the engine may release its memory on the report.
inline void abort_queued_and_running(const RigFactory& make, bool stops_running) {
  DeviceRig rig = make();
  ContractRecorder rec(rig);
  add_streams(rig, 1, 2);
  const DurationNs long_ns = 2000 * kMs;
  for (std::uint64_t i = 0; i < 3; ++i) rec.submit(work_op(rig, i, 7, 0, long_ns));
  rec.submit(work_op(rig, 3, 8, 0, 1 * kMs));  // another job, behind them
  std::size_t aborted = 0;
  std::size_t reported_inside = 0;
  bool started_0 = false;
  // Abort once op 0 runs (polled: no callback is needed from the device for this).
  std::function<void()> poll = [&] {
    if (rec.started.count(OpId{0}) == 0) {
      rig.runtime().schedule_after(1 * kMs, poll);
      return;
    }
    started_0 = true;
    const std::size_t before = rec.finished.size();
    aborted = rec.abort(JobId{7});
    reported_inside = rec.finished.size() - before;
    CHECK(rig.device().queued(StreamId{0}) + rig.device().in_flight(StreamId{0}) == 1);
  };
  rig.runtime().schedule_after(1 * kMs, poll);
  rig.runtime().run();
  REQUIRE(started_0);
  CHECK(aborted == 3);
  CHECK(reported_inside >= 2);  // the queued ones (1 and 2) at least, synchronously
  for (std::uint64_t i = 0; i < 3; ++i) CHECK(rec.record(i).status == OpStatus::Aborted);
  for (std::uint64_t i = 1; i < 3; ++i) {
    CHECK(rec.started.count(OpId{i}) == 0);
    CHECK(rec.record(i).started_ns == rec.record(i).finished_ns);
  }
  const OpRecord& running = rec.record(0);
  CHECK(running.started_ns == rec.started.at(OpId{0}));
  if (stops_running) CHECK(running.finished_ns < running.started_ns + long_ns);
  // The op behind them runs, after the aborted op was reported: its memory was free by then.
  CHECK(rec.record(3).status == OpStatus::Ok);
  CHECK(rec.position("end 0") < rec.position("start 3"));
  CHECK(running.finished_ns <= rec.record(3).started_ns);
  for (const auto& v : rec.violations) UNSCOPED_INFO(v);
  CHECK(rec.violations.empty());
}

/// An issued op aborted in its set-up, before any start was reported: reported Aborted with
/// no on_op_started and started == finished (the recorder checks both), now or later.
inline void abort_before_start(const RigFactory& make) {
  DeviceRig rig = make();
  ContractRecorder rec(rig);
  add_streams(rig, 1, 1);
  OpSpec op = work_op(rig, 0, 7, 0, 2000 * kMs);
  op.setup_ns = 2000 * kMs;
  rec.submit(op);
  rec.submit(work_op(rig, 1, 8, 0, 1 * kMs));
  std::size_t aborted = 0;
  rig.runtime().schedule_after(5 * kMs, [&] { aborted = rec.abort(JobId{7}); });
  rig.runtime().run();
  CHECK(aborted == 1);
  CHECK(rec.record(0).status == OpStatus::Aborted);
  CHECK(rec.started.count(OpId{0}) == 0);
  CHECK(rec.record(0).started_ns == rec.record(0).finished_ns);
  CHECK(rec.record(1).status == OpStatus::Ok);
  CHECK(rec.position("end 0") < rec.position("start 1"));
  for (const auto& v : rec.violations) UNSCOPED_INFO(v);
  CHECK(rec.violations.empty());
}

/// drop_pending(): queued compute of the job reported Dropped before it returns; the issued
/// op runs to its end.
inline void drop_pending_spares_issued(const RigFactory& make) {
  DeviceRig rig = make();
  ContractRecorder rec(rig);
  add_streams(rig, 1, 1);
  for (std::uint64_t i = 0; i < 4; ++i) rec.submit(work_op(rig, i, 7, 0, 2 * kMs));
  CHECK(rec.drop_pending(JobId{7}) == 3);
  CHECK(rec.finished.size() == 3);
  for (std::uint64_t i = 1; i < 4; ++i) CHECK(rec.record(i).status == OpStatus::Dropped);
  rig.runtime().run();
  CHECK(rec.record(0).status == OpStatus::Ok);
  for (const auto& v : rec.violations) UNSCOPED_INFO(v);
  CHECK(rec.violations.empty());
}

/// Inside a notification the device's bookkeeping is done and it may be re-entered.
inline void callbacks_after_bookkeeping(const RigFactory& make) {
  DeviceRig rig = make();
  ContractRecorder rec(rig);
  add_streams(rig, 1, 1);
  std::vector<std::size_t> left;
  rec.after_finish = [&](const OpRecord& r) {
    left.push_back(rig.device().queued(StreamId{0}) + rig.device().in_flight(StreamId{0}));
    if (r.op == OpId{0}) rec.submit(work_op(rig, 9, 1, 0, 1 * kMs));  // re-entry
  };
  for (std::uint64_t i = 0; i < 3; ++i) rec.submit(work_op(rig, i, 1, 0, 1 * kMs));
  rig.runtime().run();
  // Each op has left its stream when it is reported; 9 joins after the first report.
  CHECK(left == std::vector<std::size_t>{2, 2, 1, 0});
  CHECK(rec.record(9).status == OpStatus::Ok);
  CHECK(rec.position("end 2") < rec.position("start 9"));
  for (const auto& v : rec.violations) UNSCOPED_INFO(v);
  CHECK(rec.violations.empty());
}

/// Reported times never decrease along a stream and never lie ahead of the runtime's clock.
inline void timestamps_monotone(const RigFactory& make) {
  DeviceRig rig = make();
  ContractRecorder rec(rig);
  add_streams(rig, 2, 2);
  std::vector<TimeNs> seen;
  rec.after_finish = [&](const OpRecord& r) {
    CHECK(r.finished_ns <= rig.runtime().now());
    seen.push_back(r.finished_ns);
  };
  for (std::uint64_t i = 0; i < 6; ++i) {
    rec.submit(work_op(rig, i, 1, static_cast<std::uint32_t>(i % 2), (1 + i % 3) * kMs));
  }
  rig.runtime().run();
  for (std::uint64_t i = 0; i + 2 < 6; ++i) {
    CHECK(rec.record(i).finished_ns <= rec.record(i + 2).started_ns);  // same stream
  }
  CHECK(seen.size() == 6);
  for (const auto& v : rec.violations) UNSCOPED_INFO(v);
  CHECK(rec.violations.empty());
}

/// An op of zero length still starts and finishes, in stream order.
inline void zero_length_op(const RigFactory& make) {
  DeviceRig rig = make();
  ContractRecorder rec(rig);
  add_streams(rig, 1, 2);
  rec.submit(work_op(rig, 0, 1, 0, 0));
  rec.submit(work_op(rig, 1, 1, 0, 1 * kMs));
  rec.submit(work_op(rig, 2, 1, 0, 0));
  rig.runtime().run();
  for (std::uint64_t i = 0; i < 3; ++i) {
    CHECK(rec.record(i).status == OpStatus::Ok);
    CHECK(rec.started.count(OpId{i}) == 1);
  }
  CHECK(rec.position("end 0") < rec.position("start 1"));
  CHECK(rec.position("end 1") < rec.position("start 2"));
  for (const auto& v : rec.violations) UNSCOPED_INFO(v);
  CHECK(rec.violations.empty());
}

}  // namespace gpumux::conformance

/// The suite for one platform: NAME (a string literal), TAGS (Catch tags), MAKE (a RigFactory
/// expression) and STOPS (whether abort() stops an issued op before its end).
#define GPUMUX_DEVICE_CONFORMANCE(NAME, TAGS, MAKE, STOPS)                                       \
  TEST_CASE("device contract (" NAME "): FIFO order within a stream", TAGS) {                    \
    gpumux::conformance::fifo_within_a_stream(MAKE);                                             \
  }                                                                                              \
  TEST_CASE("device contract (" NAME "): dependencies across streams", TAGS) {                   \
    gpumux::conformance::dependencies_across_streams(MAKE);                                      \
  }                                                                                              \
  TEST_CASE("device contract (" NAME "): dependencies_changed releases a foreign dependency",    \
            TAGS) {                                                                              \
    gpumux::conformance::dependency_released_by_dependencies_changed(MAKE);                      \
  }                                                                                              \
  TEST_CASE("device contract (" NAME "): abort of queued and running ops", TAGS) {               \
    gpumux::conformance::abort_queued_and_running(MAKE, STOPS);                                  \
  }                                                                                              \
  TEST_CASE("device contract (" NAME "): abort before the start was reported", TAGS) {           \
    gpumux::conformance::abort_before_start(MAKE);                                               \
  }                                                                                              \
  TEST_CASE("device contract (" NAME "): drop_pending spares issued ops", TAGS) {                \
    gpumux::conformance::drop_pending_spares_issued(MAKE);                                       \
  }                                                                                              \
  TEST_CASE("device contract (" NAME "): callbacks after bookkeeping, re-entry allowed", TAGS) { \
    gpumux::conformance::callbacks_after_bookkeeping(MAKE);                                      \
  }                                                                                              \
  TEST_CASE("device contract (" NAME "): timestamps monotone", TAGS) {                           \
    gpumux::conformance::timestamps_monotone(MAKE);                                              \
  }                                                                                              \
  TEST_CASE("device contract (" NAME "): a zero-length op", TAGS) {                              \
    gpumux::conformance::zero_length_op(MAKE);                                                   \
  }
