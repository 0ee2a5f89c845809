// Commands the engine accepts today although they look invalid, pinned so the engine split
// (issue 12) can decide each one: every case is tagged [!mayfail] and asserts the behaviour
// we expect (a PolicyError and no effect); its failures are reported without failing the
// suite. When the engine is fixed the case passes: drop its [!mayfail] tag then (or, where
// the current behaviour is chosen on purpose, document it in policy.hpp and assert it here).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "gpumux/errors.hpp"
#include "gpumux/policy.hpp"
#include "invalid_command_support.hpp"
#include "test_support.hpp"

using namespace gpumux;
using namespace gpumux::test;

namespace {

enum class Scenario {
  UnknownLoadDependency,
  UnknownDispatchDependency,
  EvictNothing,
  RefusedDispatchAllocates,
  NonFiniteMetric
};
Scenario g_scenario = Scenario::UnknownLoadDependency;  // test thread only
int g_probes = 0;                                       // probes that ran
constexpr OpHandle kNeverIssued{OpId{1'000'000}, true};

// Issues `command`; checks it is refused with PolicyError and returns whether it was accepted.
template <class F>
bool accepted(F&& command) {
  bool ok = false;
  try {
    command();
    ok = true;
  } catch (const PolicyError&) {
  }
  CHECK_FALSE(ok);
  return ok;
}

class AcceptedCommands final : public Policy {
 public:
  explicit AcceptedCommands(const PolicyArgs&) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "test_accepted_commands"; }

  void on_start(Context& ctx) override {
    compute_ = ctx.create_stream(ctx.default_context(kGpu), StreamOptions{0, 2});
    copy_ = ctx.create_stream(ctx.default_context(kGpu), StreamOptions{0, 2});
    host_ = ctx.create_stream(ctx.default_context(kGpu), StreamOptions{0, 8});
    if (g_scenario == Scenario::EvictNothing) {
      ++g_probes;
      INFO("evict of a job that has not arrived");
      CHECK_THROWS_AS(ctx.evict(kTrain, kGpu), PolicyError);
    }
    if (g_scenario == Scenario::NonFiniteMetric) {
      ++g_probes;
      CHECK_THROWS_AS(ctx.record("test.nan", std::numeric_limits<double>::quiet_NaN()),
                      PolicyError);
      CHECK_THROWS_AS(ctx.record("test.inf", std::numeric_limits<double>::infinity()), PolicyError);
    }
  }

  void on_job_arrival(Context& ctx, JobId job) override {
    const std::uint32_t n = ctx.job(job).model().layer_count();
    if (job == kSvc && g_scenario == Scenario::EvictNothing) {
      ++g_probes;
      INFO("evict of a job with nothing on the device");
      CHECK_THROWS_AS(ctx.evict(kSvc, kGpu), PolicyError);
      INFO("evict on a CPU device (nothing is ever evicted there)");
      CHECK_THROWS_AS(ctx.evict(kSvc, kCpu), PolicyError);
    }
    if (job == kSvc && g_scenario == Scenario::UnknownLoadDependency) {
      ++g_probes;
      INFO("load waiting for an op that was never issued");
      LoadOptions unknown;
      unknown.after.push_back(kNeverIssued);
      if (accepted([&] { ctx.load(kSvc, copy_, {0, n}, unknown); })) return;  // never ends
    }
    (void)ctx.load(job, copy_, {0, n});
    if (job == kSvc) return;
    if (g_scenario == Scenario::RefusedDispatchAllocates) {
      // dispatch() allocates the job's activations before it checks setup_ns and the number of
      // dependencies, so either refusal leaves them allocated (a later dispatch reuses them).
      ++g_probes;
      DispatchOptions negative;
      negative.setup_ns = -1;
      const MemoryStats before = ctx.memory(kGpu);
      CHECK_THROWS_AS(ctx.dispatch(kTrain, compute_, negative), PolicyError);
      INFO("a refused dispatch (negative setup_ns) allocated the job's activations");
      CHECK(same_memory(before, ctx.memory(kGpu)));
    }
    if (g_scenario == Scenario::UnknownDispatchDependency) {
      ++g_probes;
      INFO("dispatch waiting for an op that was never issued");
      DispatchOptions unknown;
      unknown.after.push_back(kNeverIssued);
      if (accepted([&] { ctx.dispatch(kTrain, compute_, unknown); })) {
        ++passes_;  // accepted: the pass never runs
        return;
      }
    }
    dispatch_pass(ctx);
  }

  void on_request_arrival(Context& ctx, JobId job, RequestId) override {
    (void)ctx.dispatch(job, compute_);
  }

  void on_op_complete(Context& ctx, const OpRecord& r) override {
    if (r.job == kTrain && r.kind == OpKind::Compute && r.status == OpStatus::Ok && passes_ < 6) {
      dispatch_pass(ctx);
    }
  }

  void on_job_finish(Context& ctx, JobId job) override {
    if (job == kTrain && g_scenario == Scenario::EvictNothing) {
      ++g_probes;
      INFO("evict of a finished job");
      CHECK_THROWS_AS(ctx.evict(kTrain, kGpu), PolicyError);
    }
  }

 private:
  void dispatch_pass(Context& ctx) {
    (void)ctx.dispatch(kTrain, compute_);
    ++passes_;
  }

  StreamId compute_{}, copy_{}, host_{};
  int passes_ = 0;
};
GPUMUX_REGISTER_POLICY("test_accepted_commands", AcceptedCommands,
                       "test: issues commands the engine accepts although they look invalid");

ExperimentResult run_scenario(Scenario s) {
  g_scenario = s;
  g_probes = 0;
  return run_config(invalid_command_config("test_accepted_commands"));
}

}  // namespace

TEST_CASE("accepted today: a load waiting for an op that was never issued", "[engine][!mayfail]") {
  const ExperimentResult r = run_scenario(Scenario::UnknownLoadDependency);
  REQUIRE(g_probes == 1);
  // Accepted, the load waits forever and the service is cut by the horizon.
  CHECK(r.run.jobs_finished == 2);
}

TEST_CASE("accepted today: a dispatch waiting for an op that was never issued",
          "[engine][!mayfail]") {
  const ExperimentResult r = run_scenario(Scenario::UnknownDispatchDependency);
  REQUIRE(g_probes == 1);
  // Accepted, the pass waits forever and the training job is cut by the horizon.
  CHECK(r.run.jobs_finished == 2);
}

TEST_CASE("accepted today: evict of a job with nothing on the device", "[engine][!mayfail]") {
  const ExperimentResult r = run_scenario(Scenario::EvictNothing);
  REQUIRE(g_probes == 3);
  CHECK(r.run.jobs_finished == 2);
}

TEST_CASE("accepted today: a refused dispatch has already allocated activations",
          "[engine][!mayfail]") {
  const ExperimentResult r = run_scenario(Scenario::RefusedDispatchAllocates);
  REQUIRE(g_probes == 1);
  CHECK(r.run.jobs_finished == 2);
}

TEST_CASE("accepted today: a non-finite metric value, written as a bare nan into events.jsonl",
          "[engine][!mayfail]") {
  const ExperimentResult r = run_scenario(Scenario::NonFiniteMetric);
  REQUIRE(g_probes == 1);
  std::istringstream lines(events_jsonl(r));
  std::string line;
  while (std::getline(lines, line)) {
    INFO(line);
    CHECK(nlohmann::json::accept(line));
  }
}
