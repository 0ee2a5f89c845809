// What a run's results depend on, hashed (see run_fingerprint.hpp).
#include "gpumux/run_fingerprint.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include "gpumux/sha256.hpp"

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
  // nlohmann::json keeps object keys sorted, so the dump is canonical.
  nlohmann::json resolved = config.resolved;
  // Where the results go is not an input to them.
  if (resolved.is_object()) resolved.erase("out_dir");
  text << resolved.dump() << '\n';
  std::set<std::string> models;
  for (const JobSpec& j : config.jobs) {
    models.insert(j.model);
    text << "job " << j.name << ' ' << static_cast<int>(j.kind) << ' ' << j.model << ' ' << j.batch
         << ' ' << j.arrival_ns << ' ' << j.iterations << ' ' << static_cast<int>(j.optimizer)
         << ' ' << j.slo_ns << ' ' << j.priority << ' ' << j.weight << ' ' << j.tenant << ' '
         << j.expected_duration_ns << " loop " << j.closed_loop.enabled << ' '
         << j.closed_loop.count << ' ' << j.closed_loop.think_ns << ' ' << j.closed_loop.start_ns
         << ' ' << j.closed_loop.end_ns << ' ' << j.closed_loop.on_ns << ' ' << j.closed_loop.off_ns
         << " requests";
    for (TimeNs t : j.requests_ns) text << ' ' << t;
    text << '\n';
  }
  for (const auto& m : models) add_file(text, repo_root / "traces" / "models" / (m + ".json"));
  std::set<std::string> profiles;
  for (const DeviceConfig& d : config.devices) profiles.insert(d.profile);
  for (const auto& p : profiles) add_file(text, repo_root / "traces" / "devices" / (p + ".json"));
  return sha256_hex(text.str());
}

}  // namespace gpumux
