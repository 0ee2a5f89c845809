// Parser fuzzing: thousands of seeded random mutations of valid config and job documents.
// Each must either parse or throw a gpumux::InputError: never another exception, never a crash.
#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/config.hpp"
#include "gpumux/io/workload.hpp"
#include "unit_fixtures.hpp"

namespace fx = gpumux::fixtures;

namespace {

const char* const kConfig = R"({
  "name": "fuzz",
  "seed": 3,
  "devices": [{"profile": "gpu-a", "memory_gib": 4}],
  "precision": "fp32",
  "framework_overhead_us": 10,
  "policy": {"name": "fifo", "params": {"quantum_us": 100}},
  "workload": {
    "files": ["traces/workloads/mixed.jsonl"],
    "jobs": [{"name": "j", "kind": "inference", "model": "tiny", "batch": 2, "arrival_s": 1,
              "requests": {"file": "traces/arrivals/steady.csv", "limit": 3}, "slo_ms": 5}],
    "services": [
      {"name": "p", "model": "tiny", "arrivals": {"generator": "poisson", "rate_per_s": 50,
       "duration_s": 1}},
      {"name": "g", "model": "small", "arrivals": {"generator": "gamma", "rate_per_s": 20,
       "cv": 2, "count": 8}},
      {"name": "o", "model": "tiny", "arrivals": {"generator": "onoff", "rate_per_s": 20,
       "on_s": 0.5, "off_s": 0.5, "count": 8}},
      {"name": "r", "model": "tiny", "arrivals": {"generator": "replay",
       "file": "traces/arrivals/steady.csv", "time_scale": 2}},
      {"name": "c", "model": "tiny", "arrivals": {"generator": "closed_loop", "count": 4,
       "think_ms": 1, "on_s": 1, "off_s": 2}},
      {"name": "q", "model": "tiny", "arrivals": {"generator": "periodic", "interval_s": 0.1,
       "count": 5}}
    ]
  },
  "horizon_s": 10,
  "trace": false
})";

const char* const kJobs[] = {
    R"({"name": "t", "kind": "training", "model": "tiny", "batch": 8, "arrival_s": 0.5, "iterations": 10, "optimizer": "adam", "priority": 1, "weight": 2.0, "tenant": "x", "expected_duration_s": 3})",
    R"({"name": "s", "kind": "inference", "model": "small", "batch": 1, "arrival_s": 1, "requests": [1, 1.5, 2], "slo_ms": 10})",
    R"({"name": "f", "kind": "inference", "model": "tiny", "batch": 1, "arrival_s": 2, "requests": {"file": "traces/arrivals/steady.csv", "offset_s": 3, "time_scale": 0.5, "limit": 2}})",
};

constexpr char kAlphabet[] = "{}[],:\"\\ 0123456789.-+eEtrufalsn_xyz#\n\t";

// A random JSON value of a random type, including edge numbers.
nlohmann::json random_value(std::mt19937_64& rng) {
  switch (rng() % 12) {
    case 0:
      return nullptr;
    case 1:
      return rng() % 2 == 0;
    case 2:
      return static_cast<std::int64_t>(rng() % 2001) - 1000;
    case 3:
      return -1.5;
    case 4:
      return 1e300;
    case 5:
      return std::numeric_limits<std::uint64_t>::max();
    case 6:
      return "";
    case 7:
      return "tiny";
    case 8:
      return nlohmann::json::array({1, "a"});
    case 9:
      return nlohmann::json::object({{"generator", "poisson"}});
    case 10:
      return 0;
    default:
      return 0.25;
  }
}

// Replaces one random node of `doc` (or one of its keys' values) with a value of another type,
// or deletes / duplicates a key.
void mutate_structure(nlohmann::json& doc, std::mt19937_64& rng) {
  nlohmann::json* node = &doc;
  for (int depth = 0; depth < 6; ++depth) {
    if (!node->is_structured() || node->empty()) break;
    const std::size_t i = rng() % node->size();
    auto it = node->begin();
    std::advance(it, static_cast<long>(i));
    if (rng() % 3 == 0 || !it->is_structured()) {
      const unsigned action = rng() % 4;
      if (action == 0 && node->is_object()) {
        node->erase(it.key());
      } else if (action == 1 && node->is_object()) {
        (*node)[it.key() + "_x"] = *it;
      } else {
        *it = random_value(rng);
      }
      return;
    }
    node = &*it;
  }
  *node = random_value(rng);
}

void mutate_text(std::string& text, std::mt19937_64& rng) {
  if (text.empty()) {
    text.assign(1, '{');
    return;
  }
  const std::size_t pos = rng() % text.size();
  switch (rng() % 5) {
    case 0:
      text.erase(pos, 1 + rng() % 3);
      break;
    case 1:
      text.insert(pos, 1, text[pos]);
      break;
    case 2:
      text[pos] = kAlphabet[rng() % (sizeof kAlphabet - 1)];
      break;
    case 3:
      text.resize(pos);
      break;  // truncate
    default:
      text.insert(pos, 1, kAlphabet[rng() % (sizeof kAlphabet - 1)]);
      break;
  }
}

