#include "reference_sim.hpp"

#include <algorithm>
#include <cmath>

#include "reference_event_heap.hpp"

namespace gpumux::bench {

namespace {

// ns until `work` is done at `rate`, rounded up: SimDevice's formula, bit for bit, so that
// floating-point rounding cannot make the two disagree by a ns.
DurationNs time_to_finish(double work, double rate) noexcept {
  const double ns = work / rate;
  if (!(ns < 4e18)) return kTimeNever;
  return ceil_ns(ns - (ns * 1e-14 + 1e-9));
}

TimeNs add_saturated(TimeNs t, DurationNs d) noexcept {
  return d >= kTimeNever - t ? kTimeNever : t + d;
}

enum class OpType : std::uint8_t { Forward, Backward, Update, Load };
enum class Phase : std::uint8_t { Waiting, Latency, Running };

struct Op {
  OpType type;
  Phase phase;
  TimeNs phase_end_ns;  ///< Latency: when the copy starts moving bytes
  TimeNs finish_ns;     ///< Running: predicted end at the current rate
  double remaining;     ///< Running: ns of work (compute) or bytes (copy) left
  double rate;          ///< work per ns now
  std::uint64_t index;  ///< compute: ordinal among its job's compute ops
};

struct Stream {
  std::uint32_t job;
  std::uint32_t tsg;   ///< context (time-slice group) index on the device
  std::uint32_t base;  ///< first slot of its ring in ops_
  std::uint32_t head;
  std::uint32_t count;
  bool copy;
};

struct Job {
  bool arrived = false;
  bool finished = false;
  bool load_complete = false;
  std::uint32_t compute_stream = 0;
  std::uint64_t dispatched_unit = 0;
  OpType dispatched_pass = OpType::Forward;
  std::uint64_t ops_dispatched = 0;
  std::uint64_t ops_delivered = 0;
  std::uint64_t iterations_done = 0;
  std::uint64_t requests_arrived = 0;
  std::uint64_t requests_done = 0;
  std::uint64_t first_request_slot = 0;  ///< into request_id_: this job's k-th request's id
};

struct Arrival {
  TimeNs t;
  bool is_request;
  std::uint32_t job;
  std::uint64_t index;  ///< the job's request ordinal
};

struct Finished {
  std::uint32_t stream;
  OpType type;
};

class ReferenceSim {
 public:
  explicit ReferenceSim(const RefInputs& in) : in_(in) {
    const std::size_t n_jobs = in.jobs.size();
    jobs_.resize(n_jobs);
    cap_ = std::max<std::uint32_t>(in.depth, 1);
    streams_.reserve(2 * n_jobs);
    ops_.resize(2 * n_jobs * cap_);
    runnable_.assign(1 + n_jobs, 0);  // context 0: the engine's default context, never used
    finished_.reserve(2 * n_jobs * cap_);
    // Every job arrival, then every request, merged by (time, job arrivals first, order):
    // the Engine's order.
    std::uint64_t requests = 0;
    for (std::uint32_t j = 0; j < n_jobs; ++j)
      arrivals_.push_back({in.jobs[j].arrival_ns, false, j, 0});
    for (std::uint32_t j = 0; j < n_jobs; ++j) {
      jobs_[j].first_request_slot = requests;
      requests += in.jobs[j].requests_ns.size();
      for (std::uint64_t r = 0; r < in.jobs[j].requests_ns.size(); ++r) {
        arrivals_.push_back({in.jobs[j].requests_ns[r], true, j, r});
      }
    }
    std::stable_sort(arrivals_.begin(), arrivals_.end(), [](const Arrival& a, const Arrival& b) {
      return a.t != b.t ? a.t < b.t : a.is_request < b.is_request;
    });
    request_id_.assign(requests, 0);
    result_.latency_ns.assign(requests, -1);
  }

  RefResult run() {
    schedule_next_arrival();
    while (!heap_.empty()) {
      const RefEvent top = heap_.top();
      if (top.kind == RefEventKind::DeviceTimer && top.generation != timer_generation_) {
        heap_.pop();  // cancelled: a tombstone, not an event
        continue;
      }
      if (top.t > in_.horizon_ns) {
        if (in_.horizon_ns > now_) now_ = in_.horizon_ns;
        break;
      }
      heap_.pop();
      now_ = top.t;
      ++result_.events;
      switch (top.kind) {
        case RefEventKind::Arrival:
          on_arrivals();
          break;
        case RefEventKind::DeviceTimer:
          timer_ns_ = kTimeNever;
          evaluate();
          break;
      }
    }
    result_.end_ns = now_;
    result_.iterations.reserve(jobs_.size());
    for (const Job& j : jobs_) result_.iterations.push_back(j.iterations_done);
    result_.context_switches = context_switches_;
    return std::move(result_);
  }

