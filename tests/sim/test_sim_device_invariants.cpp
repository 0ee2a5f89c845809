// SimDevice under a random (fixed-seed) mix of ops, dependencies across two devices, drops and
// aborts, some issued from inside completion callbacks. Checks the invariants of the device
// contract rather than hand-computed times:
//  - every submitted op is reported finished exactly once (after a final abort of all jobs);
//  - an Ok op started after it was submitted and after every op it depends on finished;
//  - Ok ops of one stream finish in submission order and never overlap (stream order);
//  - the runtime's pending set holds at most one timer per device when idle;
//  - a device on a runtime that is not a SimRuntime (ordinary cancel-and-reschedule timers)
//    reports exactly what it reports with SimRuntime's re-armable timer.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "gpumux/model/device_profile.hpp"
#include "gpumux/sim/sim_device.hpp"
#include "gpumux/sim/sim_runtime.hpp"

using namespace gpumux;

namespace {

class Checker final : public DeviceObserver {
 public:
  void on_op_started(OpId op, TimeNs when_ns) override {
    REQUIRE(started.count(op) == 0);
    REQUIRE(finished.count(op) == 0);
    started[op] = when_ns;
  }
  void on_op_finished(const OpRecord& r) override {
    REQUIRE(finished.count(r.op) == 0);
    finished[r.op] = r;
    if (r.status == OpStatus::Ok) REQUIRE(started.count(r.op) == 1);
    if (hook) hook(r);
    for (SimDevice* d : devices) d->dependencies_changed();
  }
  // Dropped and aborted ops count as complete here, so that random drops do not leave
  // whole streams blocked behind their dependants (an engine avoids that by construction).
  [[nodiscard]] bool is_complete(OpId op) const noexcept override {
    return finished.count(op) != 0;
  }
  std::map<OpId, TimeNs> started;
  std::map<OpId, OpRecord> finished;
  std::vector<SimDevice*> devices;
  std::function<void(const OpRecord&)> hook;
};

// A Runtime that is not a SimRuntime: the devices then keep their timer by cancel and
// schedule_at instead of a re-armable one. Forwards everything to a SimRuntime.
class ForwardingRuntime final : public Runtime {
 public:
  explicit ForwardingRuntime(SimRuntime& rt) : rt_(rt) {}
  [[nodiscard]] TimeNs now() const noexcept override { return rt_.now(); }
  TimerId schedule_at(TimeNs when_ns, Callback cb) override {
    return rt_.schedule_at(when_ns, std::move(cb));
  }
  bool cancel(TimerId id) noexcept override { return rt_.cancel(id); }
  void post(Callback cb) override { rt_.post(std::move(cb)); }
  void run(TimeNs horizon_ns) override { rt_.run(horizon_ns); }
  void stop() noexcept override { rt_.stop(); }
  [[nodiscard]] std::uint64_t events_executed() const noexcept override {
    return rt_.events_executed();
  }

