// trial_per_gpu: the executor Ray Tune uses by default for tuning jobs. Every GPU of the
// platform runs one job (a trial) at a time, whole: its weights loaded once when it starts,
// then whole iterations. Waiting jobs start in arrival order (FIFO) as GPUs free up: a GPU
// frees when its trial pauses (its weights are evicted: the trial waits for a promotion in
// its checkpoint), is stopped or finishes. A resumed trial joins the back of the queue.
//
// Faithfulness notes: the baseline the Fluid paper compares against (MLSys'21 §6.1, "Ray Tune
// default executor"): each trial requests {"cpu": 1, "gpu": 1} (SymbioticLab/Fluid
// workloads/common/__init__.py), so Ray places one trial per whole GPU and its FIFOScheduler
// starts pending trials FIFO as resources free. A paused trial's checkpoint leaves the GPU (Ray
// Tune pauses by saving a checkpoint and stopping the actor); the checkpoint's save and restore
// cost is not modelled beyond reloading the weights when the trial resumes (our
// simplification). Ordinary jobs (not trials) are run the same way, one per GPU.
#include <optional>
#include <vector>

#include "common/job_runner.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "tuning/trial_executor.hpp"

namespace gpumux::policies {
namespace {

class TrialPerGpu final : public TrialExecutor {
 public:
  explicit TrialPerGpu(const PolicyArgs& args) : TrialExecutor(read_depth(args, param_specs())) {}

  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs = depth_specs("ops of each GPU's trial queued or in flight");
    return specs;
  }
  [[nodiscard]] std::string_view name() const noexcept override { return "trial_per_gpu"; }

  void on_start(Context& ctx) override {
    for (const DeviceId gpu : ctx.gpus()) {
      gpus_.push_back(Gpu{gpu, open_streams(ctx, ctx.streams().default_context(gpu), depth()), {}});
    }
  }

 private:
  struct Gpu {
    DeviceId device{};
    ProcessStreams s;
    std::optional<JobId> running;
  };

  Gpu* gpu_of(JobId job) {
    for (Gpu& g : gpus_) {
      if (g.running && *g.running == job) return &g;
    }
    return nullptr;
  }
  std::optional<Home> home_of(JobId job) override {
    const Gpu* g = gpu_of(job);
    if (g == nullptr) return std::nullopt;
    return Home{std::span<const DeviceId>(&g->device, 1), g->s.compute};
  }
  void release(JobId job) override {
    if (Gpu* g = gpu_of(job)) g->running.reset();
  }
  /// Starts waiting jobs on idle GPUs, in GPU order. A trial that does not fit the empty GPU
  /// fails (run_or_fail frees the GPU), and the next waiting job gets it.
  void advance(Context& ctx) override {
    for (Gpu& g : gpus_) {
      while (!g.running) {
        g.running = pop_next_active(ctx, waiting_);
        if (!g.running) return;
        const JobId job = *g.running;
        run_or_fail(ctx, job, [&] {
          load_whole(ctx, job, g.s.copy);
          keep_busy(ctx, job, g.s.compute, depth());
        });
      }
    }
  }

  std::vector<Gpu> gpus_;
};

GPUMUX_REGISTER_POLICY("trial_per_gpu", TrialPerGpu,
                       "one trial per whole GPU, FIFO (Ray Tune's default tuning executor)");

}  // namespace
}  // namespace gpumux::policies
