// Results researchers load and sweeps run anywhere (D50): summary.csv read
// back by Python's csv module, and a sweep run in shards then collected gives the same bytes as
// the whole sweep run at once; real-GPU points are not run in parallel on one GPU.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using namespace cli_test;

namespace {

std::string with_name(std::string config, const std::string& from, const std::string& to) {
  const auto pos = config.find(from);
  REQUIRE(pos != std::string::npos);
  return config.replace(pos, from.size(), to);
}

}  // namespace

TEST_CASE("summary.csv round-trips a name with a comma and a quote through Python's csv",
          "[cli][csv]") {
  // The JSON text "train, \"big\"" is the job name: train, "big"
  const fs::path cfg = write("csv-names.json", with_name(kSmallConfig, R"("name": "train")",
                                                         R"("name": "train, \"big\"")"));
  const fs::path out = scratch() / "out-csv-names";
  const Outcome run = gpumux("run '" + cfg.string() + "' --out '" + out.string() + "' -q");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  // Pandas-free: the standard library's csv module; prints what it read, or fails.
  const std::string py =
      "import csv,sys\n"
      "rows=list(csv.DictReader(open(sys.argv[1],newline='')))\n"
      "assert len(rows)==2, rows\n"
      "t=[r for r in rows if r['kind']=='training'][0]\n"
      "s=[r for r in rows if r['kind']=='inference'][0]\n"
      "assert t['name']=='train, \"big\"', t['name']\n"
      "assert t['latency_p50_ms']=='' and t['requests']=='', t\n"
      "assert s['name']=='svc' and s['requests']=='2', s\n"
      "assert all(r['policy']=='time_slicing' and r['platform']=='sim' and r['seed']=='1' "
      "and len(r['config_sha256'])==64 for r in rows)\n"
      "run=list(csv.DictReader(open(sys.argv[2],newline='')))\n"
      "assert len(run)==1 and run[0]['jobs']=='2' and run[0]['requests']=='2', run\n"
      "print('csv ok')\n";
  write("read_csv.py", py);
  const Outcome read = gpumux_shell("python3 '" + (scratch() / "read_csv.py").string() + "' '" +
                                    (out / "summary.csv").string() + "' '" +
                                    (out / "summary_run.csv").string() + "'");
  INFO(read.output);
  CHECK(read.exit_code == 0);
  CHECK(read.output.find("csv ok") != std::string::npos);
}

TEST_CASE("a sweep run in shards and collected equals the whole sweep byte for byte",
          "[cli][sweep]") {
  const fs::path whole = scratch() / "sweep-whole";
  const fs::path parts = scratch() / "sweep-parts";
  const fs::path sweep_whole = four_point_sweep("sw-whole", kSmallConfig, whole);
  const fs::path sweep_parts = four_point_sweep("sw-parts", kSmallConfig, parts);

  const Outcome list = gpumux("sweep '" + sweep_whole.string() + "' --list-points");
  INFO(list.output);
  REQUIRE(list.exit_code == 0);
  // Grid keys sorted, values in order: policy.name varies slowest.
  CHECK(list.output ==
        "0\tmps_1\tpolicy.name=mps\tseed=1\n1\tmps_2\tpolicy.name=mps\tseed=2\n"
        "2\texclusive_1\tpolicy.name=exclusive\tseed=1\n"
        "3\texclusive_2\tpolicy.name=exclusive\tseed=2\n");
  CHECK_FALSE(fs::exists(whole));  // listing runs nothing

  const Outcome all = gpumux("sweep '" + sweep_whole.string() + "' -j 2");
  INFO(all.output);
  REQUIRE(all.exit_code == 0);
  REQUIRE(fs::exists(whole / "summary.csv"));
  REQUIRE(fs::exists(whole / "summary_run.csv"));

  // Shard 0/2 runs points 0 and 2; --point 3 and then shard 1/2 (3 is complete: skipped).
  const Outcome s0 = gpumux("sweep '" + sweep_parts.string() + "' --shard 0/2");
  INFO(s0.output);
  REQUIRE(s0.exit_code == 0);
  CHECK(fs::exists(parts / "mps_1" / "summary.json"));
  CHECK(fs::exists(parts / "exclusive_1" / "summary.json"));
  CHECK_FALSE(fs::exists(parts / "mps_2"));
  CHECK_FALSE(fs::exists(parts / "summary.csv"));  // a part does not collect
  // Collecting before every point is done names the missing ones and writes nothing.
  const Outcome early = gpumux("sweep '" + sweep_parts.string() + "' --collect");
  INFO(early.output);
  CHECK(early.exit_code == 2);
  CHECK(early.output.find("2 of 4 points") != std::string::npos);
  CHECK(early.output.find("mps_2, exclusive_2") != std::string::npos);
  CHECK_FALSE(fs::exists(parts / "summary.csv"));

  REQUIRE(gpumux("sweep '" + sweep_parts.string() + "' --point 3").exit_code == 0);
  const Outcome s1 = gpumux("sweep '" + sweep_parts.string() + "' --shard 1/2");
  INFO(s1.output);
  REQUIRE(s1.exit_code == 0);
  CHECK(s1.output.find("exclusive_2: complete (same inputs), skipped") != std::string::npos);
  const Outcome collect = gpumux("sweep '" + sweep_parts.string() + "' --collect");
  INFO(collect.output);
  REQUIRE(collect.exit_code == 0);
  for (const char* f : {"summary.csv", "summary_run.csv"}) {
    INFO(f);
    CHECK(slurp(parts / f) == slurp(whole / f));
  }
  // The sweep's table: point, label, the grid keys, then the run's identity columns.
  const std::string table = slurp(whole / "summary_run.csv");
  CHECK(table.rfind(
            "point,label,set.policy.name,set.seed,policy,platform,seed,config_sha256,end_s,", 0) ==
        0);
  CHECK(table.find("\n3,exclusive_2,exclusive,2,exclusive,sim,2,") != std::string::npos);

  // A rerun of the whole sweep finds its own tables in the folder and accepts them.
  CHECK(gpumux("sweep '" + sweep_whole.string() + "'").exit_code == 0);
}

TEST_CASE("sweep --point and --shard refuse what they cannot select", "[cli][sweep]") {
  const fs::path sweep = four_point_sweep("sw-bad", kSmallConfig, scratch() / "sweep-bad");
  // An empty or malformed selector never means "every point".
  for (const std::string& args :
       {std::string("--point 4"), std::string("--shard 2/2"), std::string("--shard 1"),
        std::string("--shard x/2"), std::string("--point ''"), std::string("--shard ''"),
        std::string("--point=''"), std::string("--point ' 1'"), std::string("--point 1x"),
        std::string("--point=-1"), std::string("--shard ' 0/2'"), std::string("--shard 0/+2")}) {
    const Outcome o = gpumux("sweep '" + sweep.string() + "' " + args);
    INFO(args << "\n" << o.output);
    CHECK(o.exit_code == 2);
    CHECK(o.output.find(args.substr(0, 7)) != std::string::npos);
  }
  // Exclusive options (CLI11 refuses the pair).
  CHECK(gpumux("sweep '" + sweep.string() + "' --point 1 --shard 0/2").exit_code == 2);
  CHECK_FALSE(fs::exists(scratch() / "sweep-bad"));
}

TEST_CASE("platform cuda refuses -j > 1 unless every point names distinct GPUs", "[cli][sweep]") {
  write("sw-gpu-base.json", kSmallConfig);
  auto sweep_with = [](const std::string& name, const std::string& gpus) {
    return write(name + ".json", R"({"name": ")" + name + R"(", "base": ")" +
                                     (scratch() / "sw-gpu-base.json").string() +
                                     R"(", "out_dir": ")" + (scratch() / name).string() +
                                     R"(", "set": {"platform": "cuda"}, "grid": )" + gpus + "}");
  };
  // No GPUs named: refused before anything runs (exit 2), whether or not a GPU exists.
  const fs::path unnamed = sweep_with("sw-gpu-unnamed", R"({"seed": [1, 2]})");
  Outcome o = gpumux("sweep '" + unnamed.string() + "' -j 2", "CUDA_VISIBLE_DEVICES=");
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("without naming its GPUs") != std::string::npos);
  CHECK_FALSE(fs::exists(scratch() / "sw-gpu-unnamed"));
  // The same GPU for two points: refused, naming both and the GPU.
  const fs::path shared = sweep_with("sw-gpu-shared", R"({"platform_params.gpus": [[0], [1, 0]]})");
  o = gpumux("sweep '" + shared.string() + "' -j 2", "CUDA_VISIBLE_DEVICES=");
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("both use GPU 0") != std::string::npos);
  // Distinct GPUs: accepted; the points then fail only for want of a GPU here (exit 1).
  const fs::path distinct =
      sweep_with("sw-gpu-distinct", R"({"platform_params.gpus": [[0], [1]]})");
  o = gpumux("sweep '" + distinct.string() + "' -j 2", "CUDA_VISIBLE_DEVICES=");
  INFO(o.output);
  CHECK(o.exit_code == 1);
  CHECK(o.output.find("without naming") == std::string::npos);
  // -j 1 is always allowed.
  o = gpumux("sweep '" + unnamed.string() + "' -j 1", "CUDA_VISIBLE_DEVICES=");
  CHECK(o.exit_code == 1);
}