 private:
  // ---- event queue ----
  void push(TimeNs t, RefEventKind kind, std::uint32_t generation) {
    heap_.push(t < now_ ? now_ : t, kind, generation);  // gpumux clamps to now, too
  }

  // ---- arrivals (the Engine's arrival chain) ----
  void schedule_next_arrival() {
    if (next_arrival_ < arrivals_.size())
      push(arrivals_[next_arrival_].t, RefEventKind::Arrival, 0);
  }
  void on_arrivals() {
    // State first for everything due now, then the next arrival, then the policy's hooks.
    const std::size_t first = next_arrival_;
    while (next_arrival_ < arrivals_.size() && arrivals_[next_arrival_].t <= now_) {
      const Arrival& a = arrivals_[next_arrival_++];
      Job& j = jobs_[a.job];
      if (!a.is_request) {
        j.arrived = true;
      } else if (!j.finished) {
        request_id_[j.first_request_slot + a.index] = next_request_id_++;
        ++j.requests_arrived;
      }
    }
    schedule_next_arrival();
    for (std::size_t i = first; i < next_arrival_; ++i) {
      const Arrival& a = arrivals_[i];
      if (!a.is_request) {
        on_job_arrival(a.job);
      } else if (!jobs_[a.job].finished) {
        pump(a.job);
      }
    }
  }

  // ---- the policy: time_slicing (ResidentSharing) ----
  void on_job_arrival(std::uint32_t job) {
    const auto tsg = static_cast<std::uint32_t>(++contexts_);
    Job& j = jobs_[job];
    j.compute_stream = add_stream(job, tsg, false);
    const std::uint32_t copy = add_stream(job, tsg, true);
    submit(copy, Op{OpType::Load, Phase::Waiting, 0, kTimeNever, 0.0, 0.0, 0});
    pump(job);
  }
  std::uint32_t add_stream(std::uint32_t job, std::uint32_t tsg, bool copy) {
    const auto i = static_cast<std::uint32_t>(streams_.size());
    streams_.push_back(Stream{job, tsg, i * cap_, 0, 0, copy});
    return i;
  }
  // keep_busy: whole passes until `depth` ops are on the job's stream.
  void pump(std::uint32_t job) {
    Job& j = jobs_[job];
    const RefJob& spec = in_.jobs[job];
    if (!j.arrived || j.finished) return;
    while (!j.finished && streams_[j.compute_stream].count < in_.depth) {
      const bool work = spec.training ? j.dispatched_unit < spec.iterations
                                      : j.dispatched_unit < j.requests_arrived;
      if (!work) break;
      const OpType type = j.dispatched_pass;
      if (!spec.training || type == OpType::Update) {
        ++j.dispatched_unit;
        j.dispatched_pass = OpType::Forward;
      } else {
        j.dispatched_pass = type == OpType::Forward ? OpType::Backward : OpType::Update;
      }
      submit(j.compute_stream,
             Op{type, Phase::Waiting, 0, kTimeNever, 0.0, 0.0, j.ops_dispatched++});
    }
  }
  void submit(std::uint32_t stream, const Op& op) {
    Stream& s = streams_[stream];
    ops_[s.base + (s.head + s.count) % cap_] = op;
    ++s.count;
    request_evaluate();
  }

  // ---- the device (SimDevice's evaluation, for this shape) ----
  Op& head(const Stream& s) { return ops_[s.base + s.head]; }

  void request_evaluate() {
    if (in_evaluate_) {
      dirty_ = true;
      return;
    }
    if (timer_ns_ <= now_) return;  // already due
    set_timer(now_);
  }
  void set_timer(TimeNs when) {
    if (when == timer_ns_) return;
    if (timer_ns_ != kTimeNever) ++timer_generation_;  // cancels the pending one
    timer_ns_ = when;
    if (when != kTimeNever) push(when, RefEventKind::DeviceTimer, timer_generation_);
  }

  void evaluate() {
    in_evaluate_ = true;
    do {
      dirty_ = false;
      advance();
      step_streams();
      update_timeslice();
      recompute_rates();
      deliver();
    } while (dirty_);
    in_evaluate_ = false;
    schedule_next();
  }

