// StreamQueues, the host side every device shares: slot reuse and tokens, FIFO issue under
// max_in_flight, stream registration and submit checks, the drop/abort walk by job, op records.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/stream_queues.hpp"

using gpumux::ContextId;
using gpumux::DeviceId;
using gpumux::IndexRing;
using gpumux::JobId;
using gpumux::OpId;
using gpumux::OpKind;
using gpumux::OpSpec;
using gpumux::StreamId;
using gpumux::StreamOptions;

namespace {

struct TestOp {
  OpSpec spec;
  int issued = 0;  ///< times on_issue saw it
};

using Queues = gpumux::StreamQueues<TestOp>;

struct NullObserver final : gpumux::DeviceObserver {
  void on_op_started(OpId, gpumux::TimeNs) override {}
  void on_op_finished(const gpumux::OpRecord&) override {}
  [[nodiscard]] bool is_complete(OpId) const noexcept override { return false; }
};

StreamOptions in_flight(std::uint32_t n, int priority = 0) {
  StreamOptions o;
  o.max_in_flight = n;
  o.priority = priority;
  return o;
}

// Queues an op of `job` (and `kind`) on stream index `si`; returns its slot.
std::uint32_t push(Queues& q, std::uint32_t si, std::uint32_t job, OpKind kind = OpKind::Compute) {
  const std::uint32_t slot = q.enqueue(si);
  q.op(slot).spec.job = JobId{job};
  q.op(slot).spec.kind = kind;
  return slot;
}

std::vector<std::uint32_t> contents(const IndexRing& r) {
  std::vector<std::uint32_t> v;
  for (std::size_t i = 0; i < r.size(); ++i) v.push_back(r[i]);
  return v;
}

const auto mark = [](TestOp& op) { ++op.issued; };

}  // namespace

TEST_CASE("IndexRing keeps FIFO order across growth and wrap-around", "[stream_queues]") {
  IndexRing r;
  for (std::uint32_t v = 0; v < 6; ++v) r.push_back(v);  // capacity 8
  r.pop_front();
  r.pop_front();                                          // head at 2: [2 3 4 5]
  for (std::uint32_t v = 6; v < 10; ++v) r.push_back(v);  // wraps: [2 .. 9], full
  CHECK(contents(r) == std::vector<std::uint32_t>{2, 3, 4, 5, 6, 7, 8, 9});
  r.push_back(10);  // grows to 16, unwrapped
  CHECK(r.front() == 2);
  CHECK(r.size() == 9);
  r.erase(5);
  std::vector<std::uint32_t> taken;
  r.remove_if([](std::uint32_t v) { return v % 3 == 0; },
              [&](std::uint32_t v) { taken.push_back(v); });
  CHECK(taken == std::vector<std::uint32_t>{3, 6, 9});
  CHECK(contents(r) == std::vector<std::uint32_t>{2, 4, 7, 8, 10});
}

TEST_CASE("StreamQueues reuses freed slots and gives every submission a new token",
          "[stream_queues]") {
  Queues q("TestDevice t");
  const std::uint32_t si = q.add_stream(StreamId{7}, in_flight(8), {});
  CHECK(si == 0);
  CHECK(push(q, si, 1) == 0);
  CHECK(push(q, si, 1) == 1);
  CHECK(push(q, si, 1) == 2);
  CHECK(q.token(0) == 1);
  CHECK(q.token(1) == 2);
  CHECK(q.token(2) == 3);

  // Take slot 1 out of the queue and free it: its token is dead.
  q.stream(si).host.erase(1);
  q.op(1).issued = 5;
  q.release(1);
  CHECK(q.token(1) == 0);
  CHECK_FALSE(q.current(1, 2));
  CHECK(q.current(0, 1));

  // The freed slot comes back first, reset, with a token never given before.
  const std::uint32_t again = push(q, si, 2);
  CHECK(again == 1);
  CHECK(q.op(1).issued == 0);
  CHECK(q.token(1) == 4);
  CHECK_FALSE(q.current(1, 2));  // a post about the old submission is ignored
  CHECK(q.current(1, 4));
  CHECK(push(q, si, 2) == 3);  // no free slot: the pool grows
  CHECK(q.token(3) == 5);
  CHECK(q.ops().size() == 4);
  CHECK(contents(q.stream(si).host) == std::vector<std::uint32_t>{0, 2, 1, 3});
}

