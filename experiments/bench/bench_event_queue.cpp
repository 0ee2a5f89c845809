// Speed of the simulator's pending-event set and runtime (results in docs/performance.md, "Event
// queue"; the project aims at >= 20 M queue operations per second).
//
//   BM_EventQueueHold/N      classic hold model: N events pre-filled, then each hold pops the
//                            minimum and pushes it back at t + exp(mean 1 us). items/s counts
//                            queue operations: one hold = one pop + one push = 2 operations.
//   BM_SimRuntimeScheduleRun/K  K independent chains of small callbacks through SimRuntime, each
//                            callback scheduling the next of its chain; items/s = events run.
//
// Increments come from a fixed-seed std::mt19937_64, drawn into a table before timing so the
// RNG is not what is measured.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gpumux/sim/event_queue.hpp"
#include "gpumux/sim/sim_runtime.hpp"

namespace {

using gpumux::EventQueue;
using gpumux::SimRuntime;
using gpumux::TimeNs;

std::vector<TimeNs> exponential_increments(std::size_t count, double mean_ns) {
  std::mt19937_64 rng(12345);
  std::exponential_distribution<double> exp(1.0 / mean_ns);
  std::vector<TimeNs> out(count);
  for (auto& v : out) v = static_cast<TimeNs>(exp(rng)) + 1;
  return out;
}

void BM_EventQueueHold(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<TimeNs> inc = exponential_increments(std::size_t{1} << 16, 1000.0);
  const std::size_t mask = inc.size() - 1;
  std::size_t k = 0;
  std::uint64_t sink = 0;
  EventQueue q;
  q.reserve(n + 1);
  for (std::size_t i = 0; i < n; ++i) {
    q.push(inc[k++ & mask], [&sink] { ++sink; });
  }
  EventQueue::Callback cb;
  for (auto _ : state) {
    const TimeNs t = q.pop(cb);
    q.push(t + inc[k++ & mask], std::move(cb));
  }
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 2);
}
BENCHMARK(BM_EventQueueHold)->Arg(100)->Arg(10000)->Arg(100000)->Arg(1000000);

struct Chain {
  SimRuntime* rt;
  TimeNs step_ns;
  std::int64_t left;
};

void advance_chain(Chain* c) {
  if (--c->left > 0) c->rt->schedule_after(c->step_ns, [c] { advance_chain(c); });
}

void BM_SimRuntimeScheduleRun(benchmark::State& state) {
  const auto chains = static_cast<std::size_t>(state.range(0));
  constexpr std::int64_t kEventsPerIteration = 1 << 20;
  const std::int64_t per_chain = kEventsPerIteration / static_cast<std::int64_t>(chains);
  SimRuntime rt;
  std::vector<Chain> cs(chains);
  const std::vector<TimeNs> steps = exponential_increments(chains, 1000.0);
  std::uint64_t before = rt.events_executed();
  for (auto _ : state) {
    for (std::size_t i = 0; i < chains; ++i) {
      cs[i] = Chain{&rt, steps[i], per_chain};
      Chain* c = &cs[i];
      rt.schedule_after(steps[i], [c] { advance_chain(c); });
    }
    rt.run();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(rt.events_executed() - before));
}
BENCHMARK(BM_SimRuntimeScheduleRun)->Arg(64)->Arg(4096)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
