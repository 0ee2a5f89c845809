// `gpumux sweep`: runs every point of a sweep file, in parallel with -j. Resumable: a point
// whose results directory is complete (run.json present: directories are renamed into place
// only when complete) is skipped.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gpumux/config.hpp"
#include "gpumux/errors.hpp"
#include "gpumux/experiment.hpp"
#include "gpumux/json_reader.hpp"
#include "gpumux/output.hpp"

namespace gpumux::cli {

namespace fs = std::filesystem;

namespace {

struct Point {
  std::string label;
  std::vector<std::string> overrides;
  ExperimentConfig config;
};

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return out;
}

std::string value_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

/// Expands "grid" (cartesian product, keys in sorted order: JSON objects are unordered) or "runs" into labelled points.
std::vector<std::pair<std::string, std::vector<std::string>>> expand(const nlohmann::json& doc,
                                                                     const std::string& file) {
  std::vector<std::pair<std::string, std::vector<std::string>>> points{{"", {}}};
  if (doc.contains("grid")) {
    const auto& grid = doc["grid"];
    if (!grid.is_object() || grid.empty()) throw ConfigError(file, "grid", "expected a non-empty object");
    for (const auto& [key, values] : grid.items()) {
      if (!values.is_array() || values.empty()) {
        throw ConfigError(file, "grid." + key, "expected a non-empty array of values");
      }
      std::vector<std::pair<std::string, std::vector<std::string>>> next;
      for (const auto& p : points) {
        for (const auto& v : values) {
          auto q = p;
          q.first += (q.first.empty() ? "" : "_") + sanitize(value_text(v));
          q.second.push_back(key + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
          next.push_back(std::move(q));
        }
      }
      points = std::move(next);
    }
  }
  if (doc.contains("runs")) {
    if (doc.contains("grid")) throw ConfigError(file, "runs", "use either grid or runs, not both");
    points.clear();
    std::size_t i = 0;
    for (const auto& r : doc["runs"]) {
      const std::string where = "runs[" + std::to_string(i++) + "]";
      JsonReader reader(r, file, where);
      std::string label = reader.required_string("label");
      std::vector<std::string> sets;
      if (const auto* set = reader.optional("set")) {
        if (!set->is_object()) throw ConfigError(file, where + ".set", "expected an object");
        for (const auto& [k, v] : set->items()) {
          sets.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
        }
      }
      reader.finish();
      points.emplace_back(sanitize(label), std::move(sets));
    }
  }
  if (points.size() == 1 && points[0].first.empty()) points[0].first = "run";
  return points;
}

}  // namespace

int sweep_command(const SweepArgs& args) {
  const fs::path root = repo_root();
  std::ifstream in(args.sweep);
  if (!in) throw ConfigError(args.sweep, "", "cannot open file");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(args.sweep, "byte " + std::to_string(e.byte), e.what());
  }
  JsonReader reader(doc, args.sweep, "");
  const std::string name = reader.required_string("name");
  const std::string base = reader.required_string("base");
  const std::string file_out_dir = reader.string_or("out_dir", "results/" + name);
  const std::string out_dir = !args.out_dir.empty() ? args.out_dir : file_out_dir;
  std::vector<std::string> common;
  auto add_sets = [&](const nlohmann::json& set, const std::string& where) {
    if (!set.is_object()) throw ConfigError(args.sweep, where, "expected an object");
    for (const auto& [k, v] : set.items()) {
      common.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
    }
  };
  if (const auto* set = reader.optional("set")) add_sets(*set, "set");
  (void)reader.optional("grid");
  (void)reader.optional("runs");
  (void)reader.optional("description");
  const nlohmann::json* quick = reader.optional("quick");
  reader.finish();
  if (args.quick && quick != nullptr) {
    // Same code, smaller traces: the quick section's settings apply after the file's, and
    // its grid entries replace the file's for the same keys.
    JsonReader q(*quick, args.sweep, "quick");
    if (const auto* set = q.optional("set")) add_sets(*set, "quick.set");
    if (const auto* grid = q.optional("grid")) {
      if (!grid->is_object()) throw ConfigError(args.sweep, "quick.grid", "expected an object");
      for (const auto& [k, v] : grid->items()) {
        if (!doc.contains("grid") || !doc["grid"].contains(k)) {
          throw ConfigError(args.sweep, "quick.grid." + k, "not a key of grid");
        }
        doc["grid"][k] = v;
      }
    }
    if (const auto* runs = q.optional("runs")) doc["runs"] = *runs;
    q.finish();
  }
  common.insert(common.end(), args.overrides.begin(), args.overrides.end());

