// Platform "emulated"'s configuration checks. (Policy conformance on "emulated" runs in
// tests/conformance/test_conformance.cpp, parameterised over platforms.)
#include <catch2/catch.hpp>

#include "gpumux/api/errors.hpp"
#include "test_support.hpp"

using namespace gpumux;

namespace {

// One small job: the platform's parameters are refused before anything runs.
nlohmann::json one_job() {
  return {{"jobs",
           {{{"name", "train-vae"},
             {"kind", "training"},
             {"model", "vae"},
             {"batch", 4},
             {"iterations", 1}}}}};
}

}  // namespace

TEST_CASE("platform emulated rejects unknown or invalid parameters", "[realtime]") {
  auto doc = test::make_config("exclusive", one_job());
  doc["platform"] = "emulated";
  doc["platform_params"] = {{"host_arena_mb", 64}};
  CHECK_THROWS_AS(test::run_config(doc), ConfigError);
  CHECK_THROWS_WITH(test::run_config(doc), Catch::Contains("host_arena_mb"));
  doc["platform_params"] = {{"time_scale", -1}};
  CHECK_THROWS_AS(test::run_config(doc), ConfigError);
  CHECK_THROWS_WITH(test::run_config(doc), Catch::Contains("time_scale"));
}
