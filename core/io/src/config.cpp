// Experiment configuration: overrides, strict parsing, and expansion of the workload
// (JSONL files, inline jobs, generated services). Every key is documented in
// docs/configuration.md.
#include "gpumux/io/config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <system_error>

#include "cluster_config.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/api/ids.hpp"
#include "gpumux/api/seed.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/input_file.hpp"
#include "gpumux/io/input_path.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/io/output_budget.hpp"
#include "gpumux/io/request_variability_config.hpp"
#include "gpumux/io/result_dir.hpp"
#include "gpumux/io/tuning_config.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {
namespace {

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string index_path(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  for (;;) {
    const auto dot = s.find('.', begin);
    out.push_back(s.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin));
    if (dot == std::string::npos) break;
    begin = dot + 1;
  }
  return out;
}

bool parse_index(const std::string& s, std::size_t& out) {
  if (s.empty()) return false;
  const char* e = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), e, out);
  return ec == std::errc() && ptr == e;
}

// Where a job came from, for messages after the jobs have been merged and sorted.
struct Origin {
  std::string file;             // the config, or the JSONL file for file jobs
  std::string path;             // key path in the config ("workload.jobs[2]") or "" for JSONL jobs
  std::filesystem::path jsonl;  // set for JSONL jobs (to find the line on error)
};

// The line of a JSONL file that defines job `name` ("line N"), found on the error path only.
std::string jsonl_line_of(const std::filesystem::path& path, const std::string& name) {
  try {
    // The file was read and parsed once already, so neither step throws here in practice.
    std::istringstream in(read_input_file(path, path.string(), kMaxTraceBytes, InputKind::Trace));
    std::string line;
    for (std::size_t n = 1; std::getline(in, line); ++n) {
      const auto j = parse_json_if_json(line, path.string(), "", InputKind::Trace);
      if (j && j->is_object() && j->contains("name") && (*j)["name"] == name) {
        return "line " + std::to_string(n);
      }
    }
  } catch (const InputError&) {
    // fall through: name the job instead of its line
  }
  return "job '" + name + "'";
}

[[noreturn]] void fail_at(const Origin& o, const std::string& name, const std::string& key,
                          const std::string& problem) {
  if (!o.jsonl.empty())
    throw TraceError(o.file, jsonl_line_of(o.jsonl, name) + ": " + key, problem);
  throw ConfigError(o.file, o.path + "." + key, problem);
}

JobSpec parse_service(const nlohmann::json& svc, const std::string& file, const std::string& path,
                      std::size_t index, std::uint64_t seed,
                      const std::filesystem::path& repo_root) {
  JsonReader r(svc, file, path);
  JobSpec job;
  job.kind = JobKind::Inference;
  read_job_fields(r, job, /*read_kind=*/false);

  if (const auto* dynamic = r.optional("dynamic")) {
    job.dynamic = parse_request_variability(*dynamic, file, r.path_of("dynamic"), repo_root);
  }
  const auto& arrivals = r.required("arrivals");
  JsonReader a(arrivals, file, r.path_of("arrivals"));
  const std::string generator = a.required_string("generator");
  const auto& registry = GeneratorRegistry::instance();
  if (!registry.contains(generator)) {
    a.fail("generator",
           "unknown generator '" + generator + "'; valid names: " + join(registry.names()));
  }
  GeneratorArgs args;
  args.params = arrivals;
  args.params.erase("generator");  // consumed here; the generator reads and checks the rest
  args.file = file;
  args.key_path = a.path_of("");
  args.repo_root = repo_root;
  const auto gen = registry.create(generator, args);
  r.finish();

  if (auto loop = gen->closed_loop(job.arrival_ns)) {
    if (loop->start_ns < job.arrival_ns) {
      a.fail("start_s", "the client starts before the service's arrival_s");
    }
    job.closed_loop = *loop;
    return job;
  }
  // One generator per service, seeded from (seed, index): adding a service later in the list
  // leaves the arrivals of the earlier ones unchanged.
  std::mt19937_64 rng(derive_seed(seed, SeedStream::Arrivals, index));
  job.requests_ns = gen->generate(rng, job.arrival_ns);
  if (job.requests_ns.empty()) a.fail("", "the generator produced no requests");
  if (job.requests_ns.front() < job.arrival_ns) {
    a.fail("start_s", "requests start before the service's arrival_s");
  }
  return job;
}

