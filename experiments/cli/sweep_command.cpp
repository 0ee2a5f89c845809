// `gpumux sweep`: runs every point of a sweep file, in parallel with -j. Resumable: a point
// whose folder holds a gpumux result with the same fingerprint (run_fingerprint.hpp: resolved
// config, workload, model and profile files, gpumux version) is skipped; a point whose inputs
// changed since is re-run and its earlier result replaced. Anything else in a point's place is
// refused before any point runs. --point and --shard run a part of the points (one machine of
// many); --collect merges complete points into the sweep's summary.csv and summary_run.csv,
// which a run of every point also writes.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gpumux/config.hpp"
#include "gpumux/errors.hpp"
#include "gpumux/experiment.hpp"
#include "gpumux/input_file.hpp"
#include "gpumux/progress.hpp"
#include "gpumux/result_dir.hpp"
#include "gpumux/run_fingerprint.hpp"
#include "gpumux/summary.hpp"
#include "sweep_collect.hpp"
#include "sweep_file.hpp"
#include "sweep_select.hpp"
#include "sweep_slurm.hpp"

namespace gpumux::cli {

namespace fs = std::filesystem;

namespace {

enum class PointAction { Run, Skip };

struct Point {
  std::string label;
  ExperimentConfig config;
  PointAction action = PointAction::Run;
  std::string why;  ///< "new", "inputs changed", "--force"
};

// The sweep's results root: path rules as for a run's folder, and it may hold only what a
// sweep puts there (gpumux result folders, empty folders, gpumux temporaries), so `--out` on a
// folder of user files is refused.
void check_sweep_root(const fs::path& out, const fs::path& repo_root, const std::string& origin,
                      const std::vector<SweepPoint>& points) {
  check_result_path(out, repo_root, origin);
  std::error_code ec;
  const auto st = fs::symlink_status(out, ec);
  if (fs::exists(st) && !fs::is_directory(st)) {
    throw UsageError(origin + ": " + out.string() +
                     (fs::is_symlink(st) ? ": is a symbolic link; give the folder it points to"
                                         : ": exists and is not a folder"));
  }
  std::vector<std::string> foreign;
  for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    // This sweep's own point folders are checked one by one, with a precise message.
    const bool own_point = std::any_of(points.begin(), points.end(),
                                       [&](const SweepPoint& p) { return p.label == name; });
    if (own_point || is_sweep_own_file(name) || name.find(".gpumux-tmp.") != std::string::npos ||
        name.find(".gpumux-old.") != std::string::npos) {
      continue;
    }
    const ResultDirState state = inspect_result_dir(it->path()).state;
    if (state != ResultDirState::GpumuxResult && state != ResultDirState::EmptyDir &&
        foreign.size() < 5) {
      foreign.push_back(name);
    }
  }
  if (!foreign.empty()) {
    std::string list;
    for (const auto& f : foreign) list += (list.empty() ? "" : ", ") + f;
    throw UsageError(origin + ": " + out.string() + ": holds files gpumux did not write (" + list +
                     "); a sweep's folder holds only its points: choose another folder");
  }
}

// The arrival report once per distinct text, not once per point: the points of a grid over
// policies share one workload, and one report says it. Points whose workloads differ are
// named above their report.
void report_sweep_arrivals(const std::vector<Point>& points, bool quiet) {
  std::vector<std::pair<std::string, std::string>> reports;  // text, the points' labels
  for (const Point& p : points) {
    std::string text = arrival_report_text(p.config, quiet);
    auto it = std::find_if(reports.begin(), reports.end(),
                           [&](const auto& r) { return r.first == text; });
    if (it == reports.end()) {
      reports.emplace_back(std::move(text), p.label);
    } else {
      it->second += ", " + p.label;
    }
  }
  for (const auto& [text, labels] : reports) {
    if (text.empty()) continue;
    if (reports.size() > 1) std::cerr << "gpumux: arrivals of point(s) " << labels << ":\n";
    std::cerr << text;
  }
}

}  // namespace

