#include "gpumux/io/experiment.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/platform.hpp"
#include "gpumux/api/policy.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/io/output.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/io/result_writer.hpp"
#include "gpumux/io/run_fingerprint.hpp"
#include "gpumux/io/summary.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

void check_registered_names(const ExperimentConfig& config) {
  const auto& policies = PolicyRegistry::instance();
  if (!policies.contains(config.policy)) {
    throw ConfigError(config.file, "policy.name",
                      "unknown policy: " + policies.unknown_message(config.policy));
  }
  const auto& platforms = PlatformRegistry::instance();
  if (!platforms.contains(config.platform)) {
    throw ConfigError(config.file, "platform",
                      "unknown platform: " + platforms.unknown_message(config.platform));
  }
}

void check_costs_advance(const ExperimentConfig& config, const ModelCatalog& models,
                         const std::vector<DeviceProfile>& profiles) {
  for (const JobSpec& job : config.jobs) {
    const Model& model = models.at(job.model);
    const LayerRange all{0, model.layer_count()};
    const bool training = job.kind == JobKind::Training;
    // Stops at the first device where the unit takes time (usually the first): a cluster of
    // thousands of GPUs of one profile costs one look per job.
    bool advances = profiles.empty();
    std::vector<std::string> seen;
    for (const DeviceProfile& p : profiles) {
      if (std::find(seen.begin(), seen.end(), p.name) != seen.end()) continue;
      seen.push_back(p.name);
      const CostModel cost(p, config.cost);
      DurationNs unit = cost.op_ns(model, all, job.batch, Pass::Forward, !training);
      if (training) {
        unit = saturating_add(unit, cost.op_ns(model, all, job.batch, Pass::Backward, false));
        unit = saturating_add(unit, cost.update_ns(model, job.optimizer));
      }
      advances = unit > 0;
      if (advances) break;
    }
    if (advances) continue;
    std::string names;
    for (const std::string& n : seen) names += (names.empty() ? "'" : ", '") + n + "'";
    throw TraceError((models.directory() / (job.model + ".json")).string(),
                     "job '" + job.name + "' (model '" + job.model + "', batch " +
                         std::to_string(job.batch) + ")",
                     std::string(training ? "an iteration" : "a batch") +
                         " takes 0 ns on every device of the run (profile " + names +
                         "): its FLOPs, bytes and kernel launch costs are all zero there, so the "
                         "simulated clock would never advance and the run never reach its "
                         "horizon; give the model FLOPs or bytes, or the profile a kernel launch "
                         "cost (kernels.launch_ns)");
  }
}

std::filesystem::path result_dir_of(const ExperimentConfig& config,
                                    const std::filesystem::path& repo_root) {
  return normal_result_path(config.out_dir, repo_root);
}

ExperimentResult run_experiment(const ExperimentConfig& config,
                                const std::filesystem::path& repo_root, bool write_outputs) {
  return run_experiment(config, repo_root, write_outputs, /*keep_log=*/!write_outputs);
}

ExperimentResult run_experiment(const ExperimentConfig& config,
                                const std::filesystem::path& repo_root, bool write_outputs,
                                bool keep_log) {
  return run_experiment(config, repo_root, write_outputs, keep_log, /*observer=*/nullptr);
}

