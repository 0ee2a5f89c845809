#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "commands.hpp"
#include "gpumux/backend/calibration.hpp"
#include "gpumux/config.hpp"
#include "gpumux/device_profile.hpp"
#include "gpumux/experiment.hpp"
#include "gpumux/model.hpp"
#include "gpumux/platform.hpp"
#include "gpumux/policy.hpp"
#include "gpumux/workload.hpp"

namespace gpumux::cli {

namespace fs = std::filesystem;

fs::path repo_root() { return find_repo_root(fs::current_path()); }

int run_command(const RunArgs& args) {
  const fs::path root = repo_root();
  ExperimentConfig config = load_experiment(args.config, args.overrides, root);
  if (!args.out_dir.empty()) config.out_dir = fs::absolute(args.out_dir).string();
  const auto t0 = std::chrono::steady_clock::now();
  ExperimentResult result = run_experiment(config, root, /*write_outputs=*/true);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!args.quiet) {
    std::cout << "gpumux: " << config.name << " on " << result.platform_description << ", policy "
              << config.policy << ": " << result.run.jobs_finished << " jobs finished, "
              << result.run.jobs_rejected << " rejected, " << result.run.jobs_unfinished
              << " unfinished; simulated " << std::fixed << std::setprecision(3)
              << ns_to_seconds(result.run.end_ns) << " s in " << wall_s << " s wall ("
              << result.run.runtime_events << " events)\n";
    print_table({{config.policy, (result.out_dir / "summary.json").string()}});
    std::cout << "results: " << result.out_dir.string() << "\n";
  }
  return 0;
}

int validate_command(const std::string& config_file, const std::vector<std::string>& overrides) {
  const fs::path root = repo_root();
  ExperimentConfig config = load_experiment(config_file, overrides, root);
  check_registered_names(config);
  std::cout << "ok: " << config_file << ": " << config.jobs.size() << " jobs, policy "
            << config.policy << ", platform " << config.platform << "\n";
  return 0;
}

int list_command(const std::string& what) {
  auto print_registry = [](const auto& registry) {
    for (const auto& name : registry.names()) {
      std::cout << std::left << std::setw(24) << name << registry.summary(name) << "\n";
    }
  };
  if (what == "policies") print_registry(PolicyRegistry::instance());
  if (what == "platforms") print_registry(PlatformRegistry::instance());
  if (what == "generators") print_registry(GeneratorRegistry::instance());
  if (what == "models") {
    ModelCatalog catalog(repo_root() / "traces" / "models");
    for (const auto& name : catalog.names()) {
      const Model& m = catalog.at(name);
      std::cout << std::left << std::setw(20) << name << std::right << std::setw(12)
                << m.params() << " params " << std::setw(8) << std::fixed
                << std::setprecision(1) << static_cast<double>(m.weight_bytes()) / (1 << 20)
                << " MiB " << std::setw(7) << std::setprecision(2)
                << m.fwd_macs_per_sample() / 1e9 << " GMAC/sample " << std::setw(4)
                << m.layer_count() << " layers  " << m.display_name() << "\n";
    }
  }
  if (what == "devices") {
    const fs::path dir = repo_root() / "traces" / "devices";
    for (const auto& name : device_profile_names(dir)) {
      const DeviceProfile p = find_device_profile(dir, name);
      std::cout << std::left << std::setw(28) << name << p.display_name << "\n";
    }
  }
  return 0;
}

int calibrate_command(const CalibrateArgs& args) {
  const fs::path root = repo_root();
  CalibrationOptions o;
  o.device_name = args.device;
  o.out_file = args.out.empty() ? root / "traces" / "devices" / (args.device + ".calibrated.json")
                                : fs::path(args.out);
  o.base_profile = args.base.empty() ? root / "traces" / "devices" / (args.device + ".json")
                                     : fs::path(args.base);
  o.models_dir = root / "traces" / "models";
  o.models = args.models;
  o.quick = args.quick;
  return run_calibration(o);
}

}  // namespace gpumux::cli
