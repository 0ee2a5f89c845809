// tf_serving: stock TF-Serving, Olympian's baseline. One serving process; every request's
// nodes are issued as soon as its session can issue them, with no scheduler between sessions,
// so nodes of concurrent Session::Run calls interleave in issue order.
// - streams = "shared" (default): one compute stream per GPU, as in stock TF 1.x; each session
//   keeps `depth` nodes (one gpumux layer each, or `layers_per_node`) queued or running on it,
//   so kernels run one at a time in issue order: a node-level round robin (equal numbers of
//   nodes, not equal GPU time).
// - streams = "per_client": one stream per session in the one context; the device shares the
//   GPU among the running nodes by water-filling (idealised processor sharing).
// Left out: the executor's thread scheduling (issue order here is regular, not arbitrary);
// TF-Serving's loading at start-up (models load when their service arrives); two requests of a
// service at once. Inference only: training jobs are rejected. A request whose activations do
// not fit waits until another ends; if nothing runs and it still does not fit, the service is
// rejected. Details and sources: docs/policies/olympian.md.
#include <map>
#include <set>

#include "common/job_runner.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/model/model.hpp"
#include "olympian/serving_process.hpp"

namespace gpumux::policies::olympian {
namespace {

enum class Streams : std::uint8_t { Shared, PerClient };
inline constexpr EnumNames<Streams, 2> kStreamsNames{
    {{Streams::Shared, "shared"}, {Streams::PerClient, "per_client"}}};

class TfServing final : public Policy {
 public:
  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs{
        param::choice("streams", kStreamsNames, Streams::Shared,
                      "one compute stream for all clients, or one per client"),
        param::integer("depth", 2, "nodes of a run queued or running at once, in [1, 1024]"),
        param::integer("layers_per_node", 1, "model layers per graph node, >= 1")};
    return specs;
  }

  explicit TfServing(const PolicyArgs& args) {
    auto p = policy_params(args, param_specs());
    per_client_ = p.choice("streams", kStreamsNames) == Streams::PerClient;
    issue_ = NodeIssue::read(p);
    p.finish();
  }

  [[nodiscard]] std::string_view name() const noexcept override { return "tf_serving"; }

  void on_start(Context& ctx) override { serving_.start(ctx); }

  void on_job_arrival(Context& ctx, JobId job) override {
    if (!serving_.admit(ctx, job, name())) return;
    Session s;
    s.stream = per_client_
                   ? ctx.streams().create_stream(ctx.streams().default_context(serving_.gpu()),
                                                 StreamOptions{0, issue_.depth})
                   : serving_.compute();
    sessions_.emplace(job, s);
    pump(ctx);
  }
  void on_request_arrival(Context& ctx, JobId, RequestId) override { pump(ctx); }
  void on_op_complete(Context& ctx, const OpRecord& r) override {
    if (r.kind == OpKind::Compute) {
      const auto it = sessions_.find(r.job);
      if (it != sessions_.end() && it->second.outstanding > 0) --it->second.outstanding;
    }
    pump(ctx);
  }
  void on_request_complete(Context& ctx, JobId, RequestId) override {
    blocked_.clear();  // activations were freed
    pump(ctx);
  }
  void on_job_finish(Context& ctx, JobId) override {
    blocked_.clear();
    pump(ctx);
  }

 private:
  struct Session {
    StreamId stream{};
    std::uint32_t outstanding = 0;  ///< its nodes queued or running
  };

  /// Every session issues what it can, in job order (the executor threads' order).
  void pump(Context& ctx) {
    for (;;) {
      bool running = !serving_.idle(ctx);
      for (auto& [job, s] : sessions_) {
        if (blocked_.contains(job)) continue;
        feed(ctx, job, s);
        running = running || ctx.streams().queued(s.stream) + ctx.streams().in_flight(s.stream) > 0;
      }
      if (blocked_.empty() || running) return;
      // Nothing runs and nothing will free memory: the first waiting service cannot fit.
      const JobId job = *blocked_.begin();
      blocked_.clear();
      ctx.reject(job, "out of memory: a request's activations (" +
                          std::to_string(ctx.memory().ephemeral_bytes(job)) +
                          " B) do not fit beside the other services' models");
    }
  }

  void feed(Context& ctx, JobId job, Session& session) {
    const JobView s = ctx.job(job);
    // A session runs once its servable is loaded (a node waiting for its weights at the head of
    // the shared stream would hold up every other session).
    if (!s.active() || !s.resident(serving_.gpu(), LayerRange{0, s.model().layer_count()})) return;
    while (s.active() && s.has_dispatchable_work() && s.dispatched().unit == s.completed().unit &&
           session.outstanding < issue_.depth) {
      try {
        ctx.dispatch(job, session.stream, DispatchOptions{issue_.layers_per_node, {}});
      } catch (const OutOfMemory&) {
        blocked_.insert(job);
        return;
      }
      ++session.outstanding;
    }
  }

  bool per_client_ = false;
  NodeIssue issue_;
  ServingProcess serving_;
  std::map<JobId, Session> sessions_;
  std::set<JobId> blocked_;  ///< services waiting for memory to start a request
};

GPUMUX_REGISTER_POLICY("tf_serving", TfServing,
                       "stock TF-Serving: all sessions issue nodes freely on the GPU's "
                       "compute stream (Olympian's baseline)");

}  // namespace
}  // namespace gpumux::policies::olympian
