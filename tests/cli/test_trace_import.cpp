// `gpumux trace import` as a user meets it: a JSONL trace with integer millisecond timestamps
// and a CSV with epoch seconds each become a replayable arrival CSV with one command, and the
// result runs under every registered policy; the sidecar records the origin; nothing gpumux
// did not write is replaced; bad rows exit 2 naming the file and the line.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "gpumux/api/policy.hpp"
#include "gpumux/io/policy_registry.hpp"

namespace fs = std::filesystem;
using namespace cli_test;

namespace {

// 12 requests 250 ms apart from 2023-11-14 22:13:20 UTC, in integer ms, with token counts.
std::string jsonl_trace() {
  std::string out;
  for (int k = 0; k < 12; ++k) {
    out += "{\"timestamp\": " + std::to_string(1700000000000LL + 250LL * k) +
           ", \"input_tokens\": " + std::to_string(100 + k) +
           ", \"output_tokens\": " + std::to_string(10 + k) + ", \"model_id\": \"m" +
           std::to_string(k % 2) + "\"}\n";
  }
  return out;
}

const char* const kEpochCsv =
    "ts,app\n1700000000.5,x\n1700000000.75,y\n1700000001,x\n1700000002.125,x\n";

}  // namespace

TEST_CASE("trace import: JSONL in ms and CSV in epoch seconds run under every policy",
          "[cli][trace_import]") {
  const fs::path jl = write("import/requests.jsonl", jsonl_trace());
  const fs::path ep = write("import/epoch.csv", kEpochCsv);
  const fs::path a = scratch() / "import/a.csv";
  const fs::path b = scratch() / "import/b.csv";
  fs::remove(a);
  fs::remove(fs::path(a.string() + ".SOURCE"));
  fs::remove(b);
  fs::remove(fs::path(b.string() + ".SOURCE"));
  Outcome o = cli_test::gpumux("trace import " + quoted(jl) + " --out " + quoted(a) +
                               " --time-column timestamp --time-unit ms");
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  CHECK(o.output.find("imported 12 requests") != std::string::npos);
  const std::string a_text = slurp(a);
  CHECK(a_text.rfind("arrival_s,input_tokens,model_id,output_tokens\n"
                     "0.000000,100,m0,10\n0.250000,101,m1,11\n",
                     0) == 0);
  CHECK(a_text.find("2.750000,111,m1,21\n") != std::string::npos);
  const std::string side = slurp(a.string() + ".SOURCE");
  CHECK(side.rfind("written_by: gpumux trace import\n", 0) == 0);
  CHECK(side.find("licence: unknown\n") != std::string::npos);
  CHECK(side.find("command: gpumux trace import") != std::string::npos);
  CHECK(side.find("--time-unit ms") != std::string::npos);
  CHECK(side.find("date: 20") != std::string::npos);

  o = cli_test::gpumux("trace import " + quoted(ep) + " -o " + quoted(b) +
                       " --time-column ts --licence CC0-1.0");
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  CHECK(slurp(b) == "arrival_s,app\n0.000000,x\n0.250000,y\n0.500000,x\n1.625000,x\n");
  CHECK(slurp(b.string() + ".SOURCE").find("licence: CC0-1.0\n") != std::string::npos);

  const std::string config =
      R"({"name": "imported", "devices": [{"profile": "v100-pcie3x16"}],
          "policy": {"name": "time_slicing"},
          "workload": {"jobs": [
            {"name": "svc-a", "kind": "inference", "model": "resnet50", "requests": {"file": ")" +
      a.string() + R"("}},
            {"name": "svc-b", "kind": "inference", "model": "mobilenet_v2", "requests": {"file": ")" +
      b.string() + R"("}}]}})";
  const fs::path cfg = write("import/run.json", config);
  for (const auto& policy : gpumux::PolicyRegistry::instance().names()) {
    DYNAMIC_SECTION(policy) {
      const fs::path out = scratch() / ("import/out-" + policy);
      o = cli_test::gpumux("run " + quoted(cfg) + " --set policy.name=" + policy + " --out " +
                           quoted(out) + " --force -q");
      INFO(o.output);
      REQUIRE(o.exit_code == 0);
      std::ifstream in(out / "summary.json");
      const auto summary = nlohmann::json::parse(in);
      std::map<std::string, int> arrived;
      for (const auto& j : summary["jobs"]) {
        arrived[j["name"].get<std::string>()] = j["requests_arrived"].get<int>();
        CHECK((j["outcome"] == "finished" || j["outcome"] == "rejected"));
      }
      CHECK(arrived["svc-a"] == 12);
      CHECK(arrived["svc-b"] == 4);
    }
  }
}

