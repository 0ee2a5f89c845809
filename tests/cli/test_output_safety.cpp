// gpumux never deletes or overwrites what it did not write (D9): every unsafe case found
// by the bad-input campaign, run against the real binary. Each refused case exits 2, names the
// path and the reason, and leaves the user's files as they were.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <thread>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using namespace cli_test;

namespace {

const char* const kConfig = kSmallConfig;

std::string with(std::string config, const std::string& from, const std::string& to) {
  const auto pos = config.find(from);
  REQUIRE(pos != std::string::npos);
  return config.replace(pos, from.size(), to);
}

/// Every entry under `dir`, with file contents, so a test can show nothing changed.
std::string snapshot(const fs::path& dir) {
  std::string s;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    s += e.path().lexically_relative(dir).string();
    if (e.is_regular_file()) s += "=" + slurp(e.path());
    s += "\n";
  }
  return s;
}

void expect_refused(const Outcome& o, const std::vector<std::string>& fragments) {
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("error: ") != std::string::npos);
  for (const auto& f : fragments) CHECK(o.output.find(f) != std::string::npos);
}

const fs::path kRepo = GPUMUX_SOURCE_DIR;

}  // namespace

TEST_CASE("run --out naming a folder of user files is refused and the files survive",
          "[cli][safety]") {
  const fs::path cfg = write("cfg.json", kConfig);
  const fs::path mine = write("user-folder/thesis.tex", "my thesis").parent_path();
  write("user-folder/data/raw.csv", "1,2,3");
  const std::string before = snapshot(mine);
  const Outcome o = gpumux("run '" + cfg.string() + "' --out '" + mine.string() + "' --force");
  expect_refused(o, {"--out", mine.string(), "did not write", "thesis.tex"});
  CHECK(snapshot(mine) == before);
}

TEST_CASE("run --out naming a regular file is refused and the file survives", "[cli][safety]") {
  const fs::path cfg = write("cfg.json", kConfig);
  const fs::path file = write("notes.txt", "do not lose me");
  expect_refused(gpumux("run '" + cfg.string() + "' --out '" + file.string() + "' --force"),
                 {"--out", file.string(), "not a folder"});
  CHECK(fs::is_regular_file(file));
  CHECK(slurp(file) == "do not lose me");
}

TEST_CASE("out_dir inside traces/, at the repository root or above it is refused",
          "[cli][safety]") {
  // Targets that do not exist yet, so only the path rules can refuse them (a folder of
  // repository files would also be refused as "files gpumux did not write").
  const std::string before = snapshot(kRepo / "traces" / "devices");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"traces/new-run", "lies inside the repository's traces/ folder"},
      {"traces/models/new", "lies inside the repository's traces/ folder"},
      {"core/new", "lies inside the repository's core/ folder"},
      {".", "would contain the gpumux repository"},
      {"..", "would contain the gpumux repository"},
      {"/", "the file-system root"}};
  for (const auto& [out, why] : cases) {
    const fs::path cfg =
        write("cfg-out.json", with(kConfig, "\"name\": \"cli-test\"",
                                   "\"name\": \"cli-test\", \"out_dir\": \"" + out + "\""));
    INFO("out_dir " << out);
    expect_refused(gpumux("run '" + cfg.string() + "' --force"), {"cfg-out.json: out_dir", why});
    CHECK_FALSE(fs::exists(kRepo / "traces" / "new-run"));
    CHECK_FALSE(fs::exists(kRepo / "core" / "new"));
  }
  CHECK(snapshot(kRepo / "traces" / "devices") == before);
}

