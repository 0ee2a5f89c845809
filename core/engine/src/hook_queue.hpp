// The queue of policy hooks. Devices report completions synchronously, sometimes from inside
// a command a policy is issuing (preempt() reporting the ops it dropped): the engine applies
// state changes at once and queues the hook calls here, which delivers them one at a time,
// in order, never nested inside another hook.
//
// Internal to gpumux_engine. Thread rules: runtime thread only.
#pragma once

#include <cstdint>

#include "gpumux/api/ids.hpp"
#include "gpumux/api/op.hpp"
#include "gpumux/api/policy.hpp"
#include "gpumux/api/ring_fifo.hpp"

namespace gpumux {

class HookQueue {
 public:
  /// Hooks go to `policy`, which is handed `context` (the engine's Context facade).
  HookQueue(Policy& policy, Context& context) : policy_(policy), context_(context) {}

  void job_arrival(JobId job) { push({Kind::JobArrival, job, {}, {}, {}, 0}); }
  void request_arrival(JobId job, RequestId request) {
    push({Kind::RequestArrival, job, request, {}, {}, 0});
  }
  void op_complete(JobId job, const OpRecord& r) { push({Kind::OpComplete, job, {}, r, {}, 0}); }
  void request_complete(JobId job, RequestId request, const OpRecord& r) {
    push({Kind::RequestComplete, job, request, r, {}, 0});
  }
  void iteration_end(JobId job, const OpRecord& r) {
    push({Kind::IterationEnd, job, {}, r, {}, 0});
  }
  void job_finish(JobId job) { push({Kind::JobFinish, job, {}, {}, {}, 0}); }
  void job_resumed(JobId job) { push({Kind::JobResumed, job, {}, {}, {}, 0}); }
  void timer(TimerId id, std::uint64_t tag) { push({Kind::Timer, {}, {}, {}, id, tag}); }

  /// Calls the policy's on_start; hooks its commands cause are queued, not delivered.
  void start() {
    in_hook_ = true;
    policy_.on_start(context_);
    in_hook_ = false;
  }
  /// While one lives, drain() delivers nothing (as inside a hook): for engine work outside a
  /// hook that aborts ops (a tuning trial stopped at its epoch's end), whose reports drain the
  /// queue, so no hook runs before that work is complete.
  class Hold {
   public:
    explicit Hold(HookQueue& q) : q_(q), was_(q.in_hook_) { q_.in_hook_ = true; }
    ~Hold() { q_.in_hook_ = was_; }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    Hold(Hold&&) = delete;
    Hold& operator=(Hold&&) = delete;

   private:
    HookQueue& q_;
    bool was_;
  };

  /// Delivers every queued hook (and those they queue), unless a hook is running now (then
  /// that hook's caller drains them when it returns).
  void drain() {
    if (in_hook_) return;
    while (!hooks_.empty()) {
      const Hook h = hooks_.front();  // a copy: the hook may queue more hooks
      hooks_.pop_front();
      in_hook_ = true;
      try {
        deliver(h);
      } catch (...) {
        in_hook_ = false;
        throw;
      }
      in_hook_ = false;
    }
  }

 private:
  enum class Kind : std::uint8_t {
    JobArrival,
    RequestArrival,
    OpComplete,
    RequestComplete,
    IterationEnd,
    JobFinish,
    JobResumed,
    Timer
  };
  struct Hook {
    Kind kind{};
    JobId job{};
    RequestId request{};
    OpRecord record{};
    TimerId timer{};
    std::uint64_t tag = 0;
  };

  void push(const Hook& h) {  // field by field: `h` was just built (store forwarding)
    Hook& slot = hooks_.push_back_slot();
    slot.kind = h.kind;
    slot.job = h.job;
    slot.request = h.request;
    slot.record = h.record;
    slot.timer = h.timer;
    slot.tag = h.tag;
  }
  void deliver(const Hook& h) {
    switch (h.kind) {
      case Kind::JobArrival:
        policy_.on_job_arrival(context_, h.job);
        break;
      case Kind::RequestArrival:
        policy_.on_request_arrival(context_, h.job, h.request);
        break;
      case Kind::OpComplete:
        policy_.on_op_complete(context_, h.record);
        break;
      case Kind::RequestComplete:
        policy_.on_request_complete(context_, h.job, h.request);
        break;
      case Kind::IterationEnd:
        policy_.on_iteration_end(context_, h.job);
        break;
      case Kind::JobFinish:
        policy_.on_job_finish(context_, h.job);
        break;
      case Kind::JobResumed:
        policy_.on_job_resumed(context_, h.job);
        break;
      case Kind::Timer:
        policy_.on_timer(context_, h.timer, h.tag);
        break;
    }
  }

  Policy& policy_;
  Context& context_;
  RingFifo<Hook> hooks_;  // no allocation per hook once grown
  bool in_hook_ = false;
};

}  // namespace gpumux