// Deprecation warnings for the relative paths of the config that were found only relative to
// the repository root (input_path.hpp); paths inside job files are not walked.
std::vector<std::string> path_warnings(const nlohmann::json& doc, const std::string& file,
                                       const std::filesystem::path& repo_root) {
  std::vector<std::string> out;
  auto check = [&](const nlohmann::json* v, const std::string& key) {
    if (v == nullptr || !v->is_string()) return;
    std::string w = repo_root_fallback_warning(v->get<std::string>(), file, key, repo_root);
    if (!w.empty()) out.push_back(std::move(w));
  };
  auto at = [](const nlohmann::json& j, const char* key) -> const nlohmann::json* {
    return j.is_object() && j.contains(key) ? &j[key] : nullptr;
  };
  const nlohmann::json* w = at(doc, "workload");
  if (w == nullptr) return out;
  if (const auto* files = at(*w, "files"); files && files->is_array()) {
    for (std::size_t i = 0; i < files->size(); ++i) {
      check(&(*files)[i], index_path("workload.files", i));
    }
  }
  for (const char* list : {"jobs", "services"}) {
    const auto* items = at(*w, list);
    if (items == nullptr || !items->is_array()) continue;
    for (std::size_t i = 0; i < items->size(); ++i) {
      const auto& item = (*items)[i];
      const std::string path = index_path(std::string("workload.") + list, i);
      check(at(item, "dynamic"), path + ".dynamic");
      for (const char* holder : {"requests", "arrivals"}) {
        if (const auto* h = at(item, holder)) check(at(*h, "file"), path + "." + holder + ".file");
      }
    }
  }
  return out;
}

// ---- parse_experiment's steps, in the order it reads the config's keys ----

/// name, description, platform, platform_params, seed.
void read_identity(JsonReader& r, ExperimentConfig& cfg) {
  cfg.name = r.required_string("name");
  if (!is_safe_result_name(cfg.name)) {
    r.fail("name", "'" + cfg.name + "' must be " + std::string(kSafeResultNameRule) +
                       " (it names the results folder)");
  }
  cfg.description = r.string_or("description", "");
  cfg.platform = r.string_or("platform", "sim");
  if (cfg.platform.empty()) r.fail("platform", "must not be empty");
  if (const auto* pp = r.optional("platform_params")) {
    if (!pp->is_object())
      r.fail("platform_params", std::string("expected an object, got ") + pp->type_name());
    cfg.platform_params = *pp;
  }
  const std::int64_t seed = r.int_or("seed", 1);
  if (seed < 0) r.fail("seed", "must be >= 0");
  cfg.seed = static_cast<std::uint64_t>(seed);
}

/// The "devices" list: each names a known profile, optionally with its memory.
void read_device_list(JsonReader& r, ExperimentConfig& cfg, const std::string& file,
                      const std::filesystem::path& repo_root) {
  const auto& devices = r.required("devices");
  if (!devices.is_array()) {
    r.fail("devices", std::string("expected an array, got ") + devices.type_name());
  }
  if (devices.empty()) r.fail("devices", "needs at least one device");
  if (devices.size() > kMaxDevices) {
    r.fail("devices", "at most " + std::to_string(kMaxDevices) +
                          " devices (a DeviceId is 16 "
                          "bits), got " +
                          std::to_string(devices.size()));
  }
  const auto profiles = device_profile_names(repo_root / "traces" / "devices");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    JsonReader d(devices[i], file, index_path("devices", i));
    DeviceConfig dc;
    dc.profile = d.required_string("profile");
    if (!std::binary_search(profiles.begin(), profiles.end(), dc.profile)) {
      d.fail("profile",
             "unknown device profile '" + dc.profile + "'; valid names: " + join(profiles));
    }
    if (d.has("memory_gib")) {
      const double gib = d.positive("memory_gib", d.required_number("memory_gib"));
      if (gib > 1e6) d.fail("memory_gib", "out of range (more than 1e6 GiB)");
      dc.memory_bytes = static_cast<std::uint64_t>(std::llround(gib * 1073741824.0));
    }
    d.finish();
    cfg.devices.push_back(std::move(dc));
  }
}

