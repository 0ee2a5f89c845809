// gpumux: run experiments, sweeps and calibrations from JSON configs.
#include <csignal>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "gpumux/api/errors.hpp"

namespace {

// The --trace import options given as words, mapped once the command line is parsed.
struct TraceWords {
  std::string format, unit, origin, spread;
  int decimals = -1;
};

void map_trace_words(const TraceWords& w, gpumux::cli::TraceImportArgs& a) {
  namespace ti = gpumux::trace_import;
  if (!w.format.empty()) {
    a.format = w.format == "csv"     ? ti::Format::Csv
               : w.format == "tsv"   ? ti::Format::Tsv
               : w.format == "jsonl" ? ti::Format::Jsonl
                                     : ti::Format::Json;
  }
  if (!w.unit.empty()) {
    a.unit = w.unit == "s"    ? ti::TimeUnit::S
             : w.unit == "ms" ? ti::TimeUnit::Ms
             : w.unit == "us" ? ti::TimeUnit::Us
             : w.unit == "ns" ? ti::TimeUnit::Ns
                              : ti::TimeUnit::Datetime;
  }
  if (!w.origin.empty()) a.origin = w.origin == "first" ? ti::Origin::First : ti::Origin::Keep;
  if (w.spread == "even") a.spread = ti::Spread::Even;
  if (w.decimals >= 0) a.decimals = w.decimals;
}

using namespace gpumux::cli;

// What the command line fills in, by subcommand.
struct CliArgs {
  RunArgs run;
  std::string validate_config;
  std::vector<std::string> validate_overrides;
  bool validate_strict = false;
  std::string list_what;
  bool list_params = false;
  SweepArgs sweep;
  std::string sweep_point, sweep_shard;  // kept as text: "" is an error, not "every point"
  CalibrateArgs calibrate;
  TraceImportArgs trace;
  TraceWords trace_words;
};

// The subcommands (and sweep's options) that run_cli asks about once the line is parsed.
struct Subcommands {
  CLI::App* run = nullptr;
  CLI::App* validate = nullptr;
  CLI::App* list = nullptr;
  CLI::App* sweep = nullptr;
  CLI::Option* sweep_point = nullptr;
  CLI::Option* sweep_shard = nullptr;
  CLI::App* calibrate = nullptr;
  CLI::App* import = nullptr;
};

CLI::App* add_run(CLI::App& app, RunArgs& run_args) {
  auto* run = app.add_subcommand("run", "Run one experiment config; writes results/<name>/");
  run->add_option("config", run_args.config, "Experiment config (JSON)")->required();
  run->add_option("--set", run_args.overrides, "Override a config key: a.b.c=value (repeatable)");
  run->add_option("--out", run_args.out_dir, "Results directory (default: out_dir of the config)");
  run->add_flag("--force", run_args.force,
                "Replace an earlier gpumux result in the results folder (never other files)");
  run->add_flag("-q,--quiet", run_args.quiet, "Print nothing on success");
  run->add_flag("--strict", run_args.strict,
                "Arrival warnings (requests after the horizon, a likely unit mistake) are errors");
  return run;
}

CLI::App* add_validate(CLI::App& app, CliArgs& a) {
  auto* validate =
      app.add_subcommand("validate", "Check a config (and its workload) without running");
  validate->add_option("config", a.validate_config, "Experiment config (JSON)")->required();
  validate->add_option("--set", a.validate_overrides, "Override a config key: a.b.c=value");
  validate->add_flag("--strict", a.validate_strict, "Arrival warnings are errors");
  return validate;
}

CLI::App* add_list(CLI::App& app, CliArgs& a) {
  auto* list = app.add_subcommand(
      "list", "List registered policies, platforms, models, devices, generators or tuners");
  list->add_option("what", a.list_what,
                   "policies | platforms | models | devices | generators | tuners "
                   "(none: list the categories)")
      ->check(
          CLI::IsMember({"policies", "platforms", "models", "devices", "generators", "tuners"}));
  list->add_flag(
      "--params", a.list_params,
      "Also print each plug-in's declared parameters (name, type [unit], default, help)");
  return list;
}

void add_sweep(CLI::App& app, CliArgs& a, Subcommands& cmd) {
  SweepArgs& sweep_args = a.sweep;
  auto* sweep = app.add_subcommand("sweep", "Run every point of a sweep file (resumable)");
  sweep->add_option("sweep", sweep_args.sweep, "Sweep file (JSON)")->required();
  sweep->add_option("-j,--jobs", sweep_args.jobs, "Runs in parallel")->check(CLI::Range(1u, 256u));
  sweep->add_option("--set", sweep_args.overrides, "Override applied to every run: a.b=value");
  sweep->add_flag("--force", sweep_args.force,
                  "Re-run points whose results are complete and replace them");
  sweep->add_flag("--quick", sweep_args.quick,
                  "Apply the sweep's \"quick\" section (smaller traces)");
  sweep->add_option("--out,--out-dir", sweep_args.out_dir,
                    "Results directory (overrides the file's out_dir; --out-dir is the old name)");
  auto* list_points = sweep->add_flag("--list-points", sweep_args.list_points,
                                      "Print each point (number, label, settings) and stop");
  auto* point = sweep->add_option("--point", a.sweep_point,
                                  "Run only point K (0-based, as --list-points numbers them)");
  auto* shard = sweep->add_option("--shard", a.sweep_shard,
                                  "Run only the points K with K % N == I (I/N, e.g. 0/4)");
  auto* collect = sweep->add_flag(
      "--collect", sweep_args.collect,
      "Run nothing: merge the points' results into the sweep's summary.csv and summary_run.csv");
  auto* slurm = sweep->add_flag(
      "--slurm", sweep_args.slurm,
      "Run nothing: write a Slurm array script (one task per point) and a collect job under "
      "OUT/slurm/");
  auto* submit = sweep->add_flag("--submit", sweep_args.submit,
                                 "With --slurm: submit both with sbatch (collect after the array)");
  sweep->add_option("--sbatch", sweep_args.sbatch,
                    "With --slurm: an extra #SBATCH option, e.g. --sbatch=--partition=gpu "
                    "(repeatable)");
  sweep->add_flag("-q,--quiet", sweep_args.quiet,
                  "No per-service arrival lines (warnings stay) and no progress line");
  submit->needs(slurm);
  slurm->excludes(point)->excludes(shard)->excludes(collect);
  point->excludes(shard);
  collect->excludes(point)->excludes(shard);
  list_points->excludes(point)->excludes(shard)->excludes(collect)->excludes(slurm);
  cmd.sweep = sweep;
  cmd.sweep_point = point;
  cmd.sweep_shard = shard;
}

CLI::App* add_calibrate(CLI::App& app, CalibrateArgs& cal_args) {
  auto* calibrate = app.add_subcommand(
      "calibrate", "Measure a GPU and write a device profile (needs CUDA and a GPU)");
  calibrate->add_option("--device", cal_args.device, "Profile name to write, e.g. h100-sxm")
      ->required();
  calibrate->add_option("--out", cal_args.out,
                        "Output profile (default traces/devices/NAME.calibrated.json)");
  calibrate->add_option("--base", cal_args.base,
                        "Datasheet profile to start from (default traces/devices/NAME.json)");
  calibrate->add_option("--models", cal_args.models, "Models to time (default: the whole zoo)");
  calibrate->add_flag("--quick", cal_args.quick, "Fewer sizes and repetitions");
  calibrate->add_flag("--force", cal_args.force, "Replace an earlier calibrated profile at --out");
  return calibrate;
}

/// `trace import`; returns the import subcommand.
CLI::App* add_trace_import(CLI::App& app, TraceImportArgs& trace_args, TraceWords& trace_words) {
  auto* trace = app.add_subcommand("trace", "Work with request traces");
  trace->require_subcommand(1);
  auto* import = trace->add_subcommand(
      "import", "Convert a request trace (CSV, TSV, JSONL) to an arrival CSV + .SOURCE");
  import->add_option("input", trace_args.input, "Request trace to read")->required();
  import->add_option("-o,--out", trace_args.out, "Arrival CSV to write (and OUT.SOURCE)")
      ->required();
  import->add_option("--preset", trace_args.preset,
                     "Defaults for a public trace: azure-llm-2023 | azure-functions-2019 | "
                     "orion-gaps");
  import
      ->add_option("--format", trace_words.format,
                   "csv | tsv | jsonl | json (one array) (default: by extension and content)")
      ->check(CLI::IsMember({"csv", "tsv", "jsonl", "json"}));
  import->add_option("--time-column", trace_args.time_column, "Column (or JSON key) of the time");
  import
      ->add_option("--time-unit", trace_words.unit,
                   "s | ms | us | ns | datetime (YYYY-MM-DD hh:mm:ss[.f], UTC); default s")
      ->check(CLI::IsMember({"s", "ms", "us", "ns", "datetime"}));
  import
      ->add_option("--time-origin", trace_words.origin,
                   "first: start at 0 from the earliest row (default; for epochs) | keep: the "
                   "values are offsets already")
      ->check(CLI::IsMember({"first", "keep"}));
  import->add_flag("--gaps", trace_args.gaps,
                   "The time column holds inter-arrival gaps: arrivals are their running sums");
  import->add_flag("--sort", trace_args.sort,
                   "Sort rows by time (stable); without it an unsorted file is refused");
  import->add_option("--keep", trace_args.keep,
                     "Columns to keep after arrival_s, comma-separated (default: all others)");
  import->add_flag("--no-extra", trace_args.no_extra, "Keep no column but arrival_s");
  import->add_option("--rename", trace_args.rename, "Rename a kept column: FROM=TO (repeatable)");
  import->add_option("--where", trace_args.where,
                     "Keep only rows whose COLUMN equals VALUE: COLUMN=VALUE (repeatable)");
  import
      ->add_option("--decimals", trace_words.decimals,
                   "Digits after the point in arrival_s, rounded half up (default 6)")
      ->check(CLI::Range(0, 9));
  import->add_option("--licence,--license", trace_args.licence,
                     "Licence of the source, for the .SOURCE file (default: the preset's, or "
                     "unknown)");
  import->add_option("--seed", trace_args.seed,
                     "Seed of the arrival times drawn from per-minute counts (default 1)");
  import
      ->add_option("--spread", trace_words.spread,
                   "Per-minute counts to times: uniform (seeded draws, default) | even")
      ->check(CLI::IsMember({"uniform", "even"}));
  import->add_flag("--force", trace_args.force,
                   "Replace an earlier import at --out (never a file gpumux did not write)");
  import->add_flag("-q,--quiet", trace_args.quiet, "Print nothing on success");
  return import;
}

/// Parses the command line; an exit code when that ends the program (help, version, a bad
/// command line), else nullopt.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;  // bad command line
  }
  return std::nullopt;
}

