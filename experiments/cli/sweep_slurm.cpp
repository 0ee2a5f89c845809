// Slurm scripts for a sweep (see sweep_slurm.hpp).
#include "sweep_slurm.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "gpumux/api/errors.hpp"
#include "script_quoting.hpp"

namespace gpumux::cli {

namespace fs = std::filesystem;

namespace {

void write_script(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  if (!out) throw Error("cannot write " + file.string());
  fs::permissions(file, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add);
}

// Every value that reaches a script, checked before anything is written.
void check_values(const SweepFile& sweep, const SlurmOptions& o) {
  check_sbatch_value(sweep.name, o.name_origin);
  check_slurm_file_name(o.out_root.string(), o.out_origin);
  check_script_shell_value(o.out_root.string(), o.out_origin);
  const std::string root_origin = "the data folder (GPUMUX_ROOT)";
  check_sbatch_value(o.repo_root.string(), root_origin);
  check_script_shell_value(o.repo_root.string(), root_origin);
  check_script_shell_value(o.binary.string(), "this program's path");
  check_script_shell_value(o.sweep_file.string(), "the sweep file");
  for (const auto& s : o.overrides) check_script_shell_value(s, "--set");
  for (const auto& opt : o.sbatch) {
    check_sbatch_value(opt, "--sbatch");
    if (opt.empty() || opt.front() != '-') {
      throw UsageError("--sbatch '" + opt +
                       "': expected one sbatch option starting with '-', e.g. "
                       "--sbatch=--partition=gpu (give each option its own --sbatch)");
    }
  }
}

// The header both scripts share: name, log file, working folder, extra options, each one
// argument of its own "#SBATCH" line. `directives` are more such lines: sbatch reads them
// only before the first command.
std::string header(const std::string& job_name, const std::string& log, const SlurmOptions& o,
                   const std::string& directives = "") {
  std::ostringstream s;
  const std::string log_file = (o.out_root / "slurm" / "logs").string() + "/";
  s << "#!/bin/bash\n"
    << "#SBATCH " << sbatch_quote("--job-name=" + job_name) << "\n"
    << "#SBATCH " << sbatch_quote("--output=" + slurm_file_pattern(log_file) + log) << "\n"
    << "#SBATCH " << sbatch_quote("--chdir=" + o.repo_root.string()) << "\n";
  s << directives;
  for (const auto& opt : o.sbatch) s << "#SBATCH " << sbatch_quote(opt) << "\n";
  s << "# Written by `gpumux sweep --slurm` (docs/sweeps.md).\n"
    << "set -euo pipefail\n"
    << "export GPUMUX_ROOT=" << shell_quote(o.repo_root.string()) << "\n";
  return s.str();
}

// `gpumux sweep FILE --out DIR [--quick] [--set ...]`, then `extra`.
std::string command(const SlurmOptions& o, const std::string& extra) {
  std::string c = shell_quote(o.binary.string()) + " sweep " + shell_quote(o.sweep_file.string()) +
                  " --out " + shell_quote(o.out_root.string());
  if (o.quick) c += " --quick";
  for (const auto& s : o.overrides) c += " --set " + shell_quote(s);
  return c + " " + extra + "\n";
}

// Runs a command line, returning its exit status and its standard output.
std::pair<int, std::string> capture(const std::string& cmd) {
  std::FILE* pipe = ::popen((cmd + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw Error("cannot run: " + cmd);
  std::string out;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;)
    out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string submit(const std::string& cmd) {
  auto [rc, out] = capture(cmd);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  // --parsable prints "<id>" or "<id>;<cluster>".
  std::string id = out.substr(0, out.find(';'));
  if (rc != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    throw Error("sbatch failed (" + cmd + "): " + out);
  }
  return id;
}

}  // namespace

SlurmScriptTexts slurm_script_texts(const SweepFile& sweep, const SlurmOptions& o) {
  check_values(sweep, o);
  const std::string force = o.force ? " --force" : "";
  // One task per point, numbered as --list-points numbers them.
  const std::string array = "#SBATCH --array=0-" + std::to_string(sweep.points.size() - 1) + "\n";
  return {
      header("gpumux-" + sweep.name, "point-%a.out", o, array) +
          command(o, "--point \"$SLURM_ARRAY_TASK_ID\"" + force),
      header("gpumux-" + sweep.name + "-collect", "collect-%j.out", o) + command(o, "--collect")};
}

SlurmScripts write_slurm_scripts(const SlurmScriptTexts& texts, const fs::path& out_root) {
  const fs::path dir = out_root / "slurm";
  std::error_code ec;
  fs::create_directories(dir / "logs", ec);
  if (ec) throw Error("cannot create " + (dir / "logs").string() + ": " + ec.message());
  SlurmScripts s{dir / "array.sbatch", dir / "collect.sbatch"};
  write_script(s.array, texts.array);
  write_script(s.collect, texts.collect);
  return s;
}

std::pair<std::string, std::string> submit_slurm(const SlurmScripts& scripts) {
  const std::string array = submit("sbatch --parsable " + shell_quote(scripts.array.string()));
  const std::string collect = submit("sbatch --parsable --dependency=afterany:" + array + " " +
                                     shell_quote(scripts.collect.string()));
  return {array, collect};
}

}  // namespace gpumux::cli
