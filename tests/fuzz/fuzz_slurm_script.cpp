// Harness: the Slurm script writer (slurm_script_texts, experiments/cli/sweep_slurm.hpp) with
// random values for the sweep's name, --out, the data folder, the sweep file, --sbatch and
// --set. The writer either refuses (an InputError) or writes scripts that read back as
// written: sbatch's reader (script_readers.hpp, a re-implementation of Slurm's) gives back
// exactly the expected directives, the --output pattern names the expected log file once
// Slurm replaces its symbols, and the strict shell reader gives back exactly the expected
// words of every command line (no expansion but $SLURM_ARRAY_TASK_ID). Anything else throws
// std::logic_error: a finding.
//
// Input: byte 0 holds flags (bit 0 --quick, bit 1 --force, bits 2-3 the number of --sbatch
// values, bits 4-7 the number of points minus one); the rest is NUL-separated fields: name,
// out, root, sweep file, then the --sbatch values, then the --set values. Paths are made
// absolute with a leading '/'.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "script_readers.hpp"
#include "sweep_slurm.hpp"

namespace {

using Words = std::vector<std::string>;

[[noreturn]] void finding(const std::string& what, const std::string& script) {
  throw std::logic_error(what + "\n---- script:\n" + script);
}

// The log file Slurm opens for an --output pattern (SchedMD/slurm src/slurmd/common/fname.c
// for a batch job): "%%" is '%', %a the task, %j the job; a backslash would turn every symbol
// off, and any other symbol is one the writer did not mean.
std::string slurm_log_file(const std::string& pattern, const std::string& script) {
  if (pattern.find('\\') != std::string::npos) finding("a backslash in --output", script);
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
    } else if (i + 1 < pattern.size() && pattern[i + 1] == '%') {
      out += '%';
      ++i;
    } else if (i + 1 < pattern.size() && (pattern[i + 1] == 'a' || pattern[i + 1] == 'j')) {
      out += pattern[i + 1] == 'a' ? "7" : "123";
      ++i;
    } else {
      finding("a Slurm symbol the writer did not mean in --output", script);
    }
  }
  return out;
}

void check_script(const std::string& script, const Words& directives, const std::string& log,
                  const std::vector<Words>& commands) {
  const auto sbatch = script_readers::read_sbatch_directives(script);
  if (!sbatch.error.empty()) finding("sbatch: " + sbatch.error, script);
  if (sbatch.args.size() != directives.size()) finding("sbatch reads other directives", script);
  for (std::size_t i = 0; i < directives.size(); ++i) {
    const std::string& got = sbatch.args[i];
    if (i == 1) {
      if (got.rfind("--output=", 0) != 0 || slurm_log_file(got.substr(9), script) != log) {
        finding("--output names another file: " + got, script);
      }
    } else if (got != directives[i]) {
      finding("sbatch reads '" + got + "' for '" + directives[i] + "'", script);
    }
  }
  const auto shell = script_readers::read_shell_commands(script);
  if (!shell.error.empty()) finding("shell: " + shell.error, script);
  if (shell.commands != commands) finding("bash reads other words", script);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned flags = data[0];
  std::vector<std::string> fields{""};
  for (std::size_t i = 1; i < size; ++i) {
    if (data[i] == 0) {
      fields.emplace_back();
    } else {
      fields.back() += static_cast<char>(data[i]);
    }
  }
  fields.resize(std::max<std::size_t>(fields.size(), 4));
  using gpumux::cli::SlurmOptions;
  gpumux::cli::SweepFile sweep;
  sweep.name = fields[0];
  sweep.points.resize(1 + (flags >> 4));
  SlurmOptions o;
  o.binary = "/opt/gpu mux/bin/gpumux";
  o.out_root = "/" + fields[1];
  o.repo_root = "/" + fields[2];
  o.sweep_file = "/" + fields[3];
  o.quick = (flags & 1) != 0;
  o.force = (flags & 2) != 0;
  const std::size_t sbatch_count = std::min<std::size_t>((flags >> 2) & 3, fields.size() - 4);
  o.sbatch.assign(fields.begin() + 4, fields.begin() + 4 + static_cast<long>(sbatch_count));
  o.overrides.assign(fields.begin() + 4 + static_cast<long>(sbatch_count), fields.end());

  gpumux::fuzz::input_errors_only([&] {
    const gpumux::cli::SlurmScriptTexts texts = gpumux::cli::slurm_script_texts(sweep, o);
    const std::string logs = (o.out_root / "slurm" / "logs").string() + "/";
    Words head{"--job-name=gpumux-" + sweep.name, "(output)", "--chdir=" + o.repo_root.string()};
    Words command{o.binary.string(), "sweep", o.sweep_file.string(), "--out", o.out_root.string()};
    if (o.quick) command.push_back("--quick");
    for (const auto& s : o.overrides) {
      command.push_back("--set");
      command.push_back(s);
    }
    const std::vector<Words> preamble{{"set", "-euo", "pipefail"},
                                      {"export", "GPUMUX_ROOT=" + o.repo_root.string()}};

    Words array_directives = head;
    array_directives.push_back("--array=0-" + std::to_string(sweep.points.size() - 1));
    array_directives.insert(array_directives.end(), o.sbatch.begin(), o.sbatch.end());
    Words array_command = command;
    array_command.insert(array_command.end(), {"--point", "${SLURM_ARRAY_TASK_ID}"});
    if (o.force) array_command.push_back("--force");
    std::vector<Words> array_commands = preamble;
    array_commands.push_back(array_command);
    check_script(texts.array, array_directives, logs + "point-7.out", array_commands);

    Words collect_directives = head;
    collect_directives[0] += "-collect";
    collect_directives.insert(collect_directives.end(), o.sbatch.begin(), o.sbatch.end());
    Words collect_command = command;
    collect_command.push_back("--collect");
    std::vector<Words> collect_commands = preamble;
    collect_commands.push_back(collect_command);
    check_script(texts.collect, collect_directives, logs + "collect-123.out", collect_commands);
  });
  return 0;
}
