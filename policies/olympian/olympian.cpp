// olympian: Olympian (Hu, Rallapalli, Ko, Govindan, Middleware '18): concurrent DNN inference
// requests in one TF-Serving process take turns on the GPU by passing a token at node (op)
// boundaries; each turn is a quantum of profiled GPU time. Modes: fair, weighted_fair, priority.
// The mechanism follows the authors' TF fork (USC-NSL/TF-TF-Downloads, OlympiaScheduler in
// tensorflow/core/common_runtime/direct_session.cc and executor.cc): only the token holder
// dispatches; each completed node adds its profiled cost to the run's account; a spent quantum
// passes the token (fair: rotate; weighted_fair: w consecutive entries; priority: the highest
// registered). A run keeps `depth` nodes in flight, so the old holder's issued kernels run on
// after the token moved. Profiles are the measured node times of the first `profile_requests`
// requests per (model, batch), which run unscheduled (cost_profile.hpp).
//
// Parameters: mode, quantum_us, depth, layers_per_node, profile_requests, yield_check_us,
// handoff_us, overshoot. Metrics: olympian.token_hold_us, olympian.profiled_request_ms.
//
// Left out: training (rejected: Olympian serves inference only); two requests of one service at
// once; TF's cost units (the quantum is GPU time here) and its inter-op thread pool. The long
// story, with the sources of each rule and default: docs/policies/olympian.md.
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "common/job_runner.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/model.hpp"
#include "olympian/cost_profile.hpp"
#include "olympian/serving_process.hpp"
#include "olympian/token_ring.hpp"

namespace gpumux::policies::olympian {
namespace {

enum class Mode : std::uint8_t { Fair, WeightedFair, Priority };
inline constexpr EnumNames<Mode, 3> kModeNames{
    {{Mode::Fair, "fair"}, {Mode::WeightedFair, "weighted_fair"}, {Mode::Priority, "priority"}}};
enum class Overshoot : std::uint8_t { Carry, Repay };
inline constexpr EnumNames<Overshoot, 2> kOvershootNames{
    {{Overshoot::Carry, "carry"}, {Overshoot::Repay, "repay"}}};

class Olympian final : public Policy {
 public:
  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs{
        param::choice("mode", kModeNames, Mode::Fair, "who gets the token next"),
        param::duration("quantum_us", TimeUnit::Microseconds, 1000.0,
                        "profiled GPU time per turn, >= 1 ns"),
        param::integer("depth", 2, "nodes of a run queued or running at once, in [1, 1024]"),
        param::integer("layers_per_node", 1, "model layers per graph node, >= 1"),
        param::integer("profile_requests", 5,
                       "warm-up requests per (model, batch) run unscheduled; 0 = cost model"),
        param::duration("yield_check_us", TimeUnit::Microseconds, 1.0,
                        "host cost of the yield check before each node"),
        param::duration("handoff_us", TimeUnit::Microseconds, std::nullopt,
                        "thread wake-up when the token changes hands (default: event_ns)"),
        param::choice("overshoot", kOvershootNames, Overshoot::Carry,
                      "a quantum overrun is forgiven (carry) or paid back (repay)")};
    return specs;
  }

  explicit Olympian(const PolicyArgs& args) {
    auto p = policy_params(args, param_specs());
    mode_ = p.choice("mode", kModeNames);
    quantum_ns_ = p.duration("quantum_us", Sign::Positive);
    if (quantum_ns_ < 1) p.fail("quantum_us", "must be at least 0.001 (1 ns)");
    issue_ = NodeIssue::read(p);
    profile_requests_ = p.integer_at_least<std::uint64_t>("profile_requests", 0);
    yield_check_ns_ = p.duration("yield_check_us");
    repay_ = p.choice("overshoot", kOvershootNames) == Overshoot::Repay;
    if (const auto h = p.optional_duration("handoff_us")) handoff_ns_ = *h;
    p.finish();
    ring_ = TokenRing(mode_ == Mode::Priority);
  }

  [[nodiscard]] std::string_view name() const noexcept override { return "olympian"; }

  void on_start(Context& ctx) override {
    serving_.start(ctx);
    if (!handoff_ns_ && serving_.has_gpu()) handoff_ns_ = ctx.device(serving_.gpu()).event_ns;
  }

  void on_job_arrival(Context& ctx, JobId job) override {
    if (!serving_.admit(ctx, job, name())) return;
    const JobView s = ctx.job(job);
    Client c;
    c.host = ctx.streams().create_stream(ctx.streams().default_context(serving_.gpu()),
                                         StreamOptions{0, 1});
    c.key = ProfileKey{s.spec().model, s.spec().batch};
    if (mode_ == Mode::WeightedFair) {
      c.copies = static_cast<std::uint32_t>(std::max<long long>(1, std::llround(s.spec().weight)));
    }
    clients_.emplace(job, c);
    profiles_.try_emplace(c.key, profile_requests_);
    begin_run(ctx, job);
    pump(ctx);
  }