TEST_CASE("a link in place of the results folder, or the working directory inside it, is refused",
          "[cli][safety]") {
  const fs::path cfg = write("cfg.json", kConfig);
  const fs::path target = write("link-target/keep.txt", "k").parent_path();
  const fs::path link = scratch() / "link";
  fs::create_directory_symlink(target, link);
  expect_refused(gpumux("run '" + cfg.string() + "' --out '" + link.string() + "' --force"),
                 {"--out", link.string(), "symbolic link"});
  CHECK(slurp(target / "keep.txt") == "k");

  const fs::path outer = scratch() / "outer";
  fs::create_directories(outer / "inner");
  const Outcome o =
      gpumux_shell("cd '" + (outer / "inner").string() + "' && '" + std::string(GPUMUX_BINARY) +
                   "' run '" + cfg.string() + "' --out '" + outer.string() + "'");
  expect_refused(o, {"--out", outer.string(), "contains the current directory"});
  CHECK(fs::is_directory(outer / "inner"));
  expect_refused(gpumux("run '" + cfg.string() + "' --out ''"), {"--out: must not be empty"});
}

TEST_CASE("a config name of '.' or '..' or with a separator is refused", "[cli][safety]") {
  for (const char* name : {"..", ".", "../x", "a/b", ".hidden", ""}) {
    const fs::path cfg = write("cfg-name.json", with(kConfig, "\"name\": \"cli-test\"",
                                                     std::string("\"name\": \"") + name + "\""));
    INFO("name '" << name << "'");
    expect_refused(gpumux("run '" + cfg.string() + "' --force"), {"cfg-name.json: name"});
  }
  CHECK(fs::is_directory(kRepo / "traces" / "models"));
  CHECK(fs::is_regular_file(kRepo / "CMakeLists.txt"));
}

TEST_CASE("sweep names and labels cannot leave the results folder or collide", "[cli][safety]") {
  write("sw-base.json", kConfig);
  // Nested one level deeper than "../../x" climbs, so the escape would land inside scratch()
  // (a /tmp/x another program made must not fail this test).
  const fs::path root = scratch() / "nest" / "sweep-root";
  auto sweep = [&](const std::string& file, const std::string& body) {
    return write(file, R"({"base": ")" + (scratch() / "sw-base.json").string() +
                           R"(", "out_dir": ")" + root.string() + R"(", )" + body + "}");
  };
  SECTION("a sweep name with ..") {
    const fs::path f = sweep("sw1.json", R"("name": "../../x", "runs": [{"label": "a"}])");
    expect_refused(gpumux("sweep '" + f.string() + "'"), {"sw1.json: name", "../../x"});
  }
  SECTION("two labels that would share one folder") {
    const fs::path f = sweep("sw2.json", R"("name": "s", "grid": {"description": ["a b", "a_b"]})");
    expect_refused(gpumux("sweep '" + f.string() + "'"), {"sw2.json: grid", "'a_b'"});
  }
  SECTION("a base config that cannot be read leaves no folder behind") {
    const fs::path f = write("sw4.json", R"({"name": "s", "base": "/nonexistent/base.json",
                                            "out_dir": ")" +
                                             root.string() + R"(", "runs": [{"label": "a"}]})");
    expect_refused(gpumux("sweep '" + f.string() + "'"),
                   {"/nonexistent/base.json", "no such file"});
  }
  SECTION("a run label of ..") {
    const fs::path f = sweep("sw3.json", R"("name": "s", "runs": [{"label": ".."}])");
    expect_refused(gpumux("sweep '" + f.string() + "'"), {"sw3.json: runs[0].label", "'..'"});
  }
  CHECK_FALSE(fs::exists(root));
  CHECK_FALSE(fs::exists(scratch() / "x"));
}

TEST_CASE("replacing an earlier result needs --force, and never takes a user's file with it",
          "[cli][safety]") {
  const fs::path cfg = write("cfg.json", kConfig);
  const fs::path out = scratch() / "rerun";
  const std::string run = "run '" + cfg.string() + "' --out '" + out.string() + "'";
  REQUIRE(gpumux(run).exit_code == 0);
  CHECK(fs::exists(out / ".gpumux-result.json"));
  const std::string first = slurp(out / "summary.json");

  expect_refused(gpumux(run), {"--out", out.string(), "--force"});
  CHECK(slurp(out / "summary.json") == first);

  // --force really replaces: a different setting gives a different summary under the name.
  const Outcome forced = gpumux(run + " --force --set workload.jobs.0.iterations=5");
  INFO(forced.output);
  CHECK(forced.exit_code == 0);
  CHECK(slurp(out / "summary.json") != first);
  CHECK(gpumux(run + " --force").exit_code == 0);
  CHECK(slurp(out / "summary.json") == first);  // same config, same seed: same results

  write("rerun/my-analysis.ipynb", "{}");
  expect_refused(gpumux(run + " --force"), {"my-analysis.ipynb", "did not write"});
  CHECK(slurp(out / "my-analysis.ipynb") == "{}");
  CHECK(fs::exists(out / "summary.json"));
  // Nothing left beside it: no temporary or set-aside folders.
  for (const auto& e : fs::directory_iterator(scratch())) {
    CHECK(e.path().filename().string().find(".gpumux-") == std::string::npos);
  }
}

