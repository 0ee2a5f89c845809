// RequestVariability (gpumux/model/request_variability.hpp, D38): a service's "dynamic" key. Parse
// errors name the file and the key; resolve() checks the distribution against the model;
// draw() follows the weights (checked over many draws) and pads input lengths to the bucket;
// the distributions in traces/dynamic/ parse and resolve against the models they name.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/config.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/io/request_variability_config.hpp"
#include "gpumux/model/model.hpp"
#include "gpumux/model/request_variability.hpp"
#include "test_support.hpp"

using namespace gpumux;
using Catch::Matchers::Contains;

namespace {

const std::string kFile = "cfg.json";
const std::string kKey = "workload.services[0].dynamic";

nlohmann::json early_exit() {
  return {
      {"kind", "early_exit"},
      {"source", "hand-written for this test"},
      {"exits", {{{"after", "maxpool"}, {"weight", 0.25}}, {{"after", "fc"}, {"weight", 0.75}}}}};
}

nlohmann::json input_length() {
  return {{"kind", "input_length"},
          {"source", "hand-written for this test"},
          {"bucket", 16},
          {"max_tokens", 100},
          {"lengths",
           {{{"tokens", 10}, {"weight", 1}},
            {{"tokens", 17}, {"weight", 1}},
            {{"tokens", 100}, {"weight", 2}}}}};
}

// The message of parsing `v` as the "dynamic" value at kKey of kFile ("(no error)" if none).
std::string parse_error(const nlohmann::json& v) {
  try {
    (void)parse_request_variability(v, kFile, kKey, test::source_dir());
  } catch (const ConfigError& e) {
    return e.what();
  } catch (const TraceError& e) {
    return std::string("(trace error) ") + e.what();
  }
  return "(no error)";
}

const ModelCatalog& zoo() {
  static const ModelCatalog catalog(test::source_dir() / "traces/models");
  return catalog;
}

// Draws `n` times and returns how often each value came up.
std::map<std::uint32_t, int> histogram(const RequestVariability& v, int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<std::uint32_t, int> h;
  for (int i = 0; i < n; ++i) ++h[v.draw(rng)];
  return h;
}

// |observed - n p| within 5 binomial standard deviations (a false failure ~ 6e-7 per check).
void check_frequency(int observed, int n, double p) {
  const double sd = std::sqrt(n * p * (1 - p));
  INFO("observed " << observed << " of " << n << ", expected p = " << p);
  CHECK(std::fabs(observed - n * p) <= 5 * sd);
}

}  // namespace

TEST_CASE("dynamic: parse errors name the file and the key", "[request_variability]") {
  CHECK(parse_error(early_exit()) == "(no error)");
  CHECK(parse_error(input_length()) == "(no error)");

  auto no_source = early_exit();
  no_source.erase("source");
  CHECK_THAT(parse_error(no_source), Contains(kFile) && Contains(kKey + ".source"));
  auto empty_source = early_exit();
  empty_source["source"] = "";
  CHECK_THAT(parse_error(empty_source),
             Contains(kFile) && Contains(kKey + ".source") && Contains("must name"));

  auto zero = early_exit();
  zero["exits"][0]["weight"] = 0;
  zero["exits"][1]["weight"] = 0;
  CHECK_THAT(parse_error(zero),
             Contains(kFile) && Contains(kKey + ".exits") && Contains("sum to a positive"));
  auto zero_lengths = input_length();
  for (auto& b : zero_lengths["lengths"]) b["weight"] = 0.0;
  CHECK_THAT(parse_error(zero_lengths), Contains(kKey + ".lengths") && Contains("positive"));

  auto negative = early_exit();
  negative["exits"][1]["weight"] = -1;
  CHECK_THAT(parse_error(negative), Contains(kFile) && Contains("exits[1]") && Contains("weight"));

  auto descending = input_length();
  descending["lengths"][1]["tokens"] = 10;  // equal to the previous edge
  CHECK_THAT(parse_error(descending),
             Contains(kFile) && Contains(kKey + ".lengths[1]") && Contains("ascending"));
  auto too_long = input_length();
  too_long["lengths"][2]["tokens"] = 101;
  CHECK_THAT(parse_error(too_long), Contains("lengths[2]") && Contains("max_tokens"));

  auto mixed = early_exit();
  mixed["max_tokens"] = 10;
  CHECK_THAT(parse_error(mixed), Contains(kKey + ".max_tokens") && Contains("early_exit"));
  auto unknown_kind = early_exit();
  unknown_kind["kind"] = "sometimes";
  CHECK_THAT(parse_error(unknown_kind), Contains(kKey + ".kind"));
  CHECK_THAT(parse_error(42), Contains(kFile) && Contains(kKey) && Contains("expected an object"));
  CHECK_THAT(parse_error("traces/dynamic/no_such_file.json"),
             Contains(kFile) && Contains(kKey) && Contains("cannot open"));
}