  // Parse every point before running anything: bad input fails fast with exit code 2.
  std::vector<Point> points;
  for (auto& [label, sets] : expand(doc, args.sweep)) {
    std::vector<std::string> overrides = common;
    overrides.insert(overrides.end(), sets.begin(), sets.end());
    overrides.push_back("out_dir=" + out_dir + "/" + label);
    overrides.push_back("trace=false");
    ExperimentConfig cfg = load_experiment(root / base, overrides, root);
    check_registered_names(cfg);
    points.push_back({label, std::move(overrides), std::move(cfg)});
  }

  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> finished{0};
  std::mutex io;
  std::vector<std::string> failures;
  const auto t0 = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (std::size_t i = next++; i < points.size(); i = next++) {
      const Point& p = points[i];
      const fs::path dir = root / p.config.out_dir;
      std::string status;
      const auto t1 = std::chrono::steady_clock::now();
      if (!args.force && fs::exists(dir / "run.json")) {
        status = "complete, skipped";
      } else {
        try {
          (void)run_experiment(p.config, root, true);
          std::ostringstream s;
          s << "done in " << std::fixed << std::setprecision(1)
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count() << " s";
          status = s.str();
        } catch (const std::exception& e) {
          status = std::string("FAILED: ") + e.what();
          std::lock_guard lock(io);
          failures.push_back(p.label + ": " + e.what());
        }
      }
      std::lock_guard lock(io);
      std::cerr << "[" << ++finished << "/" << points.size() << "] " << name << "/" << p.label
                << ": " << status << "\n";
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(1u, args.jobs); ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();

  std::vector<std::pair<std::string, std::string>> table;
  for (const Point& p : points) {
    const fs::path s = root / p.config.out_dir / "summary.json";
    if (fs::exists(s)) table.emplace_back(p.label, s.string());
  }
  print_table(table);
  std::cerr << "sweep " << name << ": " << points.size() << " runs in " << std::fixed
            << std::setprecision(1)
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
            << " s; results under " << out_dir << "\n";
  if (!failures.empty()) {
    for (const auto& f : failures) std::cerr << "error: " << f << "\n";
    return 1;
  }
  return 0;
}

void print_table(const std::vector<std::pair<std::string, std::string>>& runs) {
  std::cout << std::left << std::setw(26) << "run" << std::right << std::setw(9) << "requests"
            << std::setw(10) << "p50 ms"
            << std::setw(10) << "p99 ms" << std::setw(10) << "mean ms" << std::setw(12)
            << "train/s" << std::setw(9) << "GPU util" << std::setw(11) << "mean JCT s"
            << std::setw(10) << "finished" << "\n";
  for (const auto& [label, file] : runs) {
    std::ifstream in(file);
    if (!in) continue;
    const nlohmann::json s = nlohmann::json::parse(in);
    const auto& inf = s["inference"];
    const double util = s["devices"].empty() ? 0.0 : s["devices"][0]["compute_utilisation"].get<double>();
    const auto served = inf["count"].get<std::size_t>();
    auto ms = [&](const char* key) {
      std::ostringstream o;
      if (served == 0) {
        o << "-";
      } else {
        o << std::fixed << std::setprecision(2) << inf[key].get<double>();
      }
      return o.str();
    };
    std::cout << std::left << std::setw(26) << label << std::right << std::setw(9) << served
              << std::setw(10) << ms("p50_ms") << std::setw(10) << ms("p99_ms") << std::setw(10)
              << ms("mean_ms") << std::fixed << std::setw(12) << std::setprecision(1)
              << s["training"]["samples_per_s"].get<double>() << std::setw(8)
              << std::setprecision(1) << util * 100 << "%" << std::setw(11)
              << std::setprecision(2) << s["jobs_overall"]["mean_jct_s"].get<double>()
              << std::setw(10) << s["jobs_overall"]["finished"].get<std::size_t>() << "\n";
  }
}

}  // namespace gpumux::cli