TEST_CASE("StreamQueues issues in FIFO order up to max_in_flight", "[stream_queues]") {
  Queues q("TestDevice t");
  const std::uint32_t si = q.add_stream(StreamId{3}, in_flight(2), {});
  for (int i = 0; i < 5; ++i) push(q, si, 1);  // slots 0..4
  auto& s = q.stream(si);
  q.issue(s, mark);
  CHECK(contents(s.issued) == std::vector<std::uint32_t>{0, 1});
  CHECK(contents(s.host) == std::vector<std::uint32_t>{2, 3, 4});
  CHECK(q.queued(StreamId{3}) == 3);
  CHECK(q.in_flight(StreamId{3}) == 2);
  CHECK(q.op(0).issued == 1);
  CHECK(q.op(2).issued == 0);

  q.issue(s, mark);  // full: nothing moves
  CHECK(q.in_flight(StreamId{3}) == 2);
  CHECK(q.op(2).issued == 0);

  // The head finishes: the oldest queued op takes its place.
  s.issued.pop_front();
  q.release(0);
  q.issue(s, mark);
  CHECK(contents(s.issued) == std::vector<std::uint32_t>{1, 2});
  CHECK(contents(s.host) == std::vector<std::uint32_t>{3, 4});
  CHECK(q.op(2).issued == 1);
  CHECK(q.op(1).issued == 1);  // issued once only
}

TEST_CASE("StreamQueues registers streams and rejects bad ones", "[stream_queues]") {
  Queues q("TestDevice t");
  q.check_new_stream(StreamId{5}, ContextId{0}, true, in_flight(1));
  CHECK(q.add_stream(StreamId{5}, in_flight(1, 3), {}) == 0);
  CHECK(q.add_stream(StreamId{2}, in_flight(4), {}) == 1);
  CHECK(q.index(StreamId{5}) == 0);
  CHECK(q.index(StreamId{2}) == 1);
  CHECK(q.stream(0).id == StreamId{5});
  CHECK(q.stream(0).priority == 3);
  CHECK(q.stream(1).max_in_flight == 4);
  CHECK(q.streams().size() == 2);
  CHECK(q.queued(StreamId{2}) == 0);

  CHECK_THROWS_WITH(q.check_new_stream(StreamId{5}, ContextId{0}, true, in_flight(1)),
                    "TestDevice t: stream 5 added twice");
  CHECK_THROWS_WITH(q.check_new_stream(StreamId{6}, ContextId{9}, false, in_flight(1)),
                    "TestDevice t: stream 6: unknown context 9");
  CHECK_THROWS_WITH(q.check_new_stream(StreamId{6}, ContextId{0}, true, in_flight(0)),
                    "TestDevice t: stream 6: max_in_flight is 0");
  CHECK_THROWS_AS(q.index(StreamId{6}), std::invalid_argument);
  CHECK_THROWS_WITH(q.in_flight(StreamId{6}), "TestDevice t: unknown stream 6");
}

TEST_CASE("StreamQueues checks what a device accepts on submit", "[stream_queues]") {
  Queues q("TestDevice t");
  q.add_stream(StreamId{0}, in_flight(1), {});
  q.add_stream(StreamId{4}, in_flight(1), {});
  gpumux::DeviceProfile gpu;
  gpu.h2d_gbps = 12;  // no D2H or peer bandwidth
  gpumux::DeviceProfile cpu;
  cpu.kind = gpumux::DeviceKind::Cpu;
  NullObserver obs;
  const DeviceId dev{1};

  OpSpec op;
  op.id = OpId{42};
  op.device = dev;
  op.stream = StreamId{4};
  CHECK(q.check_submit(op, dev, gpu, &obs, true) == 1);

  CHECK_THROWS_AS(q.check_submit(op, dev, gpu, nullptr, true), std::logic_error);
  CHECK_THROWS_AS(q.check_submit(op, DeviceId{2}, gpu, &obs, true), std::invalid_argument);
  CHECK_THROWS_WITH(q.check_submit(op, DeviceId{2}, gpu, &obs, true),
                    "TestDevice t: op 42: submitted to the wrong device");
  OpSpec bad = op;
  bad.stream = StreamId{9};
  CHECK_THROWS_WITH(q.check_submit(bad, dev, gpu, &obs, true), "TestDevice t: unknown stream 9");
  bad = op;
  bad.setup_ns = -1;
  CHECK_THROWS_AS(q.check_submit(bad, dev, gpu, &obs, true), std::invalid_argument);
  bad = op;
  bad.demand = 0.0;
  CHECK_THROWS_AS(q.check_submit(bad, dev, gpu, &obs, true), std::invalid_argument);
  bad.demand = 1.5;
  CHECK_THROWS_WITH(q.check_submit(bad, dev, gpu, &obs, true),
                    "TestDevice t: op 42: demand 1.500000 outside (0, 1]");

  // Several faults: the first in the documented order is reported.
  bad.solo_ns = -5;  // and demand 1.5
  CHECK_THROWS_WITH(q.check_submit(bad, dev, gpu, &obs, true),
                    "TestDevice t: op 42: negative time");
  bad.stream = StreamId{9};
  CHECK_THROWS_WITH(q.check_submit(bad, dev, gpu, &obs, true), "TestDevice t: unknown stream 9");
  CHECK_THROWS_WITH(q.check_submit(bad, DeviceId{2}, gpu, &obs, true),
                    "TestDevice t: op 42: submitted to the wrong device");
  CHECK_THROWS_WITH(q.check_submit(bad, DeviceId{2}, gpu, nullptr, true),
                    "TestDevice t: op 42: no observer set");

  OpSpec copy = op;
  copy.kind = OpKind::CopyH2D;
  CHECK(q.check_submit(copy, dev, gpu, &obs, true) == 1);
  CHECK_THROWS_AS(q.check_submit(copy, dev, cpu, &obs, true), std::logic_error);
  CHECK_THROWS_WITH(q.check_submit(copy, dev, cpu, &obs, true),
                    "TestDevice t: op 42: a CPU device has no copy engine");
  copy.kind = OpKind::CopyD2H;
  CHECK_THROWS_WITH(q.check_submit(copy, dev, gpu, &obs, true),
                    "TestDevice t: op 42: the device profile has no bandwidth for it");
  // Without a link model the link is not checked; demand is checked on compute ops only.
  CHECK(q.check_submit(copy, dev, gpu, &obs, false) == 1);
  copy.demand = 0.0;
  CHECK(q.check_submit(copy, dev, gpu, &obs, false) == 1);
}

