// Data-parallel training in the engine (ReplicaFacet::set_replicas, resize; D47): a test
// policy defined here trains one AlexNet job on w simulated V100s and checks, with numbers
// computed by hand from the cost model and the profile, that an iteration takes the compute
// of one GPU at ceil(batch / w) samples plus the ring all-reduce plus the update, that every
// replica holds its own activations, and that a resize pays stop + restart + reload once (what
// the commands refuse: test_data_parallel_refusals.cpp).
//
// Hand numbers (traces/devices/v100-pcie3x16.json): no NVLink (peer_gbps 9.6 GB/s = 76.8
// Gbit/s is not above the host link), so the ring's link is PCIe with NCCL's 5.7 us per step
// (topology.hpp); a ring of w GPUs all-reducing B bytes takes 2 (w - 1) / w x 8 B / 76.8 +
// 2 (w - 1) x 5700 ns (Patarasuk & Yuan; collective_cost.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "gpumux/api/event_fields.hpp"
#include "gpumux/api/policy.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/memory.hpp"
#include "gpumux/model/model.hpp"
#include "gpumux/model/resize_cost.hpp"
#include "test_support.hpp"

using namespace gpumux;
using gpumux::test::make_config;
using gpumux::test::run_config;

namespace {

constexpr const char* kGpu = "v100-pcie3x16";
constexpr std::uint32_t kBatch = 32;

// The test policy's settings (test thread only).
std::uint32_t g_width = 2;         // replicas at the job's arrival
std::uint64_t g_resize_after = 0;  // resize at the end of this iteration (0: never)
std::uint32_t g_resize_width = 2;  // ... to this many GPUs
DurationNs g_kill_delay_ns = 0;    // > 0: resize this long after that iteration's end instead

// Trains each training job on the first g_width GPUs: replicas set at arrival, the whole
// state loaded on each GPU's copy stream, then each iteration dispatched as three whole passes
// on the primary stream; optionally resized once at an iteration's end.
class DataParallel final : public Policy {
 public:
  explicit DataParallel(const PolicyArgs&) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "test_data_parallel"; }

  void on_start(Context& ctx) override {
    for (const DeviceId g : ctx.gpus()) {
      compute_.push_back(ctx.streams().create_stream(ctx.streams().default_context(g), {}));
      copy_.push_back(ctx.streams().create_stream(ctx.streams().default_context(g), {}));
    }
  }
  void on_job_arrival(Context& ctx, JobId job) override {
    ctx.replicas().set_replicas(job, std::span<const StreamId>(compute_).first(g_width));
    load_all(ctx, job, g_width, {});
    iteration(ctx, job);
  }
  void on_iteration_end(Context& ctx, JobId job) override {
    if (g_resize_after > 0 && !resized_ && ctx.job(job).iterations_done() == g_resize_after) {
      if (g_kill_delay_ns > 0) {
        resized_ = true;
        (void)ctx.set_timer(g_kill_delay_ns, raw(job));  // mid-way through the next iteration
      } else {
        resize(ctx, job);
      }
    }
    if (ctx.job(job).has_dispatchable_work()) iteration(ctx, job);
  }
  void on_timer(Context& ctx, TimerId, std::uint64_t tag) override {
    const JobId job{static_cast<std::uint32_t>(tag)};
    resize(ctx, job);
    iteration(ctx, job);
  }

 private:
  void load_all(Context& ctx, JobId job, std::uint32_t width, std::vector<OpHandle> after) {
    const LayerRange all{0, ctx.job(job).model().layer_count()};
    for (std::uint32_t i = 0; i < width; ++i)
      ctx.memory().load(job, copy_[i], all, {false, false, after});
  }
  void resize(Context& ctx, JobId job) {
    resized_ = true;
    const OpHandle restart =
        ctx.replicas().resize(job, std::span<const StreamId>(compute_).first(g_resize_width));
    load_all(ctx, job, g_resize_width, {restart});  // the checkpoint reload, after it
  }
  void iteration(Context& ctx, JobId job) {
    for (int pass = 0; pass < 3; ++pass) ctx.dispatch(job, compute_[0]);
  }

  std::vector<StreamId> compute_, copy_;
  bool resized_ = false;
};

GPUMUX_REGISTER_POLICY("test_data_parallel", DataParallel, "data-parallel test policy");

