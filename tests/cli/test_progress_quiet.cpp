// Progress lines are for a person at a terminal (D53): with stderr redirected, as
// in tests and CI logs, a sweep prints no progress line and a run no heartbeat; a sweep prints
// the arrival report once for the points that share it, and none of its lines under -q.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using namespace cli_test;

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// A 4-point sweep (2 policies x 2 seeds) over a config with one generated service.
fs::path service_sweep(const std::string& name, const fs::path& out) {
  return four_point_sweep(name, R"({
  "name": "progress-base",
  "devices": [{"profile": "v100-pcie3x16"}],
  "policy": {"name": "time_slicing"},
  "horizon_s": 2,
  "workload": {"services": [{"name": "svc", "model": "resnet50", "batch": 1,
    "arrivals": {"generator": "periodic", "interval_s": 0.1, "start_s": 0.1, "count": 10}}]}
})",
                          out);
}

}  // namespace

TEST_CASE("a sweep reports arrivals once, and prints no progress when stderr is a file",
          "[cli][sweep][progress]") {
  const fs::path sweep = service_sweep("prog-sweep", scratch() / "prog-sweep-out");
  const Outcome r = gpumux("sweep '" + sweep.string() + "'");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // One report for the four points: they share one workload.
  CHECK(count_of(r.output, "gpumux: service 'svc': 10 requests") == 1);
  CHECK(count_of(r.output, "arrivals of point") == 0);
  // The per-point lines stay; the progress line with its ETA does not (not a terminal).
  CHECK(count_of(r.output, "] prog-sweep/") == 4);
  CHECK(count_of(r.output, "ETA") == 0);

  const Outcome q = gpumux("sweep '" + sweep.string() + "' -q --force");
  INFO(q.output);
  REQUIRE(q.exit_code == 0);
  CHECK(count_of(q.output, "gpumux: service") == 0);
}

TEST_CASE("a run with stderr redirected prints no heartbeat", "[cli][progress]") {
  const fs::path cfg = write("prog-run.json", kSmallConfig);
  const Outcome r =
      gpumux("run '" + cfg.string() + "' --out '" + (scratch() / "prog-run-out").string() + "'");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(count_of(r.output, "simulated ") == 1);  // the closing line's "simulated X s in"
  CHECK(count_of(r.output, " wall\n") == 0);     // no heartbeat line
}

TEST_CASE("at a terminal a sweep prints its progress line, and not with -q", "[cli][progress]") {
  // util-linux `script` gives the program a pseudo-terminal; without it the case is skipped.
  if (gpumux_shell("command -v script").exit_code != 0) return;
  const fs::path sweep = service_sweep("prog-tty", scratch() / "prog-tty-out");
  const std::string cmd =
      "script -q -e -c \"'" + std::string(GPUMUX_BINARY) + "' sweep '" + sweep.string() + "'";
  const Outcome tty = gpumux_shell(cmd + "\" /dev/null");
  INFO(tty.output);
  REQUIRE(tty.exit_code == 0);
  CHECK(count_of(tty.output, "sweep prog-tty: [") == 4);  // one line per point
  CHECK(count_of(tty.output, "sweep prog-tty: [4/4] 100% elapsed ") == 1);
  const Outcome quiet = gpumux_shell(cmd + " -q --force\" /dev/null");
  INFO(quiet.output);
  REQUIRE(quiet.exit_code == 0);
  CHECK(count_of(quiet.output, "ETA") == 0);
}