TEST_CASE("sweep --slurm writes an array script of one point per task and a collect job",
          "[cli][sweep][slurm]") {
  const fs::path out = scratch() / "sweep-slurm-out";
  const fs::path sweep = four_point_sweep("sw-slurm", kSmallConfig, scratch() / "sweep-slurm-file");
  const Outcome o = gpumux("sweep '" + sweep.string() + "' --out '" + out.string() +
                           "' --slurm --quick --set 'horizon_s=5' --sbatch=--partition=gpu");
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  const std::string array = slurp(out / "slurm" / "array.sbatch");
  const std::string collect = slurp(out / "slurm" / "collect.sbatch");
  CHECK(array.rfind("#!/bin/bash\n", 0) == 0);
  CHECK(array.find("#SBATCH --array=0-3\n") != std::string::npos);
  CHECK(array.find("#SBATCH --partition=gpu\n") != std::string::npos);
  CHECK(array.find(" --point \"$SLURM_ARRAY_TASK_ID\"") != std::string::npos);
  CHECK(array.find(" --out '" + out.string() + "' --quick --set 'horizon_s=5'") !=
        std::string::npos);
  // Every #SBATCH line comes before the first command (sbatch reads no further).
  CHECK(array.rfind("#SBATCH") < array.find("set -euo pipefail"));
  CHECK(collect.find(" --collect\n") != std::string::npos);
  CHECK(collect.find("--array") == std::string::npos);
  CHECK(fs::is_directory(out / "slurm" / "logs"));
  // Nothing ran; the sweep's folder with its slurm/ folder is still the sweep's own.
  CHECK_FALSE(fs::exists(out / "mps_1"));
  const Outcome point = gpumux("sweep '" + sweep.string() + "' --out '" + out.string() +
                               "' --quick --set 'horizon_s=5' --point 0");
  INFO(point.output);
  CHECK(point.exit_code == 0);
  // --submit needs --slurm; --slurm excludes --point.
  CHECK(gpumux("sweep '" + sweep.string() + "' --submit").exit_code == 2);
  CHECK(gpumux("sweep '" + sweep.string() + "' --slurm --point 1").exit_code == 2);
}

