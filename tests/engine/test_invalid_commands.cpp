// A policy defined here issues every invalid command and query the Context can receive and
// checks that each is refused with PolicyError (policy.hpp: "commands ... are validated"),
// leaves device memory as it was, and that the engine stays usable: the valid commands issued
// between the refused ones still run both jobs to the end, and the event log equals that of
// the same policy issuing only the valid commands. What is refused, and why evict of nothing
// is not: docs/decisions.md D21.
#include <catch2/catch.hpp>

#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/policy.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/model.hpp"
#include "invalid_command_support.hpp"
#include "test_support.hpp"

using namespace gpumux;
using namespace gpumux::test;

namespace {

bool g_probe = true;        // issue the invalid commands (false: only the valid ones)
std::size_t g_refused = 0;  // invalid commands refused (test thread only)
std::size_t g_no_ops = 0;   // commands accepted as no-ops by contract
std::size_t g_timer_fired = 0;
std::uint64_t g_timer_tag = 0;

// A handle naming an op id far beyond the ops any run here issues.
constexpr OpHandle kNeverIssued{OpId{1'000'000}, true};

// Issues `command` and checks it is refused with PolicyError without touching memory.
template <class F>
void refused(Context& ctx, const char* what, F&& command) {
  if (!g_probe) return;
  INFO("invalid command: " << what);
  const MemoryStats before = ctx.memory().stats(kGpu);
  CHECK_THROWS_AS(command(), PolicyError);
  CHECK(same_memory(before, ctx.memory().stats(kGpu)));
  ++g_refused;
}

// Issues `command`, valid but with nothing to do, and checks it is accepted without touching
// memory (the event logs compared below show it wrote nothing either).
template <class F>
void no_op(Context& ctx, const char* what, F&& command) {
  if (!g_probe) return;
  INFO("no-op command: " << what);
  const MemoryStats before = ctx.memory().stats(kGpu);
  CHECK_NOTHROW(command());
  CHECK(same_memory(before, ctx.memory().stats(kGpu)));
  ++g_no_ops;
}

// Training job 0 ("train", 2 iterations) arrives at 0, inference job 1 ("svc", one request at
// 20 ms) at 10 ms; device 0 is a GPU, device 1 a CPU.
class InvalidCommands final : public Policy {
 public:
  explicit InvalidCommands(const PolicyArgs&) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "test_invalid_commands"; }

