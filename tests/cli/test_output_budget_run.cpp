// Runs stop at their output budget (max_output_gib) before they fill the disk: exit 1, a
// message naming the budget and the file, no folder; a sweep point that stops is a failed
// point. Against the real binary.
#include <catch2/catch.hpp>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using namespace cli_test;

namespace {

std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

}  // namespace

TEST_CASE("a run that reaches max_output_gib stops with exit 1 and leaves no folder",
          "[cli][budget]") {
  // 2,000 iterations write a few MB of events; the budget is 0.0001 GiB (107,375 bytes).
  const std::string config = with(
      with(kSmallConfig, "\"iterations\": 2", "\"iterations\": 2000"), "\"name\": \"cli-test\"",
      "\"name\": \"cli-test\", \"trace\": false, \"max_output_gib\": 0.0001");
  const fs::path cfg = write("budget.json", config);
  const fs::path out = scratch() / "budget";
  const Outcome o = gpumux("run '" + cfg.string() + "' --out '" + out.string() + "'");
  INFO(o.output);
  CHECK(o.exit_code == 1);
  CHECK(o.output.find("error: output budget reached: writing events.jsonl of " + out.string() +
                      " would pass max_output_gib 0.0001 GiB") != std::string::npos);
  CHECK(o.output.find("nothing was written under that name") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(scratch())) {
    CHECK(e.path().filename().string().find(".budget.gpumux-") == std::string::npos);
  }
}

TEST_CASE("max_output_gib must be a positive number of GiB", "[cli][budget]") {
  const fs::path out = scratch() / "budget-bad";
  for (const auto& [value, problem] :
       std::vector<std::pair<std::string, std::string>>{{"0", "must be > 0"},
                                                        {"-1", "must be > 0"},
                                                        {"2e6", "out of range (more than 1 PiB)"},
                                                        {"\"10\"", "expected a number"}}) {
    const fs::path cfg =
        write("budget-bad.json", with(kSmallConfig, "\"name\": \"cli-test\"",
                                      "\"name\": \"cli-test\", \"max_output_gib\": " + value));
    const Outcome o = gpumux("run '" + cfg.string() + "' --out '" + out.string() + "'");
    INFO(value << ": " << o.output);
    CHECK(o.exit_code == 2);
    CHECK(o.output.find(cfg.string() + ": max_output_gib: ") != std::string::npos);
    CHECK(o.output.find(problem) != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE("a sweep point that reaches its output budget fails and the other points run",
          "[cli][budget]") {
  const std::string base = with(kSmallConfig, "\"iterations\": 2", "\"iterations\": 2000");
  const fs::path base_file = write("budget-sweep-base.json", base);
  const fs::path out = scratch() / "budget-sweep";
  const fs::path sweep =
      write("budget-sweep.json", R"({"name": "budget-sweep", "base": ")" + base_file.string() +
                                     R"(", "out_dir": ")" + out.string() +
                                     R"(", "grid": {"max_output_gib": [0.0001, 1]}})");
  const Outcome o = gpumux("sweep '" + sweep.string() + "' -j 2");
  INFO(o.output);
  CHECK(o.exit_code == 1);
  // A grid point's label is its value.
  CHECK(o.output.find("budget-sweep/0.0001: FAILED: output budget reached") != std::string::npos);
  CHECK(o.output.find("budget-sweep/1: done in") != std::string::npos);
  CHECK(fs::exists(out / "1" / "summary.json"));
  CHECK_FALSE(fs::exists(out / "0.0001"));
  CHECK_FALSE(fs::exists(out / "summary.csv"));
}
