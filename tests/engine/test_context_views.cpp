// D18: policies see a job through JobView and ask Context (gpus(), ops_in_flight(job,
// device)); the single-GPU baselines find their GPU with gpus(), not DeviceId{0}.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "common/job_runner.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/api/policy.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/memory.hpp"
#include "test_support.hpp"

using namespace gpumux;

namespace {

// What the probe saw (test thread only).
struct Seen {
  std::vector<DeviceId> gpus;
  bool bad_device_throws = false;
  // right after load(): the copy is in flight
  std::size_t loading_layers = 0, layer_count = 0;
  std::uint32_t ops_on_gpu = 0, ops_via_view = 0, ops_on_cpu = 0, ops_total = 0;
  bool phase_waiting = false;
  // when the copy has ended
  std::size_t absent_after = 99, loading_after = 99;
  std::uint64_t bytes_after = 0, held_bytes = 0, in_use_bytes = 0;
  std::uint32_t ops_after = 99;
  bool fits_now = false, rest_fits = false, more_fits = true;
};
Seen g_seen;

// Loads each arriving job onto the first GPU, looks at it through the view, then rejects it.
class ViewProbe final : public Policy {
 public:
  explicit ViewProbe(const PolicyArgs&) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "test_view_probe"; }
  void on_start(Context& ctx) override {
    g_seen.gpus.assign(ctx.gpus().begin(), ctx.gpus().end());
    copy_ = ctx.streams().create_stream(ctx.streams().default_context(ctx.gpus().front()),
                                        StreamOptions{0, 1});
  }
  void on_job_arrival(Context& ctx, JobId job) override {
    const DeviceId gpu = ctx.gpus().front();
    try {
      (void)ctx.ops_in_flight(job, DeviceId{static_cast<std::uint16_t>(ctx.device_count())});
    } catch (const PolicyError&) {
      g_seen.bad_device_throws = true;
    }
    const JobView v = ctx.job(job);
    g_seen.phase_waiting = v.phase() == JobPhase::Waiting;
    (void)policies::load_whole(ctx, job, copy_);
    g_seen.layer_count = v.residency(gpu).layer_count();
    g_seen.loading_layers = v.residency(gpu).loading_layers();
    g_seen.ops_on_gpu = ctx.ops_in_flight(job, gpu);
    g_seen.ops_via_view = v.ops_in_flight(gpu);
    g_seen.ops_on_cpu = ctx.ops_in_flight(job, DeviceId{0});
    g_seen.ops_total = v.ops_in_flight();
  }
  void on_op_complete(Context& ctx, const OpRecord& r) override {
    const DeviceId gpu = ctx.gpus().front();
    const ResidencyView res = ctx.job(r.job).residency(gpu);
    g_seen.absent_after = res.absent_layers();
    g_seen.loading_after = res.loading_layers();
    g_seen.bytes_after = res.bytes();
    g_seen.held_bytes = ctx.memory().persistent_bytes(r.job);
    const MemoryStats m = ctx.memory().stats(gpu);
    g_seen.in_use_bytes = m.in_use_bytes;  // no activations held: the state only
    // The state sits at offset 0, the rest of the arena is one free block.
    const std::uint64_t rest = m.capacity_bytes - res.bytes();
    g_seen.fits_now = ctx.memory().fits(r.job, gpu);  // only the activations are missing
    g_seen.rest_fits = ctx.memory().fits_after(r.job, gpu, rest);
    g_seen.more_fits = ctx.memory().fits_after(r.job, gpu, rest + 1);
    g_seen.ops_after = ctx.ops_in_flight(r.job, gpu);
    ctx.reject(r.job, "probe done");
  }

 private:
  StreamId copy_{};
};
GPUMUX_REGISTER_POLICY("test_view_probe", ViewProbe, "test: reads jobs through JobView");

nlohmann::json one_training_job() {
  return {{"jobs",
           {{{"name", "t"},
             {"kind", "training"},
             {"model", "resnet50"},
             {"batch", 32},
             {"arrival_s", 0.0},
             {"iterations", 1}}}}};
}

}  // namespace