TEST_CASE("trace import never replaces what it did not write", "[cli][trace_import]") {
  const fs::path src = write("import2/t.csv", "t\n1\n2\n");
  const fs::path mine = write("import2/mine.csv", "precious\n");
  Outcome o = cli_test::gpumux("trace import " + quoted(src) + " -o " + quoted(mine) +
                               " --time-column t --force");
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("was not written by gpumux trace import") != std::string::npos);
  CHECK(slurp(mine) == "precious\n");

  const fs::path out = scratch() / "import2/out.csv";
  fs::remove(out);
  fs::remove(fs::path(out.string() + ".SOURCE"));
  REQUIRE(
      cli_test::gpumux("trace import " + quoted(src) + " -o " + quoted(out) + " --time-column t")
          .exit_code == 0);
  o = cli_test::gpumux("trace import " + quoted(src) + " -o " + quoted(out) + " --time-column t");
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("pass --force") != std::string::npos);
  o = cli_test::gpumux("trace import " + quoted(src) + " -o " + quoted(out) +
                       " --time-column t --time-origin keep " + "--decimals 1 --force");
  INFO(o.output);
  CHECK(o.exit_code == 0);
  CHECK(slurp(out) == "arrival_s\n1.0\n2.0\n");
}

TEST_CASE("trace import: bad rows exit 2 naming the file and line", "[cli][trace_import]") {
  const fs::path src = write("import3/bad.csv", "t,x\n1,a\n0.5,b\n");
  const fs::path out = scratch() / "import3/out.csv";
  Outcome o =
      cli_test::gpumux("trace import " + quoted(src) + " -o " + quoted(out) + " --time-column t");
  CHECK(o.exit_code == 2);
  CHECK(o.output.find(src.string() + ": line 3: 't' goes backwards (0.5 after 1); pass --sort") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(out));
  o = cli_test::gpumux("trace import " + quoted(src) + " -o " + quoted(out) +
                       " --time-column t --sort");
  CHECK(o.exit_code == 0);
  CHECK(slurp(out) == "arrival_s,x\n0.000000,b\n0.500000,a\n");
  CHECK(slurp(out.string() + ".SOURCE").find("1 out of order, sorted") != std::string::npos);
  o = cli_test::gpumux("trace import " + quoted(src) + " -o " + quoted(out) + " --preset nope");
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("valid names: azure-llm-2023, azure-functions-2019, orion-gaps") !=
        std::string::npos);
}

TEST_CASE("trace import: the Azure Functions 2019 preset spreads per-minute counts",
          "[cli][trace_import]") {
  const fs::path src = write("import4/invocations_per_function_md.anon.d01.csv",
                             "HashOwner,HashApp,HashFunction,Trigger,1,2\n"
                             "o1,a1,f1,http,2,0\n"
                             "o2,a2,f2,timer,0,1\n"
                             "o3,a3,f3,http,1,1\n");
  const fs::path out = scratch() / "import4/even.csv";
  const Outcome o =
      cli_test::gpumux("trace import " + quoted(src) + " -o " + quoted(out) +
                       " --preset azure-functions-2019 --spread even --where Trigger=http "
                       "--force");
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  // f1: 2 calls in minute 1 at 15 s and 45 s; f3: one in minute 1 (30 s) and one in 2 (90 s).
  CHECK(slurp(out) ==
        "arrival_s,HashOwner,HashApp,HashFunction,Trigger\n"
        "15.000000,o1,a1,f1,http\n30.000000,o3,a3,f3,http\n45.000000,o1,a1,f1,http\n"
        "90.000000,o3,a3,f3,http\n");
  CHECK(slurp(out.string() + ".SOURCE").find("Serverless in the Wild") != std::string::npos);
}

TEST_CASE("gpumux --version, and list without an argument", "[cli]") {
  Outcome o = cli_test::gpumux("--version");
  CHECK(o.exit_code == 0);
  CHECK(o.output.rfind("gpumux ", 0) == 0);
  CHECK(o.output.find("(git ") != std::string::npos);
  CHECK(o.output.find("CUDA ") != std::string::npos);
  o = cli_test::gpumux("list");
  CHECK(o.exit_code == 0);
  for (const char* c : {"policies", "platforms", "models", "devices", "generators", "tuners"}) {
    CHECK(o.output.find(c) != std::string::npos);
  }
}