  void on_request_arrival(Context& ctx, JobId job, RequestId) override {
    if (!clients_.contains(job)) return;
    begin_run(ctx, job);
    pump(ctx);
  }

  void on_op_complete(Context& ctx, const OpRecord& r) override {
    if (r.purpose == OpPurpose::LoadWeights && clients_.contains(r.job)) {
      begin_run(ctx, r.job);  // the servable is loaded: its first request may start
      pump(ctx);
      return;
    }
    if (r.kind != OpKind::Compute) return;
    const auto it = nodes_.find(r.op);
    if (it == nodes_.end()) return;
    const Node n = it->second;
    nodes_.erase(it);
    Client& c = clients_.at(n.job);
    --c.outstanding;
    if (r.status == OpStatus::Ok) {
      if (n.warmup) profiles_.at(c.key).add_sample(n.first_layer, r.duration_ns());
      if (c.in_run && n.run == c.run && ctx.job(n.job).completed().unit > c.unit) {
        // The run's last node: its request is complete, and on_request_complete (or
        // on_job_finish), delivered next, deregisters the run with its account and registers
        // the service's next request. Charging this node could spend a quantum and hold an
        // election inside a run that is over, before that next request is registered: under
        // overshoot = repay the runs passing their turn in it would then be queued ahead of
        // it, which skews the shares. So the node is not charged and nothing is elected here.
        return;
      }
      if (!n.warmup && c.in_run && c.scheduled && n.run == c.run) {
        c.account_ns += n.cost_ns;
        if (holder_ == n.job && c.account_ns >= quantum_ns_) {
          c.account_ns -= quantum_ns_;
          ring_.rotate(n.job);
        }
      }
    }
    pump(ctx);
  }

  void on_request_complete(Context& ctx, JobId job, RequestId) override {
    if (!clients_.contains(job)) return;
    end_run(ctx, job);
    blocked_.clear();  // its activations were freed: waiting requests may fit now
    begin_run(ctx, job);
    pump(ctx);
  }

  void on_job_finish(Context& ctx, JobId job) override {
    if (!clients_.contains(job)) return;
    if (clients_.at(job).in_run) end_run(ctx, job);
    blocked_.clear();
    pump(ctx);
  }

 private:
  struct Client {
    StreamId host{};  ///< where its wake-ups are paid (off the GPU's stream)
    ProfileKey key;
    std::uint32_t copies = 1;       ///< entries in the token list (weighted_fair)
    bool in_run = false;            ///< a request is being served
    bool scheduled = false;         ///< the run waits for the token (else: a warm-up run)
    std::uint64_t run = 0;          ///< ordinal of the current run
    std::uint64_t unit = 0;         ///< the job's unit (request) the current run serves
    DurationNs account_ns = 0;      ///< profiled cost consumed toward the current quantum
    std::uint32_t outstanding = 0;  ///< its nodes queued or running
    bool wake_pending = false;      ///< the token came back to it: pays the wake-up
    TimeNs registered_ns = 0;       ///< when the current run registered
  };
  struct Node {
    JobId job;
    std::uint64_t run;
    std::uint32_t first_layer;
    DurationNs cost_ns;  ///< profiled cost charged when it completes
    bool warmup;         ///< measured for the profile
  };

  /// A request starts (Session::Run) once its servable is loaded: a warm-up run while its
  /// profile is not ready, else a scheduled one registered in the token list.
  void begin_run(Context& ctx, JobId job) {
    Client& c = clients_.at(job);
    const JobView s = ctx.job(job);
    if (!s.active() || c.in_run || s.pending_requests().empty()) return;
    if (!s.resident(serving_.gpu(), LayerRange{0, s.model().layer_count()})) return;
    c.in_run = true;
    ++c.run;
    c.unit = s.completed().unit;
    c.account_ns = 0;
    c.scheduled = profiles_.at(c.key).ready();
    c.registered_ns = ctx.now();
    if (c.scheduled) ring_.add(job, c.copies, s.spec().priority);
  }

  void end_run(Context& ctx, JobId job) {
    Client& c = clients_.at(job);
    if (c.scheduled) {
      ring_.remove(job);
    } else {
      CostProfile& p = profiles_.at(c.key);
      const bool was_ready = p.ready();
      p.warmup_request_completed();
      if (!was_ready && p.ready()) {
        ctx.record("olympian.profiled_request_ms", ns_to_ms(p.total_ns()));
      }
    }
    c.in_run = false;
    c.scheduled = false;
    c.account_ns = 0;
    c.wake_pending = false;
  }