nlohmann::json training_job(std::uint64_t iterations) {
  return {{"name", "train"}, {"kind", "training"}, {"model", "alexnet"},
          {"batch", kBatch}, {"arrival_s", 0.0},   {"iterations", iterations}};
}

ExperimentResult run_dp(std::uint32_t width, std::uint64_t iterations, std::uint32_t gpus = 4) {
  g_width = width;
  nlohmann::json doc = make_config("test_data_parallel",
                                   {{"jobs", nlohmann::json::array({training_job(iterations)})}},
                                   std::vector<std::string>(gpus, kGpu));
  return run_config(doc);
}

struct Fixture {
  ModelCatalog catalog{test::source_dir() / "traces" / "models"};
  const Model& m = catalog.at("alexnet");
  DeviceProfile p = load_device_profile(test::source_dir() / "traces" / "devices" /
                                        (std::string(kGpu) + ".json"));
  CostModel cost{p, CostOptions{}};

  /// Solo compute of one GPU's iteration at `samples` per GPU (forward, backward, update).
  DurationNs compute_ns(std::uint32_t samples) const {
    const LayerRange all{0, m.layer_count()};
    return cost.op_kernels(m, all, samples, Pass::Forward, false).solo_ns() +
           cost.op_kernels(m, all, samples, Pass::Backward, false).solo_ns() +
           cost.update_kernels(m, Optimizer::Momentum).solo_ns();
  }
  /// The ring all-reduce of AlexNet's fp32 gradients over w V100s on PCIe, by hand.
  DurationNs allreduce_ns(std::uint32_t w) const {
    const double bytes = static_cast<double>(m.weight_bytes());
    const double gbit = 9.6 * 8.0;  // peer_gbps, GB/s -> Gbit/s (bits per ns)
    return std::llround(2.0 * (w - 1) / w * 8.0 * bytes / gbit + 2.0 * (w - 1) * 5700.0);
  }
};

/// The invariants every run keeps (test_support.hpp), on `gpus` V100s.
std::vector<std::string> violations(const ExperimentResult& r, std::size_t gpus) {
  const DeviceProfile p = find_device_profile(test::source_dir() / "traces" / "devices", kGpu);
  return test::check_invariants(r, std::vector<std::uint64_t>(gpus, p.memory_bytes),
                                std::vector<bool>(gpus, false), true);
}

std::vector<TimeNs> iteration_ends(const ExperimentResult& r) {
  std::vector<TimeNs> out;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::IterationEnd) out.push_back(e.t_ns);
  }
  return out;
}

std::size_t count_ops(const ExperimentResult& r, OpPurpose purpose) {
  return static_cast<std::size_t>(
      std::count_if(r.log.events().begin(), r.log.events().end(), [&](const Event& e) {
        return e.kind == EventKind::OpEnd && e.purpose == purpose && e.status == OpStatus::Ok;
      }));
}

}  // namespace

TEST_CASE("data-parallel iteration = compute at the per-GPU batch + all-reduce + update",
          "[data_parallel]") {
  const Fixture f;
  for (const std::uint32_t w : {2u, 4u}) {
    INFO("width " << w);
    const ExperimentResult r = run_dp(w, 3);
    REQUIRE(r.run.jobs_finished == 1);
    const std::vector<TimeNs> ends = iteration_ends(r);
    REQUIRE(ends.size() == 3);
    const std::uint32_t per_gpu = (kBatch + w - 1) / w;  // 16, 8
    const DurationNs expected = f.compute_ns(per_gpu) + f.allreduce_ns(w);
    // Iterations 2 and 3 start when the one before ends (the hook dispatches at once).
    CHECK(ends[1] - ends[0] == expected);
    CHECK(ends[2] - ends[1] == expected);
    // One all-reduce per replica and iteration; w forward, backward and update ops each.
    CHECK(count_ops(r, OpPurpose::AllReduce) == 3 * w);
    CHECK(count_ops(r, OpPurpose::Forward) == 3 * w);
    CHECK(count_ops(r, OpPurpose::Update) == 3 * w);
    // Each all-reduce starts once the slowest replica's backward pass has ended.
    std::map<std::uint64_t, TimeNs> ended;
    TimeNs last_backward = 0;
    for (const Event& e : r.log.events()) {
      if (e.kind == EventKind::OpEnd && e.purpose == OpPurpose::Backward) {
        last_backward = std::max(last_backward, e.t_ns);
      }
      if (e.kind == EventKind::OpStart && e.purpose == OpPurpose::AllReduce) {
        CHECK(e.t_ns >= last_backward);
      }
    }
  }
  // The hand numbers themselves: AlexNet's 244 MB of gradients over two and four GPUs.
  CHECK(f.allreduce_ns(2) > 20'000'000);
  CHECK(f.allreduce_ns(4) > f.allreduce_ns(2));
}

