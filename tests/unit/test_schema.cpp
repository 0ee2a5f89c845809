// One schema per thing: enum name tables, the duration and choice readers, declared plug-in
// parameters, and the one job-field reader shared by JSONL jobs, config jobs and services.
#include <catch2/catch.hpp>

#include <string>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/policy.hpp"
#include "gpumux/io/byte_sink.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/params.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/io/workload.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using gpumux::ConfigError;
using gpumux::DurationNs;
using gpumux::JsonReader;
using gpumux::Sign;
using gpumux::TimeUnit;
using nlohmann::json;

namespace {

template <class F>
std::string config_error(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// Every value of a table parses back from its name, and names are unique.
template <class E, std::size_t N>
void check_round_trip(const gpumux::EnumNames<E, N>& names) {
  for (const auto& e : names.entries) {
    CHECK(names.parse(e.name) == e.value);
    CHECK(names.name(e.value) == e.name);
  }
  CHECK_FALSE(names.parse("no-such-name").has_value());
}

}  // namespace

TEST_CASE("enum name tables serve to_string and parsing alike", "[schema]") {
  check_round_trip(gpumux::kPrecisionNames);
  check_round_trip(gpumux::kOptimizerNames);
  check_round_trip(gpumux::kPassNames);
  check_round_trip(gpumux::kLayerKindNames);
  check_round_trip(gpumux::kJobKindNames);
  check_round_trip(gpumux::kCompressionNames);
  check_round_trip(gpumux::kTimeUnitNames);
  CHECK(gpumux::to_string(gpumux::Precision::Bf16) == "bf16");
  CHECK(gpumux::to_string(gpumux::JobKind::Inference) == "inference");
  CHECK(gpumux::kPrecisionNames.list() == "fp32, tf32, fp16, bf16");
  static_assert(gpumux::kOptimizerNames.name(gpumux::Optimizer::Adam) == "adam");
}

TEST_CASE("durations round to the nearest ns, halves away from zero", "[schema]") {
  // Hand-computed: each value and its product are exact in binary floating point.
  CHECK(gpumux::duration_to_ns(0.0625, TimeUnit::Microseconds) == 63);  // 62.5 ns
  CHECK(gpumux::duration_to_ns(0.0624, TimeUnit::Microseconds) == 62);  // 62.4 ns
  CHECK(gpumux::duration_to_ns(1.5, TimeUnit::Microseconds) == 1'500);
  CHECK(gpumux::duration_to_ns(0.25, TimeUnit::Milliseconds) == 250'000);
  CHECK(gpumux::duration_to_ns(2.5e-7, TimeUnit::Milliseconds) == 0);  // 0.25 ns
  CHECK(gpumux::duration_to_ns(1e9, TimeUnit::Seconds) == 1'000'000'000'000'000'000);
  CHECK(gpumux::duration_to_ns(0.1, TimeUnit::Seconds) == 100'000'000);
  CHECK(gpumux::duration_to_ns(13.5, TimeUnit::Microseconds) == 13'500);
}

TEST_CASE("JsonReader reads durations with bounds and key paths", "[schema]") {
  const json doc =
      json::parse(R"({"a_us": 7, "neg_us": -1, "zero_ms": 0, "big_us": 1e10, "text_s": "soon"})");
  JsonReader r(doc, "cfg.json", "policy.params");
  CHECK(r.required_duration("a_us", TimeUnit::Microseconds) == 7'000);
  CHECK(r.duration_or("missing_us", TimeUnit::Microseconds, 42) == 42);
  CHECK(r.required_duration("zero_ms", TimeUnit::Milliseconds) == 0);
  CHECK_THAT(config_error([&] { (void)r.required_duration("neg_us", TimeUnit::Microseconds); }),
             Contains("cfg.json: policy.params.neg_us: must be >= 0, got -1"));
  CHECK_THAT(config_error([&] {
               (void)r.required_duration("zero_ms", TimeUnit::Milliseconds, Sign::Positive);
             }),
             Contains("policy.params.zero_ms: must be > 0"));
  CHECK_THAT(config_error([&] { (void)r.required_duration("big_us", TimeUnit::Microseconds); }),
             Contains("policy.params.big_us: out of range (more than 1e9 us)"));
  CHECK_THAT(config_error([&] { (void)r.required_duration("text_s", TimeUnit::Seconds); }),
             Contains("policy.params.text_s: expected a number"));
}

TEST_CASE("JsonReader reads choices by name table and lists the valid names", "[schema]") {
  const json doc = json::parse(R"({"p": "fp16", "q": "int8"})");
  JsonReader r(doc, "cfg.json", "");
  CHECK(r.required_choice("p", gpumux::kPrecisionNames) == gpumux::Precision::Fp16);
  CHECK(r.choice_or("absent", gpumux::kPrecisionNames, gpumux::Precision::Tf32) ==
        gpumux::Precision::Tf32);
  CHECK_THAT(config_error([&] { (void)r.required_choice("q", gpumux::kPrecisionNames); }),
             Contains("cfg.json: q: unknown value 'int8'; valid values: fp32, tf32, fp16, bf16"));
}

TEST_CASE("declared policy parameters round trip through each policy", "[schema]") {
  const auto& registry = gpumux::PolicyRegistry::instance();
  for (const auto& name : registry.names()) {
    DYNAMIC_SECTION(name) {
      const auto& specs = registry.params(name);
      // Every declared default, written out explicitly, is accepted by the policy itself.
      gpumux::PolicyArgs args;
      args.file = "cfg.json";
      for (const auto& s : specs) {
        CHECK_FALSE(s.help.empty());
        if (!std::holds_alternative<std::monostate>(s.default_value)) {
          args.params[s.name] = param_default_json(s);
        }
      }
      CHECK(registry.create(name, args) != nullptr);
      // An undeclared key is refused, naming the file, the key and the declared keys.
      args.params["no_such_param"] = 1;
      const std::string msg = config_error([&] { (void)registry.create(name, args); });
      CHECK_THAT(msg, Contains("cfg.json: policy.params.no_such_param: unknown key"));
      for (const auto& s : specs) CHECK_THAT(msg, Contains(s.name));
    }
  }
  CHECK(registry.params("olympian").size() >= 8);
}

TEST_CASE("ParamReader reads through the declaration", "[schema]") {
  const gpumux::ParamSpecs specs{
      gpumux::param::integer("depth", 2, "ops in flight"),
      gpumux::param::duration("quantum_us", TimeUnit::Microseconds, 1000.0, "turn length"),
      gpumux::param::duration("handoff_us", TimeUnit::Microseconds, std::nullopt, "wake-up"),
      gpumux::param::choice("p", gpumux::kPrecisionNames, gpumux::Precision::Fp32, "precision"),
      gpumux::param::flag("on", true, "switch")};
  const json given = json::parse(R"({"quantum_us": 0.0625, "p": "bf16"})");
  gpumux::ParamReader p(given, "cfg.json", "policy.params", specs);
  CHECK(p.integer("depth") == 2);
  CHECK(p.duration("quantum_us") == 63);
  CHECK_FALSE(p.optional_duration("handoff_us").has_value());
  CHECK(p.choice("p", gpumux::kPrecisionNames) == gpumux::Precision::Bf16);
  CHECK(p.flag("on"));
  CHECK_NOTHROW(p.finish());
  // Reading an undeclared name, or a declared one as another type, is a programming error.
  CHECK_THROWS_AS(p.integer("undeclared"), gpumux::Error);
  CHECK_THROWS_AS(p.flag("depth"), gpumux::Error);

  const std::string listing = gpumux::describe_params(specs, "  ");
  CHECK_THAT(listing, Contains("quantum_us"));
  CHECK_THAT(listing, Contains("duration [us]"));
  CHECK_THAT(listing, Contains("default 1000.0"));
  CHECK_THAT(listing, Contains("choice {fp32|tf32|fp16|bf16}"));
  CHECK_THAT(listing, Contains("default -"));  // handoff_us: no default
}

TEST_CASE("ParamReader's range readers name the key and the range", "[schema]") {
  const gpumux::ParamSpecs specs{gpumux::param::integer("n", 4, "count"),
                                 gpumux::param::number("f", "", 0.5, "fraction")};
  const auto error = [&](const char* given, auto&& read) {
    const json params = json::parse(given);
    gpumux::ParamReader p(params, "cfg.json", "policy.params", specs);
    try {
      read(p);
    } catch (const gpumux::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // Defaults inside the range pass; the ends given belong to it or not as `Ends` says.
  CHECK(error("{}", [](gpumux::ParamReader& p) { CHECK(p.integer_in("n", 1, 4) == 4); }) ==
        "no error");
  CHECK(error(R"({"f": 1})", [](gpumux::ParamReader& p) {
          CHECK(p.number_in("f", 0.0, 1.0, gpumux::Ends::OpenLow) == 1.0);
        }) == "no error");
  CHECK_THAT(error(R"({"n": 0})", [](gpumux::ParamReader& p) { (void)p.integer_in("n", 1, 4); }),
             Equals("cfg.json: policy.params.n: must be an integer in [1, 4], got 0"));
  CHECK_THAT(error(R"({"n": 1})", [](gpumux::ParamReader& p) { (void)p.integer_at_least("n", 2); }),
             Equals("cfg.json: policy.params.n: must be an integer >= 2, got 1"));
  CHECK_THAT(error(R"({"f": 0})",
                   [](gpumux::ParamReader& p) {
                     (void)p.number_in("f", 0.0, 0.5, gpumux::Ends::OpenLow);
                   }),
             Equals("cfg.json: policy.params.f: must be in (0, 0.5]"));
  CHECK_THAT(
      error(R"({"f": 1})",
            [](gpumux::ParamReader& p) { (void)p.number_in("f", 0.0, 1.0, gpumux::Ends::Open); }),
      Equals("cfg.json: policy.params.f: must be in (0, 1)"));
  CHECK_THAT(
      error(R"({"f": 101})", [](gpumux::ParamReader& p) { (void)p.number_in("f", 0.0, 100.0); }),
      Equals("cfg.json: policy.params.f: must be in [0, 100]"));
}

TEST_CASE("jobs and services read their shared fields by one rule", "[schema]") {
  // batch and arrival_s default to 1 and 0 for a JSONL/config job, as for a service.
  const json j =
      json::parse(R"({"name": "t", "kind": "training", "model": "resnet50", "iterations": 3})");
  const gpumux::JobSpec job = gpumux::parse_job(j, "jobs.jsonl", "line 1", {});
  CHECK(job.batch == 1);
  CHECK(job.arrival_ns == 0);
  CHECK(job.tenant == "t");

  const json svc = json::parse(R"({"name": "s", "model": "resnet50", "batch": 4,
      "arrival_s": 0.5, "slo_ms": 0.0625, "priority": 3, "weight": 2.5,
      "expected_duration_s": 2})");
  JsonReader r(svc, "cfg.json", "workload.services[0]");
  gpumux::JobSpec spec;
  spec.kind = gpumux::JobKind::Inference;
  gpumux::read_job_fields(r, spec, /*read_kind=*/false);
  CHECK_NOTHROW(r.finish());
  CHECK(spec.batch == 4);
  CHECK(spec.arrival_ns == 500'000'000);
  CHECK(spec.slo_ns == 62'500);
  CHECK(spec.priority == 3);
  CHECK(spec.weight == 2.5);
  CHECK(spec.expected_duration_ns == 2'000'000'000);

  const json bad = json::parse(R"({"name": "s", "model": "resnet50", "batch": 0})");
  JsonReader rb(bad, "cfg.json", "workload.services[1]");
  CHECK_THAT(config_error([&] { gpumux::read_job_fields(rb, spec, false); }),
             Contains("cfg.json: workload.services[1].batch: must be an integer in [1, 1048576], "
                      "got 0"));
}
