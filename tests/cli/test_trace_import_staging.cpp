// Where `gpumux trace import` stages its two files before they take their names: never at a
// name someone else may hold or point elsewhere. A symbolic link, or a user's own file, at
// `OUT.tmp-import` (the fixed name used before) is left as it was; imports run at once into
// one OUT each leave a matching pair.
#include <catch2/catch.hpp>

#include "cli_harness.hpp"

using namespace cli_test;

TEST_CASE("trace import: a link at the old temporary name is never followed",
          "[cli][trace_import][safety]") {
  const fs::path src = write("stage-link/in.csv", "ts\n1\n2\n");
  const fs::path precious = write("stage-link/precious.txt", "precious\n");
  const fs::path out = scratch() / "stage-link/out.csv";
  fs::create_symlink(precious, fs::path(out.string() + ".tmp-import"));
  fs::create_symlink(precious, fs::path(out.string() + ".SOURCE.tmp-import"));
  const Outcome o =
      gpumux("trace import " + quoted(src) + " --out " + quoted(out) + " --time-column ts");
  INFO(o.output);
  CHECK(o.exit_code == 0);
  CHECK(o.output.find("imported 2 requests (2 rows read) over 1.000 s") != std::string::npos);
  CHECK(slurp(precious) == "precious\n");
  CHECK(fs::is_regular_file(fs::symlink_status(out)));
  CHECK(slurp(out) == "arrival_s\n0.000000\n1.000000\n");
  CHECK(fs::is_symlink(fs::path(out.string() + ".tmp-import")));
  CHECK(fs::is_symlink(fs::path(out.string() + ".SOURCE.tmp-import")));
}

TEST_CASE("trace import: a user's file at the old temporary name is left as it was",
          "[cli][trace_import][safety]") {
  const fs::path src = write("stage-user/in.csv", "ts\n1\n2\n3\n");
  const fs::path data_tmp = write("stage-user/out.csv.tmp-import", "mine\n");
  const fs::path side_tmp = write("stage-user/out.csv.SOURCE.tmp-import", "also mine\n");
  const fs::path out = scratch() / "stage-user/out.csv";
  for (const char* force : {"", " --force"}) {
    const Outcome o = gpumux("trace import " + quoted(src) + " --out " + quoted(out) +
                             " --time-column ts" + force);
    INFO(o.output);
    CHECK(o.exit_code == 0);
    CHECK(slurp(data_tmp) == "mine\n");
    CHECK(slurp(side_tmp) == "also mine\n");
    CHECK(slurp(out) == "arrival_s\n0.000000\n1.000000\n2.000000\n");
  }
  // Nothing else is left in the folder: the input, the pair and the user's two files.
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(out.parent_path())) {
    INFO(e.path());
    ++entries;
  }
  CHECK(entries == 5);
}

TEST_CASE("trace import: imports run at once into one OUT leave a matching pair",
          "[cli][trace_import][safety]") {
  // Six imports of different lengths (so different data) into one OUT with --force, started
  // together: before, they shared OUT.tmp-import and wrote into one file.
  std::string script;
  const fs::path out = scratch() / "stage-race/out.csv";
  const fs::path first = write("stage-race/in0.csv", "ts\n0\n");
  REQUIRE(gpumux("trace import " + quoted(first) + " --out " + quoted(out) + " --time-column ts -q")
              .exit_code == 0);
  for (int k = 1; k <= 6; ++k) {
    std::string csv = "ts,note\n";
    for (int row = 0; row < 4000 * k; ++row) {
      csv += std::to_string(row) + ",row " + std::to_string(row) + " of import " +
             std::to_string(k) + "\n";
    }
    const fs::path in = write("stage-race/in" + std::to_string(k) + ".csv", csv);
    script += quoted(GPUMUX_BINARY) + " trace import " + quoted(in) + " --out " + quoted(out) +
              " --time-column ts --force -q &\n";
  }
  script += "wait\n";
  const Outcome ran = gpumux_shell("sh " + quoted(write("stage-race/run.sh", script)));
  INFO(ran.output);
  REQUIRE(ran.exit_code == 0);
  CHECK(ran.output.find("error") == std::string::npos);
  const Outcome o =
      gpumux("validate " + quoted(write("stage-race/replay.json", replay_config(out))));
  INFO(o.output);
  CHECK(o.exit_code == 0);
  CHECK(o.output.find("does not match") == std::string::npos);
}
