// The serving-engine tests' batcher policy and helpers (serving_batcher.hpp).
#include "serving_batcher.hpp"

#include <random>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/event_fields.hpp"
#include "gpumux/api/seed.hpp"
#include "gpumux/io/config.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/io/request_variability_config.hpp"
#include "gpumux/model/model.hpp"
#include "gpumux/model/request_variability.hpp"
#include "test_support.hpp"

namespace gpumux::test {

ServingPlan g_plan;
ServingSeen g_seen;

namespace {

class ServingBatcher final : public Policy {
 public:
  explicit ServingBatcher(const PolicyArgs&) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "test_serving_batcher"; }

  void on_start(Context& ctx) override {
    gpu_ = ctx.gpus().front();
    const ContextId c = ctx.streams().default_context(gpu_);
    compute_ = ctx.streams().create_stream(c, StreamOptions{0, 2});
    copy_ = ctx.streams().create_stream(c, StreamOptions{0, 2});
  }
  void on_job_arrival(Context& ctx, JobId job) override {
    job_ = job;
    if (g_plan.at_arrival) g_plan.at_arrival(ctx, job);
    (void)ctx.memory().load(job, copy_, LayerRange{0, ctx.job(job).model().layer_count()});
  }
  void on_request_arrival(Context& ctx, JobId, RequestId r) override {
    const std::size_t i = raw(r);
    g_seen.deadlines.resize(i + 1);
    g_seen.arrivals.resize(i + 1);
    g_seen.deadlines[i] = ctx.serving().request_deadline(r);
    g_seen.arrivals[i] = ctx.serving().request_arrival(r);
    if (i < g_plan.drop.size() && g_plan.drop[i]) {
      refused_drop(ctx, RequestId{999'999});  // unknown
      ctx.serving().drop_request(r, "test: dropped");
      refused_drop(ctx, r);  // dropped already
      return;
    }
    if (i < g_plan.hold_ns.size() && g_plan.hold_ns[i] > 0) {
      ++held_;
      (void)ctx.set_timer(g_plan.hold_ns[i], i);
      return;
    }
    try_dispatch(ctx);
  }
  void on_timer(Context& ctx, TimerId, std::uint64_t) override {
    --held_;
    try_dispatch(ctx);
  }
  void on_request_complete(Context& ctx, JobId, RequestId) override { try_dispatch(ctx); }
  void on_job_finish(Context& ctx, JobId job) override {
    const ExecTimeWindow& b = ctx.serving().batch_times(job, g_plan.batch);
    g_seen.batch_window = b.samples();
    g_seen.batch_window_added = b.total_added();
    g_seen.request_window = ctx.serving().request_times(job).samples();
    for (std::uint32_t size : g_plan.sizes) {
      g_seen.size_windows[size] = ctx.serving().batch_times(job, size).samples();
    }
  }

 private:
  // A drop that must be refused, and must change nothing.
  void refused_drop(Context& ctx, RequestId r) {
    if (!g_plan.probe_refusals) return;
    const JobView v = ctx.job(job_);
    const std::size_t waiting = v.requests_waiting();
    const std::uint64_t dropped = v.requests_dropped();
    const std::size_t pending = v.pending_requests().size();
    try {
      ctx.serving().drop_request(r, "test: must be refused");
    } catch (const PolicyError&) {
      ++g_seen.refused;
    }
    if (v.requests_waiting() != waiting || v.requests_dropped() != dropped ||
        v.pending_requests().size() != pending) {
      ++g_seen.refusals_changed_state;
    }
  }
  void try_dispatch(Context& ctx) {
    const JobView v = ctx.job(job_);
    const bool pipeline = !g_plan.sizes.empty();
    const std::uint32_t size =
        pipeline ? g_plan.sizes[dispatches_ % g_plan.sizes.size()] : g_plan.batch;
    if (held_ > 0 || v.requests_waiting() < size) return;
    if (!pipeline && ctx.ops_in_flight(job_, gpu_) > 0) return;
    const RequestId first = v.waiting_request(0);
    DispatchOptions o;
    o.requests = size;
    (void)ctx.dispatch(job_, compute_, o);
    ++dispatches_;
    refused_drop(ctx, first);  // dispatched
  }

  DeviceId gpu_{};
  StreamId compute_{}, copy_{};
  JobId job_{};
  int held_ = 0;
  std::size_t dispatches_ = 0;
};
GPUMUX_REGISTER_POLICY("test_serving_batcher", ServingBatcher,
                       "test: batches a service's waiting requests");

}  // namespace

nlohmann::json serving_service(const std::string& model, int batch,
                               const std::vector<double>& requests_s) {
  return {{"name", "svc"},  {"kind", "inference"}, {"model", model},
          {"batch", batch}, {"arrival_s", 0.0},    {"requests", requests_s}};
}

ExperimentResult run_batcher(const nlohmann::json& service, std::uint64_t seed) {
  g_seen = ServingSeen{};
  auto doc = make_config("test_serving_batcher", {{"jobs", {service}}});
  doc["seed"] = seed;
  return run_config(doc);
}

std::vector<LoggedOp> forward_ops(const ExperimentResult& r) {
  std::vector<LoggedOp> out;
  for (const Event& e : r.log.events()) {
    if (e.kind != EventKind::OpEnd || e.job != 0 || e.purpose != OpPurpose::Forward) continue;
    out.push_back({LayerRange{e.first_layer, e.last_layer}, op_started_ns(e), e.t_ns});
  }
  return out;
}

std::map<std::uint64_t, TimeNs> request_ends(const ExperimentResult& r) {
  std::map<std::uint64_t, TimeNs> out;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::RequestEnd) out[request_of(e)] = e.t_ns;
  }
  return out;
}

std::vector<std::uint32_t> drawn_work(const nlohmann::json& dynamic, const Model& model,
                                      std::uint64_t seed, std::size_t job, std::size_t count) {
  auto v = parse_request_variability(dynamic, "test", "dynamic", source_dir());
  v->resolve(model);
  std::mt19937_64 rng(gpumux::derive_seed(seed, gpumux::SeedStream::RequestVariability, job));
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(v->draw(rng));
  return out;
}

}  // namespace gpumux::test
