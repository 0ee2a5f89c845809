// gpumux: run experiments, sweeps and calibrations from JSON configs.
#include <csignal>
#include <iostream>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "gpumux/errors.hpp"

namespace {

int run_cli(int argc, char** argv) {
  using namespace gpumux::cli;
  CLI::App app{"gpumux: GPU multitasking simulator and evaluation harness"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every subcommand");

  RunArgs run_args;
  auto* run = app.add_subcommand("run", "Run one experiment config; writes results/<name>/");
  run->add_option("config", run_args.config, "Experiment config (JSON)")->required();
  run->add_option("--set", run_args.overrides, "Override a config key: a.b.c=value (repeatable)");
  run->add_option("--out", run_args.out_dir, "Results directory (default: out_dir of the config)");
  run->add_flag("--force", run_args.force,
                "Replace an earlier gpumux result in the results folder (never other files)");
  run->add_flag("-q,--quiet", run_args.quiet, "Print nothing on success");

  std::string validate_config;
  std::vector<std::string> validate_overrides;
  auto* validate =
      app.add_subcommand("validate", "Check a config (and its workload) without running");
  validate->add_option("config", validate_config, "Experiment config (JSON)")->required();
  validate->add_option("--set", validate_overrides, "Override a config key: a.b.c=value");

  std::string list_what;
  bool list_params = false;
  auto* list = app.add_subcommand(
      "list", "List registered policies, platforms, models, devices, generators or tuners");
  list->add_option("what", list_what,
                   "policies | platforms | models | devices | generators | tuners")
      ->required()
      ->check(
          CLI::IsMember({"policies", "platforms", "models", "devices", "generators", "tuners"}));
  list->add_flag(
      "--params", list_params,
      "Also print each plug-in's declared parameters (name, type [unit], default, help)");

  SweepArgs sweep_args;
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
  auto* point = sweep->add_option("--point", sweep_args.point,
                                  "Run only point K (0-based, as --list-points numbers them)");
  auto* shard = sweep->add_option("--shard", sweep_args.shard,
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
  submit->needs(slurm);
  slurm->excludes(point)->excludes(shard)->excludes(collect);
  point->excludes(shard);
  collect->excludes(point)->excludes(shard);
  list_points->excludes(point)->excludes(shard)->excludes(collect)->excludes(slurm);

  CalibrateArgs cal_args;
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

  // A file-size limit (ulimit -f) makes write() fail with EFBIG instead of killing us, so
  // the result folder is abandoned with a message, like on a full disk.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;  // bad command line
  }

  run_args.out_given = run->count("--out") > 0;
  try {
    if (*run) return run_command(run_args);
    if (*validate) return validate_command(validate_config, validate_overrides);
    if (*list) return list_command(list_what, list_params);
    if (*sweep) return sweep_command(sweep_args);
    if (*calibrate) return calibrate_command(cal_args);
  } catch (const gpumux::InputError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 1;
  }
  return 0;
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
