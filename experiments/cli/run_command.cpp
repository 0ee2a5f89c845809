#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include "commands.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/api/platform.hpp"
#include "gpumux/api/policy.hpp"
#include "gpumux/backend/calibration.hpp"
#include "gpumux/engine/tuner.hpp"
#include "gpumux/io/arrival_check.hpp"
#include "gpumux/io/config.hpp"
#include "gpumux/io/data_root.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/experiment.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/io/output.hpp"
#include "gpumux/io/params.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/io/progress.hpp"
#include "gpumux/io/result_dir.hpp"
#include "gpumux/io/workload.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux::cli {

namespace fs = std::filesystem;

fs::path repo_root() {
  return find_repo_root(fs::current_path());
}

DataRoot data_root() {
  return locate_data_root(fs::current_path(), current_executable());
}

void anchor_out_dir(ExperimentConfig& config, const DataRoot& root) {
  // Installed data is not a place for results: a relative out_dir (the default results/<name>
  // included) means the current directory there, as a person at a shell expects.
  if (root.installed && !fs::path(config.out_dir).is_absolute()) {
    config.out_dir = fs::absolute(config.out_dir).string();
  }
}

bool progress_wanted(bool quiet) {
  return !quiet && isatty(STDERR_FILENO) == 1;
}

namespace {

// Wall seconds between two heartbeats of a single run, and events between two looks at the
// clock (a look costs ~20 ns; 2^16 events take ~10 ms at the engine's measured rate of a few
// million events per second, so the line is at most that late). Documented assumptions.
constexpr double kHeartbeatS = 10.0;
constexpr std::uint64_t kEventsPerClockLook = 1U << 16U;

}  // namespace

std::string arrival_report_text(const ExperimentConfig& config, bool quiet,
                                std::size_t* arrival_warnings) {
  std::ostringstream out;
  for (const auto& w : config.warnings) out << "warning: " << w << "\n";
  const ArrivalReport report = check_arrivals(config);
  if (!quiet) {
    for (const auto& s : report.services) out << "gpumux: " << describe(s) << "\n";
  }
  for (const auto& w : report.warnings) out << "warning: " << config.file << ": " << w << "\n";
  if (arrival_warnings != nullptr) *arrival_warnings = report.warnings.size();
  return out.str();
}

void report_arrivals(const ExperimentConfig& config, bool quiet, bool strict) {
  std::size_t warnings = 0;
  std::cerr << arrival_report_text(config, quiet, &warnings);
  if (strict && warnings > 0) {
    throw UsageError(config.file + ": " + std::to_string(warnings) +
                     " arrival warning(s) above, errors under --strict");
  }
}

void reclaim_dead_writers(const fs::path& results_root, bool quiet) {
  for (const ReclaimedFolder& r : reclaim_dead_temporaries(results_root)) {
    if (!quiet) std::cerr << "gpumux: " << describe(r) << "\n";
  }
}

int run_command(const RunArgs& args) {
  const DataRoot data = data_root();
  const fs::path& root = data.dir;
  ExperimentConfig config = load_experiment(args.config, args.overrides, root);
  report_arrivals(config, args.quiet, args.strict);
  if (args.out_given && args.out_dir.empty()) throw UsageError("--out: must not be empty");
  if (!args.out_dir.empty()) {
    config.out_dir = fs::absolute(args.out_dir).string();
    config.out_dir_origin = "--out";
  }
  anchor_out_dir(config, data);
  config.replace_results = args.force;
  // Dead writers' folders under the results root go first (a killed run's can be large).
  const fs::path out = result_dir_of(config, root);
  check_result_path(out, root, config.out_dir_origin);
  reclaim_dead_writers(results_root_of(out, root), args.quiet);
  const auto t0 = std::chrono::steady_clock::now();
  // The heartbeat: only for a person at a terminal, so logs and tests stay as they were.
  auto last = t0;
  const TimeNs horizon = config.horizon_ns;
  EveryKEvents heartbeat(kEventsPerClockLook, [&](const Event& e, std::uint64_t events) {
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last).count() < kHeartbeatS) return;
    last = now;
    std::cerr << "gpumux: "
              << heartbeat_line(e.t_ns, horizon, events,
                                std::chrono::duration<double>(now - t0).count())
              << "\n";
  });
  ExperimentResult result = run_experiment(config, root, /*write_outputs=*/true, /*keep_log=*/false,
                                           progress_wanted(args.quiet) ? &heartbeat : nullptr);
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