ExperimentResult run_experiment(const ExperimentConfig& config,
                                const std::filesystem::path& repo_root, bool write_outputs,
                                bool keep_log, EventSink* observer) {
  check_registered_names(config);
  ModelCatalog models(repo_root / "traces" / "models");
  PlatformSetup setup;
  setup.models = &models;
  setup.params = config.platform_params;
  setup.config_file = config.file;
  setup.precision = config.cost.precision;
  for (const JobSpec& job : config.jobs) setup.workload_models.push_back(job.model);
  std::sort(setup.workload_models.begin(), setup.workload_models.end());
  setup.workload_models.erase(
      std::unique(setup.workload_models.begin(), setup.workload_models.end()),
      setup.workload_models.end());
  for (const JobSpec& job : config.jobs) {
    const bool training = job.kind == JobKind::Training;
    setup.workload_uses.push_back(
        {job.model, job.batch, training, training ? 2 + optimizer_slots(job.optimizer) : 1});
  }
  std::sort(setup.workload_uses.begin(), setup.workload_uses.end());
  setup.workload_uses.erase(std::unique(setup.workload_uses.begin(), setup.workload_uses.end()),
                            setup.workload_uses.end());
  // Each profile is read once, however many devices use it (a 65,536-GPU cluster would
  // otherwise list the folder and parse the same file 65,536 times).
  std::map<std::string, DeviceProfile> profiles;
  setup.profiles.reserve(config.devices.size());
  for (const DeviceConfig& d : config.devices) {
    auto it = profiles.find(d.profile);
    if (it == profiles.end()) {
      it = profiles
               .emplace(d.profile, find_device_profile(repo_root / "traces" / "devices", d.profile))
               .first;
    }
    DeviceProfile p = it->second;
    if (d.memory_bytes) p.memory_bytes = *d.memory_bytes;
    setup.profiles.push_back(std::move(p));
  }
  // The policy first: its parameters are config input (exit 2) and must be checked even where
  // the platform cannot come up (platform cuda without a GPU).
  PolicyArgs args{config.policy_params, config.file};
  std::unique_ptr<Policy> policy = PolicyRegistry::instance().create(config.policy, args);
  // Before anything runs: the results folder may be written, and replacing what is there (if
  // anything) is allowed; a temporary folder beside it is created now.
  std::optional<ResultWriter> writer;
  std::string fingerprint;
  if (write_outputs) {
    const std::string origin =
        config.out_dir_origin.empty() ? std::string("out_dir") : config.out_dir_origin;
    writer.emplace(result_dir_of(config, repo_root), repo_root, origin, config.replace_results,
                   config.max_output_bytes);
    fingerprint = run_fingerprint(config, repo_root);
  }
  std::unique_ptr<Platform> platform = PlatformRegistry::instance().create(config.platform, setup);
  // In virtual time, a job whose work takes no time anywhere would never let the clock reach
  // the horizon (on a wall clock, a zero-cost op still takes time, and the profile's costs are
  // not what a real GPU's ops take).
  if (platform->virtual_time()) check_costs_advance(config, models, setup.profiles);

  EngineOptions options;
  options.horizon_ns = config.horizon_ns;
  options.cost = config.cost;
  options.seed = config.seed;
  options.topology = config.topology;
  Engine engine(*platform, *policy, config.jobs, models, options);

  // Every event goes, as it happens, to the summary and (with outputs) to the streamed
  // files; the in-memory log is kept only when asked for, so memory does not grow with the run.
  engine.keep_log(keep_log);
  SummaryAccumulator summary(engine.jobs(), setup.profiles.size());
  engine.add_sink(summary);
  std::optional<StreamedOutputs> streams;
  if (write_outputs) {
    writer->write("config.resolved.json", config.resolved.dump(2) + "\n");
    streams.emplace(*writer, engine.jobs(), config.write_events, config.write_trace,
                    config.compress);
    for (EventSink* sink : streams->sinks()) engine.add_sink(*sink);
  }
  if (observer != nullptr) engine.add_sink(*observer);

  ExperimentResult result;
  result.run = engine.run();
  if (streams) streams->finish();
  result.log = engine.take_log();
  result.jobs = engine.jobs();
  result.platform_description = platform->describe();
  result.summary = summary.finish();
  if (write_outputs) {
    RunOutputs o;
    o.run_info = {{"experiment", config.name},
                  {"platform", result.platform_description},
                  {"platform_name", config.platform},
                  {"policy", config.policy},
                  {"seed", config.seed},
                  {"devices", nlohmann::json::array()},
                  {"build", build_info()},
                  {"end_ns", result.run.end_ns},
                  {"runtime_events", result.run.runtime_events}};
    for (const auto& p : setup.profiles) {
      o.run_info["devices"].push_back({{"profile", p.name}, {"display_name", p.display_name}});
    }
    o.summary = result.summary;
    o.identity = {{"config_sha256", fingerprint},
                  {"gpumux_version", GPUMUX_VERSION},
                  {"git_revision", GPUMUX_GIT_REVISION},
                  {"experiment", config.name}};
    if (!config.result_owner.empty()) o.identity["owner"] = config.result_owner;
    o.run_info["config_sha256"] = fingerprint;
    result.out_dir = writer->final_dir();
    (void)write_run_outputs(*writer, o);
  }
  return result;
}

}  // namespace gpumux