int sweep_command(const SweepArgs& args) {
  const DataRoot data = data_root();
  const fs::path& root = data.dir;
  const SweepFile sweep = parse_sweep_text(
      read_input_file(args.sweep, args.sweep, kMaxDocumentBytes, InputKind::Config), args.sweep,
      args.quick);
  if (args.list_points) {
    // One line per point: its number (for --point), its label (its folder), its settings.
    for (std::size_t k = 0; k < sweep.points.size(); ++k) {
      std::cout << k << '\t' << sweep.points[k].label;
      for (const auto& o : sweep.points[k].overrides) std::cout << '\t' << o;
      std::cout << '\n';
    }
    return 0;
  }
  const std::vector<std::size_t> selected = select_points(
      sweep.points.size(), args.point,
      args.shard.empty() ? std::nullopt : std::optional<Shard>(parse_shard(args.shard)));
  const bool out_from_cli = !args.out_dir.empty();
  const std::string origin =
      out_from_cli
          ? std::string("--out")
          : args.sweep +
                (sweep.out_dir_given ? ": out_dir" : ": name (out_dir results/" + sweep.name + ")");
  std::error_code ec;
  // With installed data a relative out_dir is against the current directory (anchor_out_dir).
  const bool out_from_cwd = out_from_cli || data.installed;
  const fs::path out_abs = normal_result_path(out_from_cli ? args.out_dir : sweep.out_dir,
                                              out_from_cwd ? fs::current_path(ec) : root);
  check_sweep_root(out_abs, root, origin, sweep.points);
  if (args.collect) {
    collect_sweep(sweep, out_abs);
    std::cerr << "sweep " << sweep.name << ": " << sweep.points.size() << " points collected into "
              << (out_abs / "summary.csv").string() << " and "
              << (out_abs / "summary_run.csv").string() << "\n";
    return 0;
  }

  // Parse and check every point before running anything: bad input fails fast with exit 2.
  std::vector<Point> points;
  for (const std::size_t k : selected) {
    const SweepPoint& sp = sweep.points[k];
    std::vector<std::string> overrides = sweep.common;
    overrides.insert(overrides.end(), args.overrides.begin(), args.overrides.end());
    overrides.insert(overrides.end(), sp.overrides.begin(), sp.overrides.end());
    const std::string point_dir =
        out_from_cwd ? (out_abs / sp.label).string() : sweep.out_dir + "/" + sp.label;
    overrides.push_back("out_dir=" + point_dir);
    overrides.push_back("trace=false");
    Point p{sp.label, load_experiment(root / sweep.base, overrides, root), PointAction::Run, ""};
    check_registered_names(p.config);
    p.config.out_dir_origin = origin + " (point " + sp.label + ")";
    p.config.result_owner = "sweep " + sweep.name + "/" + sp.label;
    const fs::path dir = result_dir_of(p.config, root);
    check_result_target(dir, root, p.config.out_dir_origin, /*replace=*/true);
    const ResultDirInfo info = inspect_result_dir(dir);
    if (info.state == ResultDirState::GpumuxResult) {
      const std::string fingerprint = run_fingerprint(p.config, root);
      const auto& marker = *info.marker;
      // A sweep owns its points: a result another run or sweep wrote there is replaced only
      // with --force.
      const std::string owner = marker.value("owner", std::string("a gpumux run"));
      if (owner != p.config.result_owner && !args.force) {
        throw UsageError(p.config.out_dir_origin + ": " + dir.string() + ": holds a result of " +
                         owner + ", not of this sweep point; pass --force to replace it");
      }
      const bool same = marker.contains("config_sha256") &&
                        marker["config_sha256"] == nlohmann::json(fingerprint);
      if (same && !args.force) {
        p.action = PointAction::Skip;
      } else {
        p.why = same ? "--force" : "inputs changed since it ran";
        p.config.replace_results = true;
      }
    } else {
      p.why = "new";
    }
    points.push_back(std::move(p));
  }

  report_sweep_arrivals(points, args.quiet);

  {
    std::vector<const ExperimentConfig*> configs;
    std::vector<std::string> labels;
    for (const Point& p : points) {
      configs.push_back(&p.config);
      labels.push_back(p.label);
    }
    // A Slurm array runs its tasks at once, like -j with every point.
    check_parallel_gpus(configs, labels, args.slurm ? 2U : args.jobs);
  }

  // Created once every point checked out, before any runs: an unwritable place is bad input
  // (exit 2) naming the option, and bad input elsewhere leaves no folder behind.
  fs::create_directories(out_abs, ec);
  if (ec) {
    throw UsageError(origin + ": " + out_abs.string() +
                     ": cannot create the folder: " + ec.message());
  }

  // Dead writers' folders under the results root go first (killed points' can be large).
  if (!args.slurm) reclaim_dead_writers(results_root_of(out_abs, root), args.quiet);

  if (args.slurm) {
    SlurmOptions o;
    o.binary = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw Error("--slurm: cannot find this program's path: " + ec.message());
    o.repo_root = root;
    o.sweep_file = fs::absolute(args.sweep);
    o.out_root = out_abs;
    o.overrides = args.overrides;
    o.sbatch = args.sbatch;
    o.quick = args.quick;
    o.force = args.force;
    const SlurmScripts scripts = write_slurm_scripts(sweep, o);
    std::cout << scripts.array.string() << "\n" << scripts.collect.string() << "\n";
    if (args.submit) {
      const auto [array_id, collect_id] = submit_slurm(scripts);
      std::cerr << "sweep " << sweep.name << ": submitted job array " << array_id << " ("
                << sweep.points.size() << " tasks) and collect job " << collect_id
                << " (after the array's tasks end)\n";
    } else {
      std::cerr << "sweep " << sweep.name << ": submit with `sbatch --parsable "
                << scripts.array.string() << "`, then `sbatch --dependency=afterany:<id> "
                << scripts.collect.string() << "` (or run this command with --submit)\n";
    }
    return 0;
  }

  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> finished{0};
  std::size_t ran = 0;  ///< points run (not skipped) and ended; under `io`
  const auto to_run = static_cast<std::size_t>(std::count_if(
      points.begin(), points.end(), [](const Point& p) { return p.action == PointAction::Run; }));
  const bool progress = progress_wanted(args.quiet);
  std::mutex io;
  std::vector<std::string> failures;
  bool runtime_failure = false;  ///< a failure that is not bad input (exit 1 rather than 2)
  const auto t0 = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (std::size_t i = next++; i < points.size(); i = next++) {
      const Point& p = points[i];
      std::string status;
      const auto t1 = std::chrono::steady_clock::now();
      if (p.action == PointAction::Skip) {
        status = "complete (same inputs), skipped";
      } else {
        try {
          (void)run_experiment(p.config, root, true);
          std::ostringstream s;
          s << "done in " << std::fixed << std::setprecision(1)
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count() << " s"
            << (p.why == "new" ? "" : " (re-run: " + p.why + ")");
          status = s.str();
        } catch (const std::exception& e) {
          status = std::string("FAILED: ") + e.what();
          std::lock_guard lock(io);
          failures.push_back(p.label + ": " + e.what());
          if (dynamic_cast<const InputError*>(&e) == nullptr) runtime_failure = true;
        }
      }
      std::lock_guard lock(io);
      std::cerr << "[" << ++finished << "/" << points.size() << "] " << sweep.name << "/" << p.label
                << ": " << status << "\n";
      if (p.action == PointAction::Run) ++ran;
      if (progress) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::cerr << "sweep " << sweep.name << ": "
                  << sweep_progress_line(finished, points.size(), ran, to_run, elapsed) << "\n";
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(1u, args.jobs); ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();

  std::vector<std::pair<std::string, std::string>> table;
  for (const Point& p : points) {
    const fs::path s = result_dir_of(p.config, root) / "summary.json";
    if (fs::exists(s, ec)) table.emplace_back(p.label, s.string());
  }
  print_table(table);
  std::cerr << "sweep " << sweep.name << ": " << points.size() << " runs in " << std::fixed
            << std::setprecision(1)
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
            << " s; results under " << out_abs.string() << "\n";
  if (!failures.empty()) {
    for (const auto& f : failures) std::cerr << "error: " << f << "\n";
    return runtime_failure ? 1 : 2;
  }
  if (selected.size() == sweep.points.size()) {
    collect_sweep(sweep, out_abs);
    std::cerr << "tables: " << (out_abs / "summary.csv").string() << ", "
              << (out_abs / "summary_run.csv").string() << "\n";
  } else {
    std::cerr << "ran " << selected.size() << " of " << sweep.points.size()
              << " points; once all are done, `gpumux sweep " << args.sweep
              << (out_from_cli ? " --out " + out_abs.string() : std::string())
              << " --collect` writes the sweep's summary.csv\n";
  }
  return 0;
}

void print_table(const std::vector<std::pair<std::string, std::string>>& runs) {
  // A value that does not exist (no request served, no SLO in the workload) is "-", never 0.
  // train/s is the sum over training jobs of samples per second while each was present
  // (docs/metrics.md); rejected, never-started and stopped jobs (tuning trials a tuner
  // stopped, D42) are counted in their own columns; a summary older than format 4 shows "-".
  std::cout << std::left << std::setw(24) << "run" << std::right << std::setw(9) << "requests"
            << std::setw(9) << "unserved" << std::setw(10) << "p50 ms" << std::setw(11) << "p99 ms"
            << std::setw(11) << "mean ms" << std::setw(7) << "SLO %" << std::setw(10) << "goodput/s"
            << std::setw(10) << "finish %" << std::setw(8) << "drop %" << std::setw(9) << "train/s"
            << std::setw(9) << "GPU util" << std::setw(11) << "mean JCT s" << std::setw(9)
            << "finished" << std::setw(9) << "rejected" << std::setw(12) << "not started"
            << std::setw(9) << "stopped"
            << "\n";
  for (const auto& [label, file] : runs) {
    std::ifstream in(file);
    if (!in) continue;
    const nlohmann::json s = nlohmann::json::parse(in);
    const auto& inf = s["inference"];
    const double util =
        s["devices"].empty() ? 0.0 : s["devices"][0]["compute_utilisation"].get<double>();
    auto fixed = [](const nlohmann::json& obj, const char* key, int precision, double scale = 1.0) {
      std::ostringstream o;
      if (!obj.is_object() || !obj.contains(key) || !obj[key].is_number()) {
        o << "-";
      } else {
        o << std::fixed << std::setprecision(precision) << obj[key].get<double>() * scale;
      }
      return o.str();
    };
    auto count = [](const nlohmann::json& obj, std::string_view key) {
      const auto it = obj.is_object() ? obj.find(key) : obj.end();
      return it != obj.end() && it->is_number_unsigned() ? std::to_string(it->get<std::uint64_t>())
                                                         : std::string("-");
    };
    // Latency of no request is no number (older summaries wrote 0 for it).
    const bool served = inf.value("count", std::uint64_t{0}) > 0;
    auto latency = [&](const char* key) { return served ? fixed(inf, key, 2) : std::string("-"); };
    const auto& tr = s["training"];
    const auto& all = s["jobs_overall"];
    // Summaries written before samples_per_s_present_sum existed show their samples_per_s.
    const char* train_key =
        tr.contains("samples_per_s_present_sum") ? "samples_per_s_present_sum" : "samples_per_s";
    std::cout << std::left << std::setw(24) << label << std::right << std::setw(9)
              << count(inf, "count") << std::setw(9) << count(inf, "requests_unserved")
              << std::setw(10) << latency("p50_ms") << std::setw(11) << latency("p99_ms")
              << std::setw(11) << latency("mean_ms") << std::setw(7)
              << fixed(inf, "slo_attainment_arrived", 1, 100.0) << std::setw(10)
              << fixed(inf, "goodput_per_s", 2) << std::setw(10)
              << fixed(inf, "finish_rate", 1, 100.0) << std::setw(8)
              << fixed(inf, "drop_rate", 1, 100.0) << std::setw(9) << fixed(tr, train_key, 1)
              << std::setw(8) << std::fixed << std::setprecision(1) << util * 100 << "%"
              << std::setw(11) << fixed(all, "mean_jct_s", 2) << std::setw(9)
              << count(all, to_string(JobOutcome::Finished)) << std::setw(9)
              << count(all, to_string(JobOutcome::Rejected)) << std::setw(12)
              << count(all, to_string(JobOutcome::NeverStarted)) << std::setw(9)
              << count(all, to_string(JobOutcome::Stopped)) << "\n";
  }
}

}  // namespace gpumux::cli
