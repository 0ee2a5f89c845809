// `platform: cuda` without a usable GPU fails with a typed error, never a crash: NotCompiled in
// builds without nvcc, DeviceUnavailable where CUDA was compiled but cudaGetDeviceCount finds
// no device. On a machine with a GPU the platform comes up instead (checked in tests/gpu).
#include <catch2/catch.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/platform.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "test_support.hpp"

using namespace gpumux;

TEST_CASE("platform cuda without a GPU throws DeviceUnavailable or NotCompiled", "[realtime]") {
  PlatformSetup setup;
  setup.profiles.push_back(
      find_device_profile(test::source_dir() / "traces" / "devices", "v100-pcie3x16"));
  setup.params = nlohmann::json{{"preload", nlohmann::json::array()}};
  REQUIRE(PlatformRegistry::instance().contains("cuda"));
  try {
    auto platform = PlatformRegistry::instance().create("cuda", setup);
    // A GPU is present: the platform works; nothing more to check here.
    SUCCEED("a GPU is available: " << platform->describe());
  } catch (const DeviceUnavailable& e) {
    CHECK(std::string(e.what()).find("GPU") != std::string::npos);
  } catch (const NotCompiled& e) {
    CHECK(std::string(e.what()).find("not compiled") != std::string::npos);
  }
}

TEST_CASE("gpumux run with platform cuda exits 1 when no GPU is usable", "[realtime]") {
  // The same through an experiment: the error is typed (the CLI maps it to exit status 1).
  auto doc = test::make_config("exclusive", {{"jobs",
                                              {{{"name", "t"},
                                                {"kind", "training"},
                                                {"model", "resnet18"},
                                                {"batch", 1},
                                                {"arrival_s", 0.0},
                                                {"iterations", 1}}}}});
  doc["platform"] = "cuda";
  doc["platform_params"] = {{"preload", nlohmann::json::array()}};
  try {
    const ExperimentResult r = test::run_config(doc);
    CHECK(r.run.jobs_finished == 1);  // a GPU was there
  } catch (const DeviceUnavailable&) {
    SUCCEED();
  } catch (const NotCompiled&) {
    SUCCEED();
  }
}