TEST_CASE("a sweep re-runs a point whose config or --set changed instead of skipping it",
          "[cli][safety]") {
  const fs::path base = write("resume-base.json", kConfig);
  const fs::path out = scratch() / "resume";
  const fs::path f =
      write("resume.json", R"({"name": "r", "base": ")" + base.string() + R"(", "out_dir": ")" +
                               out.string() + R"(", "runs": [{"label": "p"}]})");
  const std::string cmd = "sweep '" + f.string() + "'";
  REQUIRE(gpumux(cmd).exit_code == 0);
  const std::string first = slurp(out / "p" / "summary.json");
  CHECK(gpumux(cmd).output.find("complete (same inputs), skipped") != std::string::npos);

  // A different --set: stale, re-run.
  Outcome o = gpumux(cmd + " --set workload.jobs.0.iterations=5");
  INFO(o.output);
  CHECK(o.exit_code == 0);
  CHECK(o.output.find("re-run: inputs changed") != std::string::npos);
  CHECK(slurp(out / "p" / "summary.json") != first);

  // The base config edited on disk: stale again, re-run; then complete.
  write("resume-base.json", with(kConfig, "\"iterations\": 2", "\"iterations\": 3"));
  o = gpumux(cmd);
  CHECK(o.output.find("re-run: inputs changed") != std::string::npos);
  CHECK(gpumux(cmd).output.find("complete (same inputs), skipped") != std::string::npos);

  o = gpumux(cmd + " --force");
  CHECK(o.output.find("re-run: --force") != std::string::npos);

  // A result another run wrote in the point's place is not the sweep's to replace.
  fs::remove_all(out / "p");
  REQUIRE(gpumux("run '" + base.string() + "' --out '" + (out / "p").string() + "'").exit_code ==
          0);
  const std::string theirs = slurp(out / "p" / "summary.json");
  expect_refused(gpumux(cmd), {"point p", "holds a result of a gpumux run", "--force"});
  CHECK(slurp(out / "p" / "summary.json") == theirs);
  CHECK(gpumux(cmd + " --force").exit_code == 0);

  // A run aimed at the sweep's own folder is refused, and told why.
  expect_refused(gpumux("run '" + base.string() + "' --out '" + out.string() + "' --force"),
                 {"--out", "holds a sweep's results (p)", "its own folder"});
  CHECK(fs::exists(out / "p" / "summary.json"));

  // A point folder a user filled by hand is refused before any point runs.
  fs::remove_all(out / "p");
  write("resume/p/mine.txt", "x");
  expect_refused(gpumux(cmd), {"point p", "mine.txt"});
  CHECK(slurp(out / "p" / "mine.txt") == "x");
}

TEST_CASE("a failed write leaves no complete-looking folder and exits non-zero", "[cli][safety]") {
  // A file-size limit makes write() fail with EFBIG, as a full disk fails with ENOSPC: the
  // events file is larger than 64 KiB, so the run's own writing fails, not the set-up.
  const fs::path cfg = write("big.json", with(kConfig, "\"iterations\": 2", "\"iterations\": 100"));
  const fs::path out = scratch() / "full-disk";
  const Outcome o =
      gpumux("run -q '" + cfg.string() + "' --out '" + out.string() + "'", "ulimit -f 64;");
  INFO(o.output);
  CHECK(o.exit_code == 1);
  CHECK(o.output.find("cannot write results") != std::string::npos);
  CHECK(o.output.find("events.jsonl") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(scratch())) {
    CHECK(e.path().filename().string().find(".full-disk.gpumux-") == std::string::npos);
  }
}

