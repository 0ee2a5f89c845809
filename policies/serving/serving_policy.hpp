// The frame the four serving policies share (orloj, clockwork, clipper, nexus; engine side D38):
// every model is loaded whole onto the first GPU when its service arrives and stays resident
// (as in Clockwork's and Orloj's workers, which keep the served models in GPU memory); one
// batch runs at a time on one compute stream; when the GPU is free the policy's choose()
// names the next batch (and may drop hopeless requests first). A training job beside the
// services runs a whole pass whenever no batch is chosen, so inference and training can share
// one trace (the cross-policy run).
//
// What differs between the policies is only choose() and what they learn from completions.
// Thread rules: policy hooks, runtime thread (gpumux/api/policy.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/job_runner.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/api/policy.hpp"
#include "gpumux/io/params.hpp"

namespace gpumux::policies {

/// The next batch: the oldest `requests` waiting requests of service `job`.
struct BatchChoice {
  JobId job{};
  std::uint32_t requests = 1;
};

class ServingPolicy : public Policy {
 public:
  void on_start(Context& ctx) override { s_ = open_first_gpu_streams(ctx, /*compute_depth=*/1); }

  void on_job_arrival(Context& ctx, JobId job) override {
    if (reject_without_gpu(ctx, job, name())) return;
    try {
      load_whole(ctx, job, s_.copy);  // resident for the service's lifetime
    } catch (const OutOfMemory& e) {
      ctx.reject(job, e.what());
      return;
    }
    (ctx.job(job).training() ? training_ : services_).push_back(job);
    schedule(ctx);
  }

  void on_request_arrival(Context& ctx, JobId, RequestId) override { schedule(ctx); }

  void on_op_complete(Context& ctx, const OpRecord& op) override {
    if (op.purpose == OpPurpose::Forward && batch_start_ns_ >= 0 && ctx.job(op.job).inference() &&
        ctx.streams().in_flight(s_.compute) + ctx.streams().queued(s_.compute) == 0) {
      on_batch_done(ctx, op.job, last_batch_, ctx.now() - batch_start_ns_);
      batch_start_ns_ = -1;
    }
    schedule(ctx);
  }

 protected:
  /// The next batch to run now that the GPU is free, or nullopt for none. May drop waiting
  /// requests (ServingFacet::drop_request) first. `services` are the arrived services in arrival
  /// order; each has requests_waiting() > 0 or is skipped by the caller's loop.
  virtual std::optional<BatchChoice> choose(Context& ctx, std::span<const JobId> services) = 0;
  /// A batch of `requests` requests of `job` ended, `batch_ns` after it was dispatched.
  virtual void on_batch_done(Context& /*ctx*/, JobId /*job*/, std::uint32_t /*requests*/,
                             DurationNs /*batch_ns*/) {}

  [[nodiscard]] DeviceId gpu() const noexcept { return gpu_; }
  [[nodiscard]] const std::vector<JobId>& services() const noexcept { return services_; }

  /// Issues work when the compute stream is idle: the chosen batch, else a training pass.
  void schedule(Context& ctx) {
    if (ctx.streams().queued(s_.compute) + ctx.streams().in_flight(s_.compute) > 0) return;
    if (ctx.gpus().empty()) return;
    gpu_ = ctx.gpus().front();
    active_.clear();
    for (JobId j : services_) {
      if (ctx.job(j).active() && ctx.job(j).requests_waiting() > 0) active_.push_back(j);
    }
    if (!active_.empty()) {
      if (const std::optional<BatchChoice> b = choose(ctx, active_)) {
        DispatchOptions o;
        o.requests = b->requests;
        try {
          ctx.dispatch(b->job, s_.compute, o);
        } catch (const OutOfMemory& e) {
          ctx.reject(b->job, std::string("out of memory: a batch's activations: ") + e.what());
          schedule(ctx);
          return;
        }
        last_batch_ = b->requests;
        batch_start_ns_ = ctx.now();
        return;
      }
    }
    for (JobId t : training_) {
      if (ctx.job(t).active() && ctx.job(t).has_dispatchable_work()) {
        ctx.dispatch(t, s_.compute);
        return;
      }
    }
  }

 private:
  ProcessStreams s_;
  DeviceId gpu_{};
  std::vector<JobId> services_, training_, active_;
  std::uint32_t last_batch_ = 1;
  TimeNs batch_start_ns_ = -1;
};

/// Batch sizes a policy may form, ascending: the powers of two up to `max_batch` (Clockwork
/// and Clipper profile these; Orloj's candidates are "each allowed batch size").
inline std::vector<std::uint32_t> power_of_two_batches(std::uint32_t max_batch) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t b = 1; b <= max_batch; b *= 2) out.push_back(b);
  return out;
}

/// The declaration of max_batch, read by read_max_batch; each policy gives its own default
/// (and its source) and help.
inline ParamSpec max_batch_param(std::int64_t fallback, std::string help) {
  return param::integer("max_batch", fallback, std::move(help));
}

/// The largest batch a serving policy may form: max_batch (max_batch_param), in [1, largest]. The
/// caps are sanity bounds, not from a source (our choice): 65536 by default, smaller where a
/// policy's choice scans the sizes (orloj).
inline std::uint32_t read_max_batch(ParamReader& p, std::uint32_t largest = 65536) {
  return p.integer_in<std::uint32_t>("max_batch", 1, largest);
}

}  // namespace gpumux::policies
