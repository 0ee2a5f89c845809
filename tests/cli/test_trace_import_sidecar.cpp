// The `.SOURCE` of `gpumux trace import` holds one `key: value` per line whatever the values
// hold: a line break in the input's name, --licence or --where is written escaped (\n), so
// it cannot add a line; and the replay reader takes each key once, refusing a .SOURCE that
// repeats one, naming the line.
#include <catch2/catch.hpp>

#include "cli_harness.hpp"

using namespace cli_test;

TEST_CASE("trace import: a line break in a value cannot add a line to the .SOURCE",
          "[cli][trace_import][sidecar]") {
  // The input's name, the licence and a --where value (matching the first two rows) each
  // carry a forged data_sha256 line.
  const fs::path src = write("side-nl/x\ndata_sha256: 00.csv",
                             "ts,app\n1,\"a\ndata_sha256: 02\"\n2,\"a\ndata_sha256: 02\"\n3,b\n");
  const fs::path out = scratch() / "side-nl/out.csv";
  const Outcome imported = gpumux("trace import " + quoted(src) + " --out " + quoted(out) +
                                  " --time-column ts --licence 'CC BY 4.0\ndata_sha256: 01' "
                                  "--where 'app=a\ndata_sha256: 02'");
  INFO(imported.output);
  REQUIRE(imported.exit_code == 0);
  const std::string side = slurp(out.string() + ".SOURCE");
  INFO(side);
  CHECK(side.find("/side-nl/x\\ndata_sha256: 00.csv (") != std::string::npos);
  CHECK(side.find("\nlicence: CC BY 4.0\\ndata_sha256: 01\n") != std::string::npos);
  CHECK(side.find("app=a\\ndata_sha256: 02") != std::string::npos);
  // One data_sha256 line: the real one.
  std::size_t lines = 0;
  for (std::size_t at = side.find("\ndata_sha256: "); at != std::string::npos;
       at = side.find("\ndata_sha256: ", at + 1)) {
    ++lines;
  }
  CHECK(lines == 1);
  const Outcome replay =
      gpumux("validate " + quoted(write("side-nl/replay.json", replay_config(out))));
  INFO(replay.output);
  CHECK(replay.exit_code == 0);
  CHECK(replay.output.find("service 'svc': 2 requests, 0.000-1.000 s") != std::string::npos);
}

TEST_CASE("replay: a .SOURCE that repeats a key is refused naming the line",
          "[cli][trace_import][sidecar]") {
  const fs::path src = write("side-dup/in.csv", "ts\n1\n2\n");
  const fs::path out = scratch() / "side-dup/out.csv";
  REQUIRE(gpumux("trace import " + quoted(src) + " --out " + quoted(out) + " --time-column ts -q")
              .exit_code == 0);
  const fs::path side = out.string() + ".SOURCE";
  const std::string text = slurp(side);
  // The real digest twice (lines 5 and 6): a reader that takes the first one accepts it.
  const auto at = text.find("data_sha256: ");
  REQUIRE(at != std::string::npos);
  const std::string line = text.substr(at, text.find('\n', at) + 1 - at);
  std::ofstream(side, std::ios::trunc) << text.substr(0, at) + line + text.substr(at);
  const fs::path cfg = write("side-dup/replay.json", replay_config(out));
  Outcome o = gpumux("validate " + quoted(cfg));
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find(side.string() +
                      ": line 6: data_sha256 appears a second time (first on line 5)") !=
        std::string::npos);
  // A line that is not `key: value` is refused the same way.
  std::ofstream(side, std::ios::trunc) << text + "no colon here\n";
  o = gpumux("validate " + quoted(cfg));
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find(side.string() + ": line 13: expected 'key: value'") != std::string::npos);
}
