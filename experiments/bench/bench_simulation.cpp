// Whole-simulation speed on the default experiment (ResNet-152 inference arriving while
// ResNet-152 trains on a V100, 30 simulated seconds): simulated events per second of wall
// time, per policy. "Events" are runtime callbacks executed (the event-queue pops), reported
// as items_per_second; log events (events.jsonl lines) are reported as a counter.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "gpumux/config.hpp"
#include "gpumux/experiment.hpp"

namespace {

std::filesystem::path root() { return gpumux::find_repo_root(std::filesystem::current_path()); }

void run_default(benchmark::State& state, const std::string& policy, int layers_per_op) {
  const auto r = root();
  std::vector<std::string> sets{"policy.name=" + policy, "trace=false"};
  if (layers_per_op > 0) sets.push_back("policy.params.layers_per_op=" + std::to_string(layers_per_op));
  const gpumux::ExperimentConfig cfg =
      gpumux::load_experiment(r / "experiments" / "configs" / "default.json", sets, r);
  std::uint64_t events = 0, log_events = 0;
  for (auto _ : state) {
    auto result = gpumux::run_experiment(cfg, r, /*write_outputs=*/false);
    events += result.run.runtime_events;
    log_events += result.log.size();
    benchmark::DoNotOptimize(result.summary);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
  state.counters["log_events_per_s"] =
      benchmark::Counter(static_cast<double>(log_events), benchmark::Counter::kIsRate);
  state.counters["events_per_run"] =
      static_cast<double>(events) / static_cast<double>(state.iterations());
}

void BM_DefaultExperiment_TimeSlicing(benchmark::State& s) { run_default(s, "time_slicing", 0); }
void BM_DefaultExperiment_Mps(benchmark::State& s) { run_default(s, "mps", 0); }
void BM_DefaultExperiment_StopAndStart(benchmark::State& s) { run_default(s, "stop_and_start", 0); }
// Layer-granularity dispatch: the event-heavy case (one op per layer, ~627 per iteration).
void BM_DefaultExperiment_PipeSwitch(benchmark::State& s) { run_default(s, "pipeswitch", 0); }
void BM_DefaultExperiment_InferenceFirstPerLayer(benchmark::State& s) {
  run_default(s, "inference_first", 1);
}

BENCHMARK(BM_DefaultExperiment_TimeSlicing)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DefaultExperiment_Mps)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DefaultExperiment_StopAndStart)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DefaultExperiment_PipeSwitch)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DefaultExperiment_InferenceFirstPerLayer)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