// Devices: names are checked here; the profiles themselves are loaded by the platform. A
// "cluster" expands into the devices instead (cluster_config.hpp).
void read_devices(JsonReader& r, ExperimentConfig& cfg, const std::string& file,
                  const std::filesystem::path& repo_root) {
  if (r.has("cluster")) {
    if (r.has("devices")) r.fail("cluster", "give either devices or cluster, not both");
    ClusterExpansion cluster = parse_cluster(r.required("cluster"), file, "cluster", repo_root);
    cfg.devices = std::move(cluster.devices);
    cfg.topology = cluster.topology;
  } else {
    read_device_list(r, cfg, file, repo_root);
  }
}

/// "policy": its name and params.
void read_policy(JsonReader& r, ExperimentConfig& cfg) {
  JsonReader p = r.object("policy");
  cfg.policy = p.required_string("name");
  if (cfg.policy.empty()) p.fail("name", "must not be empty");
  if (const auto* params = p.optional("params")) {
    if (!params->is_object()) {
      p.fail("params", std::string("expected an object, got ") + params->type_name());
    }
    cfg.policy_params = *params;
  }
  p.finish();
}

/// workload.files: the jobs of each JSONL file, in order.
void read_workload_files(JsonReader& w, const nlohmann::json& files, ExperimentConfig& cfg,
                         std::vector<Origin>& origins, const std::string& file,
                         const std::filesystem::path& repo_root) {
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& f = files[i];
    const std::string key = index_path("files", i);
    if (!f.is_string()) w.fail(key, std::string("expected a string, got ") + f.type_name());
    const std::filesystem::path rel = f.get<std::string>();
    const ResolvedInput found = resolve_input_path(rel, file, repo_root);
    const std::filesystem::path& full = found.path;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(full, ec)) {
      w.fail(key, "cannot open '" + full.string() + "'");
    }
    // Named as the config names it when found in the repository (as before); otherwise as
    // found, so that the paths its lines name resolve against its own folder.
    const std::string shown = found.via_repo_root ? rel.string() : full.string();
    const std::string text = read_input_file(full, shown, kMaxTraceBytes, InputKind::Trace);
    for (JobSpec& job : parse_jobs_jsonl_text(text, shown, repo_root)) {
      cfg.jobs.push_back(std::move(job));
      origins.push_back(Origin{shown, "", full});
    }
  }
}

// Workload: JSONL files, then inline jobs, then services; sorted by arrival afterwards.
// Returns where each job came from, in the order of cfg.jobs.
std::vector<Origin> read_workload(JsonReader& r, ExperimentConfig& cfg, const std::string& file,
                                  const std::filesystem::path& repo_root) {
  std::vector<Origin> origins;
  JsonReader w = r.object("workload");
  auto array_of = [&w](const std::string& key) -> const nlohmann::json* {
    const auto* a = w.optional(key);
    if (a && !a->is_array()) {
      w.fail(key, std::string("expected an array, got ") + a->type_name());
    }
    return a;
  };
  if (const auto* files = array_of("files")) {
    read_workload_files(w, *files, cfg, origins, file, repo_root);
  }
  if (const auto* jobs = array_of("jobs")) {
    for (std::size_t i = 0; i < jobs->size(); ++i) {
      const std::string path = w.path_of(index_path("jobs", i));
      cfg.jobs.push_back(parse_job((*jobs)[i], file, path, repo_root));
      origins.push_back(Origin{file, path, {}});
    }
  }
  if (const auto* services = array_of("services")) {
    for (std::size_t i = 0; i < services->size(); ++i) {
      const std::string path = w.path_of(index_path("services", i));
      cfg.jobs.push_back(parse_service((*services)[i], file, path, i, cfg.seed, repo_root));
      origins.push_back(Origin{file, path, {}});
    }
  }
  if (const auto* tuning = array_of("tuning")) {
    for (std::size_t i = 0; i < tuning->size(); ++i) {
      const std::string path = w.path_of(index_path("tuning", i));
      cfg.tuning.push_back(parse_tuning((*tuning)[i], file, path, i));
      for (JobSpec& job : trial_slots(cfg.tuning.back())) {
        cfg.jobs.push_back(std::move(job));
        origins.push_back(Origin{file, path, {}});
      }
    }
  }
  w.finish();
  return origins;
}

