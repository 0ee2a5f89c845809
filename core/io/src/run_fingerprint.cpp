// What a run's results depend on, hashed (see run_fingerprint.hpp).
#include "gpumux/io/run_fingerprint.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include "gpumux/io/sha256.hpp"
#include "gpumux/io/summary.hpp"

namespace gpumux {
namespace {

void add_file(std::ostringstream& text, const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  text << "file " << file.filename().string() << '\n';
  if (in) text << in.rdbuf();
  text << '\n';
}

}  // namespace

std::string run_fingerprint(const ExperimentConfig& config,
                            const std::filesystem::path& repo_root) {
  std::ostringstream text;
  text << "gpumux " << GPUMUX_VERSION << '\n';
  text << "summary " << kSummaryFormat << '\n';
  // nlohmann::json keeps object keys sorted, so the dump is canonical.
  nlohmann::json resolved = config.resolved;
  // Where the results go, and how much of them may be written, are not inputs to them (a
  // sweep resumed with a larger max_output_gib re-runs only the points that did not finish).
  if (resolved.is_object()) {
    resolved.erase("out_dir");
    resolved.erase("max_output_gib");
  }
  text << resolved.dump() << '\n';
  // A cluster's links as expanded (defaults come from the profile, hashed below too). Only
  // when present, so configs with a plain devices list keep their fingerprints.
  if (const auto& t = config.topology) {
    const nlohmann::json record = {
        {"cluster",
         {t->nodes, t->gpus_per_node, t->intra_node.gbit_per_s, t->intra_node.latency_ns,
          t->network.gbit_per_s, t->network.latency_ns}}};
    text << record.dump() << '\n';
  }
  // Tuning jobs as parsed (their params and search space are in `resolved` too); only when
  // present, so configs without them keep their fingerprints.
  for (const auto& t : config.tuning) {
    const nlohmann::json record = {
        {"tuning",
         {t->name, t->tuner, t->params, t->search_space, static_cast<int>(t->mode),
          t->target ? nlohmann::json(*t->target) : nlohmann::json(nullptr), t->curve.y_start,
          t->curve.y_best, t->curve.width, t->curve.alpha_lo, t->curve.alpha_hi, t->curve.noise,
          t->samples_per_epoch, t->max_trials}}};
    text << record.dump() << '\n';
  }
  std::set<std::string> models;
  for (const JobSpec& j : config.jobs) {
    models.insert(j.model);
    // One JSON record per job: unambiguous (names may hold spaces) and full precision (dump()
    // writes doubles so that they round-trip).
    const nlohmann::json record = {
        {"name", j.name},
        {"kind", static_cast<int>(j.kind)},
        {"model", j.model},
        {"batch", j.batch},
        {"arrival_ns", j.arrival_ns},
        {"iterations", j.iterations},
        {"optimizer", static_cast<int>(j.optimizer)},
        {"slo_ns", j.slo_ns},
        {"priority", j.priority},
        {"weight", j.weight},
        {"tenant", j.tenant},
        {"expected_duration_ns", j.expected_duration_ns},
        {"closed_loop",
         {j.closed_loop.enabled, j.closed_loop.count, j.closed_loop.think_ns,
          j.closed_loop.start_ns, j.closed_loop.end_ns, j.closed_loop.on_ns, j.closed_loop.off_ns}},
        {"requests_ns", j.requests_ns}};
    text << record.dump() << '\n';
  }
  for (const auto& m : models) add_file(text, repo_root / "traces" / "models" / (m + ".json"));
  std::set<std::string> profiles;
  for (const DeviceConfig& d : config.devices) profiles.insert(d.profile);
  for (const auto& p : profiles) add_file(text, repo_root / "traces" / "devices" / (p + ".json"));
  return sha256_hex(text.str());
}

}  // namespace gpumux
