// Experiment configs: a good config expanded, strict errors with key paths, validation against
// the catalog and the device profiles, --set overrides, and finding the repository root.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/config.hpp"
#include "gpumux/io/data_root.hpp"
#include "unit_fixtures.hpp"

namespace fx = gpumux::fixtures;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using gpumux::TimeNs;

namespace {

nlohmann::json good_config() {
  return nlohmann::json::parse(R"({
    "name": "demo-1.a",
    "description": "unit test",
    "seed": 7,
    "devices": [{"profile": "gpu-a"}, {"profile": "gpu-b", "memory_gib": 2}],
    "precision": "fp16",
    "framework_overhead_us": 12.5,
    "policy": {"name": "fifo", "params": {"quantum_us": 100}},
    "workload": {
      "files": ["traces/workloads/mixed.jsonl"],
      "jobs": [{"name": "late", "kind": "training", "model": "small", "batch": 2,
                "arrival_s": 1.0, "iterations": 3, "optimizer": "adam"}],
      "services": [
        {"name": "svc", "model": "tiny", "batch": 4, "arrival_s": 0.5, "slo_ms": 20,
         "arrivals": {"generator": "poisson", "rate_per_s": 50, "count": 20}},
        {"name": "loop", "model": "tiny", "arrivals": {"generator": "closed_loop", "count": 5,
         "on_s": 1, "off_s": 1}}
      ]
    },
    "horizon_s": 60
  })");
}

std::string parse_error(const nlohmann::json& doc, const fs::path& root) {
  try {
    (void)gpumux::parse_experiment(doc, "cfg.json", root);
  } catch (const gpumux::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// Sets an environment variable for the scope of a test (restores it afterwards).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_.empty()) {
      ::unsetenv(name_);
    } else {
      ::setenv(name_, old_.c_str(), 1);
    }
  }

 private:
  const char* name_;
  std::string old_;
};

}  // namespace

