// Regression tests for parsers that hold under attack: each input the
// fuzzing campaign found is now an InputError (exit 2) naming the file and the key or line.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <limits>
#include <regex>
#include <string>

#include <sys/stat.h>
#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/time.hpp"
#include "gpumux/io/config.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/input_file.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/io/workload.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "unit_fixtures.hpp"

namespace fx = gpumux::fixtures;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using Catch::Matchers::StartsWith;

namespace {

// The message of the InputError `f` throws; other outcomes are spelled out so that a CHECK
// on the message fails visibly.
template <class F>
std::string input_error(F f) {
  try {
    f();
  } catch (const gpumux::InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(not an InputError) ") + e.what();
  }
  return "(no error)";
}

std::string deep_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

// A model or profile text with one number replaced by `text` (which JSON cannot dump).
std::string with_number(const nlohmann::json& doc, const std::string& key, int placeholder,
                        const std::string& text) {
  std::string s = doc.dump();
  const std::string from = "\"" + key + "\":" + nlohmann::json(placeholder).dump();
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  s.replace(at, from.size(), "\"" + key + "\":" + text);
  return s;
}

}  // namespace

TEST_CASE("A number that overflows a double names the file and the key", "[hardening]") {
  const auto root = fx::make_repo("overflow");
  const auto cfg = root / "cfg.json";
  fx::write_file(cfg, R"({"a":1e400})");
  CHECK_THROWS_AS(gpumux::load_experiment(cfg, {}, root), gpumux::ConfigError);
  CHECK_THAT(input_error([&] { (void)gpumux::load_experiment(cfg, {}, root); }),
             Equals(cfg.string() + ": a: number out of range: 1e400 (line 1, column 10)"));
  fx::write_file(cfg, "{\"policy\": {\"params\": {\"q\": [1,\n -1e400]}}}");
  CHECK_THAT(input_error([&] { (void)gpumux::load_experiment(cfg, {}, root); }),
             StartsWith(cfg.string() + ": policy.params.q[1]: number out of range: -1e400"));

  const auto jobs = root / "jobs.jsonl";
  fx::write_file(jobs, "# header\n{\"name\": \"t\", \"arrival_s\": 1e400}\n");
  CHECK_THROWS_AS(gpumux::load_jobs_jsonl(jobs, root), gpumux::TraceError);
  CHECK_THAT(input_error([&] { (void)gpumux::load_jobs_jsonl(jobs, root); }),
             StartsWith(jobs.string() + ": line 2: arrival_s: number out of range: 1e400"));

  const auto model = root / "m.json";
  fx::write_file(model, with_number(fx::model_json("m"), "fwd_flops", 6912, "1e400"));
  CHECK_THAT(input_error([&] { (void)gpumux::load_model(model); }),
             StartsWith(model.string() + ": layers[0].fwd_flops: number out of range: 1e400"));

  const auto profile = root / "p.json";
  fx::write_file(profile, with_number(fx::profile_json("p"), "fp32_tflops", 10, "1E+999"));
  CHECK_THAT(input_error([&] { (void)gpumux::load_device_profile(profile); }),
             StartsWith(profile.string() + ": compute.fp32_tflops: number out of range: 1E+999"));
}

TEST_CASE("Nesting deeper than the limit is rejected while parsing", "[hardening]") {
  const auto root = fx::make_repo("deep");
  const auto cfg = root / "cfg.json";
  // 150,000 levels: parsed recursively (or copied, or dumped) this overflowed the stack.
  fx::write_file(cfg, R"({"name": "x", "platform_params": {"p": )" + deep_arrays(150000) + "}}");
  CHECK_THROWS_AS(gpumux::load_experiment(cfg, {}, root), gpumux::ConfigError);
  const std::string msg = input_error([&] { (void)gpumux::load_experiment(cfg, {}, root); });
  CHECK_THAT(msg, StartsWith(cfg.string() + ": platform_params.p[0][0][0]"));
  CHECK_THAT(msg, Contains("[0]: nested deeper than 64 levels"));

  // 64 levels are fine, 65 are not.
  CHECK_NOTHROW(gpumux::parse_json_text(deep_arrays(64), "f", "", gpumux::InputKind::Trace));
  std::string indices;
  for (int i = 0; i < 64; ++i) indices += "[0]";
  CHECK_THAT(input_error([] {
               (void)gpumux::parse_json_text(deep_arrays(65), "f", "", gpumux::InputKind::Trace);
             }),
             Equals("f: " + indices + ": nested deeper than 64 levels"));

  const auto jobs = root / "jobs.jsonl";
  fx::write_file(jobs, "{\"name\": " + deep_arrays(150000) + "}\n");
  CHECK_THAT(input_error([&] { (void)gpumux::load_jobs_jsonl(jobs, root); }),
             StartsWith(jobs.string() + ": line 1: name[0][0]"));

  // --set: a deep value and a deep key path are both bounded.
  nlohmann::json doc = nlohmann::json::object();
  CHECK_THAT(input_error([&] {
               gpumux::apply_override(doc, "platform_params=" + deep_arrays(150000), "c.json");
             }),
             StartsWith("c.json: --set platform_params: [0][0]"));
  std::string path = "platform_params";
  for (int i = 0; i < 150000; ++i) path += ".a";
  CHECK_THAT(input_error([&] { gpumux::apply_override(doc, path + "=1", "c.json"); }),
             Contains(": key path deeper than 64 levels"));
}