/// horizon_s, out_dir, trace, events, compress, max_output_gib.
void read_run_outputs(JsonReader& r, ExperimentConfig& cfg) {
  const std::string& file = r.file();
  if (const auto* h = r.optional("horizon_s")) {
    if (!h->is_number())
      r.fail("horizon_s", std::string("expected a number, got ") + h->type_name());
    cfg.horizon_ns = r.required_duration("horizon_s", TimeUnit::Seconds, Sign::Positive);
  }
  cfg.out_dir_origin =
      file + (r.has("out_dir") ? ": out_dir" : ": name (out_dir results/" + cfg.name + ")");
  cfg.out_dir = r.string_or("out_dir", "results/" + cfg.name);
  if (cfg.out_dir.empty()) r.fail("out_dir", "must not be empty");
  cfg.write_trace = r.bool_or("trace", true);
  cfg.write_events = r.bool_or("events", true);
  cfg.compress = r.choice_or("compress", kCompressionNames, Compression::None);
  if (r.has("max_output_gib")) {
    const double gib = r.positive("max_output_gib", r.required_number("max_output_gib"));
    if (gib > OutputBudget::kMaxGib) r.fail("max_output_gib", "out of range (more than 1 PiB)");
    cfg.max_output_bytes = OutputBudget::gib_to_bytes(gib);
  }
}

/// Every job names a known model (and its dynamic section resolves against it), and no two
/// jobs share a name; errors name where the job came from.
void check_jobs(ExperimentConfig& cfg, const std::vector<Origin>& origins, const std::string& file,
                const std::filesystem::path& repo_root) {
  if (cfg.jobs.empty()) {
    throw ConfigError(file, "workload", "no jobs: give workload.files, jobs, services or tuning");
  }
  const ModelCatalog catalog(repo_root / "traces" / "models");
  const auto models = catalog.names();
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < cfg.jobs.size(); ++i) {
    const JobSpec& job = cfg.jobs[i];
    if (!std::binary_search(models.begin(), models.end(), job.model)) {
      fail_at(origins[i], job.name, "model",
              "unknown model '" + job.model + "'; valid names: " + join(models));
    }
    if (job.dynamic) {
      try {
        job.dynamic->resolve(catalog.at(job.model));
      } catch (const std::invalid_argument& e) {
        fail_at(origins[i], job.name, "dynamic", e.what());
      }
    }
    if (auto [it, fresh] = seen.emplace(job.name, i); !fresh) {
      fail_at(origins[i], job.name, "name", "duplicate job name '" + job.name + "'");
    }
  }
}

}  // namespace