  void on_start(Context& ctx) override {
    // Queries naming what does not exist.
    refused(ctx, "device(unknown)", [&] { (void)ctx.device(kUnknownDevice); });
    refused(ctx, "cost(unknown)", [&] { (void)ctx.cost(kUnknownDevice); });
    refused(ctx, "job(unknown)", [&] { (void)ctx.job(kUnknownJob); });
    refused(ctx, "memory(unknown)", [&] { (void)ctx.memory().stats(kUnknownDevice); });
    refused(ctx, "queued(unknown stream)", [&] { (void)ctx.streams().queued(kUnknownStream); });
    refused(ctx, "in_flight(unknown stream)",
            [&] { (void)ctx.streams().in_flight(kUnknownStream); });
    refused(ctx, "device_of(unknown stream)",
            [&] { (void)ctx.streams().device_of(kUnknownStream); });
    refused(ctx, "default_context(unknown)",
            [&] { (void)ctx.streams().default_context(kUnknownDevice); });
    refused(ctx, "request_arrival(unknown)",
            [&] { (void)ctx.serving().request_arrival(RequestId{99}); });
    refused(ctx, "request_job(unknown)", [&] { (void)ctx.serving().request_job(RequestId{99}); });
    refused(ctx, "estimate_next_ns(unknown job)",
            [&] { (void)ctx.estimate_next_ns(kUnknownJob, kGpu); });
    refused(ctx, "estimate_next_ns(unknown device)",
            [&] { (void)ctx.estimate_next_ns(kTrain, kUnknownDevice); });
    refused(ctx, "estimate_unit_ns(unknown job)",
            [&] { (void)ctx.estimate_unit_ns(kUnknownJob, kGpu); });
    refused(ctx, "estimate_unit_ns(unknown device)",
            [&] { (void)ctx.estimate_unit_ns(kTrain, kUnknownDevice); });
    refused(ctx, "load_bytes(unknown job)", [&] {
      (void)ctx.memory().load_bytes(kUnknownJob, {0, 1});
    });
    refused(ctx, "ephemeral_bytes(unknown job)",
            [&] { (void)ctx.memory().ephemeral_bytes(kUnknownJob); });
    refused(ctx, "persistent_bytes(unknown job)",
            [&] { (void)ctx.memory().persistent_bytes(kUnknownJob); });
    refused(ctx, "ops_in_flight(unknown job)", [&] { (void)ctx.ops_in_flight(kUnknownJob, kGpu); });
    refused(ctx, "ops_in_flight(unknown device)",
            [&] { (void)ctx.ops_in_flight(kTrain, kUnknownDevice); });

    // Contexts, streams and timers.
    refused(ctx, "create_context(unknown device)",
            [&] { ctx.streams().create_context(kUnknownDevice, {}, ContextStart::Warm); });
    refused(ctx, "create_context(build, not a cold process)",
            [&] { ctx.streams().create_context(kGpu, {}, ContextStart::NewContext, kTrain); });
    refused(ctx, "create_context(build unknown job)", [&] {
      ctx.streams().create_context(kGpu, {}, ContextStart::ColdProcess, kUnknownJob);
    });
    refused(ctx, "create_stream(unknown context)",
            [&] { ctx.streams().create_stream(ContextId{99}, StreamOptions{}); });
    refused(ctx, "create_stream(max_in_flight 0)", [&] {
      ctx.streams().create_stream(ctx.streams().default_context(kGpu), StreamOptions{0, 0});
    });
    refused(ctx, "set_timer(negative delay)", [&] { ctx.set_timer(-1, 0); });
    refused(ctx, "cancel_timer(unknown)", [&] { ctx.cancel_timer(TimerId{99}); });

    // Metric values JSON cannot hold.
    refused(ctx, "record(NaN)",
            [&] { ctx.record("test.nan", std::numeric_limits<double>::quiet_NaN()); });
    refused(ctx, "record(+infinity)",
            [&] { ctx.record("test.inf", std::numeric_limits<double>::infinity()); });
    refused(ctx, "record(-infinity)",
            [&] { ctx.record("test.inf", -std::numeric_limits<double>::infinity()); });

    // Every job command on a job that has not arrived.
    for (JobId j : {kTrain, kSvc}) {
      refused(ctx, "dispatch(not arrived)", [&] { ctx.dispatch(j, kUnknownStream); });
      refused(ctx, "load(not arrived)", [&] { ctx.memory().load(j, kUnknownStream, {0, 1}); });
      refused(ctx, "evict(not arrived)", [&] { ctx.memory().evict(j, kGpu); });
      refused(ctx, "migrate(not arrived)", [&] { ctx.memory().migrate(j, kCpu, kUnknownStream); });
      refused(ctx, "preempt(not arrived)", [&] { ctx.preempt(j, PreemptMode::DropQueued); });
      refused(ctx, "delay(not arrived)", [&] { ctx.delay(j, kUnknownStream, 1); });
      refused(ctx, "reject(not arrived)", [&] { ctx.reject(j, "test"); });
    }

    // The valid commands after the refused ones.
    const ContextId gpu_ctx = ctx.streams().default_context(kGpu);
    compute_ = ctx.streams().create_stream(gpu_ctx, StreamOptions{0, 2});
    copy_ = ctx.streams().create_stream(gpu_ctx, StreamOptions{0, 2});
    host_ = ctx.streams().create_stream(gpu_ctx, StreamOptions{0, 8});
    cpu_ = ctx.streams().create_stream(ctx.streams().default_context(kCpu), StreamOptions{0, 2});
    const ContextId svc_ctx = ctx.streams().create_context(kGpu, {}, ContextStart::NewContext);
    svc_stream_ = ctx.streams().create_stream(svc_ctx, StreamOptions{0, 2});
    const TimerId cancelled = ctx.set_timer(ms_to_ns(1), 1);
    ctx.cancel_timer(cancelled);
    ctx.cancel_timer(cancelled);  // cancelling twice is allowed
    (void)ctx.set_timer(ms_to_ns(2), 2);
  }

