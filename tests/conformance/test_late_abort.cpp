// The engine's side of the abort semantics (device.hpp, D20): a killed job's memory goes back
// to the pool only when the device has reported the abort of its running ops. Platform
// "sim-late-abort" (registered here, test binary only) is "sim" with each device wrapped so
// that an op running when it is aborted is reported Aborted kLag later, as a CUDA GPU does
// while it finishes kernels already enqueued. (The wrapper lets the stream move on meanwhile,
// which a real device does not; the engine's memory accounting does not depend on it.)
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "gpumux/api/device.hpp"
#include "gpumux/api/platform.hpp"
#include "gpumux/api/policy.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/sim/sim_platform.hpp"
#include "test_support.hpp"

using namespace gpumux;

namespace {

constexpr DurationNs kLag = 500'000'000;  // longer than the profiles' process_reap_ns

class LateAbortDevice final : public Device, public DeviceObserver {
 public:
  LateAbortDevice(Device& inner, Runtime& runtime) : inner_(inner), runtime_(runtime) {}
  [[nodiscard]] DeviceId id() const noexcept override { return inner_.id(); }
  [[nodiscard]] const DeviceProfile& profile() const noexcept override { return inner_.profile(); }
  void set_observer(DeviceObserver* observer) noexcept override {
    outer_ = observer;
    inner_.set_observer(this);
  }
  void add_context(ContextId ctx, ContextOptions options) override {
    inner_.add_context(ctx, options);
  }
  void add_stream(StreamId stream, ContextId ctx, StreamOptions options) override {
    inner_.add_stream(stream, ctx, options);
  }
  void submit(const OpSpec& op) override { inner_.submit(op); }
  std::size_t drop_pending(JobId job) override { return inner_.drop_pending(job); }
  std::size_t abort(JobId job) override {
    aborting_ = true;
    const std::size_t n = inner_.abort(job);
    aborting_ = false;
    return n;
  }
  void dependencies_changed() override { inner_.dependencies_changed(); }
  [[nodiscard]] std::size_t queued(StreamId stream) const override { return inner_.queued(stream); }
  [[nodiscard]] std::size_t in_flight(StreamId stream) const override {
    return inner_.in_flight(stream);
  }

  void on_op_started(OpId op, TimeNs when_ns) override {
    running_.insert(op);
    outer_->on_op_started(op, when_ns);
  }
  void on_op_finished(const OpRecord& r) override {
    const bool was_running = running_.erase(r.op) > 0;
    if (aborting_ && was_running && r.status == OpStatus::Aborted) {
      late_.push_back(r);  // same lag for all: reported in this order
      runtime_.schedule_after(kLag, [this] {
        OpRecord x = late_.front();
        late_.pop_front();
        x.finished_ns = runtime_.now();
        outer_->on_op_finished(x);
      });
      return;
    }
    outer_->on_op_finished(r);
  }
  [[nodiscard]] bool is_complete(OpId op) const noexcept override {
    return outer_->is_complete(op);
  }
  void on_device_note(DeviceId d, TimeNs t, std::string_view what, std::int64_t v) override {
    outer_->on_device_note(d, t, what, v);
  }

 private:
  Device& inner_;
  Runtime& runtime_;
  DeviceObserver* outer_ = nullptr;
  bool aborting_ = false;
  std::set<OpId> running_;
  std::deque<OpRecord> late_;
};

class LateAbortPlatform final : public Platform {
 public:
  explicit LateAbortPlatform(const PlatformSetup& setup) : inner_(setup) {
    for (Device* d : inner_.devices()) {
      devices_.push_back(std::make_unique<LateAbortDevice>(*d, inner_.runtime()));
    }
  }
  [[nodiscard]] Runtime& runtime() noexcept override { return inner_.runtime(); }
  [[nodiscard]] std::vector<Device*> devices() noexcept override {
    std::vector<Device*> out;
    for (auto& d : devices_) out.push_back(d.get());
    return out;
  }
  [[nodiscard]] std::string describe() const override { return "sim-late-abort"; }
  [[nodiscard]] bool virtual_time() const noexcept override { return true; }