TEST_CASE("A good config is parsed and its workload expanded", "[config]") {
  const auto root = fx::make_repo("cfg_ok");
  const auto doc = good_config();
  const auto cfg = gpumux::parse_experiment(doc, "cfg.json", root);
  CHECK(cfg.file == "cfg.json");
  CHECK(cfg.name == "demo-1.a");
  CHECK(cfg.description == "unit test");
  CHECK(cfg.platform == "sim");  // default
  CHECK(cfg.platform_params == nlohmann::json::object());
  CHECK(cfg.seed == 7);
  REQUIRE(cfg.devices.size() == 2);
  CHECK(cfg.devices[0].profile == "gpu-a");
  CHECK_FALSE(cfg.devices[0].memory_bytes.has_value());
  CHECK(cfg.devices[1].memory_bytes == 2ull << 30);
  CHECK(cfg.cost.precision == gpumux::Precision::Fp16);
  CHECK(cfg.cost.framework_overhead_ns == 12500);
  CHECK(cfg.policy == "fifo");
  CHECK(cfg.policy_params["quantum_us"] == 100);
  CHECK(cfg.horizon_ns == 60'000'000'000);
  CHECK(cfg.out_dir == "results/demo-1.a");
  CHECK(cfg.write_trace);
  CHECK(cfg.resolved == doc);

  // 2 file jobs + 1 inline + 2 services, sorted by arrival (stable among equals).
  REQUIRE(cfg.jobs.size() == 5);
  std::vector<std::string> names;
  for (const auto& j : cfg.jobs) names.push_back(j.name);
  CHECK(names == std::vector<std::string>{"train-a", "loop", "svc", "late", "infer-b"});
  const auto& svc = cfg.jobs[2];
  CHECK(svc.kind == gpumux::JobKind::Inference);
  CHECK(svc.batch == 4);
  CHECK(svc.slo_ns == 20'000'000);
  CHECK(svc.tenant == "svc");
  CHECK(svc.requests_ns.size() == 20);
  CHECK(svc.requests_ns.front() >= 500'000'000);
  const auto& loop = cfg.jobs[1];
  CHECK(loop.closed_loop.enabled);
  CHECK(loop.closed_loop.count == 5);
  CHECK(loop.closed_loop.on_ns == 1'000'000'000);
  CHECK(loop.requests_ns.empty());
  CHECK(loop.batch == 1);
  CHECK(cfg.jobs[3].optimizer == gpumux::Optimizer::Adam);

  // The same seed gives the same arrivals; another seed other arrivals.
  CHECK(gpumux::parse_experiment(doc, "cfg.json", root).jobs[2].requests_ns == svc.requests_ns);
  auto reseeded = doc;
  reseeded["seed"] = 8;
  CHECK(gpumux::parse_experiment(reseeded, "cfg.json", root).jobs[2].requests_ns !=
        svc.requests_ns);
}

TEST_CASE("Config errors name the file and the key path", "[config]") {
  const auto root = fx::make_repo("cfg_err");
  auto doc = good_config();
  SECTION("unknown top-level key") {
    doc["colour"] = "blue";
    CHECK_THAT(parse_error(doc, root), Equals("cfg.json: colour: unknown key"));
  }
  SECTION("unknown nested key") {
    doc["devices"][1]["memory"] = 3;
    CHECK_THAT(parse_error(doc, root), Equals("cfg.json: devices[1].memory: unknown key"));
  }
  SECTION("unknown key in a generator") {
    doc["workload"]["services"][0]["arrivals"]["burst"] = 3;
    CHECK_THAT(parse_error(doc, root),
               Equals("cfg.json: workload.services[0].arrivals.burst: unknown key"));
  }
  SECTION("wrong type") {
    doc["seed"] = "7";
    CHECK_THAT(parse_error(doc, root), Equals("cfg.json: seed: expected an integer, got string"));
  }
  SECTION("wrong type in an inline job") {
    doc["workload"]["jobs"][0]["batch"] = 2.5;
    CHECK_THAT(parse_error(doc, root),
               Equals("cfg.json: workload.jobs[0].batch: expected an integer, got number 2.5"));
  }
  SECTION("missing required key") {
    doc.erase("policy");
    CHECK_THAT(parse_error(doc, root), Equals("cfg.json: policy: missing required key"));
  }
  SECTION("bad name") {
    doc["name"] = "a b";
    CHECK_THAT(parse_error(doc, root), Contains("cfg.json: name: 'a b' must be"));
  }
  SECTION("unknown device profile lists the valid names") {
    doc["devices"][0]["profile"] = "tpu";
    CHECK_THAT(parse_error(doc, root),
               Equals("cfg.json: devices[0].profile: unknown device profile 'tpu'; "
                      "valid names: gpu-a, gpu-b"));
  }
  SECTION("no devices") {
    doc["devices"] = nlohmann::json::array();
    CHECK_THAT(parse_error(doc, root), Equals("cfg.json: devices: needs at least one device"));
  }
  SECTION("unknown model in an inline job lists the valid names") {
    doc["workload"]["jobs"][0]["model"] = "resnet";
    CHECK_THAT(parse_error(doc, root),
               Equals("cfg.json: workload.jobs[0].model: unknown model 'resnet'; "
                      "valid names: small, tiny"));
  }
  SECTION("unknown model in a service") {
    doc["workload"]["services"][1]["model"] = "gpt";
    CHECK_THAT(parse_error(doc, root),
               Contains("cfg.json: workload.services[1].model: unknown model 'gpt'"));
  }
  SECTION("unknown model in a job file names the file and line") {
    fx::write_file(root / "traces/workloads/bad.jsonl",
                   "{\"name\": \"x\", \"kind\": \"training\", \"model\": \"tiny\", \"batch\": 1, "
                   "\"arrival_s\": 0, \"iterations\": 1}\n"
                   "{\"name\": \"y\", \"kind\": \"training\", \"model\": \"vit\", \"batch\": 1, "
                   "\"arrival_s\": 0, \"iterations\": 1}\n");
    doc["workload"]["files"] = {"traces/workloads/bad.jsonl"};
    CHECK_THAT(parse_error(doc, root),
               Equals("traces/workloads/bad.jsonl: line 2: model: unknown model 'vit'; "
                      "valid names: small, tiny"));
  }
  SECTION("a missing job file") {
    doc["workload"]["files"] = {"traces/workloads/none.jsonl"};
    CHECK_THAT(parse_error(doc, root), Contains("cfg.json: workload.files[0]: cannot open"));
  }
  SECTION("duplicate job names across sources") {
    doc["workload"]["jobs"][0]["name"] = "train-a";
    CHECK_THAT(parse_error(doc, root),
               Equals("cfg.json: workload.jobs[0].name: duplicate job name 'train-a'"));
  }
  SECTION("unknown generator lists the registered ones") {
    doc["workload"]["services"][0]["arrivals"]["generator"] = "bursty";
    CHECK_THAT(parse_error(doc, root),
               Contains("workload.services[0].arrivals.generator: unknown generator 'bursty'; "
                        "valid names: closed_loop, gamma"));
  }
  SECTION("no jobs at all") {
    doc["workload"] = nlohmann::json::object();
    CHECK_THAT(parse_error(doc, root), Contains("cfg.json: workload: no jobs"));
  }
  SECTION("bad precision") {
    doc["precision"] = "int8";
    CHECK_THAT(parse_error(doc, root),
               Contains("cfg.json: precision: unknown value 'int8'; valid values: fp32, tf32, "
                        "fp16, bf16"));
  }
  SECTION("policy params must be an object") {
    doc["policy"]["params"] = 3;
    CHECK_THAT(parse_error(doc, root), Contains("cfg.json: policy.params: expected an object"));
  }
  SECTION("negative horizon") {
    doc["horizon_s"] = -1;
    CHECK_THAT(parse_error(doc, root), Contains("cfg.json: horizon_s: must be > 0"));
  }
  SECTION("a service that starts before it arrives") {
    doc["workload"]["services"][0]["arrivals"]["start_s"] = 0.1;
    CHECK_THAT(parse_error(doc, root),
               Contains("workload.services[0].arrivals.start_s: requests start before"));
  }
}

TEST_CASE("Overrides: keys, array indices, new keys and value types", "[config]") {
  auto doc = good_config();
  gpumux::apply_override(doc, "seed=11", "cfg.json");
  CHECK(doc["seed"] == 11);
  gpumux::apply_override(doc, "devices.1.profile=gpu-a", "cfg.json");
  CHECK(doc["devices"][1]["profile"] == "gpu-a");  // a bare word is a string
  gpumux::apply_override(doc, "policy.params.quantum_us=2.5", "cfg.json");
  CHECK(doc["policy"]["params"]["quantum_us"] == 2.5);
  gpumux::apply_override(doc, "policy.params.new_knob=true", "cfg.json");
  CHECK(doc["policy"]["params"]["new_knob"] == true);
  gpumux::apply_override(doc, "platform_params.a.b=[1,2]", "cfg.json");  // creates objects
  CHECK(doc["platform_params"]["a"]["b"] == nlohmann::json::array({1, 2}));
  gpumux::apply_override(doc, R"(description="x=y")", "cfg.json");
  CHECK(doc["description"] == "x=y");
  gpumux::apply_override(doc, "workload.services.0.arrivals={\"generator\":\"periodic\"}",
                         "cfg.json");
  CHECK(doc["workload"]["services"][0]["arrivals"]["generator"] == "periodic");
}

TEST_CASE("Overrides: null removes a key, and the reader then uses its default", "[config]") {
  const auto root = fx::make_repo("cfg_null");
  auto doc = good_config();
  REQUIRE(gpumux::parse_experiment(doc, "cfg.json", root).description == "unit test");
  gpumux::apply_override(doc, "description=null", "cfg.json");
  CHECK_FALSE(doc.contains("description"));
  CHECK(gpumux::parse_experiment(doc, "cfg.json", root).description.empty());  // the default
  // Removing a missing key, or under a missing key, changes nothing and creates no path.
  const auto before = doc;
  gpumux::apply_override(doc, "description=null", "cfg.json");
  gpumux::apply_override(doc, "platform_params.a.b=null", "cfg.json");
  CHECK(doc == before);
  // "null" quoted is the string, not a removal.
  gpumux::apply_override(doc, R"(description="null")", "cfg.json");
  CHECK(doc["description"] == "null");
  CHECK_THROWS_WITH(gpumux::apply_override(doc, "devices.0=null", "cfg.json"),
                    Equals("cfg.json: --set devices.0: null removes an object key; an array "
                           "element cannot be removed"));
}

TEST_CASE("Overrides: bad paths name the --set", "[config]") {
  auto doc = good_config();
  CHECK_THROWS_WITH(gpumux::apply_override(doc, "name.x=1", "cfg.json"),
                    Equals("cfg.json: --set name.x: 'name' is string, not an object or array"));
  CHECK_THROWS_WITH(gpumux::apply_override(doc, "devices.5.profile=x", "cfg.json"),
                    Equals("cfg.json: --set devices.5.profile: index 5 out of range "
                           "('devices' has 2 elements)"));
  CHECK_THROWS_WITH(gpumux::apply_override(doc, "devices.first=x", "cfg.json"),
                    Contains("--set devices.first: 'devices' is an array; expected an index"));
  CHECK_THROWS_WITH(gpumux::apply_override(doc, "seed", "cfg.json"),
                    Equals("cfg.json: --set seed: expected key.path=value"));
  CHECK_THROWS_WITH(gpumux::apply_override(doc, "a..b=1", "cfg.json"),
                    Contains("--set a..b: empty key"));
  CHECK_THROWS_AS(gpumux::apply_override(doc, "=1", "cfg.json"), gpumux::ConfigError);
}

TEST_CASE("load_experiment: overrides, malformed JSON, missing file", "[config]") {
  const auto root = fx::make_repo("cfg_load");
  const auto path = root / "experiments/configs/demo.json";
  fx::write_file(path, good_config().dump(2));
  const auto cfg = gpumux::load_experiment(path, {"seed=3", "trace=false", "out_dir=/tmp/x"}, root);
  CHECK(cfg.seed == 3);
  CHECK_FALSE(cfg.write_trace);
  CHECK(cfg.out_dir == "/tmp/x");
  CHECK(cfg.resolved["seed"] == 3);
  CHECK(cfg.file == path.string());
  // an override that adds an unknown key is caught by the strict parse
  CHECK_THROWS_WITH(gpumux::load_experiment(path, {"policy.typo=1"}, root),
                    Equals(path.string() + ": policy.typo: unknown key"));

  fx::write_file(root / "broken.json", "{\n  \"name\": \"x\",\n  \"seed\": ,\n}\n");
  CHECK_THROWS_AS(gpumux::load_experiment(root / "broken.json", {}, root), gpumux::ConfigError);
  CHECK_THROWS_WITH(
      gpumux::load_experiment(root / "broken.json", {}, root),
      Contains((root / "broken.json").string() + ": line 3, column 11: syntax error"));
  CHECK_THROWS_WITH(gpumux::load_experiment(root / "none.json", {}, root),
                    Equals((root / "none.json").string() + ": no such file (cannot open it)"));
}

TEST_CASE("locate_data_root: the install beside the program, then the checkout", "[config]") {
  ScopedEnv env("GPUMUX_ROOT", nullptr);
  const auto prefix = fx::make_temp_dir("install_prefix");
  fs::create_directories(prefix / "bin");
  fs::create_directories(prefix / "share/gpumux/traces/models");
  fx::write_file(prefix / "share/gpumux" / gpumux::kInstallMarker, "gpumux\n");
  const auto checkout = fx::make_repo("data_root_checkout");
  // The install beside the program wins over a checkout above the current directory.
  const auto r = gpumux::locate_data_root(checkout, prefix / "bin/gpumux");
  CHECK(r.dir == prefix / "share/gpumux");
  CHECK(r.installed);
  // A program with no install beside it: the checkout above `start`, not marked installed.
  const auto c = gpumux::locate_data_root(checkout, checkout / "build/bin/gpumux");
  CHECK(fs::equivalent(c.dir, checkout));
  CHECK_FALSE(c.installed);
  // Run from elsewhere: the checkout above the program (a build tree inside it).
  const auto elsewhere = fx::make_temp_dir("data_root_cwd");
  if (!fs::exists(elsewhere.parent_path() / "traces/models")) {
    CHECK(fs::equivalent(gpumux::locate_data_root(elsewhere, checkout / "build/gpumux").dir,
                         checkout));
  }
}

TEST_CASE("find_repo_root: GPUMUX_ROOT, else the nearest ancestor with traces/models", "[config]") {
  const auto root = fx::make_repo("find_root");
  fs::create_directories(root / "a/b/c");
  {
    ScopedEnv env("GPUMUX_ROOT", nullptr);
    CHECK(fs::equivalent(gpumux::find_repo_root(root / "a/b/c"), root));
    CHECK(fs::equivalent(gpumux::find_repo_root(root), root));
    const auto outside = fx::make_temp_dir("no_repo");
    if (!fs::exists(fs::path("/traces/models")) &&
        !fs::exists(outside.parent_path() / "traces/models")) {
      // No executable: nothing beside a program to fall back on.
      CHECK_THROWS_WITH(gpumux::locate_data_root(outside, {}),
                        Contains("searched:\n  $GPUMUX_ROOT (not set)\n  " + outside.string() +
                                 " and its parent folders"));
    }
  }
  {
    ScopedEnv env("GPUMUX_ROOT", GPUMUX_SOURCE_DIR);
    CHECK(fs::equivalent(gpumux::find_repo_root(root / "a"), fs::path(GPUMUX_SOURCE_DIR)));
  }
  {
    ScopedEnv env("GPUMUX_ROOT", "/nonexistent/gpumux");
    CHECK_THROWS_AS(gpumux::find_repo_root(root), gpumux::UsageError);
  }
}
