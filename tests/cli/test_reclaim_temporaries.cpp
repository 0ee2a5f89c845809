// A killed run's temporary folder is reclaimed by a later run anywhere under the same results
// root; a live writer's folder and a look-alike without gpumux's marker are left alone.
// Against the real binary, with real processes killed by SIGKILL.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using namespace cli_test;

namespace {

std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

// Starts `gpumux run` in the background (the child is the program itself); returns its pid.
pid_t start_run(const fs::path& config, const fs::path& out) {
  const std::string cmd = "exec '" + std::string(GPUMUX_BINARY) + "' run -q '" + config.string() +
                          "' --out '" + out.string() + "'";
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return child;
}

// The temporary folder of a run writing `out`, once it exists (it is created before the
// simulation starts); empty after 10 s without one.
fs::path wait_for_temporary(const fs::path& out) {
  std::string prefix(1, '.');  // appended in steps: GCC 12 warns (-Wrestrict) on one expression
  prefix += out.filename().string();
  prefix += ".gpumux-tmp.";
  for (int i = 0; i < 500; ++i) {
    for (const auto& e : fs::directory_iterator(out.parent_path())) {
      if (e.path().filename().string().rfind(prefix, 0) == 0 &&
          fs::exists(e.path() / ".gpumux-partial")) {
        return e.path();
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return {};
}

void kill_and_reap(pid_t pid) {
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
}

std::string host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// A pid no process has now (a child that has exited and been reaped).
std::string dead_pid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return std::to_string(pid);
}

// A long run: ResNet-50 training that a test stops long before it ends.
std::string long_config() {
  return with(kSmallConfig, "\"iterations\": 2", "\"iterations\": 100000000");
}

}  // namespace

TEST_CASE("a run reclaims a killed run's temporary folder under the same root, not a live one's",
          "[cli][reclaim]") {
  const fs::path root = scratch() / "reclaim-root";
  fs::create_directories(root);
  const fs::path long_cfg = write("reclaim-long.json", long_config());

  // Three runs at once (a run's start reclaims dead folders too, so none starts after a kill):
  // one alive until the end, whose folder must be left alone; one killed with SIGKILL while it
  // simulates; one killed as a sweep point, one level down (a sweep's folder holds its points).
  fs::create_directories(root / "a-sweep");
  const pid_t live = start_run(long_cfg, root / "live");
  const pid_t killed = start_run(long_cfg, root / "killed");
  const pid_t killed_point = start_run(long_cfg, root / "a-sweep" / "point");
  const fs::path live_tmp = wait_for_temporary(root / "live");
  const fs::path dead_tmp = wait_for_temporary(root / "killed");
  const fs::path dead_point_tmp = wait_for_temporary(root / "a-sweep" / "point");
  kill_and_reap(killed);
  kill_and_reap(killed_point);
  REQUIRE_FALSE(dead_tmp.empty());
  REQUIRE_FALSE(dead_point_tmp.empty());
  REQUIRE(fs::exists(dead_tmp / ".gpumux-partial"));

  // A look-alike of a dead writer's folder without gpumux's marker is not gpumux's.
  const fs::path lookalike = root / (".mine.gpumux-tmp." + dead_pid() + ".0." + host());
  write(fs::relative(lookalike / "keep.txt", scratch()).string(), "k");

  const Outcome o = gpumux("run '" + write("reclaim-small.json", kSmallConfig).string() +
                           "' --out '" + (root / "other").string() + "'");
  kill_and_reap(live);
  INFO(o.output);
  CHECK(o.exit_code == 0);
  CHECK(fs::exists(root / "other" / "summary.json"));
  CHECK_FALSE(fs::exists(dead_tmp));
  CHECK_FALSE(fs::exists(dead_point_tmp));
  CHECK(o.output.find("gpumux: removed " + dead_tmp.string() + " (") != std::string::npos);
  CHECK(o.output.find("gpumux: removed " + dead_point_tmp.string() + " (") != std::string::npos);
  CHECK(o.output.find("the temporary folder of a run that ended without finishing (pid " +
                      std::to_string(killed) + ")") != std::string::npos);
  REQUIRE_FALSE(live_tmp.empty());
  CHECK(fs::exists(live_tmp / ".gpumux-partial"));
  CHECK(o.output.find(live_tmp.string()) == std::string::npos);
  CHECK(slurp(lookalike / "keep.txt") == "k");
  CHECK(o.output.find(lookalike.string()) == std::string::npos);
  fs::remove_all(live_tmp);
}