/// Runs the subcommand given; its errors become exit codes (2: bad input, 1: failure).
int run_subcommand(const Subcommands& cmd, CliArgs& a, int argc, char** argv) {
  try {
    if (*cmd.run) return run_command(a.run);
    if (*cmd.validate) {
      return validate_command(a.validate_config, a.validate_overrides, a.validate_strict);
    }
    if (*cmd.list) return list_command(a.list_what, a.list_params);
    if (*cmd.sweep) return sweep_command(a.sweep);
    if (*cmd.calibrate) return calibrate_command(a.calibrate);
    if (*cmd.import) {
      map_trace_words(a.trace_words, a.trace);
      std::vector<std::string> words{"gpumux"};  // not argv[0]: the path of this build
      words.insert(words.end(), argv + 1, argv + argc);
      a.trace.command = shell_command(words);
      return trace_import_command(a.trace);
    }
  } catch (const gpumux::InputError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}

int run_cli(int argc, char** argv) {
  CliArgs a;
  CLI::App app{"gpumux: GPU multitasking simulator and evaluation harness"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every subcommand");
  app.set_version_flag(
      "--version", [] { return version_text(); },
      "Print the version, git revision and whether CUDA was built");
  Subcommands cmd;
  cmd.run = add_run(app, a.run);
  cmd.validate = add_validate(app, a);
  cmd.list = add_list(app, a);
  add_sweep(app, a, cmd);
  cmd.calibrate = add_calibrate(app, a.calibrate);
  cmd.import = add_trace_import(app, a.trace, a.trace_words);

  // A file-size limit (ulimit -f) makes write() fail with EFBIG instead of killing us, so
  // the result folder is abandoned with a message, like on a full disk.
  std::signal(SIGXFSZ, SIG_IGN);
  if (const std::optional<int> code = parse_command_line(app, argc, argv)) return *code;

  a.run.out_given = cmd.run->count("--out") > 0;
  if (cmd.sweep_point->count() > 0) a.sweep.point = a.sweep_point;
  if (cmd.sweep_shard->count() > 0) a.sweep.shard = a.sweep_shard;
  return run_subcommand(cmd, a, argc, argv);
}

}  // namespace

int main(int argc, char** argv) {
  // Declaring the options can throw too (a duplicate option name is a bug): exit 1 with the
  // message instead of std::terminate.
  try {
    return run_cli(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 1;
  }
}
