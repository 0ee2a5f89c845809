// `gpumux sweep --slurm` with hostile values in every input that reaches its scripts: what
// can be quoted arrives intact (bash runs nothing of it, sbatch's reader gives it back), what
// cannot be quoted is refused before anything is written (docs/sweeps.md, Quoting).
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "script_readers.hpp"

namespace fs = std::filesystem;
using namespace cli_test;

namespace {

// The test's own shell quoting of its command lines (std::system runs /bin/sh).
std::string sq(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A value that would run `touch CANARY` under any wrong quoting, with both quotes, '#', '%'
// and spaces; kHostile adds a backslash, which --out refuses (it turns Slurm's %a off).
const std::string kHostileOut =
    "a b $(touch CANARY) `touch CANARY` 'q' \"dq\" #h %a %% ;touch CANARY";
const std::string kHostile = kHostileOut + " \\z";

// A data folder (GPUMUX_ROOT) named with kHostile: the model and device profile the small
// config uses.
fs::path hostile_root() {
  const fs::path root = scratch() / ("root " + kHostile);
  const fs::path src = fs::path(GPUMUX_SOURCE_DIR) / "traces";
  for (const char* f : {"models/resnet50.json", "devices/v100-pcie3x16.json"}) {
    fs::create_directories((root / "traces" / f).parent_path());
    fs::copy_file(src / f, root / "traces" / f, fs::copy_options::overwrite_existing);
  }
  return root;
}

fs::path one_point_sweep(const std::string& name) {
  const fs::path base = write(name + "-base.json", kSmallConfig);
  return write(name + ".json", R"({"name": ")" + name + R"(", "base": ")" + base.string() +
                                   R"(", "out_dir": ")" + (scratch() / name).string() + R"("})");
}