  void advance() {
    const TimeNs elapsed = now_ - last_update_;
    last_update_ = now_;
    if (elapsed <= 0) return;
    const auto dt = static_cast<double>(elapsed);
    for (const Stream& s : streams_) {
      if (s.count == 0) continue;
      Op& op = head(s);
      if (op.phase != Phase::Running || op.rate <= 0.0) continue;
      op.remaining -= dt * op.rate;
      if (op.remaining < 0.0) op.remaining = 0.0;
    }
  }

  bool dependencies_met(const Stream& s, const Op& op) const {
    if (s.copy) return true;
    const Job& j = jobs_[s.job];
    return j.load_complete && j.ops_delivered >= op.index;
  }

  DurationNs solo_ns(const Stream& s, OpType type) const {
    const RefJob& spec = in_.jobs[s.job];
    switch (type) {
      case OpType::Forward:
        return spec.forward_ns;
      case OpType::Backward:
        return spec.backward_ns;
      case OpType::Update:
        return spec.update_ns;
      case OpType::Load:
        break;
    }
    return 0;
  }

  void step_streams() {
    for (std::uint32_t si = 0; si < streams_.size(); ++si) {
      Stream& s = streams_[si];
      while (s.count > 0) {
        Op& op = head(s);
        if (op.phase == Phase::Waiting) {
          if (!dependencies_met(s, op)) break;
          if (s.copy) {
            op.phase = Phase::Latency;
            op.phase_end_ns = add_saturated(now_, in_.h2d_latency_ns);
          } else {
            op.phase = Phase::Running;
            op.remaining = static_cast<double>(solo_ns(s, op.type));
            op.rate = 0.0;
            op.finish_ns = kTimeNever;
          }
        }
        if (op.phase == Phase::Latency) {
          if (op.phase_end_ns > now_) break;
          op.phase = Phase::Running;
          op.remaining = static_cast<double>(in_.jobs[s.job].load_bytes);
          op.rate = 0.0;
          op.finish_ns = kTimeNever;
        }
        if (!(op.remaining <= 0.0 || op.finish_ns <= now_)) break;
        finished_.push_back(Finished{si, op.type});
        s.head = (s.head + 1) % cap_;
        --s.count;
      }
    }
  }

  bool computing(const Stream& s) {
    return !s.copy && s.count > 0 && head(s).phase == Phase::Running;
  }

  void update_timeslice() {
    std::fill(runnable_.begin(), runnable_.end(), std::uint8_t{0});
    bool any = false;
    for (const Stream& s : streams_) {
      if (computing(s)) {
        runnable_[s.tsg] = 1;
        any = true;
      }
    }
    if (switching_) {
      if (switch_end_ns_ > now_) return;
      switching_ = false;
      give_gpu(switch_target_);
    }
    if (!any) return;
    const std::size_t n = contexts_ + 1;
    if (loaded_ < 0) {
      for (std::uint32_t t = 0; t < n; ++t) {
        if (runnable_[t] != 0) {
          give_gpu(t);  // the first activation is free
          return;
        }
      }
    }
    const auto cur = static_cast<std::size_t>(loaded_);
    std::int64_t next = -1;
    for (std::size_t k = 1; k < n; ++k) {
      const std::size_t t = (cur + k) % n;
      if (runnable_[t] != 0) {
        next = static_cast<std::int64_t>(t);
        break;
      }
    }
    if (next < 0) return;
    const bool expired =
        in_.timeslice_ns > 0 && now_ >= add_saturated(slice_start_ns_, in_.timeslice_ns);
    if (runnable_[cur] == 0 || expired) begin_switch(static_cast<std::uint32_t>(next));
  }
  void begin_switch(std::uint32_t target) {
    ++context_switches_;
    if (in_.context_switch_ns <= 0) {
      give_gpu(target);
      return;
    }
    switching_ = true;
    switch_target_ = target;
    switch_end_ns_ = add_saturated(now_, in_.context_switch_ns);
  }
  void give_gpu(std::uint32_t tsg) {
    loaded_ = tsg;
    slice_start_ns_ = now_;
  }