 private:
  SimPlatform inner_;
  std::vector<std::unique_ptr<LateAbortDevice>> devices_;
};

GPUMUX_REGISTER_PLATFORM("sim-late-abort", LateAbortPlatform,
                         "test only: sim, running ops report their abort 0.5 s late");

}  // namespace

TEST_CASE("a killed job's memory is freed when the device reports the abort", "[conformance]") {
  const nlohmann::json jobs = nlohmann::json::array({{{"name", "train"},
                                                      {"kind", "training"},
                                                      {"model", "resnet152"},
                                                      {"batch", 8},
                                                      {"arrival_s", 0.0},
                                                      {"iterations", 1000}},
                                                     {{"name", "infer"},
                                                      {"kind", "inference"},
                                                      {"model", "resnet50"},
                                                      {"batch", 8},
                                                      {"arrival_s", 0.0},
                                                      {"requests", {4.0}}}});
  auto doc = test::make_config("pipeswitch", {{"jobs", jobs}}, {"v100-pcie3x16"});
  doc["policy"]["params"] = {{"switching", "kill_restart"}};
  doc["horizon_s"] = 8.0;
  const DeviceProfile p =
      find_device_profile(test::source_dir() / "traces" / "devices", "v100-pcie3x16");
  REQUIRE(p.process_reap_ns < kLag);
  for (const std::string platform : {"sim", "sim-late-abort"}) {
    DYNAMIC_SECTION("on " << platform) {
      doc["platform"] = platform;
      const ExperimentResult r = test::run_config(doc);
      const std::uint32_t train = 0;
      TimeNs killed = -1, aborted_end = -1;
      for (const Event& e : r.log.events()) {
        if (e.kind == EventKind::Preempt && e.job == train && e.label == "kill") killed = e.t_ns;
        if (e.kind == EventKind::OpEnd && e.job == train && e.status == OpStatus::Aborted) {
          aborted_end = std::max(aborted_end, e.t_ns);
        }
      }
      REQUIRE(killed > 0);
      // sim reports at once (the reap decides); the late device 0.5 s later (the report does).
      CHECK(aborted_end == (platform == "sim" ? killed : killed + kLag));
      const TimeNs freed_at = std::max(killed + p.process_reap_ns, aborted_end);
      std::int64_t reaped = 0;
      for (const Event& e : r.log.events()) {
        if (e.kind != EventKind::Free || e.job != train || e.t_ns <= killed) continue;
        CHECK(e.t_ns >= freed_at);
        if (e.label == "reaped") {
          CHECK(e.t_ns == freed_at);
          reaped += e.a;
        }
      }
      CHECK(reaped > 0);
    }
  }
}

TEST_CASE("every policy keeps the invariants when aborts are reported late", "[conformance]") {
  const std::vector<std::string> devices{"v100-pcie3x16", "xeon-2x18"};
  std::vector<std::uint64_t> capacity;
  std::vector<bool> is_cpu;
  for (const auto& d : devices) {
    const DeviceProfile p = find_device_profile(test::source_dir() / "traces" / "devices", d);
    capacity.push_back(p.memory_bytes);
    is_cpu.push_back(p.kind == DeviceKind::Cpu);
  }
  for (const auto& policy : PolicyRegistry::instance().names()) {
    for (const auto& trace : test::standard_traces()) {
      DYNAMIC_SECTION(policy << " on " << trace) {
        auto doc = test::make_config(policy, {{"files", {trace}}}, devices);
        doc["platform"] = "sim-late-abort";
        const ExperimentResult r = test::run_config(doc);
        const auto violations = test::check_invariants(r, capacity, is_cpu, true);
        for (const auto& v : violations) UNSCOPED_INFO(v);
        CHECK(violations.empty());
        CHECK(r.run.jobs_unfinished == 0);
      }
    }
  }
}
