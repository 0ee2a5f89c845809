// Planning a sweep's points: config, fingerprint, folder state (see sweep_plan.hpp).
#include "sweep_plan.hpp"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/experiment.hpp"
#include "gpumux/io/input_file.hpp"
#include "gpumux/io/output.hpp"
#include "gpumux/io/result_dir.hpp"
#include "gpumux/io/run_fingerprint.hpp"
#include "sweep_collect.hpp"

namespace gpumux::cli {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxNamedKeys = 4;

// Dotted paths where two resolved configs differ (at most kMaxNamedKeys + 1; both parsed
// within kMaxJsonDepth, so the recursion is bounded).
void differing_keys(const nlohmann::json& a, const nlohmann::json& b, const std::string& path,
                    std::vector<std::string>& out) {
  if (out.size() > kMaxNamedKeys || a == b) return;
  const auto sub = [&](const std::string& key) { return path.empty() ? key : path + "." + key; };
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (const auto& [k, v] : a.items()) keys.insert(k);
    for (const auto& [k, v] : b.items()) keys.insert(k);
    for (const auto& k : keys) {
      const auto ia = a.find(k);
      const auto ib = b.find(k);
      if (ia == a.end() || ib == b.end()) {
        if (out.size() <= kMaxNamedKeys) out.push_back(sub(k));
      } else {
        differing_keys(*ia, *ib, sub(k), out);
      }
    }
    return;
  }
  if (a.is_array() && b.is_array() && a.size() == b.size()) {
    for (std::size_t i = 0; i < a.size(); ++i)
      differing_keys(a[i], b[i], sub(std::to_string(i)), out);
    return;
  }
  out.push_back(path.empty() ? "(the whole config)" : path);
}

// What differs between the inputs a result was made from and the point's inputs now, as far
// as the folder tells: the gpumux version in its marker, the settings in its
// config.resolved.json. The fingerprint also covers the model, device-profile, job and
// arrivals files' bytes, which the folder does not keep: named when nothing else differs.
std::string describe_change(const fs::path& dir, const nlohmann::json& marker,
                            const ExperimentConfig& config) {
  std::vector<std::string> parts;
  const std::string now = build_info().value("version", std::string());
  const auto then = marker.find("gpumux_version");
  if (then != marker.end() && then->is_string() && then->get<std::string>() != now) {
    parts.push_back("gpumux " + then->get<std::string>() + " then, " + now + " now");
  }
  const fs::path resolved = dir / "config.resolved.json";
  try {
    nlohmann::json old = parse_json_text(
        read_input_file(resolved, resolved.string(), kMaxDocumentBytes, InputKind::Trace),
        resolved.string(), "", InputKind::Trace);
    nlohmann::json cur = config.resolved;
    // Where the results go is not an input to them (run_fingerprint.cpp).
    if (old.is_object()) old.erase("out_dir");
    if (cur.is_object()) cur.erase("out_dir");
    std::vector<std::string> keys;
    differing_keys(old, cur, "", keys);
    if (!keys.empty()) {
      std::string list;
      for (std::size_t i = 0; i < keys.size() && i < kMaxNamedKeys; ++i) {
        list += (i == 0 ? "" : ", ") + keys[i];
      }
      if (keys.size() > kMaxNamedKeys) list += ", ...";
      parts.push_back("settings: " + list);
    }
  } catch (const InputError&) {
    // Not kept or not readable: the settings cannot be compared; say what can be.
  }
  if (parts.empty()) parts.push_back("a model, device-profile, job or arrivals file it reads");
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

}  // namespace

PointPlan plan_point(const SweepFile& sweep, std::size_t index, const SweepSetup& setup) {
  const SweepPoint& sp = sweep.points.at(index);
  std::vector<std::string> overrides = sweep.common;
  overrides.insert(overrides.end(), setup.cli_overrides.begin(), setup.cli_overrides.end());
  overrides.insert(overrides.end(), sp.overrides.begin(), sp.overrides.end());
  const std::string point_dir =
      setup.out_from_cwd ? (setup.out_abs / sp.label).string() : sweep.out_dir + "/" + sp.label;
  overrides.push_back("out_dir=" + point_dir);
  overrides.push_back("trace=false");
  PointPlan p;
  p.label = sp.label;
  p.config = load_experiment(setup.root / sweep.base, overrides, setup.root);
  check_registered_names(p.config);
  p.config.out_dir_origin = setup.origin + " (point " + sp.label + ")";
  p.config.result_owner = "sweep " + sweep.name + "/" + sp.label;
  const fs::path dir = result_dir_of(p.config, setup.root);
  check_result_target(dir, setup.root, p.config.out_dir_origin, /*replace=*/true);
  const ResultDirInfo info = inspect_result_dir(dir);
  if (info.state != ResultDirState::GpumuxResult) {
    p.why = "no result yet";
    return p;
  }
  p.has_result = true;
  const nlohmann::json& marker = *info.marker;
  // A sweep owns its points: a result another run or sweep wrote there is not this point's.
  const auto owner = marker.find("owner");
  const std::string owner_name =
      owner != marker.end() && owner->is_string() ? owner->get<std::string>() : "a gpumux run";
  if (owner_name != p.config.result_owner) {
    p.other_owner = owner_name;
    p.why = "holds a result of " + owner_name + ", not of this sweep point";
    return p;
  }
  const auto stored = marker.find("config_sha256");
  if (stored == marker.end() || *stored != nlohmann::json(run_fingerprint(p.config, setup.root))) {
    p.why = "inputs changed since it ran (" + describe_change(dir, marker, p.config) + ")";
    return p;
  }
  // The marker vouches that gpumux wrote these files; a file cut short since (a full disk, a
  // copy interrupted) is re-run rather than skipped, and named.
  try {
    (void)read_point_result(dir);
  } catch (const InputError& e) {
    p.why = e.what();
    return p;
  }
  p.up_to_date = true;
  return p;
}

void require_up_to_date(const SweepFile& sweep, const std::vector<PointPlan>& plans,
                        const fs::path& out_abs) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // why, labels
  std::size_t stale = 0;
  for (const PointPlan& p : plans) {
    if (p.up_to_date) continue;
    ++stale;
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == p.why; });
    if (it == groups.end()) it = groups.insert(groups.end(), {p.why, {}});
    it->second.push_back(p.label);
  }
  if (stale == 0) return;
  std::string list;
  for (const auto& [why, labels] : groups) {
    list += "\n  " + why + ": ";
    for (std::size_t i = 0; i < labels.size() && i < 10; ++i) {
      list += (i == 0 ? "" : ", ") + labels[i];
    }
    if (labels.size() > 10) list += ", ... (" + std::to_string(labels.size()) + " points)";
  }
  throw UsageError("sweep " + sweep.name + ": " + std::to_string(stale) + " of " +
                   std::to_string(plans.size()) + " points have no up-to-date result under " +
                   out_abs.string() +
                   "; a resume (the same command without --collect) re-runs "
                   "them:" +
                   list);
}

}  // namespace gpumux::cli
