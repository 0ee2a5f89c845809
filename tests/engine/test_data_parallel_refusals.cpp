// What the data-parallel commands refuse (ReplicaFacet::set_replicas, resize and a replicated
// dispatch; policy.hpp, D47): a probe policy issues each invalid command and checks that
// it throws PolicyError without touching either GPU's memory, then trains the job on both GPUs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/policy.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/model/model.hpp"
#include "invalid_command_support.hpp"
#include "test_support.hpp"

using namespace gpumux;
using gpumux::test::invalid_command_config;
using gpumux::test::run_config;

namespace {

constexpr const char* kGpu = "v100-pcie3x16";
std::size_t g_refused = 0;

// Issues `command` and checks it is refused with PolicyError without touching either GPU's
// memory.
template <class F>
void refused(Context& ctx, const char* what, F&& command) {
  INFO("refused command: " << what);
  const MemoryStats a = ctx.memory().stats(DeviceId{0});
  const MemoryStats b = ctx.memory().stats(DeviceId{1});
  CHECK_THROWS_AS(command(), PolicyError);
  CHECK(ctx.memory().stats(DeviceId{0}).in_use_bytes == a.in_use_bytes);
  CHECK(ctx.memory().stats(DeviceId{1}).in_use_bytes == b.in_use_bytes);
  ++g_refused;
}

// Two GPUs (devices 0, 1) and a CPU (device 2); "train" (job 0) arrives at 0, "svc" (job 1,
// inference) at 10 ms. Probes each refusal, then trains on both GPUs and rejects the service.
class DataParallelProbe final : public Policy {
 public:
  explicit DataParallelProbe(const PolicyArgs&) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "test_dp_probe"; }

  void on_start(Context& ctx) override {
    for (std::uint16_t d = 0; d < 3; ++d) {
      compute_.push_back(
          ctx.streams().create_stream(ctx.streams().default_context(DeviceId{d}), {}));
      copy_.push_back(ctx.streams().create_stream(ctx.streams().default_context(DeviceId{d}), {}));
    }
    second_on_gpu0_ = ctx.streams().create_stream(ctx.streams().default_context(DeviceId{0}), {});
  }
  void on_job_arrival(Context& ctx, JobId job) override {
    const std::vector<StreamId> both{compute_[0], compute_[1]};
    if (ctx.job(job).spec().kind == JobKind::Inference) {
      refused(ctx, "set_replicas(inference)", [&] { ctx.replicas().set_replicas(job, both); });
      refused(ctx, "resize(inference)", [&] { (void)ctx.replicas().resize(job, both); });
      ctx.reject(job, "probe");
      return;
    }
    refused(ctx, "set_replicas(no stream)", [&] { ctx.replicas().set_replicas(job, {}); });
    refused(ctx, "set_replicas(one GPU twice)", [&] {
      const std::vector<StreamId> dup{compute_[0], second_on_gpu0_};
      ctx.replicas().set_replicas(job, dup);
    });
    refused(ctx, "set_replicas(a CPU stream)", [&] {
      const std::vector<StreamId> cpu{compute_[0], compute_[2]};
      ctx.replicas().set_replicas(job, cpu);
    });
    refused(ctx, "set_replicas(unknown stream)", [&] {
      const std::vector<StreamId> unknown{compute_[0], StreamId{999}};
      ctx.replicas().set_replicas(job, unknown);
    });
    ctx.replicas().set_replicas(job, both);
    CHECK(ctx.job(job).width() == 2);
    CHECK(ctx.job(job).samples_per_gpu() == 4);  // ceil(8 / 2)
    const LayerRange all{0, ctx.job(job).model().layer_count()};
    ctx.memory().load(job, copy_[0], all);
    refused(ctx, "dispatch(weights missing on replica GPU 1)",
            [&] { ctx.dispatch(job, compute_[0]); });
    ctx.memory().load(job, copy_[1], all);
    refused(ctx, "dispatch(not the primary stream)", [&] { ctx.dispatch(job, compute_[1]); });
    ctx.dispatch(job, compute_[0]);  // forward
    refused(ctx, "set_replicas(unit in progress)", [&] { ctx.replicas().set_replicas(job, both); });
    refused(ctx, "preempt(DropQueued on two GPUs)",
            [&] { (void)ctx.preempt(job, PreemptMode::DropQueued); });
    refused(ctx, "migrate(on two GPUs)",
            [&] { (void)ctx.memory().migrate(job, DeviceId{2}, copy_[0]); });
    ctx.dispatch(job, compute_[0]);  // backward
    ctx.dispatch(job, compute_[0]);  // all-reduce, update, barrier
  }
  void on_iteration_end(Context& ctx, JobId job) override {
    ++iterations_;
    CHECK(ctx.ops_in_flight(job, DeviceId{0}) == 0);  // every replica's ops of it have ended
    CHECK(ctx.ops_in_flight(job, DeviceId{1}) == 0);
    for (int pass = 0; pass < 3 && ctx.job(job).has_dispatchable_work(); ++pass) {
      ctx.dispatch(job, compute_[0]);
    }
  }

  int iterations_ = 0;

 private:
  std::vector<StreamId> compute_, copy_;
  StreamId second_on_gpu0_{};
};

GPUMUX_REGISTER_POLICY("test_dp_probe", DataParallelProbe, "data-parallel refusals probe");

}  // namespace

TEST_CASE("set_replicas, resize and dispatch refuse what they must", "[data_parallel]") {
  g_refused = 0;
  // The invalid-command suite's two jobs, on two GPUs.
  const nlohmann::json doc = invalid_command_config("test_dp_probe", {kGpu, kGpu, "xeon-2x18"});
  const ExperimentResult r = run_config(doc);
  CHECK(g_refused == 11);
  CHECK(r.run.jobs_finished == 1);
  CHECK(r.run.jobs_rejected == 1);
  const auto reduces =
      std::count_if(r.log.events().begin(), r.log.events().end(), [](const Event& e) {
        return e.kind == EventKind::OpEnd && e.purpose == OpPurpose::AllReduce;
      });
  CHECK(reduces == 4);  // 2 iterations x 2 replicas
}