  void recompute_rates() {
    // Each context has one compute stream: the context holding the GPU runs its op at full
    // rate (SimDevice: share = demand of capacity 1, rate = share / demand = 1).
    std::uint32_t copies = 0;
    for (const Stream& s : streams_) {
      if (s.count == 0) continue;
      Op& op = head(s);
      if (op.phase != Phase::Running) continue;
      if (s.copy) {
        ++copies;
        continue;
      }
      if (!switching_ && loaded_ == static_cast<std::int64_t>(s.tsg)) {
        op.rate = 1.0;
        op.finish_ns = add_saturated(now_, time_to_finish(op.remaining, op.rate));
      } else {
        op.rate = 0.0;
        op.finish_ns = kTimeNever;
      }
    }
    if (copies == 0) return;
    // Water-filling among equal caps (every load is pinned): each gets min(cap, link / n).
    const double cap = in_.h2d_bytes_per_ns;
    const double level = in_.h2d_bytes_per_ns / static_cast<double>(copies);
    const double share = cap <= level ? cap : level;
    for (const Stream& s : streams_) {
      if (!s.copy || s.count == 0) continue;
      Op& op = head(s);
      if (op.phase != Phase::Running) continue;
      op.rate = share;
      op.finish_ns =
          op.rate > 0.0 ? add_saturated(now_, time_to_finish(op.remaining, op.rate)) : kTimeNever;
    }
  }

  // The Engine's on_op_finished for each op that ended in this pass, in stream order; the
  // policy's hook (pump) runs at once, as the Engine drains hooks there.
  void deliver() {
    if (finished_.empty()) return;
    for (const Finished& f : finished_) {
      const std::uint32_t job = streams_[f.stream].job;
      Job& j = jobs_[job];
      if (f.type == OpType::Load) {
        j.load_complete = true;
      } else {
        ++j.ops_delivered;
        if (in_.jobs[job].training) {
          if (f.type == OpType::Update && ++j.iterations_done >= in_.jobs[job].iterations) {
            j.finished = true;
          }
        } else {
          const std::uint64_t k = j.requests_done++;
          result_.latency_ns[request_id_[j.first_request_slot + k]] =
              now_ - in_.jobs[job].requests_ns[k];
          if (j.requests_done >= in_.jobs[job].requests_ns.size()) j.finished = true;
        }
      }
      pump(job);
    }
    finished_.clear();
    // A head may now wait for an op that just finished.
    for (const Stream& s : streams_) {
      if (s.count > 0 && head(s).phase == Phase::Waiting) {
        dirty_ = true;
        return;
      }
    }
  }

  void schedule_next() {
    TimeNs next = kTimeNever;
    for (const Stream& s : streams_) {
      if (s.count == 0) continue;
      const Op& op = ops_[s.base + s.head];
      if (op.phase == Phase::Latency) next = std::min(next, op.phase_end_ns);
      if (op.phase == Phase::Running) next = std::min(next, op.finish_ns);
    }
    if (switching_) {
      next = std::min(next, switch_end_ns_);
    } else if (in_.timeslice_ns > 0 && loaded_ >= 0 &&
               runnable_[static_cast<std::size_t>(loaded_)] != 0) {
      bool contended = false;
      for (std::size_t t = 0; t <= contexts_; ++t) {
        contended = contended || (runnable_[t] != 0 && t != static_cast<std::size_t>(loaded_));
      }
      if (contended) next = std::min(next, add_saturated(slice_start_ns_, in_.timeslice_ns));
    }
    set_timer(next);
  }

  const RefInputs& in_;
  RefResult result_;
  std::uint32_t cap_ = 1;
  std::vector<Job> jobs_;
  std::vector<Stream> streams_;
  std::vector<Op> ops_;
  std::vector<Arrival> arrivals_;
  std::vector<std::uint64_t> request_id_;
  std::vector<Finished> finished_;
  RefEventHeap heap_;
  std::vector<std::uint8_t> runnable_;
  std::size_t next_arrival_ = 0;
  std::uint64_t next_request_id_ = 0;
  TimeNs now_ = 0;
  // device
  TimeNs timer_ns_ = kTimeNever;
  std::uint32_t timer_generation_ = 0;
  bool in_evaluate_ = false;
  bool dirty_ = false;
  TimeNs last_update_ = 0;
  std::size_t contexts_ = 0;  ///< contexts created by the policy (context 0 is the engine's)
  std::int64_t loaded_ = -1;
  bool switching_ = false;
  std::uint32_t switch_target_ = 0;
  TimeNs switch_end_ns_ = 0;
  TimeNs slice_start_ns_ = 0;
  std::uint64_t context_switches_ = 0;
};

}  // namespace

RefResult run_reference(const RefInputs& inputs) {
  return ReferenceSim(inputs).run();
}

}  // namespace gpumux::bench