TEST_CASE("Duplicate keys are errors naming the key path", "[hardening]") {
  const auto root = fx::make_repo("dup");
  const auto cfg = root / "cfg.json";
  fx::write_file(cfg, R"({"name": "x", "policy": {"name": "fifo", "params": {"x": 1, "x": 2}}})");
  CHECK_THROWS_AS(gpumux::load_experiment(cfg, {}, root), gpumux::ConfigError);
  CHECK_THAT(input_error([&] { (void)gpumux::load_experiment(cfg, {}, root); }),
             Equals(cfg.string() + ": policy.params.x: duplicate key"));

  const auto jobs = root / "jobs.jsonl";
  fx::write_file(jobs, R"({"name": "a", "kind": "training", "name": "b"})");
  CHECK_THAT(input_error([&] { (void)gpumux::load_jobs_jsonl(jobs, root); }),
             Equals(jobs.string() + ": line 1: name: duplicate key"));

  auto model = fx::model_json("m").dump();
  model.replace(model.find("\"layers\":["), 10, "\"layers\":[{\"a\":1,\"a\":1},");
  CHECK_THAT(input_error([&] { (void)gpumux::parse_model_text(model, "m.json"); }),
             Equals("m.json: layers[0].a: duplicate key"));

  nlohmann::json doc = nlohmann::json::object();
  CHECK_THAT(input_error([&] {
               gpumux::apply_override(doc, R"(platform_params={"k": [{"x": 1, "x": 2}]})",
                                      "c.json");
             }),
             Equals("c.json: --set platform_params: k[0].x: duplicate key"));
}

TEST_CASE("Only regular files of bounded size are read", "[hardening]") {
  const auto root = fx::make_repo("files");
  CHECK_THROWS_AS(gpumux::load_arrivals_csv("/dev/zero"), gpumux::TraceError);
  CHECK_THAT(input_error([] { (void)gpumux::load_arrivals_csv("/dev/zero"); }),
             Equals("/dev/zero: not a regular file"));
  CHECK_THAT(input_error([&] { (void)gpumux::load_experiment("/dev/zero", {}, root); }),
             Equals("/dev/zero: not a regular file"));
  CHECK_THAT(input_error([&] { (void)gpumux::load_jobs_jsonl(root / "traces", root); }),
             Equals((root / "traces").string() + ": not a regular file"));

  // An arrivals file named in a config: the config's key, then the file's own message.
  auto doc = nlohmann::json::parse(R"({"name": "z", "devices": [{"profile": "gpu-a"}],
    "policy": {"name": "fifo"}, "workload": {"jobs": [{"name": "j", "kind": "inference",
    "model": "tiny", "batch": 1, "arrival_s": 0, "requests": {"file": "/dev/zero"}}]}})");
  CHECK_THAT(input_error([&] { (void)gpumux::parse_experiment(doc, "c.json", root); }),
             Equals("c.json: workload.jobs[0].requests.file: /dev/zero: not a "
                    "regular file"));

  // A FIFO would block the reader: refused without opening it.
  const auto fifo = fx::make_temp_dir("fifo") / "model.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THAT(input_error([&] { (void)gpumux::load_model(fifo); }),
             Equals(fifo.string() + ": not a regular file"));

  // Sparse files: the size check happens before reading.
  const auto big = fx::make_temp_dir("big") / "cfg.json";
  fx::write_file(big, "{}");
  fs::resize_file(big, gpumux::kMaxDocumentBytes + 1);
  CHECK_THAT(input_error([&] { (void)gpumux::load_experiment(big, {}, root); }),
             Equals(big.string() + ": larger than 64 MiB"));
  const auto csv = big.parent_path() / "a.csv";
  fx::write_file(csv, "arrival_s\n");
  fs::resize_file(csv, gpumux::kMaxTraceBytes + 1);
  CHECK_THAT(input_error([&] { (void)gpumux::load_arrivals_csv(csv); }),
             Equals(csv.string() + ": larger than 1024 MiB"));
}