TEST_CASE("sweep string values stay strings, only the JSON null removes a key", "[cli][sweep]") {
  // The job names "null" and "42" are strings; a null description removes the key.
  const fs::path base =
      write("sw-strings-base.json", with_name(kSmallConfig, R"("name": "cli-test")",
                                              R"("name": "cli-test", "description": "d")"));
  const fs::path out = scratch() / "sweep-strings";
  const fs::path sweep =
      write("sw-strings.json", R"({"name": "sw-strings", "base": ")" + base.string() +
                                   R"(", "out_dir": ")" + out.string() +
                                   R"(", "set": {"description": null}, "runs": [)"
                                   R"({"label": "n", "set": {"workload.jobs.0.name": "null"}},)"
                                   R"({"label": "f", "set": {"workload.jobs.0.name": "42"}},)"
                                   R"({"label": "b", "set": {"workload.jobs.0.name": "mps"}}]})");
  const Outcome list = gpumux("sweep '" + sweep.string() + "' --list-points");
  INFO(list.output);
  REQUIRE(list.exit_code == 0);
  // Written as --set takes them back: quoted where the bare text would read as JSON.
  CHECK(list.output ==
        "0\tn\tworkload.jobs.0.name=\"null\"\n1\tf\tworkload.jobs.0.name=\"42\"\n"
        "2\tb\tworkload.jobs.0.name=mps\n");
  const Outcome run = gpumux("sweep '" + sweep.string() + "'");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  for (const auto& [label, name] :
       {std::pair<std::string, std::string>{"n", "null"}, {"f", "42"}, {"b", "mps"}}) {
    INFO(label);
    const auto summary = nlohmann::json::parse(slurp(out / label / "summary.json"));
    CHECK(summary["jobs"][0]["name"] == name);
    const auto resolved = nlohmann::json::parse(slurp(out / label / "config.resolved.json"));
    CHECK(resolved["workload"]["jobs"][0]["name"] == name);
    CHECK_FALSE(resolved.contains("description"));
  }
  // The sweep's table shows each setting as --set spells it.
  const std::string table = slurp(out / "summary_run.csv");
  CHECK(table.find("\n0,n,\"\"\"null\"\"\",") != std::string::npos);
  CHECK(table.find("\n1,f,\"\"\"42\"\"\",") != std::string::npos);
  CHECK(table.find("\n2,b,mps,") != std::string::npos);
}
