// salus: Salus (Yu & Chowdhury, MLSys'20; code SymbioticLab/Salus): one execution service owns
// the GPU, keeps every admitted job's persistent memory resident, cuts the GPU into memory
// "lanes" that run concurrently, and schedules whole iterations: at most one iteration in
// flight per lane, the lane's policy choosing whose iteration runs next.
//
// Persistent memory (weights, gradients, optimizer slots) is loaded at admission and stays;
// ephemeral memory (one iteration's activations) lives for one iteration. Admission is the
// code's lane rule (lane_manager.hpp); the in-lane order is the code's scheduler
// (iteration_order.hpp). One stream per lane in one context. Each iteration pays
// iteration_overhead_us. A job is loaded only when the engine's arena keeps a hole for the
// largest ephemeral peak (MemoryFacet::fits_after), which keeps Salus' no-OOM guarantee.
//
// Params: sched, lanes, shared_lanes, work_conserving, iteration_overhead_us, lane_memory_gib.
// Metrics: salus.queue_s, salus.admitted, salus.lanes, salus.arena_wait_s,
// salus.reservation_failed.
//
// Left out: cheap iterations, early release of the ephemeral reservation, lane GC, SM blocking,
// multi-GPU lanes, devices other than the first GPU. The long story, with sources and measured
// effects: docs/policies/salus.md.
#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "common/job_runner.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/memory.hpp"
#include "salus/candidates.hpp"
#include "salus/iteration_order.hpp"
#include "salus/lane_manager.hpp"
#include "salus/params.hpp"

namespace gpumux::policies::salus {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1024} * 1024;

class Salus final : public Policy {
 public:
  static const ParamSpecs& param_specs() { return Params::specs(); }

