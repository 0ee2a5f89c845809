// Harness: `gpumux sweep --collect` (plan_point for every point, require_up_to_date,
// collect_sweep) on a sweep folder whose first point holds random files. Set up once: a
// 2-point sweep over a small config on the fixture root, both points run for real, in a
// temporary folder this harness owns. Per input, point 0's folder is rewritten from the input:
// its marker (.gpumux-result.json), summary.json, run.json and config.resolved.json, separated
// by a line "=====". In the marker, "@FP@" becomes point 0's real fingerprint and "@OWNER@" its
// owner, so inputs can reach the checks past the fingerprint. Only InputErrors are expected;
// any other exception or a sanitizer report is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "gpumux/io/experiment.hpp"
#include "gpumux/io/result_dir.hpp"
#include "gpumux/io/run_fingerprint.hpp"
#include "sweep_collect.hpp"
#include "sweep_file.hpp"
#include "sweep_plan.hpp"

namespace {

namespace fs = std::filesystem;
using namespace gpumux::cli;

constexpr const char* kBase = R"({
  "name": "fuzz-collect",
  "devices": [{"profile": "t4-pcie3x8"}],
  "policy": {"name": "time_slicing"},
  "workload": {"jobs": [
    {"name": "train", "kind": "training", "model": "superres", "batch": 1, "arrival_s": 0, "iterations": 1}
  ]}
})";

struct Fixture {
  fs::path dir;
  SweepFile sweep;
  SweepSetup setup;
  std::string fingerprint;  ///< point 0's
  std::string owner;        ///< point 0's
};

// The fixture's folder, removed when the process exits.
fs::path g_fixture_dir;

Fixture make_fixture() {
  Fixture f;
  std::string tmpl = (fs::temp_directory_path() / "gpumux_fuzz_collect.XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
  f.dir = tmpl;
  g_fixture_dir = f.dir;
  std::atexit([] {
    std::error_code ec;
    fs::remove_all(g_fixture_dir, ec);
  });
  std::ofstream(f.dir / "base.json") << kBase;
  f.sweep = parse_sweep_text(R"({"name": "fz", "base": ")" + (f.dir / "base.json").string() +
                                 R"(", "grid": {"seed": [1, 2]}})",
                             "fuzz-sweep.json");
  f.setup.root = gpumux::fuzz::root();
  f.setup.out_abs = f.dir / "out";
  f.setup.out_from_cwd = true;
  f.setup.origin = "--out";
  for (std::size_t k = 0; k < f.sweep.points.size(); ++k) {
    const PointPlan p = plan_point(f.sweep, k, f.setup);
    (void)gpumux::run_experiment(p.config, f.setup.root, true);
    if (k == 0) {
      f.fingerprint = gpumux::run_fingerprint(p.config, f.setup.root);
      f.owner = p.config.result_owner;
    }
  }
  return f;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Fixture f = make_fixture();
  const std::string input(gpumux::fuzz::as_text(data, size));
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t at; (at = input.find("\n=====\n", start)) != std::string::npos;) {
    parts.push_back(input.substr(start, at - start));
    start = at + 7;
  }
  parts.push_back(input.substr(start));
  // Point 0's folder, from the input (the harness owns everything under f.dir).
  const fs::path point = f.setup.out_abs / f.sweep.points[0].label;
  fs::remove_all(point);
  fs::create_directories(point);
  const char* names[] = {".gpumux-result.json", "summary.json", "run.json", "config.resolved.json"};
  for (std::size_t i = 0; i < parts.size() && i < 4; ++i) {
    std::string text = parts[i];
    if (i == 0) {
      replace_all(text, "@FP@", f.fingerprint);
      replace_all(text, "@OWNER@", f.owner);
    }
    std::ofstream(point / names[i], std::ios::binary) << text;
  }
  gpumux::fuzz::input_errors_only([&] {
    std::vector<PointPlan> plans;
    for (std::size_t k = 0; k < f.sweep.points.size(); ++k) {
      plans.push_back(plan_point(f.sweep, k, f.setup));
    }
    require_up_to_date(f.sweep, plans, f.setup.out_abs);
    collect_sweep(f.sweep, f.setup.out_abs);
  });
  return 0;
}