TEST_CASE("StreamQueues removes a job's queued ops on drop and its issued ones on abort",
          "[stream_queues]") {
  Queues q("TestDevice t");
  const std::uint32_t a = q.add_stream(StreamId{0}, in_flight(1), {});
  const std::uint32_t b = q.add_stream(StreamId{1}, in_flight(1), {});
  push(q, a, 1);                   // 0: issued
  push(q, a, 1);                   // 1: queued compute
  push(q, a, 2);                   // 2: another job
  push(q, a, 1, OpKind::CopyH2D);  // 3: queued copy
  push(q, b, 1);                   // 4: issued on b
  push(q, b, 1, OpKind::Host);     // 5: queued host op on b
  for (std::uint32_t si : {a, b}) q.issue(q.stream(si), mark);

  std::vector<std::uint32_t> taken;
  const auto take = [&](std::uint32_t slot) {
    taken.push_back(slot);
    q.release(slot);
  };

  SECTION("drop: queued compute and host ops only; copies and issued ops stay") {
    q.remove_job(JobId{1}, false, take, mark);
    CHECK(taken == std::vector<std::uint32_t>{1, 5});
    CHECK(contents(q.stream(a).issued) == std::vector<std::uint32_t>{0});
    CHECK(contents(q.stream(a).host) == std::vector<std::uint32_t>{2, 3});
    CHECK(contents(q.stream(b).issued) == std::vector<std::uint32_t>{4});
    CHECK(q.queued(StreamId{1}) == 0);
    CHECK(q.token(1) == 0);
    CHECK(q.token(3) != 0);
  }
  SECTION("abort: queued and issued ops of every kind, then the streams refill") {
    q.remove_job(JobId{1}, true, take, mark);
    // Stream by stream: the host queue first, then the issued list.
    CHECK(taken == std::vector<std::uint32_t>{1, 3, 0, 5, 4});
    CHECK(contents(q.stream(a).issued) == std::vector<std::uint32_t>{2});  // job 2 moves up
    CHECK(q.op(2).issued == 1);
    CHECK(q.queued(StreamId{0}) == 0);
    CHECK(q.in_flight(StreamId{1}) == 0);
    // Freed slots are reused, last freed first.
    CHECK(q.enqueue(b) == 4);
  }
  SECTION("another job's ops are untouched") {
    q.remove_job(JobId{3}, true, take, mark);
    CHECK(taken.empty());
    CHECK(q.in_flight(StreamId{0}) == 1);
    CHECK(q.queued(StreamId{0}) == 3);
  }
}

TEST_CASE("op_record reports an op from its spec, status and times", "[stream_queues]") {
  OpSpec spec;
  spec.id = OpId{9};
  spec.job = JobId{3};
  spec.device = DeviceId{2};
  spec.stream = StreamId{5};
  spec.kind = OpKind::CopyD2H;
  spec.purpose = gpumux::OpPurpose::MigrateState;
  spec.layers = {4, 7};
  const gpumux::OpRecord r = gpumux::op_record(spec, gpumux::OpStatus::Aborted, 100, 150, 400);
  CHECK(r.op == OpId{9});
  CHECK(r.job == JobId{3});
  CHECK(r.device == DeviceId{2});
  CHECK(r.stream == StreamId{5});
  CHECK(r.kind == OpKind::CopyD2H);
  CHECK(r.purpose == gpumux::OpPurpose::MigrateState);
  CHECK(r.status == gpumux::OpStatus::Aborted);
  CHECK(r.layers.first == 4);
  CHECK(r.layers.last == 7);
  CHECK(r.submitted_ns == 100);
  CHECK(r.started_ns == 150);
  CHECK(r.finished_ns == 400);
  CHECK(r.duration_ns() == 250);
}
