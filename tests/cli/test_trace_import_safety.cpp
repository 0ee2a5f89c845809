// `gpumux trace import` against hostile conditions, through the real binary: a kept cell with a
// line break replays as the rows it came from.
#include <catch2/catch.hpp>

#include "cli_harness.hpp"

using namespace cli_test;

namespace {

// The path in single quotes, for the shell (built in steps: GCC 12 warns, -Wrestrict, on
// "'" + string).
std::string q(const fs::path& p) {
  std::string s(1, '\'');
  s += p.string();
  s += '\'';
  return s;
}

std::string replay_config(const fs::path& csv) {
  return R"({"name": "replay", "devices": [{"profile": "v100-pcie3x16"}],
      "policy": {"name": "time_slicing"}, "workload": {"jobs": [{"name": "svc", "kind":
      "inference", "model": "resnet50", "requests": {"file": ")" +
         csv.string() + R"("}}]}})";
}

}  // namespace

TEST_CASE("trace import: a kept cell with a line break replays as its own row",
          "[cli][trace_import]") {
  // Two requests; the first row's note holds a line break followed by "1,", which a reader
  // that splits on lines takes for a third request at 1 s.
  const fs::path src = write("rt/two.csv", "t,note\n0,\"first\n1,\"\n1,second\n");
  const fs::path out = scratch() / "rt/two-out.csv";
  Outcome o = gpumux("trace import " + q(src) + " -o " + q(out) + " --time-column t --force");
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  CHECK(slurp(out) == "arrival_s,note\n0.000000,\"first\n1,\"\n1.000000,second\n");
  o = gpumux("validate " + q(write("rt/replay.json", replay_config(out))));
  INFO(o.output);
  CHECK(o.exit_code == 0);
  CHECK(o.output.find("service 'svc': 2 requests, 0.000-1.000 s") != std::string::npos);
}