TEST_CASE("a request trace given as a job file or arrival CSV says how to import it",
          "[cli][trace_import]") {
  const fs::path jl = write("hint/requests.jsonl", jsonl_trace());
  std::string config = R"({"name": "hint", "devices": [{"profile": "v100-pcie3x16"}],
      "policy": {"name": "time_slicing"}, "workload": {"files": [")" +
                       jl.string() + R"("]}})";
  Outcome o = cli_test::gpumux("validate " + quoted(write("hint/files.json", config)));
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("looks like a request trace") != std::string::npos);
  CHECK(o.output.find("gpumux trace import") != std::string::npos);
  config = R"({"name": "hint", "devices": [{"profile": "v100-pcie3x16"}],
      "policy": {"name": "time_slicing"}, "workload": {"jobs": [{"name": "s", "kind":
      "inference", "model": "resnet50", "requests": {"file": ")" +
           jl.string() + R"("}}]}})";
  o = cli_test::gpumux("validate " + quoted(write("hint/replay.json", config)));
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("looks like a request trace in JSONL") != std::string::npos);
  CHECK(o.output.find("--time-column timestamp") != std::string::npos);
}

TEST_CASE("milliseconds under arrival_s: the run warns, --strict refuses", "[cli][trace_import]") {
  // 12 requests 250 ms apart, written in ms: 0..2750 "s" for a 2.5 s horizon.
  std::string csv = "arrival_s\n";
  for (int k = 0; k < 12; ++k) csv += std::to_string(250 * k) + "\n";
  const fs::path trace = write("ms/ms.csv", csv);
  const std::string config =
      R"({"name": "ms", "devices": [{"profile": "v100-pcie3x16"}], "horizon_s": 2.5,
          "policy": {"name": "time_slicing"}, "workload": {"jobs": [{"name": "svc-ms", "kind":
          "inference", "model": "resnet50", "requests": {"file": ")" +
      trace.string() + R"("}}]}})";
  const fs::path cfg = write("ms/ms.json", config);
  const fs::path out = scratch() / "ms/out";
  Outcome o = cli_test::gpumux("run " + quoted(cfg) + " --out " + quoted(out) + " --force");
  INFO(o.output);
  CHECK(o.exit_code == 0);
  CHECK(o.output.find("gpumux: service 'svc-ms': 12 requests, 0.000-2750.000 s") !=
        std::string::npos);
  CHECK(o.output.find("warning: " + cfg.string() +
                      ": service 'svc-ms': 11 of 12 requests arrive after the horizon "
                      "(requests span 0.000-2750.000 s, horizon_s 2.500 s)") != std::string::npos);
  CHECK(o.output.find("more than 1000 x the horizon (2.500 s): are the times in milliseconds?") !=
        std::string::npos);
  o = cli_test::gpumux("run " + quoted(cfg) + " --out " + quoted(out) + " --force --strict");
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("2 arrival warning(s) above, errors under --strict") != std::string::npos);
  o = cli_test::gpumux("validate " + quoted(cfg) + " --strict");
  CHECK(o.exit_code == 2);
  o = cli_test::gpumux("run " + quoted(cfg) + " --out " + quoted(out) +
                       " --force --set horizon_s=3000 -q");
  CHECK(o.exit_code == 0);
  CHECK(o.output.find("warning") == std::string::npos);
}

TEST_CASE("relative paths in a config resolve against its folder", "[cli][config]") {
  // Run from the repository root; the config, its job file and the job file's arrival CSV sit
  // together in another folder and name each other relatively.
  write("paths/sub/arr.csv", "arrival_s\n0.1\n0.2\n");
  write(
      "paths/sub/jobs.jsonl",
      R"({"name": "svc", "kind": "inference", "model": "resnet50", "requests": {"file": "arr.csv"}})"
      "\n");
  const fs::path cfg = write("paths/sub/c.json",
                             R"({"name": "paths", "devices": [{"profile": "v100-pcie3x16"}],
      "policy": {"name": "time_slicing"}, "workload": {"files": ["jobs.jsonl"]}})");
  const Outcome o = cli_test::gpumux("validate " + quoted(cfg));
  INFO(o.output);
  CHECK(o.exit_code == 0);
  CHECK(o.output.find("service 'svc': 2 requests, 0.100-0.200 s") != std::string::npos);
  CHECK(o.output.find("warning") == std::string::npos);
}

TEST_CASE("trace import: the Orion preset sums a JSON list of gaps", "[cli][trace_import]") {
  const fs::path src = write("import5/inter_arrival_times.json", "[0.031, 0.012, 0.073]\n");
  const fs::path out = scratch() / "import5/orion.csv";
  const Outcome o = cli_test::gpumux("trace import " + quoted(src) + " -o " + quoted(out) +
                                     " --preset orion-gaps --force");
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  CHECK(slurp(out) == "arrival_s\n0.031000\n0.043000\n0.116000\n");
  CHECK(slurp(out.string() + ".SOURCE").find("licence: MIT") != std::string::npos);
}