TEST_CASE("dynamic: resolve() checks the exits against the model", "[request_variability]") {
  const Model& resnet = zoo().at("resnet50");
  auto v = parse_request_variability(early_exit(), kFile, kKey, test::source_dir());
  v->resolve(resnet);
  REQUIRE(v->exits.size() == 2);
  CHECK(v->exits[1].layer_end == resnet.layer_count());
  CHECK(resnet.layer(v->exits[0].layer_end - 1).name == "maxpool");
  CHECK(v->full_work() == resnet.layer_count());

  auto unknown = early_exit();
  unknown["exits"][0]["after"] = "no_such_layer";
  auto u = parse_request_variability(unknown, kFile, kKey, test::source_dir());
  CHECK_THROWS_WITH(u->resolve(resnet), Contains("exits[0].after") && Contains("no_such_layer") &&
                                            Contains("resnet50"));

  auto not_last = early_exit();
  not_last["exits"][1]["after"] = "layer4.2.bn3";
  auto n = parse_request_variability(not_last, kFile, kKey, test::source_dir());
  CHECK_THROWS_WITH(n->resolve(resnet), Contains("last exit") && Contains("'fc'"));

  auto out_of_order = early_exit();
  out_of_order["exits"] = {{{"after", "fc"}, {"weight", 1}}, {{"after", "maxpool"}, {"weight", 1}}};
  auto o = parse_request_variability(out_of_order, kFile, kKey, test::source_dir());
  CHECK_THROWS_WITH(o->resolve(resnet), Contains("exits[1].after") && Contains("layer order"));

  auto other_model = early_exit();
  other_model["model"] = "alexnet";
  auto m = parse_request_variability(other_model, kFile, kKey, test::source_dir());
  CHECK_THROWS_WITH(m->resolve(resnet), Contains("alexnet") && Contains("resnet50"));

  auto lengths = parse_request_variability(input_length(), kFile, kKey, test::source_dir());
  CHECK_THROWS_WITH(lengths->resolve(resnet), Contains("no sequence_length"));
  CHECK_NOTHROW(lengths->resolve(zoo().at("bert_base")));
}

TEST_CASE(
    "dynamic: a config names the service's key for a model mismatch and for a training "
    "job",
    "[request_variability]") {
  auto svc = nlohmann::json{
      {"name", "svc"},    {"kind", "inference"}, {"model", "resnet50"},    {"batch", 1},
      {"arrival_s", 0.0}, {"requests", {0.1}},   {"dynamic", early_exit()}};
  svc["dynamic"]["exits"][0]["after"] = "no_such_layer";
  auto doc = test::make_config("exclusive", {{"jobs", {svc}}});
  CHECK_THROWS_WITH(
      parse_experiment(doc, kFile, test::source_dir()),
      Contains(kFile) && Contains("workload.jobs[0].dynamic") && Contains("no_such_layer"));

  const nlohmann::json train = {
      {"name", "t"},      {"kind", "training"}, {"model", "resnet50"},    {"batch", 8},
      {"arrival_s", 0.0}, {"iterations", 1},    {"dynamic", early_exit()}};
  auto tdoc = test::make_config("exclusive", {{"jobs", {train}}});
  CHECK_THROWS_AS(parse_experiment(tdoc, kFile, test::source_dir()), InputError);
  CHECK_THROWS_WITH(parse_experiment(tdoc, kFile, test::source_dir()),
                    Contains(kFile) && Contains("workload.jobs[0].dynamic") &&
                        Contains("not allowed for a training job"));
}

TEST_CASE("dynamic: draws follow the weights", "[request_variability]") {
  const Model& resnet = zoo().at("resnet50");
  auto v = parse_request_variability(early_exit(), kFile, kKey, test::source_dir());
  v->resolve(resnet);
  const int n = 40000;
  const auto h = histogram(*v, n, 11);
  REQUIRE(h.size() == 2);  // only the two exits' layer_ends come up
  check_frequency(h.at(v->exits[0].layer_end), n, 0.25);
  check_frequency(h.at(v->exits[1].layer_end), n, 0.75);
  // Cumulative weights are normalised: 0.25, then exactly 1.
  CHECK(v->cumulative[0] == 0.25);
  CHECK(v->cumulative[1] == 1.0);
  // The same seed draws the same sequence; another seed another one.
  CHECK(histogram(*v, 1000, 11) == histogram(*v, 1000, 11));
  std::mt19937_64 a(1), b(2);
  int differ = 0;
  for (int i = 0; i < 100; ++i) differ += v->draw(a) != v->draw(b) ? 1 : 0;
  CHECK(differ > 0);
}

TEST_CASE("dynamic: input lengths round up to the bucket, at most max_tokens",
          "[request_variability]") {
  auto v = parse_request_variability(input_length(), kFile, kKey, test::source_dir());
  v->resolve(zoo().at("bert_base"));
  const int n = 40000;
  const auto h = histogram(*v, n, 3);
  // Bins (weights 1, 1, 2): 10 tokens -> 16; 17 -> 32; 100 -> 112, capped at 100.
  REQUIRE(h.size() == 3);
  check_frequency(h.at(16), n, 0.25);
  check_frequency(h.at(32), n, 0.25);
  check_frequency(h.at(100), n, 0.5);
  CHECK(v->full_work() == 100);
}

TEST_CASE("dynamic: every file in traces/dynamic parses and resolves against its model",
          "[request_variability]") {
  int files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(test::source_dir() / "traces/dynamic")) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    const std::string rel = "traces/dynamic/" + entry.path().filename().string();
    INFO(rel);
    std::shared_ptr<RequestVariability> v;
    REQUIRE_NOTHROW(v = parse_request_variability(rel, kFile, kKey, test::source_dir()));
    CHECK_FALSE(v->source.empty());
    REQUIRE_FALSE(v->model.empty());
    const Model& m = zoo().at(v->model);
    REQUIRE_NOTHROW(v->resolve(m));
    CHECK(v->cumulative.back() == 1.0);
    if (v->kind == VariabilityKind::EarlyExit) {
      CHECK(v->exits.back().layer_end == m.layer_count());
    } else {
      CHECK(v->max_tokens >= v->lengths.back().tokens);
      CHECK(v->full_work() <= v->max_tokens);
    }
  }
  CHECK(files == 4);
}