TEST_CASE("five replicas: the all-reduce waits for five backward passes through a barrier",
          "[data_parallel]") {
  // An op waits for at most four ops (DepList): five backward passes are joined by a barrier.
  const Fixture f;
  const ExperimentResult r = run_dp(5, 2, 5);
  REQUIRE(r.run.jobs_finished == 1);
  const std::vector<TimeNs> ends = iteration_ends(r);
  REQUIRE(ends.size() == 2);
  CHECK(ends[1] - ends[0] == f.compute_ns(7) + f.allreduce_ns(5));  // ceil(32 / 5) = 7
  // Per iteration, twice (before the all-reduce, at the end): a barrier over four of the five
  // ops, then one over it and the fifth.
  CHECK(count_ops(r, OpPurpose::Barrier) == 2 * 4);
}

TEST_CASE("with a cluster the all-reduce crosses the network between nodes", "[data_parallel]") {
  // 2 nodes x 2 V100s, 10 GbE (9.6 us per step) between them: a ring over all four GPUs
  // crosses the network, whose step is the longer: 2 x 3 / 4 x 8 B / 10 + 6 x 9600 ns.
  const Fixture f;
  g_width = 4;
  nlohmann::json doc = make_config("test_data_parallel",
                                   {{"jobs", nlohmann::json::array({training_job(2)})}}, {kGpu});
  doc.erase("devices");
  doc["cluster"] = {{"nodes", 2}, {"gpus_per_node", 2}, {"profile", kGpu}};
  const ExperimentResult r = run_config(doc);
  REQUIRE(r.run.jobs_finished == 1);
  const std::vector<TimeNs> ends = iteration_ends(r);
  REQUIRE(ends.size() == 2);
  const auto network =
      std::llround(2.0 * 3 / 4 * 8.0 * static_cast<double>(f.m.weight_bytes()) / 10.0 + 6 * 9600.0);
  CHECK(ends[1] - ends[0] == f.compute_ns(8) + network);
}

TEST_CASE("data-parallel activations are allocated on every replica at the per-GPU batch",
          "[data_parallel]") {
  const Fixture f;
  const ExperimentResult r = run_dp(4, 1);
  REQUIRE(r.run.jobs_finished == 1);
  std::map<std::uint16_t, std::int64_t> activations;
  std::map<std::uint16_t, std::int64_t> state;
  for (const Event& e : r.log.events()) {
    if (e.kind != EventKind::Alloc) continue;
    if (e.label == "activations") activations[e.device] += alloc_bytes(e);
    if (e.label != "activations") state[e.device] += alloc_bytes(e);
  }
  REQUIRE(activations.size() == 4);
  const auto per_gpu = static_cast<std::int64_t>(
      round_to_allocation(f.m.training_activation_bytes_per_sample() * 8));
  for (const auto& [dev, bytes] : activations) {
    INFO("device " << dev);
    CHECK(bytes == per_gpu);
    // Weights, gradients and momentum: 3 x weight bytes on every GPU.
    CHECK(state[dev] >= static_cast<std::int64_t>(3 * f.m.weight_bytes()));
  }
}

TEST_CASE("data-parallel runs keep every run's invariants", "[data_parallel]") {
  // Weights on each replica before its compute, each replica's ops in order, memory within
  // each GPU, every op ended; with and without a resize (which kills the old workers).
  for (const std::uint32_t w : {2u, 4u, 5u}) {
    INFO("width " << w);
    const ExperimentResult r = run_dp(w, 2, 5);
    for (const auto& v : violations(r, 5)) UNSCOPED_INFO(v);
    CHECK(violations(r, 5).empty());
  }
  g_resize_after = 1;
  g_resize_width = 4;
  const ExperimentResult r = run_dp(2, 3);
  g_resize_after = 0;
  REQUIRE(r.run.jobs_finished == 1);
  for (const auto& v : violations(r, 4)) UNSCOPED_INFO(v);
  CHECK(violations(r, 4).empty());
}

