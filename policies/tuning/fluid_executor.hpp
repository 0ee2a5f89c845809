// The Fluid executor's shared machinery (policies/tuning/fluid.cpp registers it as `fluid`;
// dynamic_fluid.cpp derives DynamicFluid from it): per GPU, c MPS client contexts opened warm
// ("slots"), a re-plan at the end of each instant with lifecycle events, StaticFluid widths for
// the waiting trials (the TrialGroup) over the idle GPUs (policies/fluid/water_filling.hpp,
// Algorithm 1), and the placement of that group in fluid order (place_waiting: the idle-GPU
// rule). A trial of width k >= 2 trains data-parallel (ReplicaFacet::set_replicas) on k whole GPUs,
// one slot of each, the first its primary; all its GPUs are taken and released together.
// Faithfulness notes live with each registered executor.
//
// Units: h1 in seconds (double, the planner's unit); widths in GPUs. Thread rules: one engine
// thread drives the policy; nothing is shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/job_runner.hpp"
#include "gpumux/io/params.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "tuning/trial_executor.hpp"

namespace gpumux::policies {

class FluidExecutor : public TrialExecutor {
 public:
  explicit FluidExecutor(const PolicyArgs& args);

  static const ParamSpecs& param_specs();
  [[nodiscard]] std::string_view name() const noexcept override { return "fluid"; }
  void on_start(Context& ctx) override;

 protected:
  struct Slot {
    ProcessStreams s;
    std::optional<JobId> job;
  };
  struct Gpu {
    DeviceId device{};
    std::vector<Slot> slots;
    bool whole = false;                 ///< holds a trial of width >= 1, alone
    std::optional<JobId> reserved_for;  ///< kept empty for a trial moving here (DynamicFluid)
  };
  /// One re-plan: the waiting jobs first (`waiting` of them), then (plan_total only) the placed
  /// ones; their StaticFluid widths and the list order (indices into `jobs`).
  struct Plan {
    std::vector<JobId> jobs;
    std::size_t waiting = 0;
    std::vector<double> widths;
    std::vector<std::size_t> order;
  };

  /// Reads the common knobs (depth, c, d) through `specs` plus `extra` for a derived class.
  template <class Extra>
  FluidExecutor(const PolicyArgs& args, const ParamSpecs& specs, Extra&& extra) : TrialExecutor(2) {
    read_policy_params(args, specs, [&](ParamReader& p) {
      read_knobs(p);
      extra(p);
    });
  }
  /// The knobs' declarations, for a derived class's own specs.
  static ParamSpecs knob_specs();

  [[nodiscard]] std::size_t occupied(const Gpu& g) const;
  Gpu* gpu_of(JobId job);
  Slot* slot_of(JobId job);
  std::optional<Home> home_of(JobId job) override;
  void release(JobId job) override;
  /// Asks for a re-plan once the events of this instant are handled (a zero-delay timer), so
  /// that the trials freed or arriving at one instant form one group.
  void advance(Context& ctx) override;
  void on_timer(Context& ctx, TimerId id, std::uint64_t tag) override;
  /// The re-plan itself: plans the waiting jobs and places them (only when some wait).
  virtual void replan(Context& ctx);

  /// The d a plan uses for `jobs`: the knob d, and with model_d the smallest d_for over the
  /// trials among them (one tuning job's trials share one model, so one value).
  [[nodiscard]] std::uint32_t plan_d(const Context& ctx, const std::vector<JobId>& jobs) const;
  /// The paper's d "from the Paleo model" (Fluid §4.2) with gpumux's cost model standing in: the
  /// largest k <= d such that one iteration on 1..k GPUs keeps getting faster, an iteration on
  /// k GPUs being the solo compute at ceil(batch / k) samples + the update + the ring
  /// all-reduce over gpus_[0..k) (ReplicaFacet::estimate_allreduce_ns). Cached per model and batch.
  [[nodiscard]] std::uint32_t d_for(const Context& ctx, JobId job) const;
  /// One iteration of `job` alone on one GPU (gpus_[0]), ns: the cost model's solo time at the
  /// whole batch, whatever the job's current width.
  [[nodiscard]] double unit1_ns(const Context& ctx, JobId job) const;
  /// h_{i,1} in seconds: iterations left x the solo iteration time on the first GPU.
  [[nodiscard]] double h1_s(const Context& ctx, JobId job) const;
  /// Algorithm 1's plan: StaticFluid over the group `waiting` only, on n = the idle GPUs
  /// (idle_gpus().size()), d = the knob d. With no idle GPU every trial gets 1/c (our choice).
  [[nodiscard]] Plan plan_group(const Context& ctx, const std::deque<JobId>& waiting) const;
  /// Algorithm 2's view: StaticFluid over `waiting` then every placed job, on all GPUs.
  [[nodiscard]] Plan plan_total(const Context& ctx, const std::deque<JobId>& waiting) const;
  /// Places a plan_group plan's jobs in list order by the idle-GPU rule (fluid.cpp's notes);
  /// those that do not fit go back to waiting_ in their arrival order.
  void place_waiting(Context& ctx, const Plan& p);
  /// GPUs (indices into gpus_) with no trial and none moving in, in index order.
  [[nodiscard]] std::vector<std::size_t> idle_gpus() const;
  /// A GPU a packed trial may join now: one of `shelf` (the plan's own packed GPUs, the most
  /// recently opened first) with a free slot, else any GPU holding only packed trials with a
  /// free slot; nullopt if none.
  [[nodiscard]] std::optional<std::size_t> packable_gpu(
      const std::vector<std::size_t>& shelf) const;
  /// Puts `job` in a free slot of gpus_[gpu], loads its weights and starts its work.
  void occupy(Context& ctx, std::size_t gpu, JobId job, bool packed);
  /// Puts `job` alone on gpus_[g] for every g of `gpus` (ascending; the first is the primary):
  /// a free slot of each, its weights loaded on each GPU's copy stream (after `after`, e.g. a
  /// resize's restart op), its replicas set on those slots' compute streams when it is not
  /// already trained there (set_replicas; `resized`: ctx.resize set them), then its work.
  void occupy_whole(Context& ctx, const std::vector<std::size_t>& gpus, JobId job,
                    const std::vector<OpHandle>& after = {}, bool resized = false);
  /// The gpus_ indices a job holds, ascending (its primary first); empty if not placed.
  [[nodiscard]] std::vector<std::size_t> gpus_held(JobId job) const;
  /// The compute streams of `job`'s slots on `gpus` (it must hold a slot on each, or the first
  /// free slot is named), in that order: the replicas set_replicas / resize takes.
  [[nodiscard]] std::vector<StreamId> replica_streams_on(
      JobId job, const std::vector<std::size_t>& gpus) const;

  bool replan_pending_ = false;  ///< a zero-delay re-plan timer is set
  std::uint32_t c_ = 2;
  std::uint32_t d_ = 4;
  bool model_d_ = true;  ///< cap each trial's width by the cost model's useful GPUs (d_for)
  std::vector<Gpu> gpus_;
  /// Placed data-parallel trials (2+ GPUs): the devices, Home's storage, primary first.
  std::map<JobId, std::vector<DeviceId>> replica_devices_;
  /// d_for's cache: (model name, batch) -> d.
  mutable std::map<std::pair<std::string, std::uint32_t>, std::uint32_t> d_cache_;

 private:
  void read_knobs(ParamReader& p);
};

}  // namespace gpumux::policies