void apply_override(nlohmann::json& doc, const std::string& assignment, const std::string& file) {
  const auto eq = assignment.find('=');
  const std::string key_path = assignment.substr(0, eq);
  const std::string where = "--set " + printable(key_path);
  // Checked before anything runs: a JSON document must be UTF-8, and invalid bytes would
  // otherwise surface only when the resolved config is written at the end of the run.
  if (!is_valid_utf8(assignment)) throw ConfigError(file, where, "not valid UTF-8");
  if (eq == std::string::npos || key_path.empty()) {
    throw ConfigError(file, "--set " + printable(assignment), "expected key.path=value");
  }
  const std::string text = assignment.substr(eq + 1);
  // JSON when it parses (numbers, booleans, objects, quoted strings), else a bare string.
  // Duplicate keys, deep nesting and number overflow are errors, not bare strings.
  auto parsed = parse_json_if_json(text, file, where, InputKind::Config);
  nlohmann::json value = parsed ? std::move(*parsed) : nlohmann::json(text);

  const auto parts = split_dots(key_path);
  // Bounds the depth the override can add, as the parser bounds the file's (kMaxJsonDepth).
  if (parts.size() > kMaxJsonDepth) {
    throw ConfigError(file, where,
                      "key path deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  nlohmann::json* cur = &doc;
  std::string walked;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    if (part.empty()) throw ConfigError(file, where, "empty key in the path");
    if (cur->is_object()) {
      if (last) {
        // No config key takes null, so null means "remove": the reader then uses the default.
        if (value.is_null()) {
          cur->erase(part);
        } else {
          (*cur)[part] = value;
        }
        return;
      }
      // Removing under a missing key changes nothing; do not create the path for it.
      if (value.is_null() && !cur->contains(part)) return;
      // A missing intermediate becomes an object; the strict parse rejects unknown keys.
      if (!cur->contains(part)) (*cur)[part] = nlohmann::json::object();
      cur = &(*cur)[part];
    } else if (cur->is_array()) {
      std::size_t index = 0;
      if (!parse_index(part, index)) {
        throw ConfigError(file, where,
                          "'" + (walked.empty() ? std::string("(top level)") : walked) +
                              "' is an array; expected an index, got '" + part + "'");
      }
      if (index >= cur->size()) {
        throw ConfigError(file, where,
                          "index " + part + " out of range ('" + walked + "' has " +
                              std::to_string(cur->size()) + " elements)");
      }
      if (last) {
        if (value.is_null()) {
          throw ConfigError(file, where,
                            "null removes an object key; an array element cannot be removed");
        }
        (*cur)[index] = value;
        return;
      }
      cur = &(*cur)[index];
    } else {
      throw ConfigError(file, where,
                        "'" + (walked.empty() ? std::string("(top level)") : walked) + "' is " +
                            std::string(cur->type_name()) + ", not an object or array");
    }
    walked += (walked.empty() ? "" : ".") + part;
  }
}

ExperimentConfig parse_experiment(nlohmann::json doc, const std::string& file,
                                  const std::filesystem::path& repo_root) {
  ExperimentConfig cfg;
  cfg.file = file;
  JsonReader r(doc, file, "");
  read_identity(r, cfg);
  read_devices(r, cfg, file, repo_root);
  cfg.cost.precision = r.choice_or("precision", kPrecisionNames, Precision::Fp32);
  cfg.cost.framework_overhead_ns =
      r.duration_or("framework_overhead_us", TimeUnit::Microseconds, 0);
  read_policy(r, cfg);
  const std::vector<Origin> origins = read_workload(r, cfg, file, repo_root);
  read_run_outputs(r, cfg);
  r.finish();

  check_jobs(cfg, origins, file, repo_root);
  std::stable_sort(cfg.jobs.begin(), cfg.jobs.end(),
                   [](const JobSpec& a, const JobSpec& b) { return a.arrival_ns < b.arrival_ns; });
  validate_jobs(cfg.jobs, file);
  cfg.warnings = path_warnings(doc, file, repo_root);
  cfg.resolved = std::move(doc);
  return cfg;
}

ExperimentConfig parse_experiment_text(std::string_view text, const std::string& file,
                                       const std::vector<std::string>& overrides,
                                       const std::filesystem::path& repo_root) {
  nlohmann::json doc = parse_json_text(text, file, "", InputKind::Config);
  for (const auto& o : overrides) apply_override(doc, o, file);
  return parse_experiment(std::move(doc), file, repo_root);
}

ExperimentConfig load_experiment(const std::filesystem::path& file,
                                 const std::vector<std::string>& overrides,
                                 const std::filesystem::path& repo_root) {
  const std::string name = file.string();
  const std::string text = read_input_file(file, name, kMaxDocumentBytes, InputKind::Config);
  return parse_experiment_text(text, name, overrides, repo_root);
}

}  // namespace gpumux