  explicit Salus(const PolicyArgs& args) : params_(Params::read(args)) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "salus"; }

  void on_start(Context& ctx) override {
    if (ctx.gpus().empty()) return;
    gpu_ = ctx.gpus().front();
    const std::uint64_t gpu_bytes = ctx.device(*gpu_).memory_bytes;
    lanes_.emplace(
        params_.lane_memory_bytes > 0 ? std::min(params_.lane_memory_bytes, gpu_bytes) : gpu_bytes,
        params_.lane_mode, params_.shared_lanes);
    copy_ = ctx.streams().create_stream(ctx.streams().default_context(*gpu_), StreamOptions{0, 1});
  }

  void on_job_arrival(Context& ctx, JobId job) override {
    if (!gpu_) {
      ctx.reject(job, "no GPU device: Salus serves one GPU");
      return;
    }
    // Two allocations (state, activations), each rounded as the engine allocates.
    const std::uint64_t need =
        ctx.memory().persistent_bytes(job) + ctx.memory().ephemeral_bytes(job);
    if (round_to_allocation(ctx.memory().persistent_bytes(job)) +
            round_to_allocation(ctx.memory().ephemeral_bytes(job)) >
        lanes_->capacity_bytes()) {
      ctx.reject(job, "persistent + ephemeral memory " + std::to_string(need / kMiB) +
                          " MiB exceeds the GPU's " +
                          std::to_string(lanes_->capacity_bytes() / kMiB) + " MiB");
      return;
    }
    pending_.push_back({job, ctx.now(), false, 0, 0});
    admit_pending(ctx);
  }

  void on_request_arrival(Context& ctx, JobId job, RequestId) override {
    if (const auto it = sessions_.find(job); it != sessions_.end()) schedule(ctx, it->second.lane);
  }

  void on_op_complete(Context& ctx, const OpRecord& r) override {
    if (r.status != OpStatus::Ok) add_candidate(r.job);  // a rewind may give it work again
    if (r.purpose != OpPurpose::LoadWeights || r.status != OpStatus::Ok) return;
    const auto it = sessions_.find(r.job);
    if (it == sessions_.end()) return;
    it->second.loaded = true;
    it->second.pending_since_ns = ctx.now();  // its first iteration is pending from now
    add_candidate(r.job);
    schedule(ctx, it->second.lane);
  }

  void on_iteration_end(Context& ctx, JobId job) override { end_iteration(ctx, job); }
  void on_request_complete(Context& ctx, JobId job, RequestId) override { end_iteration(ctx, job); }

  void on_job_finish(Context& ctx, JobId job) override {
    end_iteration(ctx, job);  // a training job's last iteration has no on_iteration_end
    leave(ctx, job);
  }

 private:
  struct SessionState {
    LaneId lane = 0;
    std::uint64_t admitted_seq = 0;
    TimeNs pending_since_ns = 0;  // training: when its next iteration became pending
    TimeNs iteration_start_ns = 0;
    DurationNs used_ns = 0;
    std::uint64_t ephemeral_bytes = 0;
    DurationNs unit_estimate_ns = 0;  // predicted solo iteration + the dispatch overhead
    bool loaded = false;              // persistent state resident: iterations may start
    std::optional<JobView> state;     // ctx.job(job): a view reads the job as it is now
  };
  struct LaneRun {
    StreamId stream{};
    std::optional<JobId> running;
  };
  struct Pending {
    JobId job{};
    TimeNs arrival_ns = 0;
    // Time the lane rule admitted the job but the arena had no hole for it (observed at each
    // admission attempt: an upper bound to within one attempt).
    bool arena_blocked = false;
    TimeNs blocked_since_ns = 0;
    DurationNs arena_waited_ns = 0;
    // The lane rule's answer at lanes_gen_ == lane_gen (kNoGen: not asked yet). It reads only
    // the lanes, so until a lane changes it answers the same: admit_pending skips a refused
    // job (its refusal already cleared arena_blocked) and checks an accepted one's arena
    // first, asking the lanes only when the arena has room.
    std::uint64_t lane_gen = kNoGen;
    bool lane_ok = false;
  };
  static constexpr std::uint64_t kNoGen = std::numeric_limits<std::uint64_t>::max();

  // ---- admission ------------------------------------------------------------------------

  void admit_pending(Context& ctx) {
    for (auto it = pending_.begin(); it != pending_.end();) {
      const JobId job = it->job;
      if (!ctx.job(job).active()) {
        it = pending_.erase(it);
        continue;
      }
      const bool lane_known = it->lane_gen == lanes_gen_;
      if (lane_known && !it->lane_ok) {
        ++it;  // stays pending; later (smaller) jobs may still fit
        continue;
      }
      std::optional<LaneId> lane;
      if (!lane_known) {
        lane = lanes_->admit(job, ctx.memory().persistent_bytes(job),
                             ctx.memory().ephemeral_bytes(job));
        it->lane_gen = lanes_gen_;
        it->lane_ok = lane.has_value();
        if (!lane) {
          if (it->arena_blocked) it->arena_waited_ns += ctx.now() - it->blocked_since_ns;
          it->arena_blocked = false;
          ++it;
          continue;
        }
      }
      if (!arena_fits(ctx, job)) {
        // The lane budget holds but gpumux's arena has no hole for it: wait (see the notes).
        // Releasing leaves the lanes as they were (lanes_gen_ stays); a lane created and
        // released here only used up a lane id.
        if (lane) lanes_->release(job);
        if (!it->arena_blocked) it->blocked_since_ns = ctx.now();
        it->arena_blocked = true;
        arena_blocked_ = true;
        ++it;
        continue;
      }
      if (!lane)
        lane = lanes_->admit(job, ctx.memory().persistent_bytes(job),
                             ctx.memory().ephemeral_bytes(job));
      if (!lane) throw std::logic_error("salus: the lane rule changed its answer");
      if (lane_runs_.find(*lane) == lane_runs_.end()) {
        lane_runs_[*lane] = LaneRun{take_stream(ctx), std::nullopt};
        ctx.record("salus.lanes", static_cast<double>(lanes_->lanes().size()));
      }
      OpHandle load;
      try {
        load = load_whole(ctx, job, copy_);
      } catch (const OutOfMemory&) {
        ctx.record("salus.reservation_failed", 1);  // unreachable while arena_fits holds
        drop_from_lane(ctx, job, *lane);
        ++it;
        continue;
      }
      ++lanes_gen_;  // the job stays in its lane
      SessionState s;
      s.lane = *lane;
      s.ephemeral_bytes = ctx.memory().ephemeral_bytes(job);
      s.unit_estimate_ns = ctx.estimate_unit_ns(job, *gpu_) + params_.overhead_ns;
      s.loaded = !load.valid();
      s.admitted_seq = next_seq_++;
      s.state = ctx.job(job);
      s.pending_since_ns = ctx.now();
      sessions_[job] = s;
      peak_stale_ = true;
      index_session(job, &sessions_[job]);
      add_candidate(job);
      ctx.record("salus.queue_s", ns_to_seconds(ctx.now() - it->arrival_ns));
      if (it->arena_blocked) it->arena_waited_ns += ctx.now() - it->blocked_since_ns;
      if (it->arena_waited_ns > 0) {
        ctx.record("salus.arena_wait_s", ns_to_seconds(it->arena_waited_ns));
      }
      ctx.record("salus.admitted", static_cast<double>(sessions_.size()));
      it = pending_.erase(it);
      if (!load.valid()) schedule(ctx, *lane);  // state already resident
    }
  }

  /// Whether gpumux's arena can take the job's state and still hold, in one free block, the
  /// largest ephemeral peak of every admitted job once activations are gone (see the notes).
  bool arena_fits(const Context& ctx, JobId job) {
    if (peak_stale_) {
      sessions_peak_ = 0;
      for (const auto& [id, s] : sessions_) {
        sessions_peak_ = std::max(sessions_peak_, s.ephemeral_bytes);
      }
      peak_stale_ = false;
    }
    return ctx.memory().fits_after(job, *gpu_,
                                   std::max(sessions_peak_, ctx.memory().ephemeral_bytes(job)));
  }

  StreamId take_stream(Context& ctx) {
    if (!spare_streams_.empty()) {
      const StreamId s = spare_streams_.front();
      spare_streams_.pop_front();
      return s;
    }
    // A training iteration is three ops (forward, backward, update): issue them all.
    return ctx.streams().create_stream(ctx.streams().default_context(*gpu_), StreamOptions{0, 4});
  }

  /// Removes a job from its lane (destroying the lane if it was the last one).
  void drop_from_lane(Context& ctx, JobId job, LaneId lane) {
    ++lanes_gen_;
    if (lanes_->release(job)) {
      spare_streams_.push_back(lane_runs_.at(lane).stream);
      lane_runs_.erase(lane);
      candidates_.drop_lane(lane);
      ctx.record("salus.lanes", static_cast<double>(lanes_->lanes().size()));
    }
  }

  void leave(Context& ctx, JobId job) {
    const auto it = sessions_.find(job);
    if (it == sessions_.end()) return;
    const LaneId lane = it->second.lane;
    index_session(job, nullptr);
    sessions_.erase(it);
    peak_stale_ = true;
    ctx.record("salus.admitted", static_cast<double>(sessions_.size()));
    drop_from_lane(ctx, job, lane);
    admit_pending(ctx);
    schedule_all(ctx);
  }

  // ---- iteration scheduling -------------------------------------------------------------

  void end_iteration(Context& ctx, JobId job) {
    const auto it = sessions_.find(job);
    if (it == sessions_.end()) return;
    SessionState& s = it->second;
    LaneRun& run = lane_runs_.at(s.lane);
    if (!run.running || *run.running != job) return;
    run.running.reset();
    add_candidate(job);
    s.used_ns += ctx.now() - s.iteration_start_ns;
    s.pending_since_ns = ctx.now();
    const LaneId lane = s.lane;
    if (ctx.job(job).active()) schedule(ctx, lane);
    // Memory came back: lanes whose reservation failed may start now, and jobs that waited for
    // a hole in the arena may be admitted.
    if (arena_blocked_) {
      arena_blocked_ = false;
      admit_pending(ctx);
    }
    retry_starved(ctx);
  }

  void retry_starved(Context& ctx) {
    std::vector<LaneId> lanes;
    for (const auto& [job, lane] : failed_) lanes.push_back(lane);
    failed_.clear();
    std::sort(lanes.begin(), lanes.end());
    lanes.erase(std::unique(lanes.begin(), lanes.end()), lanes.end());
    for (LaneId id : lanes) schedule(ctx, id);
    reject_if_stuck(ctx);
  }

  void schedule_all(Context& ctx) {
    failed_.clear();
    std::vector<LaneId> ids;
    for (const auto& lane : lanes_->lanes()) ids.push_back(lane.id);
    for (LaneId id : ids) schedule(ctx, id);
    reject_if_stuck(ctx);
  }

  void schedule(Context& ctx, LaneId lane_id) {
    const auto run_it = lane_runs_.find(lane_id);
    const LaneManager::Lane* lane = lanes_->find(lane_id);
    if (run_it == lane_runs_.end() || lane == nullptr || run_it->second.running) return;
    if (orders_runnable_only(params_.sched, params_.work_conserving)) {
      // The runnable sessions in the policy's order, picked one at a time (the first pick
      // usually starts): the same order as sorting them, without sorting a whole lane.
      candidates_.add_arrived(ctx, [this](JobId job) -> std::optional<LaneId> {
        const SessionState* st = session(job);
        return st != nullptr ? std::optional<LaneId>(st->lane) : std::nullopt;
      });
      view_.clear();
      candidates_.retain(lane_id, [&](JobId job) {
        const SessionState* st = session(job);
        if (st == nullptr || st->lane != lane_id) return false;
        const JobView js = ctx.job(job);
        if (!(js.active() && st->loaded && js.has_dispatchable_work())) return false;  // runnable
        view_.push_back(session_view(ctx, job, *st, js, true, /*all=*/false));
        return true;
      });
      for (std::size_t left = view_.size(); left > 0; --left) {
        std::size_t best = 0;
        for (std::size_t i = 1; i < left; ++i) {
          if (precedes(params_.sched, view_[i], view_[best])) best = i;
        }
        const JobId job = view_[best].job;
        if (start_iteration(ctx, job, run_it->second)) return;
        view_[best] = view_[left - 1];  // tried: out of the candidates
      }
      return;
    }
    std::vector<Session> view;
    for (const auto& r : lane->residents)
      view.push_back(session_view(ctx, r.job, sessions_.at(r.job), ctx.job(r.job)));
    for (std::size_t i : iteration_order(params_.sched, view, params_.work_conserving)) {
      if (start_iteration(ctx, view[i].job, run_it->second)) return;
    }
  }

  /// The job's session, nullptr if none.
  SessionState* session(JobId job) const {
    return index_of(job) < session_of_.size() ? session_of_[index_of(job)] : nullptr;
  }

  /// Lists `job` (if it has a session) among its lane's candidates.
  void add_candidate(JobId job) {
    if (const SessionState* st = session(job)) candidates_.add(st->lane, job);
  }

  /// Keeps session_of_ (sessions_ by job index; map nodes do not move) in step with sessions_.
  void index_session(JobId job, SessionState* s) {
    if (index_of(job) >= session_of_.size()) session_of_.resize(index_of(job) + 1, nullptr);
    session_of_[index_of(job)] = s;
  }

  /// `st`, `js`: the job's session and state. `runnable`: nullopt = work it out. `all`:
  /// every field; else only those precedes(params_.sched) reads (schedule() calls this per
  /// candidate).
  Session session_view(const Context& ctx, JobId job, const SessionState& st, const JobView& js,
                       std::optional<bool> runnable = std::nullopt, bool all = true) const {
    Session s;
    s.job = job;
    s.admitted_seq = st.admitted_seq;
    s.runnable = runnable ? *runnable : js.active() && st.loaded && js.has_dispatchable_work();
    s.used_ns = st.used_ns;
    if (all || params_.sched == SchedPolicy::Pack) {
      s.pending_since_ns = st.pending_since_ns;
      if (js.inference() && !js.pending_requests().empty()) {
        s.pending_since_ns = std::max(st.pending_since_ns,
                                      ctx.serving().request_arrival(js.pending_requests().front()));
      }
    }
    if (all || params_.sched == SchedPolicy::Rr) s.iterations_done = js.units_done();
    if (!all && params_.sched != SchedPolicy::Srtf && params_.sched != SchedPolicy::Preempt) {
      return s;
    }
    const std::uint64_t total = js.total_units();
    const DurationNs per_unit = st.unit_estimate_ns;
    const DurationNs hint = js.spec().expected_duration_ns;
    if (total == 0) {  // an unbounded closed-loop service: never "short"
      s.remaining_ns = std::numeric_limits<DurationNs>::max() / 2;
      s.expected_total_ns = s.remaining_ns;
    } else {
      const std::uint64_t left = total - std::min(total, js.units_done());
      s.remaining_ns =
          hint > 0 ? static_cast<DurationNs>(static_cast<double>(hint) * static_cast<double>(left) /
                                             static_cast<double>(total))
                   : per_unit * static_cast<DurationNs>(left);
      s.expected_total_ns = hint > 0 ? hint : per_unit * static_cast<DurationNs>(total);
    }
    return s;
  }

  /// Dispatches the job's next whole iteration on the lane's stream; false when its ephemeral
  /// memory cannot be allocated (the iteration is skipped this round, as in Salus).
  bool start_iteration(Context& ctx, JobId job, LaneRun& run) {
    const std::uint64_t unit = ctx.job(job).dispatched().unit;
    try {
      DispatchOptions first;
      first.setup_ns = params_.overhead_ns;
      ctx.dispatch(job, run.stream, first);
    } catch (const OutOfMemory&) {
      ctx.record("salus.reservation_failed", 1);
      failed_.emplace_back(job, sessions_.at(job).lane);
      return false;
    }
    while (ctx.job(job).has_dispatchable_work() && ctx.job(job).dispatched().unit == unit) {
      ctx.dispatch(job, run.stream, DispatchOptions{});
    }
    run.running = job;
    sessions_.at(job).iteration_start_ns = ctx.now();
    return true;
  }

  /// If an ephemeral reservation failed and nothing is running or loading anywhere, no
  /// event will ever return memory: reject the job that could not start, with the reason.
  void reject_if_stuck(Context& ctx) {
    while (!failed_.empty()) {
      for (const auto& [id, run] : lane_runs_) {
        if (run.running) return;
      }
      for (const auto& [job, s] : sessions_) {
        if (!s.loaded) return;  // its load will end and schedule again
      }
      const auto [job, lane] = failed_.front();
      failed_.clear();
      if (sessions_.find(job) == sessions_.end() || !ctx.job(job).active()) continue;
      index_session(job, nullptr);
      sessions_.erase(job);
      peak_stale_ = true;
      ctx.reject(job, "out of memory: its ephemeral memory does not fit the fragmented arena");
      drop_from_lane(ctx, job, lane);
      admit_pending(ctx);
      std::vector<LaneId> ids;
      for (const auto& l : lanes_->lanes()) ids.push_back(l.id);
      for (LaneId id : ids) schedule(ctx, id);
    }
  }

  const Params params_;

  std::optional<DeviceId> gpu_;
  std::optional<LaneManager> lanes_;
  StreamId copy_{};
  std::deque<Pending> pending_;
  std::map<JobId, SessionState> sessions_;
  Candidates candidates_;                  // schedule()'s walk (candidates.hpp)
  std::vector<SessionState*> session_of_;  // by job index: schedule() checks every resident
  std::map<LaneId, LaneRun> lane_runs_;
  std::deque<StreamId> spare_streams_;
  std::vector<std::pair<JobId, LaneId>> failed_;  // reservations that failed, oldest first
  std::vector<Session> view_;  // schedule()'s candidates (reused: no allocation per iteration)
  std::uint64_t next_seq_ = 0;
  bool arena_blocked_ = false;
  std::uint64_t lanes_gen_ = 0;      // counts changes of lanes_' membership (admit_pending's skip)
  bool peak_stale_ = true;           // sessions_ changed since sessions_peak_ was taken
  std::uint64_t sessions_peak_ = 0;  // the admitted jobs' largest ephemeral peak
};

GPUMUX_REGISTER_POLICY("salus", Salus,
                       "Salus: memory lanes, resident persistent state, iteration scheduling "
                       "(sched: pack|fair|rr|fifo|preempt|srtf)");

}  // namespace
}  // namespace gpumux::policies::salus
