// Whole-simulation speed, per policy: simulated events per CPU-second. "Events" are runtime
// callbacks executed (the event-queue pops), reported as items_per_second (CPU time); log
// events (events.jsonl lines) are reported as a counter. Config parsing and model loading are
// included; results are not written.
//
// Beside each gpumux benchmark, in the same program and right after it, the plain-C++
// reference simulation (reference/reference_sim.hpp; it reproduces gpumux's time_slicing run
// exactly, tests/bench) runs the long time-slicing config; the counters say what it reached:
//   ref_events_per_s   the reference's events per CPU-second
//   ref_ratio          ref_events_per_s / this benchmark's events per CPU-second (how many times
//                      slower gpumux is than the plain loop; for policies other than
//                      time_slicing the work differs, so it compares cost per event only)
//
// Benchmarks:
//   BM_DefaultExperiment_<policy>   the default experiment as configured (30 simulated s)
//   BM_LongTimeSlicing              the default experiment at a 3000 s horizon with requests
//                                   over the whole horizon (duration_s 2998: ~388 k events)
//   BM_Reference_LongTimeSlicing    the reference alone on that config (loop only)
#include <benchmark/benchmark.h>

#include <ctime>
#include <filesystem>

#include "gpumux/io/config.hpp"
#include "gpumux/io/experiment.hpp"
#include "reference_inputs.hpp"
#include "reference_sim.hpp"

namespace {

std::filesystem::path root() {
  return gpumux::find_repo_root(std::filesystem::current_path());
}

/// The long time-slicing run both gpumux and the reference measure.
const std::vector<std::string>& long_overrides() {
  static const std::vector<std::string> sets{"trace=false", "events=false", "horizon_s=3000",
                                             "workload.services.0.arrivals.duration_s=2998"};
  return sets;
}

gpumux::ExperimentConfig load_default(const std::vector<std::string>& sets) {
  const auto r = root();
  return gpumux::load_experiment(r / "experiments" / "configs" / "default.json", sets, r);
}

double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// Runs the reference on the long config for at least `min_cpu_s` of CPU time; events per
/// CPU-second of the loop (inputs are resolved once, outside the timing).
double reference_events_per_cpu_s(double min_cpu_s = 0.3) {
  static const gpumux::bench::RefInputs inputs =
      gpumux::bench::resolve_reference_inputs(load_default(long_overrides()), root());
  std::uint64_t events = 0;
  const double start = process_cpu_s();
  double elapsed = 0;
  do {
    const gpumux::bench::RefResult r = gpumux::bench::run_reference(inputs);
    events += r.events;
    benchmark::DoNotOptimize(r.latency_ns.data());
    elapsed = process_cpu_s() - start;
  } while (elapsed < min_cpu_s);
  return static_cast<double>(events) / elapsed;
}

void run_gpumux(benchmark::State& state, const std::vector<std::string>& sets) {
  const auto r = root();
  std::uint64_t events = 0, log_events = 0;
  const double start = process_cpu_s();
  for (auto _ : state) {
    // Config parsing is part of the measured work.
    const gpumux::ExperimentConfig cfg = load_default(sets);
    // No result files and no in-memory log: the summary is still accumulated from the
    // events, as the CLI does with events and trace off.
    auto result = gpumux::run_experiment(cfg, r, /*write_outputs=*/false, /*keep_log=*/false);
    events += result.run.runtime_events;
    log_events += result.summary["run"]["events"].get<std::uint64_t>();
    benchmark::DoNotOptimize(result.summary);
  }
  const double cpu_s = process_cpu_s() - start;
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
  state.counters["log_events_per_s"] =
      benchmark::Counter(static_cast<double>(log_events), benchmark::Counter::kIsRate);
  state.counters["events_per_run"] =
      static_cast<double>(events) / static_cast<double>(state.iterations());
  // Measured after the loop, untimed by the framework: the reference, side by side.
  const double ref = reference_events_per_cpu_s();
  state.counters["ref_events_per_s"] = ref;
  state.counters["ref_ratio"] = cpu_s > 0 ? ref / (static_cast<double>(events) / cpu_s) : 0.0;
}

void run_default(benchmark::State& state, const std::string& policy, int layers_per_op) {
  std::vector<std::string> sets{"policy.name=" + policy, "trace=false"};
  if (layers_per_op > 0)
    sets.push_back("policy.params.layers_per_op=" + std::to_string(layers_per_op));
  run_gpumux(state, sets);
}

void BM_DefaultExperiment_TimeSlicing(benchmark::State& s) {
  run_default(s, "time_slicing", 0);
}
void BM_DefaultExperiment_Mps(benchmark::State& s) {
  run_default(s, "mps", 0);
}
void BM_DefaultExperiment_StopAndStart(benchmark::State& s) {
  run_default(s, "stop_and_start", 0);
}
// Layer-granularity dispatch: the event-heavy case (one op per layer, ~627 per iteration).
void BM_DefaultExperiment_PipeSwitch(benchmark::State& s) {
  run_default(s, "pipeswitch", 0);
}
void BM_DefaultExperiment_InferenceFirstPerLayer(benchmark::State& s) {
  run_default(s, "inference_first", 1);
}

void BM_LongTimeSlicing(benchmark::State& s) {
  run_gpumux(s, long_overrides());
}

void BM_Reference_LongTimeSlicing(benchmark::State& state) {
  const gpumux::bench::RefInputs inputs =
      gpumux::bench::resolve_reference_inputs(load_default(long_overrides()), root());
  std::uint64_t events = 0;
  for (auto _ : state) {
    const gpumux::bench::RefResult r = gpumux::bench::run_reference(inputs);
    events += r.events;
    benchmark::DoNotOptimize(r.latency_ns.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
  state.counters["events_per_run"] =
      static_cast<double>(events) / static_cast<double>(state.iterations());
}

BENCHMARK(BM_DefaultExperiment_TimeSlicing)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DefaultExperiment_Mps)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DefaultExperiment_StopAndStart)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DefaultExperiment_PipeSwitch)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DefaultExperiment_InferenceFirstPerLayer)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LongTimeSlicing)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Reference_LongTimeSlicing)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