TEST_CASE("a killed run's temporary folder is cleaned up by the next run", "[cli][safety]") {
  // A run long enough to be killed while it simulates.
  const fs::path cfg =
      write("long.json", with(kConfig, "\"iterations\": 2", "\"iterations\": 20000"));
  const fs::path out = scratch() / "killed";
  const std::string cmd = "'" + std::string(GPUMUX_BINARY) + "' run -q '" + cfg.string() +
                          "' --out '" + out.string() + "'";
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // The temporary folder exists from before the simulation starts.
  fs::path tmp;
  for (int i = 0; i < 600 && tmp.empty(); ++i) {
    for (const auto& e : fs::directory_iterator(scratch())) {
      if (e.path().filename().string().rfind(".killed.gpumux-tmp.", 0) == 0) tmp = e.path();
    }
    if (tmp.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE_FALSE(tmp.empty());
  CHECK_FALSE(fs::exists(out));  // never complete-looking
  CHECK(fs::exists(tmp));

  // A folder named like one of this host's dead temporaries, but without gpumux's partial
  // marker inside, is not gpumux's: it is left alone.
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::string lookalike =
      ".killed.gpumux-tmp." + std::to_string(child) + ".99." + std::string(host);
  const fs::path not_ours = write(lookalike + "/keep.txt", "k").parent_path();

  const Outcome o =
      gpumux("run -q '" + write("cfg.json", kConfig).string() + "' --out '" + out.string() + "'");
  INFO(o.output);
  CHECK(o.exit_code == 0);
  CHECK(fs::exists(out / "run.json"));
  CHECK_FALSE(fs::exists(tmp));
  CHECK(slurp(not_ours / "keep.txt") == "k");
}

TEST_CASE("file-system errors name the option and the path and exit 2", "[cli][safety]") {
  const fs::path cfg = write("cfg.json", kConfig);
  SECTION("a parent that is a file") {
    const fs::path file = write("plain-file", "x");
    const fs::path out = file / "results";
    expect_refused(gpumux("run '" + cfg.string() + "' --out '" + out.string() + "'"),
                   {"--out", file.string(), "cannot create the folder"});
    CHECK(slurp(file) == "x");
  }
  SECTION("a name too long for the file system") {
    const fs::path out = scratch() / std::string(300, 'n');
    expect_refused(gpumux("run '" + cfg.string() + "' --out '" + out.string() + "'"),
                   {"--out", "File name too long"});
  }
  SECTION("validate checks the results path too") {
    const fs::path bad = write(
        "cfg-v.json",
        with(kConfig, "\"name\": \"cli-test\"", "\"name\": \"cli-test\", \"out_dir\": \"traces\""));
    expect_refused(gpumux("validate '" + bad.string() + "'"), {"cfg-v.json: out_dir", "traces/"});
  }
}

TEST_CASE("calibrate --out never replaces a file gpumux calibrate did not write", "[cli][safety]") {
  // Checked before any GPU work, so it holds on a machine without a GPU or CUDA too.
  const fs::path mine = write("my-profile.json", R"({"name": "mine"})");
  expect_refused(gpumux("calibrate --device v100-pcie3x16 --out '" + mine.string() + "' --force"),
                 {"--out", mine.string(), "not written by gpumux calibrate"});
  CHECK(slurp(mine) == R"({"name": "mine"})");
  const fs::path earlier =
      write("earlier.calibrated.json",
            R"({"calibration": {"command": "gpumux calibrate --device v100-pcie3x16"}})");
  expect_refused(gpumux("calibrate --device v100-pcie3x16 --out '" + earlier.string() + "'"),
                 {"--out", "pass --force"});
  CHECK(fs::exists(earlier));
}

namespace {

/// Runs `script` in a private mount namespace (unshare -rm: no root needed, nothing outside
/// sees its mounts, and they vanish with it). Returns nullopt where the kernel forbids it.
std::optional<Outcome> in_mount_namespace(const std::string& script) {
  if (std::system("unshare -rm true > /dev/null 2>&1") != 0) return std::nullopt;
  const fs::path file = write("ns-script.sh", script);
  return gpumux_shell("unshare -rm sh '" + file.string() + "'");
}

}  // namespace

TEST_CASE("a full or read-only file system: no complete-looking folder, a named reason",
          "[cli][safety]") {
  const fs::path cfg =
      write("big-fs.json", with(kConfig, "\"iterations\": 2", "\"iterations\": 100"));
  const fs::path mnt = scratch() / "mnt";
  fs::create_directories(mnt);
  const std::string bin = "'" + std::string(GPUMUX_BINARY) + "'";
  SECTION("a 64 KiB tmpfs fills up while the results are written (ENOSPC)") {
    // A budget larger than the file system, so the disk itself fills (the default stops the
    // run first: the next section).
    const auto o = in_mount_namespace(
        "mount -t tmpfs -o size=64k tmpfs '" + mnt.string() + "' || exit 99\n" + bin + " run -q '" +
        cfg.string() + "' --out '" + mnt.string() +
        "/res' --set max_output_gib=1\necho \"rc=$?\"\nls -A '" + mnt.string() + "'\n");
    if (!o) {
      WARN("user namespaces are not available here: covered by the ulimit -f case only");
      return;
    }
    INFO(o->output);
    REQUIRE(o->output.find("rc=99") == std::string::npos);
    CHECK(o->output.find("cannot write results: events.jsonl of " + mnt.string() + "/res") !=
          std::string::npos);
    CHECK(o->output.find("No space left on device") != std::string::npos);
    const auto rc = o->output.find("rc=");
    REQUIRE(rc != std::string::npos);
    // Exit 1, and the listing of the file system after it is empty: nothing under the final
    // name, no temporary folder left over.
    CHECK(o->output.substr(rc) == "rc=1\n");
  }
  SECTION("on a 64 KiB tmpfs the default output budget stops the run before the disk is full") {
    const auto o =
        in_mount_namespace("mount -t tmpfs -o size=64k tmpfs '" + mnt.string() + "' || exit 99\n" +
                           bin + " run -q '" + cfg.string() + "' --out '" + mnt.string() +
                           "/res'\necho \"rc=$?\"\ndf -B1 --output=avail '" + mnt.string() +
                           "'\nls -A '" + mnt.string() + "'\n");
    if (!o) {
      WARN("user namespaces are not available here");
      return;
    }
    INFO(o->output);
    REQUIRE(o->output.find("rc=99") == std::string::npos);
    CHECK(o->output.find("error: output budget reached: writing events.jsonl of " + mnt.string() +
                         "/res would pass the default max_output_gib ") != std::string::npos);
    CHECK(o->output.find("95% of the ") != std::string::npos);
    CHECK(o->output.find("No space left on device") == std::string::npos);
    // Exit 1; the whole file system free again (64 KiB); nothing left in it.
    CHECK(o->output.substr(o->output.find("rc=")) == "rc=1\nAvail\n65536\n");
  }
  SECTION("two runs at once on a 4 MiB tmpfs: each stops on its budget, the disk never fills") {
    // Each default budget is 95% of the same free space; together they would fill the disk,
    // so each also keeps watching the free space while it writes.
    const fs::path long_cfg =
        write("big-fs-long.json", with(kConfig, "\"iterations\": 2", "\"iterations\": 20000"));
    std::string script = "mount -t tmpfs -o size=4m tmpfs '" + mnt.string() + "' || exit 99\n";
    for (const char* name : {"a", "b"}) {
      script += bin + " run -q '" + long_cfg.string() + "' --out '" + mnt.string() + "/" + name +
                "' > '" + mnt.string() + "/../" + name + ".log' 2>&1 &\n";
    }
    script += "wait\ncat '" + mnt.string() + "/../a.log' '" + mnt.string() +
              "/../b.log'\necho listing\nls -A '" + mnt.string() + "'\necho end\n";
    const auto o = in_mount_namespace(script);
    if (!o) {
      WARN("user namespaces are not available here");
      return;
    }
    INFO(o->output);
    REQUIRE(o->output.find("rc=99") == std::string::npos);
    CHECK(o->output.find("No space left on device") == std::string::npos);
    // Both stopped on a budget (the one that passed its 95% or the disk's margin), and the
    // file system holds nothing afterwards.
    std::size_t stops = 0;
    for (auto at = o->output.find("error: output budget reached"); at != std::string::npos;
         at = o->output.find("error: output budget reached", at + 1)) {
      ++stops;
    }
    CHECK(stops == 2);
    CHECK(o->output.ends_with("listing\nend\n"));
  }
  SECTION("a read-only file system is refused before the run (EROFS, exit 2)") {
    const auto o = in_mount_namespace("mount -t tmpfs -o ro tmpfs '" + mnt.string() +
                                      "' || exit 99\n" + bin + " run '" + cfg.string() +
                                      "' --out '" + mnt.string() + "/res'\necho \"rc=$?\"\n");
    if (!o) {
      WARN("user namespaces are not available here");
      return;
    }
    INFO(o->output);
    REQUIRE(o->output.find("rc=99") == std::string::npos);
    CHECK(o->output.find("rc=2") != std::string::npos);
    CHECK(o->output.find("error: --out: " + mnt.string()) != std::string::npos);
    CHECK(o->output.find("Read-only file system") != std::string::npos);
  }
}

TEST_CASE("parser attacks through the real binary exit 2 before anything runs", "[cli][safety]") {
  const fs::path out = scratch() / "attack-out";
  auto attempt = [&](const std::string& args, const std::vector<std::string>& fragments) {
    expect_refused(gpumux(args + " --out '" + out.string() + "'"), fragments);
    CHECK_FALSE(fs::exists(out));
    for (const auto& e : fs::directory_iterator(scratch())) {
      CHECK(e.path().filename().string().find(".attack-out.gpumux-tmp") == std::string::npos);
    }
  };
  // The 5-byte-class config a fuzzer found: a number no double holds.
  attempt("run '" + write("overflow.json", R"({"name": 1e400})").string() + "'",
          {"overflow.json: name: number out of range"});
  attempt("run '" +
              write("dup.json", with(kConfig, "\"name\": \"cli-test\"",
                                     "\"name\": \"cli-test\", \"name\": \"other\""))
                  .string() +
              "'",
          {"dup.json: name: duplicate key"});
  const fs::path cfg = write("cfg-attack.json", kConfig);
  attempt("run '" + cfg.string() + "' --set \"description=$(printf '\\377')\"",
          {"cfg-attack.json: --set description: not valid UTF-8"});
  attempt("run '" + cfg.string() + "' --set 'workload.jobs.1.requests={\"file\": \"/dev/zero\"}'",
          {"/dev/zero", "not a regular file"});
  std::string deep(150000, '[');
  deep += std::string(150000, ']');
  attempt("run '" +
              write("deep.json",
                    with(kConfig, "\"name\": \"cli-test\"",
                         "\"name\": \"cli-test\", \"platform_params\": {\"p\": " + deep + "}"))
                  .string() +
              "'",
          {"deep.json: platform_params.p", "nested deeper than 64 levels"});
}

TEST_CASE("sweep --out on a folder of user files is refused", "[cli][safety]") {
  write("sw-user-base.json", kConfig);
  const fs::path mine = write("my-sweep-folder/paper.tex", "draft").parent_path();
  const fs::path f = write("sw-user.json", R"({"name": "s", "base": ")" +
                                               (scratch() / "sw-user-base.json").string() +
                                               R"(", "runs": [{"label": "a"}]})");
  expect_refused(gpumux("sweep '" + f.string() + "' --out '" + mine.string() + "'"),
                 {"--out", mine.string(), "paper.tex"});
  CHECK_FALSE(fs::exists(mine / "a"));
  CHECK(slurp(mine / "paper.tex") == "draft");
}