  void on_job_arrival(Context& ctx, JobId job) override {
    const std::uint32_t n = ctx.job(job).model().layer_count();
    if (job == kSvc) {
      no_op(ctx, "evict(nothing held on the device)", [&] { ctx.memory().evict(kSvc, kGpu); });
      refused(ctx, "evict(on a CPU)", [&] { ctx.memory().evict(kSvc, kCpu); });
      refused(ctx, "load(waits for an op never issued)", [&] {
        LoadOptions o;
        o.after.push_back(kNeverIssued);
        ctx.memory().load(kSvc, copy_, {0, n}, o);
      });
      (void)ctx.memory().load(kSvc, copy_, {0, n});
      refused(ctx, "dispatch(no pending request)", [&] { ctx.dispatch(kSvc, svc_stream_); });
      return;
    }
    refused(ctx, "dispatch(unknown job)", [&] { ctx.dispatch(kUnknownJob, compute_); });
    refused(ctx, "dispatch(unknown stream)", [&] { ctx.dispatch(kTrain, kUnknownStream); });
    refused(ctx, "dispatch(weights not on the device)", [&] { ctx.dispatch(kTrain, compute_); });
    refused(ctx, "load(range past the last layer)", [&] {
      ctx.memory().load(kTrain, copy_, {0, n + 1});
    });
    refused(ctx, "load(empty range)", [&] { ctx.memory().load(kTrain, copy_, {2, 2}); });
    refused(ctx, "load(inverted range)", [&] { ctx.memory().load(kTrain, copy_, {3, 1}); });
    refused(ctx, "load(on a CPU stream)", [&] { ctx.memory().load(kTrain, cpu_, {0, n}); });
    refused(ctx, "load(unknown stream)", [&] {
      ctx.memory().load(kTrain, kUnknownStream, {0, n});
    });
    refused(ctx, "evict(unknown job)", [&] { ctx.memory().evict(kUnknownJob, kGpu); });
    refused(ctx, "evict(unknown device)", [&] { ctx.memory().evict(kTrain, kUnknownDevice); });
    refused(ctx, "migrate(unknown device)",
            [&] { ctx.memory().migrate(kTrain, kUnknownDevice, copy_); });
    refused(ctx, "migrate(unknown stream)",
            [&] { ctx.memory().migrate(kTrain, kCpu, kUnknownStream); });
    refused(ctx, "migrate(to the device it is on)",
            [&] { ctx.memory().migrate(kTrain, kGpu, copy_); });
    refused(ctx, "migrate(no state on its device)",
            [&] { ctx.memory().migrate(kTrain, kCpu, copy_); });
    refused(ctx, "preempt(unknown job)", [&] { ctx.preempt(kUnknownJob, PreemptMode::Kill); });
    refused(ctx, "reject(unknown job)", [&] { ctx.reject(kUnknownJob, "test"); });
    refused(ctx, "delay(unknown job)", [&] { ctx.delay(kUnknownJob, host_, 1); });
    refused(ctx, "delay(unknown stream)", [&] { ctx.delay(kTrain, kUnknownStream, 1); });
    refused(ctx, "delay(negative duration)", [&] { ctx.delay(kTrain, host_, -1); });

    // One more unfinished op than an op may wait for (DepList::kCapacity).
    std::vector<OpHandle> delays;
    for (int i = 0; i < 5; ++i) delays.push_back(ctx.delay(kTrain, host_, ms_to_ns(1)));
    // Refused after its checks on the layers passed: its weights must not be allocated.
    refused(ctx, "load(more dependencies than an op may have)", [&] {
      LoadOptions o;
      o.after = delays;
      ctx.memory().load(kTrain, copy_, {0, n}, o);
    });
    (void)ctx.memory().load(kTrain, copy_, {0, n});
    refused(ctx, "load(layer already loading)", [&] { ctx.memory().load(kTrain, copy_, {0, 1}); });
    refused(ctx, "evict(ops in flight)", [&] { ctx.memory().evict(kTrain, kGpu); });
    refused(ctx, "migrate(copy stream on the wrong device)",
            [&] { ctx.memory().migrate(kTrain, kCpu, cpu_); });

    // Refused before the job's first dispatch, whose activations are not allocated yet: a
    // refused dispatch must not allocate them.
    refused(ctx, "dispatch(waits for an op never issued)", [&] {
      DispatchOptions o;
      o.after.push_back(kNeverIssued);
      ctx.dispatch(kTrain, compute_, o);
    });
    refused(ctx, "dispatch(more dependencies than an op may have)", [&] {
      DispatchOptions o;  // four delays and the load
      o.after.assign(delays.begin(), delays.begin() + 4);
      ctx.dispatch(kTrain, compute_, o);
    });
    refused(ctx, "dispatch(negative setup_ns)", [&] {
      DispatchOptions o;
      o.setup_ns = -1;
      ctx.dispatch(kTrain, compute_, o);
    });
    dispatch_next_pass(ctx);
  }