TEST_CASE("data-parallel runs are deterministic", "[data_parallel]") {
  const std::string a = test::events_jsonl(run_dp(2, 2));
  const std::string b = test::events_jsonl(run_dp(2, 2));
  CHECK(a == b);
  CHECK(a.find("\"all_reduce\"") != std::string::npos);
  CHECK(a.find("\"barrier\"") != std::string::npos);
}

TEST_CASE("one replica issues exactly the single-GPU ops", "[data_parallel]") {
  const ExperimentResult r = run_dp(1, 2);
  REQUIRE(r.run.jobs_finished == 1);
  CHECK(count_ops(r, OpPurpose::AllReduce) == 0);
  CHECK(count_ops(r, OpPurpose::Barrier) == 0);
  CHECK(count_ops(r, OpPurpose::Forward) == 2);
  const Fixture f;
  const std::vector<TimeNs> ends = iteration_ends(r);
  REQUIRE(ends.size() == 2);
  CHECK(ends[1] - ends[0] == f.compute_ns(kBatch));
}

TEST_CASE("a resize pays stop + restart + reload once and rolls back to the checkpoint",
          "[data_parallel]") {
  const Fixture f;
  // An ordinary job's only checkpoint is its start: a resize after 2 of 4 iterations rolls
  // back both, and the 4 run again on 2 GPUs.
  g_resize_after = 2;
  g_resize_width = 2;
  const ExperimentResult r = run_dp(1, 4);
  g_resize_after = 0;
  REQUIRE(r.run.jobs_finished == 1);
  TimeNs first_start = -1;
  TimeNs end = -1;
  int resizes = 0;
  for (const Event& e : r.log.events()) {
    if (first_start < 0 && e.kind == EventKind::OpStart && e.purpose == OpPurpose::Forward) {
      first_start = e.t_ns;
    }
    if (e.kind == EventKind::JobEnd) end = e.t_ns;
    if (e.kind == EventKind::JobResize) {
      ++resizes;
      CHECK(e.first_layer == 1);  // widths [1, 2]
      CHECK(e.last_layer == 2);
      CHECK(resize_rollback_iterations(e) == 2);
      CHECK(resize_downtime_ns(e) == f.p.process_reap_ns + f.p.process_start_ns +
                                         f.p.context_create_ns + f.p.model_build_ns(f.m));
    }
  }
  CHECK(resizes == 1);
  const ResizeCost cost =
      resize_cost(f.p, f.m, Optimizer::Momentum, Precision::Fp32, ResizeProgress{2, 4, 0});
  const DurationNs one = f.compute_ns(kBatch);
  const DurationNs two = f.compute_ns(16) + f.allreduce_ns(2);
  const PlannedResize plan[] = {{2 * one, two}};
  const DurationNs expected = finish_with_resizes_ns(4, 4, one, plan, cost.downtime_ns());
  CHECK(expected == 2 * one + cost.downtime_ns() + 4 * two);
  CHECK(end - first_start == expected);
  CHECK(count_ops(r, OpPurpose::Forward) == 2 + 4 * 2);
}

TEST_CASE("a trial's resize rolls back to its last epoch boundary", "[data_parallel]") {
  // One trial of 2 epochs x ceil(64 / 32) = 2 iterations, resized from 1 to 2 GPUs at the end
  // of its 3rd iteration: 3 % 2 = 1 iteration is lost, the trial resumes at iteration 2 and
  // runs 2 more at width 2. Its tuner ends it (stopped) when its 2nd epoch is reported.
  const Fixture f;
  g_width = 1;
  g_resize_after = 3;
  g_resize_width = 2;
  const nlohmann::json tuning = {
      {"name", "t"},
      {"tuner", "successive_halving"},
      {"params", {{"num_samples", 1}, {"eta", 3}, {"min_epochs", 2}, {"max_epochs", 2}}},
      {"search_space", {{"lr", {{"loguniform", {1e-4, 1.0}}}}}},
      {"model", "alexnet"},
      {"batch", kBatch},
      {"samples_per_epoch", 64},
      {"max_trials", 1},
      {"arrival_s", 0.0}};
  const ExperimentResult r = run_config(make_config(
      "test_data_parallel", {{"tuning", nlohmann::json::array({tuning})}}, {kGpu, kGpu}));
  g_resize_after = 0;
  TimeNs first_start = -1;
  TimeNs end = -1;
  std::vector<int> epochs;
  int resizes = 0;
  for (const Event& e : r.log.events()) {
    if (first_start < 0 && e.kind == EventKind::OpStart && e.purpose == OpPurpose::Forward) {
      first_start = e.t_ns;
    }
    if (e.kind == EventKind::JobEnd) end = e.t_ns;
    if (e.kind == EventKind::TrialEpoch) epochs.push_back(trial_epoch_of(e));
    if (e.kind == EventKind::JobResize) {
      ++resizes;
      CHECK(resize_rollback_iterations(e) == 1);
    }
  }
  CHECK(resizes == 1);
  CHECK(epochs == std::vector<int>{1, 2});  // epoch 1 is not reported twice
  const ResizeCost cost =
      resize_cost(f.p, f.m, Optimizer::Momentum, Precision::Fp32, ResizeProgress{3, 2, 0});
  const DurationNs one = f.compute_ns(kBatch);
  const DurationNs two = f.compute_ns(16) + f.allreduce_ns(2);
  const PlannedResize plan[] = {{3 * one, two}};
  const DurationNs expected = finish_with_resizes_ns(4, 2, one, plan, cost.downtime_ns());
  CHECK(expected == 3 * one + cost.downtime_ns() + 2 * two);
  CHECK(end - first_start == expected);
}

