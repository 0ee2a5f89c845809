// platform_params of platform "cuda", checked without CUDA (both the real platform and the
// stub of builds without nvcc parse them first): defaults follow the experiment, overrides
// apply, bad values name the file and the key.
#include <catch2/catch.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/backend/cuda_platform_params.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/model/model.hpp"
#include "test_support.hpp"

using namespace gpumux;

namespace {

PlatformSetup setup_with(const ModelCatalog& models, nlohmann::json params) {
  PlatformSetup s;
  s.models = &models;
  s.workload_models = {"resnet152", "resnet50"};
  s.precision = Precision::Bf16;
  s.config_file = "exp.json";
  s.params = std::move(params);
  return s;
}

std::string error_of(const PlatformSetup& s) {
  try {
    (void)parse_cuda_platform_params(s);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("cuda platform params default to the experiment's precision and models", "[realtime]") {
  const ModelCatalog models(test::source_dir() / "traces" / "models");
  const CudaPlatformParams p =
      parse_cuda_platform_params(setup_with(models, nlohmann::json::object()));
  CHECK(p.precision == Precision::Bf16);
  CHECK(p.preload == std::vector<std::string>{"resnet152", "resnet50"});
  CHECK(p.gpus.empty());
  CHECK(p.arena_gib == 0);
  CHECK(p.margin_gib == 2);
  CHECK(p.workspace_mib == 640);
  CHECK(p.cpu_region_mib == 16);
}

TEST_CASE("cuda platform params override the defaults", "[realtime]") {
  const ModelCatalog models(test::source_dir() / "traces" / "models");
  const CudaPlatformParams p =
      parse_cuda_platform_params(setup_with(models, {{"precision", "fp32"},
                                                     {"preload", {"bert_base_seq251"}},
                                                     {"gpus", {1, 0}},
                                                     {"arena_gib", 12.5},
                                                     {"margin_gib", 1},
                                                     {"workspace_mib", 64}}));
  CHECK(p.precision == Precision::Fp32);
  CHECK(p.preload == std::vector<std::string>{"bert_base_seq251"});
  CHECK(p.gpus == std::vector<int>{1, 0});
  CHECK(p.arena_gib == 12.5);
  CHECK(p.margin_gib == 1);
  CHECK(p.workspace_mib == 64);
  CHECK(parse_cuda_platform_params(setup_with(models, {{"preload", "none"}})).preload.empty());
  CHECK(parse_cuda_platform_params(setup_with(models, {{"preload", "all"}})).preload ==
        models.names());
}

TEST_CASE("bad cuda platform params name the file and the key", "[realtime]") {
  const ModelCatalog models(test::source_dir() / "traces" / "models");
  struct Case {
    nlohmann::json params;
    const char* key;
  };
  const std::vector<Case> cases = {
      {{{"bogus", 1}}, "platform_params.bogus"},
      {{{"precision", "fp8"}}, "platform_params.precision"},
      {{{"preload", "some"}}, "platform_params.preload"},
      {{{"preload", {"resnet5000"}}}, "resnet5000"},
      {{{"gpus", {-1}}}, "platform_params.gpus"},
      {{{"arena_gib", -1}}, "platform_params.arena_gib"},
      {{{"workspace_mib", 8}}, "platform_params.workspace_mib"},
  };
  for (const Case& c : cases) {
    const std::string msg = error_of(setup_with(models, c.params));
    INFO(c.params.dump() << " -> " << msg);
    CHECK(msg.find("exp.json") != std::string::npos);
    CHECK(msg.find(c.key) != std::string::npos);
  }
}