  void on_op_complete(Context& ctx, const OpRecord& r) override {
    if (r.job == kTrain && r.kind == OpKind::Compute && r.status == OpStatus::Ok &&
        passes_ < kTrainPasses) {
      dispatch_next_pass(ctx);
    }
  }

  void on_request_arrival(Context& ctx, JobId job, RequestId) override {
    (void)ctx.dispatch(job, svc_stream_);
    refused(ctx, "dispatch(request already dispatched)", [&] { ctx.dispatch(job, svc_stream_); });
  }

  void on_job_finish(Context& ctx, JobId job) override {
    if (job != kTrain) return;
    refused(ctx, "dispatch(finished)", [&] { ctx.dispatch(kTrain, compute_); });
    refused(ctx, "load(finished)", [&] { ctx.memory().load(kTrain, copy_, {0, 1}); });
    refused(ctx, "evict(finished)", [&] { ctx.memory().evict(kTrain, kGpu); });
    refused(ctx, "migrate(finished)", [&] { ctx.memory().migrate(kTrain, kCpu, copy_); });
    refused(ctx, "preempt(finished)", [&] { ctx.preempt(kTrain, PreemptMode::Discard); });
    refused(ctx, "reject(finished)", [&] { ctx.reject(kTrain, "test"); });
    refused(ctx, "delay(finished)", [&] { ctx.delay(kTrain, host_, 1); });
  }

  void on_timer(Context& ctx, TimerId, std::uint64_t tag) override {
    ++g_timer_fired;
    g_timer_tag = tag;
    refused(ctx, "cancel_timer(unknown, later)", [&] { ctx.cancel_timer(TimerId{99}); });
  }

 private:
  static constexpr int kTrainPasses = 6;  // 2 iterations x (forward, backward, update)

  void dispatch_next_pass(Context& ctx) {
    (void)ctx.dispatch(kTrain, compute_);
    ++passes_;
    if (passes_ == kTrainPasses) {
      refused(ctx, "dispatch(all iterations dispatched)", [&] { ctx.dispatch(kTrain, compute_); });
    }
  }

  StreamId compute_{}, copy_{}, host_{}, cpu_{}, svc_stream_{};
  int passes_ = 0;
};
GPUMUX_REGISTER_POLICY("test_invalid_commands", InvalidCommands,
                       "test: issues every invalid command and checks it is refused");

ExperimentResult run_probe(bool probe) {
  g_probe = probe;
  g_refused = 0;
  g_no_ops = 0;
  g_timer_fired = 0;
  g_timer_tag = 0;
  return run_config(invalid_command_config("test_invalid_commands"));
}

}  // namespace

TEST_CASE("every invalid command is refused with PolicyError and the engine stays usable",
          "[engine]") {
  const ExperimentResult with_probes = run_probe(true);
  // 19 queries, 7 context/stream/timer commands, 3 metrics, 14 on jobs not arrived, 26 at the
  // training job's arrival, 3 at the service's, 1 per request, 7 after the job finished, 1 per
  // timer, 1 when all iterations are dispatched: every probe ran.
  CHECK(g_refused == 19 + 7 + 3 + 14 + 26 + 3 + 1 + 7 + 1 + 1);
  CHECK(g_no_ops == 1);
  CHECK(g_timer_fired == 1);
  CHECK(g_timer_tag == 2);  // the cancelled timer never fires
  CHECK(with_probes.run.jobs_finished == 2);
  CHECK(with_probes.run.jobs_rejected == 0);
  CHECK(with_probes.run.jobs_unfinished == 0);

  // A refused command leaves no trace: the same valid commands alone give the same events.
  const ExperimentResult valid_only = run_probe(false);
  CHECK(g_refused == 0);
  CHECK(events_jsonl(with_probes) == events_jsonl(valid_only));
  // Every line is JSON (a refused non-finite metric never reaches the log).
  std::istringstream lines(events_jsonl(with_probes));
  std::string line;
  while (std::getline(lines, line)) {
    INFO(line);
    CHECK(nlohmann::json::accept(line));
  }
}
