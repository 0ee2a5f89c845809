// The wall-clock runtime of the real backends on this machine: post() throughput from foreign
// threads, the round trip of one post (the wake-up latency a CUDA host callback sees), and
// timer lateness. Run: ./build/experiments/bench_realtime
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "gpumux/backend/real_runtime.hpp"

namespace {

using gpumux::RealRuntime;
using gpumux::TimeNs;

// `producers` threads each post `per_thread` callbacks while the runtime drains them.
void BM_PostThroughput(benchmark::State& state) {
  const int producers = static_cast<int>(state.range(0));
  constexpr int per_thread = 20000;
  for (auto _ : state) {
    RealRuntime rt;
    std::uint64_t ran = 0;
    for (int t = 0; t < producers; ++t) rt.add_pending();
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(producers));
    for (int t = 0; t < producers; ++t) {
      threads.emplace_back([&rt, &ran] {
        for (int i = 0; i < per_thread; ++i) rt.post([&ran] { ++ran; });
        rt.post([&rt] { rt.done_pending(); });
      });
    }
    rt.run();
    for (auto& th : threads) th.join();
    benchmark::DoNotOptimize(ran);
  }
  state.SetItemsProcessed(state.iterations() * producers * per_thread);
}
BENCHMARK(BM_PostThroughput)->Arg(1)->Arg(2)->Arg(8)->UseRealTime()->Unit(benchmark::kMillisecond);

// A foreign thread posts, the runtime thread runs the callback, which wakes the poster: the
// latency of a completion travelling from a worker (or CUDA host function) to the runtime.
void BM_PostRoundTrip(benchmark::State& state) {
  RealRuntime rt;
  std::mutex m;
  std::condition_variable cv;
  bool seen = false;
  rt.add_pending();
  std::thread loop([&] { rt.run(); });
  for (auto _ : state) {
    {
      std::lock_guard<std::mutex> lock(m);
      seen = false;
    }
    rt.post([&] {
      std::lock_guard<std::mutex> lock(m);
      seen = true;
      cv.notify_one();
    });
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return seen; });
  }
  rt.post([&rt] { rt.done_pending(); });
  loop.join();
}
BENCHMARK(BM_PostRoundTrip)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Timers every `spacing` us; reports the lateness statistics of the runtime as counters.
void BM_TimerLateness(benchmark::State& state) {
  const TimeNs spacing = state.range(0) * 1000;
  constexpr int kTimers = 500;
  gpumux::LatenessStats last{};
  for (auto _ : state) {
    RealRuntime rt;
    for (int i = 1; i <= kTimers; ++i) rt.schedule_at(i * spacing, [] {});
    rt.run();
    last = rt.lateness();
  }
  state.counters["late_mean_us"] = last.mean_ns / 1e3;
  state.counters["late_p99_us"] = static_cast<double>(last.p99_ns) / 1e3;
  state.counters["late_max_us"] = static_cast<double>(last.max_ns) / 1e3;
  state.SetItemsProcessed(state.iterations() * kTimers);
}
BENCHMARK(BM_TimerLateness)
    ->Arg(100)
    ->Arg(1000)
    ->Iterations(3)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
