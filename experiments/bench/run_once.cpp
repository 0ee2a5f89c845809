// One run of the default experiment under gpumux or under the plain-C++ reference
// (reference/reference_sim.hpp), for instruction counts that Google Benchmark's repetitions
// would blur: `valgrind --tool=callgrind run_once gpumux|reference [--set key=value ...]`.
// Prints the runtime events, the end time and the CPU time of the run (config parsing
// included, results not written). Exit status 2 on bad arguments.
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "gpumux/io/config.hpp"
#include "gpumux/io/experiment.hpp"
#include "reference_inputs.hpp"
#include "reference_sim.hpp"

namespace {

double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || (std::strcmp(argv[1], "gpumux") != 0 && std::strcmp(argv[1], "reference") != 0)) {
    std::fprintf(stderr, "usage: run_once gpumux|reference [--set key=value ...]\n");
    return 2;
  }
  const bool reference = std::strcmp(argv[1], "reference") == 0;
  std::vector<std::string> sets{"trace=false", "events=false"};
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--set") != 0 || i + 1 >= argc) {
      std::fprintf(stderr, "run_once: expected --set key=value, got '%s'\n", argv[i]);
      return 2;
    }
    sets.emplace_back(argv[++i]);
  }
  const auto root = gpumux::find_repo_root(std::filesystem::current_path());
  const double start = process_cpu_s();
  const gpumux::ExperimentConfig cfg =
      gpumux::load_experiment(root / "experiments" / "configs" / "default.json", sets, root);
  std::uint64_t events = 0;
  gpumux::TimeNs end_ns = 0;
  if (reference) {
    const gpumux::bench::RefResult r =
        gpumux::bench::run_reference(gpumux::bench::resolve_reference_inputs(cfg, root));
    events = r.events;
    end_ns = r.end_ns;
  } else {
    const gpumux::ExperimentResult r = gpumux::run_experiment(cfg, root, /*write_outputs=*/false,
                                                              /*keep_log=*/false);
    events = r.run.runtime_events;
    end_ns = r.run.end_ns;
  }
  const double cpu_s = process_cpu_s() - start;
  std::printf("%s: %llu runtime events, end %lld ns, %.6f CPU s, %.0f events/CPU-s\n", argv[1],
              static_cast<unsigned long long>(events), static_cast<long long>(end_ns), cpu_s,
              static_cast<double>(events) / cpu_s);
  return 0;
}