TEST_CASE("a resize in the middle of an iteration kills it and pays its cost once",
          "[data_parallel]") {
  // 4 iterations on one GPU; half-way through the 3rd the job is resized to 2 GPUs: the 3rd
  // iteration's ops are aborted, the job (an ordinary one: its start is its checkpoint) runs
  // all 4 again at width 2 after stop + restart + reload.
  const Fixture f;
  const DurationNs one = f.compute_ns(kBatch);
  g_width = 1;
  g_resize_after = 2;
  g_resize_width = 2;
  g_kill_delay_ns = one / 2;
  const ExperimentResult r = run_dp(1, 4);
  g_resize_after = 0;
  g_kill_delay_ns = 0;
  REQUIRE(r.run.jobs_finished == 1);
  TimeNs first_start = -1;
  TimeNs end = -1;
  std::size_t aborted = 0;
  for (const Event& e : r.log.events()) {
    if (first_start < 0 && e.kind == EventKind::OpStart && e.purpose == OpPurpose::Forward) {
      first_start = e.t_ns;
    }
    if (e.kind == EventKind::JobEnd) end = e.t_ns;
    if (e.kind == EventKind::OpEnd && e.status == OpStatus::Aborted) ++aborted;
  }
  CHECK(aborted >= 1);  // the 3rd iteration's op running at the resize
  const ResizeCost cost =
      resize_cost(f.p, f.m, Optimizer::Momentum, Precision::Fp32, ResizeProgress{2, 4, 0});
  const DurationNs two = f.compute_ns(16) + f.allreduce_ns(2);
  const PlannedResize plan[] = {{2 * one + one / 2, two}};
  const DurationNs expected = finish_with_resizes_ns(4, 4, one, plan, cost.downtime_ns());
  CHECK(expected == 2 * one + one / 2 + cost.downtime_ns() + 4 * two);
  CHECK(end - first_start == expected);
  CHECK(count_ops(r, OpPurpose::Update) == 2 + 4 * 2);
}

TEST_CASE("data-parallel training runs on the emulated platform too", "[data_parallel]") {
  // Wall-clock devices (durations x 0.05): the cross-device waits of the all-reduce and the
  // barrier work where devices report on their own threads' schedule.
  g_width = 2;
  nlohmann::json doc = make_config(
      "test_data_parallel", {{"jobs", nlohmann::json::array({training_job(2)})}}, {kGpu, kGpu});
  doc["platform"] = "emulated";
  doc["platform_params"] = {{"time_scale", 0.05}, {"host_arena_mib", 64}, {"host_weights_mib", 16}};
  doc["horizon_s"] = 10.0;
  const ExperimentResult r = run_config(doc);
  CHECK(r.run.jobs_finished == 1);
  CHECK(count_ops(r, OpPurpose::AllReduce) == 4);
  const DeviceProfile p = find_device_profile(test::source_dir() / "traces" / "devices", kGpu);
  const auto found = test::check_invariants(r, {p.memory_bytes, p.memory_bytes}, {false, false},
                                            /*virtual_time=*/false);
  for (const auto& v : found) UNSCOPED_INFO(v);
  CHECK(found.empty());
}
