// `gpumux sweep`: runs every point of a sweep file, in parallel with -j. Resumable: a point
// whose folder holds an up-to-date result (sweep_plan.hpp: same fingerprint, readable tables)
// is skipped; any other point of this sweep is re-run and its earlier result replaced. Anything
// else in a point's place is refused before any point runs. --point and --shard run a part of
// the points (one machine of many); --collect checks every point as a resume would and merges
// them into the sweep's summary.csv and summary_run.csv, which a run of every point also
// writes; --slurm writes scripts that run the points as a Slurm job array.
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
#include "gpumux/api/errors.hpp"
#include "gpumux/io/config.hpp"
#include "gpumux/io/experiment.hpp"
#include "gpumux/io/input_file.hpp"
#include "gpumux/io/progress.hpp"
#include "gpumux/io/result_dir.hpp"
#include "gpumux/io/run_fingerprint.hpp"
#include "gpumux/io/summary.hpp"
#include "script_quoting.hpp"
#include "sweep_collect.hpp"
#include "sweep_file.hpp"
#include "sweep_plan.hpp"
#include "sweep_select.hpp"
#include "sweep_slurm.hpp"

namespace gpumux::cli {

namespace fs = std::filesystem;

namespace {

// A point of this invocation: its plan, and whether it runs or is skipped as complete.
struct Point {
  PointPlan plan;
  bool run = true;
  const std::string& label() const { return plan.label; }
  const ExperimentConfig& config() const { return plan.config; }
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
    std::string text = arrival_report_text(p.config(), quiet);
    auto it = std::find_if(reports.begin(), reports.end(),
                           [&](const auto& r) { return r.first == text; });
    if (it == reports.end()) {
      reports.emplace_back(std::move(text), p.label());
    } else {
      it->second += ", " + p.label();
    }
  }
  for (const auto& [text, labels] : reports) {
    if (text.empty()) continue;
    if (reports.size() > 1) std::cerr << "gpumux: arrivals of point(s) " << labels << ":\n";
    std::cerr << text;
  }
}

// The --slurm scripts' text for this invocation (checked: script_quoting.hpp).
SlurmScriptTexts slurm_texts(const SweepArgs& args, const SweepFile& sweep,
                             const SweepSetup& setup) {
  SlurmOptions o;
  std::error_code ec;
  o.binary = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("--slurm: cannot find this program's path: " + ec.message());
  o.repo_root = setup.root;
  o.sweep_file = fs::absolute(args.sweep);
  o.out_root = setup.out_abs;
  o.overrides = args.overrides;
  o.sbatch = args.sbatch;
  o.quick = args.quick;
  o.force = args.force;
  o.out_origin = setup.origin;
  o.name_origin = args.sweep + ": name";
  return slurm_script_texts(sweep, o);
}

int write_and_submit(const SlurmScriptTexts& texts, const SweepArgs& args, const SweepFile& sweep,
                     const fs::path& out_abs) {
  const SlurmScripts scripts = write_slurm_scripts(texts, out_abs);
  std::cout << scripts.array.string() << "\n" << scripts.collect.string() << "\n";
  if (args.submit) {
    const auto [array_id, collect_id] = submit_slurm(scripts);
    std::cerr << "sweep " << sweep.name << ": submitted job array " << array_id << " ("
              << sweep.points.size() << " tasks) and collect job " << collect_id
              << " (after the array's tasks end)\n";
  } else {
    // Quoted as the shell reads them: a person copies these lines into one.
    std::cerr << "sweep " << sweep.name << ": submit with `sbatch --parsable "
              << shell_quote(scripts.array.string())
              << "`, then `sbatch --dependency=afterany:<id> "
              << shell_quote(scripts.collect.string()) << "` (or run this command with --submit)\n";
  }
  return 0;
}

// The points' failures: messages, and whether one is not bad input (exit 1 rather than 2).
struct Failures {
  std::vector<std::string> messages;
  bool at_run_time = false;
};

// Runs the points to run (args.jobs at a time), printing a line as each ends.
Failures run_points(const std::vector<Point>& points, const SweepFile& sweep, const fs::path& root,
                    const SweepArgs& args, std::chrono::steady_clock::time_point t0) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> finished{0};
  std::size_t ran = 0;  ///< points run (not skipped) and ended; under `io`
  const auto to_run = static_cast<std::size_t>(
      std::count_if(points.begin(), points.end(), [](const Point& p) { return p.run; }));
  const bool progress = progress_wanted(args.quiet);
  std::mutex io;
  Failures failed;
  auto worker = [&] {
    for (std::size_t i = next++; i < points.size(); i = next++) {
      const Point& p = points[i];
      std::string status;
      const auto t1 = std::chrono::steady_clock::now();
      if (!p.run) {
        status = "complete (same inputs), skipped";
      } else {
        try {
          (void)run_experiment(p.config(), root, true);
          std::ostringstream s;
          s << "done in " << std::fixed << std::setprecision(1)
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count() << " s"
            << (p.plan.has_result ? " (re-run: " + p.plan.why + ")" : "");
          status = s.str();
        } catch (const std::exception& e) {
          status = std::string("FAILED: ") + e.what();
          std::lock_guard lock(io);
          failed.messages.push_back(p.label() + ": " + e.what());
          if (dynamic_cast<const InputError*>(&e) == nullptr) failed.at_run_time = true;
        }
      }
      std::lock_guard lock(io);
      std::cerr << "[" << ++finished << "/" << points.size() << "] " << sweep.name << "/"
                << p.label() << ": " << status << "\n";
      if (p.run) ++ran;
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

  return failed;
}

// --list-points: one line per point: its number (for --point), its label (its folder), its
// settings.
int list_points(const SweepFile& sweep) {
  for (std::size_t k = 0; k < sweep.points.size(); ++k) {
    std::cout << k << '\t' << sweep.points[k].label;
    for (const auto& o : sweep.points[k].overrides) std::cout << '\t' << o;
    std::cout << '\n';
  }
  return 0;
}

// The sweep's folder (--out, else the file's out_dir or name) and where it came from.
SweepSetup sweep_setup(const SweepArgs& args, const SweepFile& sweep, const DataRoot& data) {
  const fs::path& root = data.dir;
  const bool out_from_cli = !args.out_dir.empty();
  SweepSetup setup;
  setup.root = root;
  setup.origin = out_from_cli ? std::string("--out")
                              : args.sweep + (sweep.out_dir_given
                                                  ? ": out_dir"
                                                  : ": name (out_dir results/" + sweep.name + ")");
  std::error_code ec;
  // With installed data a relative out_dir is against the current directory (anchor_out_dir).
  setup.out_from_cwd = out_from_cli || data.installed;
  setup.out_abs = normal_result_path(out_from_cli ? args.out_dir : sweep.out_dir,
                                     setup.out_from_cwd ? fs::current_path(ec) : root);
  setup.cli_overrides = args.overrides;
  return setup;
}

// --collect: every point as a resume sees it: the tables hold only what a resume would keep.
int collect_points(const SweepFile& sweep, const SweepSetup& setup) {
  const fs::path& out_abs = setup.out_abs;
  std::vector<PointPlan> plans;
  for (std::size_t k = 0; k < sweep.points.size(); ++k) {
    plans.push_back(plan_point(sweep, k, setup));
  }
  require_up_to_date(sweep, plans, out_abs);
  collect_sweep(sweep, out_abs);
  std::cerr << "sweep " << sweep.name << ": " << sweep.points.size() << " points collected into "
            << (out_abs / "summary.csv").string() << " and "
            << (out_abs / "summary_run.csv").string() << "\n";
  return 0;
}

// Parse and check every point before running anything: bad input fails fast with exit 2.
std::vector<Point> plan_points(const SweepFile& sweep, const std::vector<std::size_t>& selected,
                               const SweepSetup& setup, const SweepArgs& args) {
  std::vector<Point> points;
  for (const std::size_t k : selected) {
    Point p{plan_point(sweep, k, setup), true};
    PointPlan& plan = p.plan;
    // A sweep owns its points: a result another run or sweep wrote there is replaced only
    // with --force.
    if (!plan.other_owner.empty() && !args.force) {
      throw UsageError(plan.config.out_dir_origin + ": " +
                       result_dir_of(plan.config, setup.root).string() + ": holds a result of " +
                       plan.other_owner + ", not of this sweep point; pass --force to replace it");
    }
    p.run = !plan.up_to_date || args.force;
    if (plan.up_to_date) plan.why = "--force";
    plan.config.replace_results = plan.has_result;
    points.push_back(std::move(p));
  }
  return points;
}

// The GPUs the points name, for the runs at once: -j of them, or every point under Slurm.
void check_points_gpus(const std::vector<Point>& points, const SweepArgs& args) {
  std::vector<const ExperimentConfig*> configs;
  std::vector<std::string> labels;
  for (const Point& p : points) {
    configs.push_back(&p.config());
    labels.push_back(p.label());
  }
  // A Slurm array runs its tasks at once, like -j with every point.
  check_parallel_gpus(configs, labels, args.slurm ? 2U : args.jobs);
}

// Created once every point checked out, before any runs: an unwritable place is bad input
// (exit 2) naming the option, and bad input elsewhere leaves no folder behind.
void create_sweep_folder(const SweepSetup& setup) {
  std::error_code ec;
  fs::create_directories(setup.out_abs, ec);
  if (ec) {
    throw UsageError(setup.origin + ": " + setup.out_abs.string() +
                     ": cannot create the folder: " + ec.message());
  }
}

// The table of the points' summaries, and the sweep's line: runs, time, folder.
void print_results(const std::vector<Point>& points, const SweepFile& sweep,
                   const SweepSetup& setup, std::chrono::steady_clock::time_point t0) {
  std::error_code ec;
  std::vector<std::pair<std::string, std::string>> table;
  for (const Point& p : points) {
    const fs::path s = result_dir_of(p.config(), setup.root) / "summary.json";
    if (fs::exists(s, ec)) table.emplace_back(p.label(), s.string());
  }
  print_table(table);
  std::cerr << "sweep " << sweep.name << ": " << points.size() << " runs in " << std::fixed
            << std::setprecision(1)
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
            << " s; results under " << setup.out_abs.string() << "\n";
}

// All points ran: the sweep's tables. A part of them: the command that collects them later.
void collect_or_say_how(const SweepArgs& args, const SweepFile& sweep, std::size_t selected,
                        const fs::path& out_abs) {
  if (selected == sweep.points.size()) {
    collect_sweep(sweep, out_abs);
    std::cerr << "tables: " << (out_abs / "summary.csv").string() << ", "
              << (out_abs / "summary_run.csv").string() << "\n";
  } else {
    // The same settings: --collect checks the points against them.
    std::string again = "gpumux sweep " + shell_quote(args.sweep);
    if (!args.out_dir.empty()) again += " --out " + shell_quote(out_abs.string());
    if (args.quick) again += " --quick";
    for (const auto& o : args.overrides) again += " --set " + shell_quote(o);
    std::cerr << "ran " << selected << " of " << sweep.points.size()
              << " points; once all are done, `" << again
              << " --collect` writes the sweep's summary.csv\n";
  }
}

}  // namespace

int sweep_command(const SweepArgs& args) {
  const DataRoot data = data_root();
  const fs::path& root = data.dir;
  const SweepFile sweep = parse_sweep_text(
      read_input_file(args.sweep, args.sweep, kMaxDocumentBytes, InputKind::Config), args.sweep,
      args.quick);
  if (args.list_points) return list_points(sweep);
  const std::vector<std::size_t> selected =
      select_points(sweep.points.size(), args.point, args.shard);
  const SweepSetup setup = sweep_setup(args, sweep, data);
  const fs::path& out_abs = setup.out_abs;
  // The scripts' text first: a value that cannot be quoted is named as such, and nothing is
  // created before every check passed.
  const std::optional<SlurmScriptTexts> slurm =
      args.slurm ? std::optional(slurm_texts(args, sweep, setup)) : std::nullopt;
  check_sweep_root(out_abs, root, setup.origin, sweep.points);
  if (args.collect) return collect_points(sweep, setup);

  const std::vector<Point> points = plan_points(sweep, selected, setup, args);
  report_sweep_arrivals(points, args.quiet);
  check_points_gpus(points, args);
  create_sweep_folder(setup);
  if (slurm) return write_and_submit(*slurm, args, sweep, out_abs);

  // Dead writers' folders under the results root go first (killed points' can be large).
  reclaim_dead_writers(results_root_of(out_abs, root), args.quiet);
  const auto t0 = std::chrono::steady_clock::now();
  const Failures failed = run_points(points, sweep, root, args, t0);
  print_results(points, sweep, setup, t0);
  if (!failed.messages.empty()) {
    for (const auto& f : failed.messages) std::cerr << "error: " << f << "\n";
    return failed.at_run_time ? 1 : 2;
  }
  collect_or_say_how(args, sweep, selected.size(), out_abs);
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
  static const nlohmann::json kNone;
  // A member, or null: a summary changed since it was written gives "-" cells, not a crash.
  auto member = [](const nlohmann::json& obj, std::string_view key) -> const nlohmann::json& {
    const auto it = obj.is_object() ? obj.find(key) : obj.end();
    return it != obj.end() ? *it : kNone;
  };
  for (const auto& [label, file] : runs) {
    std::ifstream in(file);
    if (!in) continue;
    const nlohmann::json s = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (s.is_discarded() || !s.is_object()) {
      std::cout << std::left << std::setw(24) << label << " (" << file
                << ": not valid JSON; cannot show it)\n";
      continue;
    }
    const auto& inf = member(s, "inference");
    const auto& devices = member(s, "devices");
    const auto& first_device = devices.is_array() && !devices.empty() ? devices[0] : kNone;
    const auto& util_value = member(first_device, "compute_utilisation");
    const double util = util_value.is_number() ? util_value.get<double>() : 0.0;
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
    const auto& count_value = member(inf, "count");
    const bool served = count_value.is_number_unsigned() && count_value.get<std::uint64_t>() > 0;
    auto latency = [&](const char* key) { return served ? fixed(inf, key, 2) : std::string("-"); };
    const auto& tr = member(s, "training");
    const auto& all = member(s, "jobs_overall");
    // Summaries written before samples_per_s_present_sum existed show their samples_per_s.
    const char* train_key = member(tr, "samples_per_s_present_sum").is_null()
                                ? "samples_per_s"
                                : "samples_per_s_present_sum";
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