std::string pct(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

std::vector<std::string> split_nul(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\0') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("sweep --slurm refuses values it cannot write into a script, before writing anything",
          "[cli][sweep][slurm]") {
  const fs::path sweep = one_point_sweep("sw-refuse");
  const fs::path out = scratch() / "sw-refuse-out";
  struct Case {
    std::string args, option, problem;
  };
  const std::vector<Case> cases = {
      {"--out " + sq(out.string() + "\ntouch CANARY #"), "--out", "line break"},
      {"--out " + sq(out.string() + "\\x"), "--out", "backslash"},
      {"--out " + sq(out.string() + "-HetJob"), "--out", "hetjob"},
      {"--out " + sq(out.string()) + " --sbatch=" + sq("--comment=x\ntouch CANARY"), "--sbatch",
       "line break"},
      {"--out " + sq(out.string()) + " --sbatch=" + sq("--comment=a packjob b"), "--sbatch",
       "packjob"},
      {"--out " + sq(out.string()) + " --sbatch=partition=gpu", "--sbatch", "starting with '-'"},
      {"--out " + sq(out.string()) + " --sbatch ''", "--sbatch", "starting with '-'"},
      {"--out " + sq(out.string()) + " --set " + sq("workload.jobs.0.name=a\rb"), "--set",
       "carriage return"},
  };
  for (const Case& c : cases) {
    const Outcome o = gpumux("sweep " + sq(sweep.string()) + " --slurm " + c.args);
    INFO(c.args << "\n" << o.output);
    CHECK(o.exit_code == 2);
    CHECK(o.output.find("error: " + c.option) != std::string::npos);
    CHECK(o.output.find(c.problem) != std::string::npos);
    for (const auto& e : fs::directory_iterator(scratch())) {
      CHECK(e.path().filename().string().rfind("sw-refuse-out", 0) == std::string::npos);
    }
  }
  CHECK_FALSE(fs::exists(fs::path(GPUMUX_SOURCE_DIR) / "CANARY"));
}

TEST_CASE("sweep --slurm scripts pass hostile values through intact and run nothing of them",
          "[cli][sweep][slurm]") {
  const fs::path sweep = one_point_sweep("sw-hostile");
  const fs::path out = scratch() / ("out " + kHostileOut);
  const std::string root = hostile_root().string();
  const std::string sbatch_opt = "--comment=" + kHostile;
  const std::string job_name = kHostile + "\nsecond line";
  const std::string set = "workload.jobs.0.name=" + job_name;
  const Outcome o = gpumux("sweep " + sq(sweep.string()) + " --slurm --out " + sq(out.string()) +
                               " --set " + sq(set) + " --sbatch=" + sq(sbatch_opt),
                           "GPUMUX_ROOT=" + sq(root));
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  const fs::path dir = out / "slurm";
  const std::string array = slurp(dir / "array.sbatch");
  const std::string collect = slurp(dir / "collect.sbatch");
  REQUIRE_FALSE(array.empty());
  // The submit hint a person copies into a shell quotes the paths as the scripts do.
  CHECK(o.output.find("submit with `sbatch --parsable " + sq((dir / "array.sbatch").string()) +
                      "`, then `sbatch --dependency=afterany:<id> " +
                      sq((dir / "collect.sbatch").string()) + "`") != std::string::npos);

  // bash reads both scripts without a syntax error.
  for (const char* f : {"array.sbatch", "collect.sbatch"}) {
    const Outcome n = gpumux_shell("bash -n " + sq((dir / f).string()));
    INFO(f << "\n" << n.output);
    CHECK(n.exit_code == 0);
  }

  // sbatch's reader gives every directive back as one argument, as given.
  const fs::path bin = fs::canonical(GPUMUX_BINARY);
  const script_readers::SbatchReading directives = script_readers::read_sbatch_directives(array);
  CHECK(directives.error.empty());
  CHECK(directives.args ==
        std::vector<std::string>{"--job-name=gpumux-sw-hostile",
                                 "--output=" + pct(out.string()) + "/slurm/logs/point-%a.out",
                                 "--chdir=" + root, "--array=0-0", sbatch_opt});
  const script_readers::SbatchReading collect_directives =
      script_readers::read_sbatch_directives(collect);
  CHECK(collect_directives.error.empty());
  CHECK(collect_directives.args.size() == 4);

  // bash splits the command lines into exactly these words, with no expansion but the task id.
  const script_readers::ShellReading shell = script_readers::read_shell_commands(array);
  INFO(shell.error);
  CHECK(shell.error.empty());
  const std::vector<std::vector<std::string>> expected = {
      {"set", "-euo", "pipefail"},
      {"export", "GPUMUX_ROOT=" + root},
      {bin.string(), "sweep", sweep.string(), "--out", out.string(), "--set", set, "--point",
       "${SLURM_ARRAY_TASK_ID}"}};
  CHECK(shell.commands == expected);

  // Run by bash with a stub for the program: the stub receives every value intact.
  const fs::path cwd = scratch() / "hostile-cwd";
  fs::create_directories(cwd);
  const fs::path stub =
      write("stub.sh", "#!/bin/bash\nprintf '%s\\0' \"$GPUMUX_ROOT\" \"$@\" > \"$STUB_ARGS\"\n");
  fs::permissions(stub, fs::perms::owner_exec, fs::perm_options::add);
  std::string stubbed = array;
  const auto at = stubbed.find("\n" + sq(bin.string()) + " ");
  REQUIRE(at != std::string::npos);
  stubbed.replace(at + 1, sq(bin.string()).size(), sq(stub.string()));
  const fs::path stubbed_file = write("stubbed.sbatch", stubbed);
  const fs::path args_file = scratch() / "stub-args";
  const Outcome ran = gpumux_shell("cd " + sq(cwd.string()) +
                                   " && SLURM_ARRAY_TASK_ID=0 STUB_ARGS=" + sq(args_file.string()) +
                                   " bash " + sq(stubbed_file.string()));
  INFO(ran.output);
  CHECK(ran.exit_code == 0);
  CHECK(split_nul(slurp(args_file)) == std::vector<std::string>{root, "sweep", sweep.string(),
                                                                "--out", out.string(), "--set", set,
                                                                "--point", "0"});

  // Run by bash as written: the point runs with the hostile job name, then the collect job.
  const Outcome task = gpumux_shell("cd " + sq(cwd.string()) + " && SLURM_ARRAY_TASK_ID=0 bash " +
                                    sq((dir / "array.sbatch").string()));
  INFO(task.output);
  CHECK(task.exit_code == 0);
  const nlohmann::json summary = nlohmann::json::parse(slurp(out / "run" / "summary.json"));
  CHECK(summary["jobs"][0]["name"] == job_name);
  const Outcome tables =
      gpumux_shell("cd " + sq(cwd.string()) + " && bash " + sq((dir / "collect.sbatch").string()));
  INFO(tables.output);
  CHECK(tables.exit_code == 0);
  CHECK(fs::exists(out / "summary_run.csv"));

  // Nothing of the values ran anywhere.
  CHECK_FALSE(fs::exists(cwd / "CANARY"));
  CHECK_FALSE(fs::exists(fs::path(GPUMUX_SOURCE_DIR) / "CANARY"));
  CHECK_FALSE(fs::exists(scratch() / "CANARY"));
}