std::string mutate(const std::string& base, std::mt19937_64& rng) {
  std::string text = base;
  const int rounds = 1 + static_cast<int>(rng() % 3);
  for (int r = 0; r < rounds; ++r) {
    if (rng() % 2 == 0) {
      auto doc = nlohmann::json::parse(text, nullptr, false);
      if (!doc.is_discarded()) {
        mutate_structure(doc, rng);
        text = doc.dump();
        continue;
      }
    }
    mutate_text(text, rng);
  }
  return text;
}

struct Outcome {
  int ok = 0, input_errors = 0, other = 0;
  std::string first_other;
};

void run(Outcome& o, const std::string& input, const std::function<void()>& f) {
  try {
    f();
    ++o.ok;
  } catch (const gpumux::InputError&) {
    ++o.input_errors;
  } catch (const std::exception& e) {
    if (o.other++ == 0) o.first_other = std::string(e.what()) + "\ninput:\n" + input;
  }
}

}  // namespace

TEST_CASE("Fuzzed configs parse or fail with an InputError", "[fuzz]") {
  const auto root = fx::make_repo("fuzz_cfg");
  const auto path = root / "fuzz.json";
  // The unmutated document is valid.
  REQUIRE_NOTHROW(gpumux::parse_experiment(nlohmann::json::parse(kConfig), "fuzz.json", root));
  std::mt19937_64 rng(20240601);
  Outcome o;
  for (int i = 0; i < 2000; ++i) {
    const std::string text = mutate(kConfig, rng);
    fx::write_file(path, text);
    run(o, text, [&] { (void)gpumux::load_experiment(path, {}, root); });
    const auto doc = nlohmann::json::parse(text, nullptr, false);
    if (!doc.is_discarded()) {
      run(o, text, [&] { (void)gpumux::parse_experiment(doc, "fuzz.json", root); });
    }
  }
  INFO(o.first_other);
  CHECK(o.other == 0);
  CHECK(o.input_errors > 1000);  // most mutations break something...
  CHECK(o.ok > 20);              // ...and some stay valid
}

TEST_CASE("Fuzzed --set overrides apply or fail with an InputError", "[fuzz]") {
  const auto root = fx::make_repo("fuzz_set");
  const auto base = nlohmann::json::parse(kConfig);
  const char* const keys[] = {"name",    "seed",       "devices",  "0",      "5",
                              "profile", "memory_gib", "policy",   "params", "workload",
                              "jobs",    "services",   "arrivals", "count",  "batch",
                              "",        "x",          "-1",       "files",  "requests"};
  const char* const values[] = {
      "1",     "-1",       "2.5",     "true",  "null", "[]", "{}",
      "gpu-b", "\"tiny\"", "{\"a\":", "1e400", "",     "=",  "[1,{\"x\":2}]"};
  std::mt19937_64 rng(7);
  Outcome o;
  for (int i = 0; i < 1500; ++i) {
    std::string set;
    const int parts = 1 + static_cast<int>(rng() % 4);
    for (int p = 0; p < parts; ++p) {
      if (p > 0) set.push_back('.');
      set.append(keys[rng() % 20]);
    }
    if (rng() % 10 != 0) {
      set.push_back('=');
      set.append(values[rng() % 14]);
    }
    auto doc = base;
    run(o, set, [&] {
      gpumux::apply_override(doc, set, "fuzz.json");
      (void)gpumux::parse_experiment(doc, "fuzz.json", root);
    });
  }
  INFO(o.first_other);
  CHECK(o.other == 0);
  CHECK(o.ok > 0);
  CHECK(o.input_errors > 0);
}

TEST_CASE("Fuzzed job lines parse or fail with an InputError", "[fuzz]") {
  const auto root = fx::make_repo("fuzz_jobs");
  const auto path = root / "jobs.jsonl";
  std::mt19937_64 rng(99);
  Outcome o;
  for (int i = 0; i < 3000; ++i) {
    const std::size_t which = rng() % 3;
    const std::string line = mutate(kJobs[which], rng);
    const auto doc = nlohmann::json::parse(line, nullptr, false);
    if (!doc.is_discarded()) {
      run(o, line, [&] { (void)gpumux::parse_job(doc, "jobs.jsonl", "line 1", root); });
    }
    std::string file;
    for (std::size_t k = 0; k < 3; ++k) file += (k == which ? line : std::string(kJobs[k])) + "\n";
    fx::write_file(path, file);
    run(o, file, [&] { (void)gpumux::load_jobs_jsonl(path, root); });
  }
  INFO(o.first_other);
  CHECK(o.other == 0);
  CHECK(o.input_errors > 1000);
  CHECK(o.ok > 20);
}