TEST_CASE("Context::gpus lists the GPU devices in order, JobView follows a load", "[engine]") {
  g_seen = Seen{};
  const auto r = test::run_config(test::make_config("test_view_probe", one_training_job(),
                                                    {"xeon-2x18", "v100-pcie3x16", "gtx1080ti"}));
  CHECK(r.run.jobs_rejected == 1);
  CHECK(g_seen.gpus == std::vector<DeviceId>{DeviceId{1}, DeviceId{2}});
  CHECK(g_seen.bad_device_throws);
  CHECK(g_seen.phase_waiting);
  // Issued: every layer Loading, one copy in flight on the GPU and none on the CPU.
  CHECK(g_seen.layer_count > 0);
  CHECK(g_seen.loading_layers == g_seen.layer_count);
  CHECK(g_seen.ops_on_gpu == 1);
  CHECK(g_seen.ops_via_view == 1);
  CHECK(g_seen.ops_on_cpu == 0);
  CHECK(g_seen.ops_total == 1);
  // Ended: all Resident; the state is held in one block rounded as the engine allocates.
  CHECK(g_seen.absent_after == 0);
  CHECK(g_seen.loading_after == 0);
  CHECK(g_seen.ops_after == 0);
  // Training holds weights, gradients and optimizer state: persistent_bytes, not load_bytes.
  CHECK(g_seen.bytes_after == round_to_allocation(g_seen.held_bytes));
  CHECK(g_seen.in_use_bytes == g_seen.bytes_after);
  // Placement answers fits/fits_after on the device's own memory: nothing is missing but the
  // activations, and after the (resident) state exactly the rest of the arena is one block.
  CHECK(g_seen.fits_now);
  CHECK(g_seen.rest_fits);
  CHECK_FALSE(g_seen.more_fits);
}

TEST_CASE("round_to_allocation is the engine's rounding", "[memory]") {
  CHECK(round_to_allocation(0) == 0);
  CHECK(round_to_allocation(1) == kAllocationAlignBytes);
  CHECK(round_to_allocation(kAllocationAlignBytes) == kAllocationAlignBytes);
  CHECK(round_to_allocation(kAllocationAlignBytes + 1) == 2 * kAllocationAlignBytes);
  BestFitPool pool(1 << 20);
  CHECK(pool.allocate(1000, "test").bytes == round_to_allocation(1000));
}

TEST_CASE("single-GPU baselines run on the first GPU wherever it is listed", "[policy]") {
  const std::vector<std::string> gpu_second{"xeon-2x18", "v100-pcie3x16"};
  std::vector<std::uint64_t> capacity;
  std::vector<bool> is_cpu;
  for (const std::string& name : gpu_second) {
    const DeviceProfile p = find_device_profile(test::source_dir() / "traces" / "devices", name);
    capacity.push_back(p.memory_bytes);
    is_cpu.push_back(p.kind == DeviceKind::Cpu);
  }
  for (const char* policy :
       {"exclusive", "ready_model", "inference_first", "stop_and_start", "time_slicing", "mps"}) {
    SECTION(policy) {
      const auto files = nlohmann::json{{"files", {test::standard_traces()[0]}}};
      // Before D18 these ran on DeviceId{0}, here the CPU; now every job runs on the GPU.
      const auto r = test::run_config(test::make_config(policy, files, gpu_second));
      CHECK(test::check_invariants(r, capacity, is_cpu, true).empty());
      CHECK(test::events_jsonl(r).find("needs a GPU") == std::string::npos);
      bool gpu_memory = false, cpu_memory = false;
      for (const Event& e : r.log.events()) {
        if (e.kind != EventKind::Alloc) continue;
        (e.device == 1 ? gpu_memory : cpu_memory) = true;
      }
      CHECK(gpu_memory);
      CHECK_FALSE(cpu_memory);
      // With no GPU at all, every job is rejected, naming the policy.
      const auto cpu = test::run_config(test::make_config(policy, files, {"xeon-2x18"}));
      CHECK(cpu.run.jobs_rejected == cpu.jobs.size());
      CHECK(test::events_jsonl(cpu).find(std::string(policy) + " needs a GPU device") !=
            std::string::npos);
    }
  }
}