 private:
  SimRuntime& rt_;
};

struct Outcome {
  std::map<OpId, OpRecord> finished;
  std::map<OpId, TimeNs> started;
  std::uint64_t events = 0;
};

// Runs the random workload of `seed`, checking the invariants; the devices see `rt` directly
// or (forwarded) through a runtime that is not a SimRuntime. Arrival times and op durations
// are multiples of `grain` ns: a coarse grain makes device timers fall on the same instants as
// other events, where their order among them matters.
Outcome run_random_workload(std::uint64_t seed, bool forwarded, TimeNs grain = 1) {
  {
    SimRuntime rt;
    ForwardingRuntime forwarding(rt);
    Runtime& device_rt = forwarded ? static_cast<Runtime&>(forwarding) : rt;
    Checker obs;
    DeviceProfile gpu;
    gpu.name = "gpu";
    gpu.h2d_gbps = gpu.d2h_gbps = 12.0;
    gpu.peer_gbps = 8.0;
    gpu.h2d_latency_ns = gpu.d2h_latency_ns = 7'000;
    gpu.pageable_factor = 0.4;
    gpu.timeslice_ns = 1'024'000;
    gpu.context_switch_ns = 25'000;
    gpu.mps_efficiency = 0.9;
    gpu.concurrent_efficiency = 0.85;
    DeviceProfile cpu;
    cpu.name = "cpu";
    cpu.kind = DeviceKind::Cpu;
    SimDevice d0(DeviceId{0}, gpu, device_rt);
    SimDevice d1(DeviceId{1}, cpu, device_rt);
    obs.devices = {&d0, &d1};
    constexpr std::uint32_t kStreams = 8;
    for (SimDevice* d : obs.devices) {
      d->set_observer(&obs);
      for (std::uint32_t c = 0; c < 4; ++c) d->add_context(ContextId{c}, {c >= 2});
      for (std::uint32_t s = 0; s < kStreams; ++s) {
        d->add_stream(StreamId{s}, ContextId{s % 4},
                      StreamOptions{static_cast<int>(s % 3), 1 + s % 3});
      }
    }
    std::mt19937_64 rng(seed);
    auto uniform = [&](std::uint64_t n) { return rng() % n; };
    std::map<OpId, OpSpec> submitted;
    std::uint64_t next_id = 1;
    auto submit_random = [&] {
      OpSpec op;
      op.id = OpId{next_id++};
      op.job = JobId{static_cast<std::uint32_t>(uniform(6))};
      const bool on_cpu = uniform(4) == 0;
      op.device = DeviceId{static_cast<std::uint16_t>(on_cpu ? 1 : 0)};
      op.stream = StreamId{static_cast<std::uint32_t>(uniform(kStreams))};
      const auto k = uniform(on_cpu ? 2 : 5);
      op.kind = k == 0   ? OpKind::Compute
                : k == 1 ? OpKind::Host
                : k == 2 ? OpKind::CopyH2D
                : k == 3 ? OpKind::CopyD2H
                         : OpKind::CopyD2D;
      op.solo_ns = static_cast<DurationNs>(uniform(3'000'000)) / grain * grain;
      op.setup_ns = uniform(5) == 0 ? static_cast<DurationNs>(uniform(200'000)) / grain * grain : 0;
      op.demand = 0.05 + 0.95 * static_cast<double>(uniform(1000)) / 999.0;
      op.bytes = uniform(20'000'000);
      op.pageable = uniform(3) == 0;
      for (int i = 0; i < 2 && next_id > 10; ++i) {
        if (uniform(3) == 0) op.after.add(OpId{next_id - 2 - uniform(8)});
      }
      submitted[op.id] = op;
      obs.devices[on_cpu ? 1 : 0]->submit(op);
    };
    obs.hook = [&](const OpRecord& r) {
      if (raw(r.op) % 7 == 0 && next_id < 2000) submit_random();
      if (raw(r.op) % 53 == 0) d0.abort(JobId{static_cast<std::uint32_t>(uniform(6))});
      if (raw(r.op) % 31 == 0) d1.drop_pending(JobId{static_cast<std::uint32_t>(uniform(6))});
    };
    for (int i = 0; i < 1500; ++i) {
      rt.schedule_at(static_cast<TimeNs>(uniform(400'000'000)) / grain * grain, [&] {
        const auto what = uniform(20);
        if (what == 0) {
          d0.drop_pending(JobId{static_cast<std::uint32_t>(uniform(6))});
        } else if (what == 1) {
          d1.abort(JobId{static_cast<std::uint32_t>(uniform(6))});
        } else {
          submit_random();
        }
      });
    }
    rt.run();
    CHECK(rt.pending() == 0);
    // Ops still waiting (on dependencies that were dropped) are aborted: exactly once in all.
    obs.hook = nullptr;
    for (std::uint32_t j = 0; j < 6; ++j) {
      d0.abort(JobId{j});
      d1.abort(JobId{j});
    }
    rt.run();
    REQUIRE(obs.finished.size() == submitted.size());
    std::map<std::pair<std::uint16_t, std::uint32_t>, TimeNs> last_end;  // per (device, stream)
    std::size_t ok = 0;
    for (const auto& [id, rec] : obs.finished) {  // ids increase with submission
      const OpSpec& spec = submitted.at(id);
      REQUIRE(rec.finished_ns >= rec.started_ns);
      REQUIRE(rec.started_ns >= rec.submitted_ns);
      if (rec.status != OpStatus::Ok) continue;
      ++ok;
      REQUIRE(rec.started_ns == obs.started.at(id));
      REQUIRE(rec.started_ns >= rec.submitted_ns + spec.setup_ns);
      for (const OpId dep : spec.after) {
        REQUIRE(rec.started_ns >= obs.finished.at(dep).finished_ns);
      }
      auto& prev = last_end[{raw(spec.device), raw(spec.stream)}];
      REQUIRE(rec.started_ns - spec.setup_ns >= prev);
      prev = rec.finished_ns;
      if (spec.kind == OpKind::Host) REQUIRE(rec.duration_ns() == spec.solo_ns);
      if (spec.kind == OpKind::Compute) REQUIRE(rec.duration_ns() >= spec.solo_ns);
    }
    CHECK(ok > submitted.size() / 2);
    return Outcome{obs.finished, obs.started, rt.events_executed()};
  }
}

bool same_record(const OpRecord& a, const OpRecord& b) {
  return std::tie(a.op, a.job, a.device, a.stream, a.kind, a.purpose, a.status, a.submitted_ns,
                  a.started_ns, a.finished_ns) == std::tie(b.op, b.job, b.device, b.stream, b.kind,
                                                           b.purpose, b.status, b.submitted_ns,
                                                           b.started_ns, b.finished_ns);
}

}  // namespace

TEST_CASE("SimDevice keeps its contract under a random workload", "[sim][device][invariants]") {
  for (const auto& [seed, grain] : std::vector<std::pair<std::uint64_t, TimeNs>>{
           {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 100'000}, {6, 100'000}}) {
    const Outcome direct = run_random_workload(seed, false, grain);
    // The same run with the devices' timers as ordinary cancelled-and-rescheduled events: the
    // same reports at the same times, and the same number of executed callbacks.
    const Outcome forwarded = run_random_workload(seed, true, grain);
    REQUIRE(forwarded.events == direct.events);
    REQUIRE(forwarded.started == direct.started);
    REQUIRE(forwarded.finished.size() == direct.finished.size());
    for (const auto& [id, rec] : direct.finished)
      REQUIRE(same_record(forwarded.finished.at(id), rec));
  }
}