TEST_CASE("Text that is not UTF-8 is rejected before anything runs", "[hardening]") {
  CHECK(gpumux::is_valid_utf8(""));
  CHECK(gpumux::is_valid_utf8("plain"));
  CHECK(gpumux::is_valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  CHECK_FALSE(gpumux::is_valid_utf8("\xff"));
  CHECK_FALSE(gpumux::is_valid_utf8("\xc0\xaf"));          // overlong '/'
  CHECK_FALSE(gpumux::is_valid_utf8("\xed\xa0\x80"));      // UTF-16 surrogate
  CHECK_FALSE(gpumux::is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  CHECK_FALSE(gpumux::is_valid_utf8("\xe2\x82"));          // truncated

  const auto root = fx::make_repo("utf8");
  nlohmann::json doc = nlohmann::json::object();
  CHECK_THROWS_AS(gpumux::apply_override(doc, "description=\xff", "c.json"), gpumux::ConfigError);
  CHECK_THAT(input_error([&] { gpumux::apply_override(doc, "description=\xff", "c.json"); }),
             Equals("c.json: --set description: not valid UTF-8"));
  CHECK_THAT(input_error([&] { gpumux::apply_override(doc, "d\xe9sc=1", "c.json"); }),
             Equals("c.json: --set d\\xe9sc: not valid UTF-8"));

  // Inside a file, the parser's error names the file and quotes the bytes printably.
  const auto cfg = root / "cfg.json";
  fx::write_file(cfg, "{\"name\": \"x\",\n \"description\": \"\xff\"}");
  const std::string msg = input_error([&] { (void)gpumux::load_experiment(cfg, {}, root); });
  CHECK_THAT(msg, StartsWith(cfg.string() + ": line 2, column "));
  CHECK_THAT(msg, Contains("ill-formed UTF-8"));
  CHECK(gpumux::is_valid_utf8(msg));
}

TEST_CASE("Model and profile numbers have physical bounds", "[hardening]") {
  auto model = fx::model_json("m");
  model["layers"][0]["fwd_flops"] = 1e300;
  CHECK_THAT(fx::trace_error(model, "m.json", [](const auto& p) { return gpumux::load_model(p); }),
             Equals("layers[0].fwd_flops: out of range (more than 1e18 FLOPs per sample)"));
  model = fx::model_json("m");
  model["layers"][2]["weight_bytes"] = 1ull << 41;
  CHECK_THAT(fx::trace_error(model, "m.json", [](const auto& p) { return gpumux::load_model(p); }),
             Equals("layers[2].weight_bytes: must be an integer in [0, 1099511627776], got "
                    "2199023255552"));

  auto load = [](const auto& p) { return gpumux::load_device_profile(p); };
  auto profile = fx::profile_json("p");
  profile["compute"]["mem_bandwidth_gbps"] = 1e-300;
  CHECK_THAT(fx::trace_error(profile, "p.json", load),
             Equals("compute.mem_bandwidth_gbps: out of range: must be in [0.001, 1e+06], got "
                    "1e-300"));
  profile = fx::profile_json("p");
  profile["compute"]["fp16_tflops"] = 1e7;
  CHECK_THAT(fx::trace_error(profile, "p.json", load),
             Equals("compute.fp16_tflops: out of range: must be 0 or in [1e-06, 1e+06], got "
                    "1e+07"));
  profile = fx::profile_json("p");
  profile["kernels"]["launch_ns"] = 100'000'000'000'000'000;
  CHECK_THAT(fx::trace_error(profile, "p.json", load),
             Equals("kernels.launch_ns: out of range (more than 1e12 ns)"));
  profile = fx::profile_json("p");
  profile["link"]["pageable_factor"] = 2;
  CHECK_THAT(fx::trace_error(profile, "p.json", load),
             Equals("link.pageable_factor: out of range: must be in [0.001, 1], got 2"));
  profile = fx::profile_json("p");
  profile["compute"]["efficiency"]["conv"] = 1e-9;
  CHECK_THAT(fx::trace_error(profile, "p.json", load),
             Equals("compute.efficiency.conv: out of range (below 0.001)"));
}

TEST_CASE("Durations saturate at kMaxDurationNs instead of overflowing", "[hardening]") {
  using gpumux::kMaxDurationNs;
  CHECK(gpumux::ceil_ns(0.5) == 1);
  CHECK(gpumux::ceil_ns(-1) == 0);
  CHECK(gpumux::ceil_ns(std::nan("")) == 0);
  CHECK(gpumux::ceil_ns(1e300) == kMaxDurationNs);
  CHECK(gpumux::ceil_ns(std::numeric_limits<double>::infinity()) == kMaxDurationNs);
  CHECK(gpumux::saturating_add(kMaxDurationNs, 1) == kMaxDurationNs);
  CHECK(gpumux::saturating_add(2, 3) == 5);
  CHECK(gpumux::saturating_mul(3, kMaxDurationNs / 2) == kMaxDurationNs);
  CHECK(gpumux::saturating_mul(3, 7) == 21);

  // A profile built in code skips the loader's bounds: the cost model still saturates.
  auto profile = gpumux::parse_device_profile_text(fx::profile_json("p").dump(), "p.json");
  const auto model = gpumux::parse_model_text(fx::model_json("m").dump(), "m.json");
  profile.mem_bandwidth_gbps = 1e-300;
  profile.h2d_gbps = 1e-300;
  profile.launch_ns = kMaxDurationNs;
  const gpumux::CostModel cm(profile, {});
  const gpumux::LayerRange all{0, model.layer_count()};
  CHECK(cm.op_ns(model, all, 1u << 20, gpumux::Pass::Backward, false) == kMaxDurationNs);
  CHECK(cm.update_ns(model, gpumux::Optimizer::Adam) == kMaxDurationNs);
  CHECK(cm.h2d_ns(~0ull, true) == kMaxDurationNs);
}