int validate_command(const std::string& config_file, const std::vector<std::string>& overrides,
                     bool strict) {
  const DataRoot data = data_root();
  const fs::path& root = data.dir;
  ExperimentConfig config = load_experiment(config_file, overrides, root);
  anchor_out_dir(config, data);
  report_arrivals(config, /*quiet=*/false, strict);
  check_registered_names(config);
  check_result_path(result_dir_of(config, root), root, config.out_dir_origin);
  std::cout << "ok: " << config_file << ": " << config.jobs.size() << " jobs, policy "
            << config.policy << ", platform " << config.platform << "\n";
  return 0;
}

std::string version_text() {
  const nlohmann::json b = build_info();
  return "gpumux " + b.value("version", "") + " (git " + b.value("git_revision", "") + ", " +
         b.value("build_type", "") + ", " + b.value("compiler", "") + ", CUDA " +
         (b.value("cuda_compiled", false) ? "built" : "not built") + ")";
}

int list_command(const std::string& what, bool params) {
  if (what.empty()) {
    // The categories, with what each holds (gpumux list <category>).
    const std::pair<const char*, const char*> kCategories[] = {
        {"policies", "scheduling and sharing policies (policy.name)"},
        {"platforms", "where a run executes: simulated, emulated or real (platform)"},
        {"models", "the layer-level model zoo (traces/models)"},
        {"devices", "device profiles (traces/devices)"},
        {"generators", "request-arrival generators (workload.services[].arrivals)"},
        {"tuners", "hyperparameter tuners (workload.tuning[].tuner)"}};
    for (const auto& [name, help] : kCategories) {
      std::cout << std::left << std::setw(12) << name << help << "\n";
    }
    std::cout << "usage: gpumux list <category> [--params]\n";
    return 0;
  }
  auto print_registry = [params](const auto& registry) {
    for (const auto& name : registry.names()) {
      std::cout << std::left << std::setw(24) << name << registry.summary(name) << "\n";
      if (params) std::cout << describe_params(registry.params(name), "    ");
    }
  };
  if (what == "policies") print_registry(PolicyRegistry::instance());
  if (what == "platforms") print_registry(PlatformRegistry::instance());
  if (what == "generators") print_registry(GeneratorRegistry::instance());
  if (what == "tuners") print_registry(TunerRegistry::instance());
  if (what == "models") {
    ModelCatalog catalog(repo_root() / "traces" / "models");
    for (const auto& name : catalog.names()) {
      const Model& m = catalog.at(name);
      std::cout << std::left << std::setw(20) << name << std::right << std::setw(12) << m.params()
                << " params " << std::setw(8) << std::fixed << std::setprecision(1)
                << static_cast<double>(m.weight_bytes()) / (1 << 20) << " MiB " << std::setw(7)
                << std::setprecision(2) << m.fwd_macs_per_sample() / 1e9 << " GMAC/sample "
                << std::setw(4) << m.layer_count() << " layers  " << m.display_name() << "\n";
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

namespace {

// A calibrated profile written by `gpumux calibrate` records its command (calibration.command).
bool written_by_calibrate(const fs::path& file) {
  std::ifstream in(file);
  const auto doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("calibration") || !doc["calibration"].is_object()) {
    return false;
  }
  const auto& cmd = doc["calibration"].value("command", nlohmann::json());
  return cmd.is_string() && cmd.get<std::string>().rfind("gpumux calibrate", 0) == 0;
}

}  // namespace

void check_calibration_target(const fs::path& out, bool force) {
  std::error_code ec;
  // The folder must exist (or be creatable) before minutes of GPU work, not after.
  const fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  fs::create_directories(parent, ec);
  if (ec)
    throw UsageError("--out: " + parent.string() + ": cannot create the folder: " + ec.message());
  const auto st = fs::symlink_status(out, ec);
  if (ec || st.type() == fs::file_type::not_found) return;
  if (st.type() != fs::file_type::regular) {
    throw UsageError("--out: " + out.string() + ": exists and is not a regular file");
  }
  if (!written_by_calibrate(out)) {
    throw UsageError("--out: " + out.string() +
                     ": exists and was not written by gpumux calibrate; choose another file");
  }
  if (!force) {
    throw UsageError("--out: " + out.string() +
                     ": holds an earlier calibration; pass --force to replace it");
  }
}

int calibrate_command(const CalibrateArgs& args) {
  const fs::path root = repo_root();
  CalibrationOptions o;
  o.device_name = args.device;
  o.out_file = args.out.empty() ? root / "traces" / "devices" / (args.device + ".calibrated.json")
                                : fs::path(args.out);
  o.base_profile = args.base.empty() ? root / "traces" / "devices" / (args.device + ".json")
                                     : fs::path(args.base);
  check_calibration_target(o.out_file, args.force);
  o.replace = args.force;
  o.models_dir = root / "traces" / "models";
  o.models = args.models;
  o.quick = args.quick;
  return run_calibration(o);
}

}  // namespace gpumux::cli