  /// Re-reads the token holder. A run that receives the token from another run after it
  /// registered was parked on its condition variable; one registering now is not.
  void elect(Context& ctx) {
    std::optional<JobId> next = ring_.holder(blocked_);
    // overshoot = repay: a run still owing a whole quantum passes its turn and pays one
    // (deficit round robin; each pass repays a quantum, so this ends).
    while (repay_ && next && next != holder_ && clients_.at(*next).account_ns >= quantum_ns_) {
      clients_.at(*next).account_ns -= quantum_ns_;
      ring_.rotate(*next);
      next = ring_.holder(blocked_);
    }
    if (next == holder_) return;
    if (holder_) {
      ctx.record("olympian.token_hold_us", static_cast<double>(ctx.now() - held_since_) * 1e-3);
      if (next && clients_.at(*next).registered_ns < ctx.now()) {
        clients_.at(*next).wake_pending = true;
      }
    }
    holder_ = next;
    held_since_ = ctx.now();
  }

  void pump(Context& ctx) {
    for (;;) {
      elect(ctx);
      // A holder whose request does not fit in memory is skipped: elect again.
      if (holder_ && !feed(ctx, *holder_, /*scheduled=*/true)) continue;
      for (auto& [job, c] : clients_) {
        if (c.in_run && !c.scheduled) feed(ctx, job, /*scheduled=*/false);
      }
      if (blocked_.empty() || !serving_.idle(ctx) || holder_) return;
      // Nothing runs and nothing will free memory: the first waiting service cannot fit.
      const JobId job = *blocked_.begin();
      const std::uint64_t need = ctx.memory().ephemeral_bytes(job);
      Client& c = clients_.at(job);
      if (c.scheduled) ring_.remove(job);  // it never ran: no warm-up to count
      c.in_run = c.scheduled = false;
      blocked_.clear();
      ctx.reject(job, "out of memory: a request's activations (" + std::to_string(need) +
                          " B) do not fit beside the other services' models");
    }
  }

  /// Keeps `issue_.depth` nodes of the job's current request queued or running. Returns false when
  /// its request cannot start for lack of memory (the job is then blocked).
  /// Only the run's own request is fed: when the node that ends it completes, its
  /// on_op_complete comes before on_request_complete, and the service's next request must not
  /// be issued under the ending run (unscheduled, or without the token); it starts as a new
  /// run in on_request_complete.
  bool feed(Context& ctx, JobId job, bool scheduled) {
    Client& c = clients_.at(job);
    const JobView s = ctx.job(job);
    while (c.in_run && s.active() && s.has_dispatchable_work() && s.dispatched().unit == c.unit &&
           s.dispatched().unit == s.completed().unit && c.outstanding < issue_.depth) {
      const std::uint32_t first = s.dispatched().layers_done;
      DispatchOptions o;
      o.layers = issue_.layers_per_node;
      DurationNs cost = 0;
      if (scheduled) {
        o.setup_ns = yield_check_ns_;
        const auto profiled = profiles_.at(c.key).cost(first);
        cost = profiled ? *profiled
                        : ctx.estimate_next_ns(job, serving_.gpu(), issue_.layers_per_node);
        if (c.wake_pending && *handoff_ns_ > 0) {
          o.after.push_back(ctx.delay(job, c.host, *handoff_ns_));
        }
        c.wake_pending = false;
      }
      OpHandle h;
      try {
        h = ctx.dispatch(job, serving_.compute(), o);
      } catch (const OutOfMemory&) {
        blocked_.insert(job);
        return false;
      }
      nodes_.emplace(h.op, Node{job, c.run, first, cost, !scheduled});
      ++c.outstanding;
    }
    return true;
  }

  // parameters
  Mode mode_ = Mode::Fair;
  DurationNs quantum_ns_ = 0;
  NodeIssue issue_;
  std::uint64_t profile_requests_ = 5;
  DurationNs yield_check_ns_ = 0;
  std::optional<DurationNs> handoff_ns_;
  bool repay_ = false;  ///< overshoot = repay (an extension; the code carries it)

  // state
  ServingProcess serving_;
  TokenRing ring_{false};  // set by the constructor once the mode is known
  std::optional<JobId> holder_;
  TimeNs held_since_ = 0;
  std::map<JobId, Client> clients_;
  std::map<ProfileKey, CostProfile> profiles_;
  std::map<OpId, Node> nodes_;
  std::set<JobId> blocked_;  ///< runs waiting for memory to start their request
};

GPUMUX_REGISTER_POLICY("olympian", Olympian,
                       "Olympian: token-passing time slicing of inference at node boundaries "
                       "(fair, weighted_fair, priority)");

}  // namespace
}  // namespace gpumux::policies::olympian
