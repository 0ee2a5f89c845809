// Platform "emulated"'s configuration checks. (Policy conformance on "emulated" runs in
// tests/conformance/test_conformance.cpp, parameterised over platforms.)
#include <catch2/catch.hpp>

#include "gpumux/errors.hpp"
#include "test_support.hpp"

using namespace gpumux;

namespace {

// Short on purpose: a whole policy run takes a few hundred ms of wall time. Small models, so
// that a policy running them on the CPU device (real Eigen compute) stays quick, also in
// sanitizer builds.
nlohmann::json short_workload() {
  return {{"jobs",
           {{{"name", "train-vae"},
             {"kind", "training"},
             {"model", "vae"},
             {"batch", 4},
             {"arrival_s", 0.0},
             {"iterations", 3}},
            {{"name", "svc-mobilenet"},
             {"kind", "inference"},
             {"model", "mobilenet_v2"},
             {"batch", 1},
             {"arrival_s", 0.0},
             {"requests", {0.005, 0.02, 0.04}},
             {"slo_ms", 50},
             {"priority", 10}},
            {{"name", "svc-seq2seq"},
             {"kind", "inference"},
             {"model", "seq2seq"},
             {"batch", 2},
             {"arrival_s", 0.01},
             {"requests", {0.012, 0.03}}}}}};
}

}  // namespace

TEST_CASE("platform emulated rejects unknown or invalid parameters", "[realtime]") {
  auto doc = test::make_config("exclusive", short_workload());
  doc["platform"] = "emulated";
  doc["platform_params"] = {{"host_arena_mb", 64}};
  CHECK_THROWS_AS(test::run_config(doc), ConfigError);
  doc["platform_params"] = {{"time_scale", -1}};
  CHECK_THROWS_AS(test::run_config(doc), ConfigError);
}
