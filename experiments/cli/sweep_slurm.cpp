// Slurm scripts for a sweep (see sweep_slurm.hpp).
#include "sweep_slurm.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "gpumux/errors.hpp"

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

// The header both scripts share: name, log file, working folder, extra options.
// `directives` are more "#SBATCH" lines: sbatch reads them only before the first command.
std::string header(const std::string& job_name, const std::string& log, const SlurmOptions& o,
                   const std::string& directives = "") {
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "#SBATCH --job-name=" << job_name << "\n"
    << "#SBATCH --output=" << (o.out_root / "slurm" / "logs" / log).string() << "\n"
    << "#SBATCH --chdir=" << o.repo_root.string() << "\n";
  s << directives;
  for (const auto& opt : o.sbatch) s << "#SBATCH " << opt << "\n";
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

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

SlurmScripts write_slurm_scripts(const SweepFile& sweep, const SlurmOptions& o) {
  const fs::path dir = o.out_root / "slurm";
  std::error_code ec;
  fs::create_directories(dir / "logs", ec);
  if (ec) throw Error("cannot create " + (dir / "logs").string() + ": " + ec.message());
  SlurmScripts s{dir / "array.sbatch", dir / "collect.sbatch"};
  const std::string force = o.force ? " --force" : "";
  // One task per point, numbered as --list-points numbers them.
  const std::string array = "#SBATCH --array=0-" + std::to_string(sweep.points.size() - 1) + "\n";
  write_script(s.array, header("gpumux-" + sweep.name, "point-%a.out", o, array) +
                            command(o, "--point \"$SLURM_ARRAY_TASK_ID\"" + force));
  write_script(s.collect, header("gpumux-" + sweep.name + "-collect", "collect-%j.out", o) +
                              command(o, "--collect"));
  return s;
}

std::pair<std::string, std::string> submit_slurm(const SlurmScripts& scripts) {
  const std::string array = submit("sbatch --parsable " + shell_quote(scripts.array.string()));
  const std::string collect = submit("sbatch --parsable --dependency=afterany:" + array + " " +
                                     shell_quote(scripts.collect.string()));
  return {array, collect};
}

}  // namespace gpumux::cli
