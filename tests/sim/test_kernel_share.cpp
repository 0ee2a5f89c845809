// Kernel-level sharing: the analytic kernel-wait model (kernel_share.hpp), as SimDevice uses
// it, against hand-computed times and against a per-kernel block scheduler replaying measured
// Orion V100 kernel profiles (traces/kernels/orion). Units: ns.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "block_scheduler.hpp"
#include "gpumux/io/csv_reader.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/sim/kernel_share.hpp"
#include "gpumux/sim/sim_device.hpp"
#include "gpumux/sim/sim_runtime.hpp"
#include "test_support.hpp"

using namespace gpumux;

namespace {

constexpr std::uint32_t kV100Sms = 80;

// Orion's CSV: Name,Profile,Memory_footprint,SM_usage,Duration (ns), read with the CSV reader
// gpumux reads every CSV with; the numbers are the last two fields.
std::vector<test::RefKernel> load_orion(const std::string& name) {
  const auto path = test::source_dir() / "traces" / "kernels" / "orion" / name;
  InputStream in(path, path.string(), std::uint64_t{1} << 30, InputKind::Trace);
  CsvReader reader(in);
  std::vector<std::string> fields;
  REQUIRE(reader.next(fields));  // header
  std::vector<test::RefKernel> out;
  while (reader.next(fields)) {
    REQUIRE(fields.size() >= 2);
    const auto sm = std::stoll(fields[fields.size() - 2]);
    const auto ns = std::stoll(fields.back());
    out.push_back({static_cast<std::uint32_t>(std::max<long long>(sm, 1)), ns});
  }
  return out;
}

// The analytic load of a kernel list run back to back (G = S: no host gaps).
KernelLoad load_of(const std::vector<test::RefKernel>& ks, int priority = 0) {
  double total = 0, full = 0, wave = 0;
  for (const auto& k : ks) {
    const double d = static_cast<double>(k.duration);
    total += d;
    if (k.blocks >= kV100Sms) {  // the formula of CostModel::op_kernels
      const double waves = std::ceil(static_cast<double>(k.blocks) / kV100Sms);
      const double full_waves = k.blocks >= waves * kV100Sms ? waves : waves - 1;
      const double blocking = full_waves * d / waves;
      full += blocking * blocking / 2;
      wave += full_waves * (d / waves) * (d / waves) / 2;
    }
  }
  return KernelLoad{total,        total,        static_cast<double>(ks.size()),
                    full / total, wave / total, priority};
}

// Mean latency of an inference pass started at `starts` offsets into a looping training
// stream, from the per-kernel reference.
double reference_latency(const std::vector<test::RefKernel>& inference,
                         const std::vector<test::RefKernel>& training, int inference_priority,
                         const std::vector<std::int64_t>& starts) {
  double sum = 0;
  for (const std::int64_t start : starts) {
    std::vector<test::RefStream> streams(2);
    streams[0].kernels = training;
    streams[0].loop = true;
    streams[1].kernels = inference;
    streams[1].priority = inference_priority;
    streams[1].start = start;
    const auto done = test::run_block_scheduler(streams, kV100Sms, start + 10'000'000'000);
    REQUIRE(done[1].size() == inference.size());
    sum += static_cast<double>(done[1].back() - start);
  }
  return sum / static_cast<double>(starts.size());
}

// A runtime, an observer that records finish times, and one GPU with two MPS contexts.
struct MpsRig final : DeviceObserver {
  MpsRig() : dev(DeviceId{0}, profile(), rt) {
    dev.set_observer(this);
    dev.add_context(ContextId{0}, {true});
    dev.add_context(ContextId{1}, {true});
  }
  static DeviceProfile profile() {
    DeviceProfile p;
    p.name = "test-gpu";
    p.kind = DeviceKind::Gpu;
    p.h2d_gbps = p.d2h_gbps = p.peer_gbps = 12.0;
    p.timeslice_ns = ms_to_ns(1);
    return p;  // mps_efficiency = concurrent_efficiency = 1
  }
  void on_op_started(OpId, TimeNs) override {}
  void on_op_finished(const OpRecord& r) override { end[raw(r.op)] = r.finished_ns; }
  [[nodiscard]] bool is_complete(OpId) const noexcept override { return true; }
  void on_device_note(DeviceId, TimeNs, std::string_view, std::int64_t) override {}

  SimRuntime rt;
  SimDevice dev;
  std::map<std::uint64_t, TimeNs> end;
};

OpSpec kernel_op(std::uint64_t id, std::uint32_t stream, DurationNs solo, DurationNs gpu,
                 double demand, std::uint32_t kernels, double wait, double wait_priority) {
  OpSpec op;
  op.id = OpId{id};
  op.job = JobId{static_cast<std::uint32_t>(id)};
  op.stream = StreamId{stream};
  op.kind = OpKind::Compute;
  op.solo_ns = solo;
  op.gpu_ns = gpu;
  op.demand = demand;
  op.kernels = kernels;
  op.kernel_wait_ns = wait;
  op.kernel_wait_priority_ns = wait_priority;
  return op;
}

}  // namespace

TEST_CASE("kernel waits: an inference op behind training, computed by hand", "[sim][kernels]") {
  // Training T: 10 ms, demand 1, 100 kernels, a kernel arriving while it runs waits 40 us
  // (10 us if of higher priority). Inference I: 1 ms, demand 0.1, 20 kernels, never blocks.
  // Equal priority: I's speed = 1 / (1 + 20 x 40 us / 1 ms) = 1 / 1.8; T's speed 1.
  // Capacity: I claims 0.1 / 1.8, T 1; water-filling gives I its claim, T the rest, 1 - 1/18.
  // I ends at 1.8 ms; T has done 1.8 x 17/18 = 1.7 ms of work by then, ends at 10.1 ms.
  SECTION("equal priority") {
    MpsRig r;
    r.dev.add_stream(StreamId{0}, ContextId{0}, StreamOptions{0, 1});
    r.dev.add_stream(StreamId{1}, ContextId{1}, StreamOptions{0, 1});
    r.dev.submit(kernel_op(1, 0, ms_to_ns(10), ms_to_ns(10), 1.0, 100, 40'000, 10'000));
    r.dev.submit(kernel_op(2, 1, ms_to_ns(1), ms_to_ns(1), 0.1, 20, 0, 0));
    r.rt.run();
    CHECK(r.end[2] == Approx(1'800'000).margin(2));
    CHECK(r.end[1] == Approx(10'100'000).margin(2));
  }
  SECTION("higher priority waits only for the running wave") {
    // I's speed = 1 / (1 + 20 x 10 us / 1 ms) = 1 / 1.2: ends at 1.2 ms; T did 1.2 - 0.1 = 1.1.
    MpsRig r;
    r.dev.add_stream(StreamId{0}, ContextId{0}, StreamOptions{0, 1});
    r.dev.add_stream(StreamId{1}, ContextId{1}, StreamOptions{1, 1});
    r.dev.submit(kernel_op(1, 0, ms_to_ns(10), ms_to_ns(10), 1.0, 100, 40'000, 10'000));
    r.dev.submit(kernel_op(2, 1, ms_to_ns(1), ms_to_ns(1), 0.1, 20, 0, 0));
    r.rt.run();
    CHECK(r.end[2] == Approx(1'200'000).margin(2));
    CHECK(r.end[1] == Approx(10'100'000).margin(2));
  }
  SECTION("a host-bound op hides part of its waits behind its launches") {
    // I: solo 1 ms of which the GPU is busy 0.5 ms (host-bound): it needs 0.5 + 0.8 = 1.3 ms
    // of device time, speed 1 / 1.3; it claims 0.1 x 0.5 / 1.3 of the GPU, T the rest.
    // I ends at 1.3 ms; T did 1.3 - 0.05 = 1.25 ms of work, ends at 10.05 ms.
    MpsRig r;
    r.dev.add_stream(StreamId{0}, ContextId{0}, StreamOptions{0, 1});
    r.dev.add_stream(StreamId{1}, ContextId{1}, StreamOptions{0, 1});
    r.dev.submit(kernel_op(1, 0, ms_to_ns(10), ms_to_ns(10), 1.0, 100, 40'000, 10'000));
    r.dev.submit(kernel_op(2, 1, ms_to_ns(1), us_to_ns(500), 0.1, 20, 0, 0));
    r.rt.run();
    CHECK(r.end[2] == Approx(1'300'000).margin(2));
    CHECK(r.end[1] == Approx(10'050'000).margin(2));
  }
}

TEST_CASE("kernel waits: two ops that block each other meet at the fixed point", "[sim][kernels]") {
  // Symmetric: S = G = 1 ms, K = 10, w = 50 us each: r = 1 / (1 + 0.5 r), so
  // r = (-1 + sqrt(3)) / 1 = 0.7320508...
  std::vector<KernelLoad> loads(2, KernelLoad{1e6, 1e6, 10, 5e4, 5e4, 0});
  std::vector<double> speeds(2);
  kernel_wait_speeds(loads, speeds);
  CHECK(speeds[0] == Approx(std::sqrt(3.0) - 1).epsilon(1e-9));
  CHECK(speeds[1] == Approx(std::sqrt(3.0) - 1).epsilon(1e-9));
  // No co-runner, or no kernel data: full speed.
  kernel_wait_speeds(std::span(loads).first(1), std::span(speeds).first(1));
  CHECK(speeds[0] == 1.0);
}

TEST_CASE("block scheduler: a kernel arriving at a random instant waits the mean residual",
          "[sim][kernels]") {
  // Training: back-to-back 100 us kernels filling all 80 SMs. One 10 us, 8-block kernel
  // arriving uniformly in [0, 100) us waits 100 - phase: 50 us on average (= d / 2, what
  // load_of computes), so it ends 60 us after its arrival on average.
  const std::vector<test::RefKernel> training{{80, 100'000}};
  const std::vector<test::RefKernel> one{{8, 10'000}};
  std::vector<std::int64_t> starts;
  for (int i = 0; i < 100; ++i) starts.push_back(1'000'000 + i * 1'000);
  CHECK(reference_latency(one, training, 0, starts) == Approx(60'000).margin(600));
  CHECK(load_of(training).wait_ns == Approx(50'000));
}

TEST_CASE("analytic kernel waits match per-kernel simulation on Orion's V100 profiles",
          "[sim][kernels]") {
  // ResNet-50 batch-4 inference (175 kernels, 6.5 ms) beside ResNet-50 batch-32 training
  // (946 kernels per iteration), both measured on a V100 by the Orion artifact. The reference
  // replays every kernel with block placement and no preemption; the analytic model sees only
  // each side's kernel count, time and residual. Starts spread over one training iteration.
  const auto inference = load_orion("resnet50_4_fwd");
  const auto training = load_orion("resnet50_32_fb1");
  REQUIRE(inference.size() == 175);
  REQUIRE(training.size() == 946);
  const double iteration =
      std::accumulate(training.begin(), training.end(), 0.0,
                      [](double a, const test::RefKernel& k) { return a + k.duration; });
  std::vector<std::int64_t> starts;
  for (int i = 0; i < 24; ++i) {
    starts.push_back(static_cast<std::int64_t>(iteration * (1 + i / 24.0)));
  }
  SECTION("one kernel arriving at a random instant waits the analytic residual") {
    // 8-block 10 us probes at 400 instants spread over an iteration: the mean wait is
    // training's kernel_wait_ns (118 us here) within 10 %.
    std::vector<std::int64_t> probes;
    for (int i = 0; i < 400; ++i) {
      probes.push_back(static_cast<std::int64_t>(iteration * (1 + i / 400.0)));
    }
    const std::vector<test::RefKernel> probe{{8, 10'000}};
    const double wait = reference_latency(probe, training, 0, probes) - 10'000;
    INFO("reference wait " << wait << " ns, analytic " << load_of(training).wait_ns << " ns");
    CHECK(load_of(training).wait_ns / wait == Approx(1.0).margin(0.10));
  }
  SECTION("a chain of dependent kernels: the analytic model is pessimistic, within the band") {
    // A pass's kernels arrive right after their predecessor, not at random instants: in the
    // reference, training blocks queued behind the finished kernel spread their retirements
    // and the next kernel finds SMs sooner. Measured here: the analytic latency is 1.54x the
    // reference at equal priority and 1.19x with a higher-priority inference stream; the
    // band docs/fidelity.md states is [1, 1.7].
    for (const int priority : {0, 1}) {
      const double reference = reference_latency(inference, training, priority, starts);
      std::vector<KernelLoad> loads{load_of(training, 0), load_of(inference, priority)};
      std::vector<double> speeds(2);
      kernel_wait_speeds(loads, speeds);
      const double analytic = loads[1].solo_ns / speeds[1];
      INFO("priority " << priority << ": solo " << loads[1].solo_ns << " ns, reference "
                       << reference << " ns, analytic " << analytic << " ns");
      CHECK(analytic / reference >= 1.0);
      CHECK(analytic / reference <= 1.7);
      // Both see a slowdown: training kernels hold the SMs.
      CHECK(reference > 1.3 * loads[1].solo_ns);
      if (priority == 0) CHECK(reference > 2 * loads[1].solo_ns);
    }
  }
}
