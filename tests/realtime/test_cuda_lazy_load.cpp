// The CUDA backend is loaded only when platform "cuda" is used (backend/include/gpumux/backend/
// cuda_module.hpp): a simulated run must not map the CUDA runtime or cuBLAS into the process.
// ctest runs each test case in its own process, so nothing else loaded them before.
#include <link.h>

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/platform.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "test_support.hpp"

using namespace gpumux;

namespace {

std::vector<std::string> loaded_objects() {
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name);
        return 0;
      },
      &names);
  return names;
}

bool is_loaded(const std::string& fragment) {
  for (const std::string& name : loaded_objects()) {
    if (name.find(fragment) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a simulated run loads neither the CUDA runtime nor cuBLAS", "[realtime]") {
  auto doc = test::make_config("exclusive", {{"jobs",
                                              {{{"name", "t"},
                                                {"kind", "training"},
                                                {"model", "resnet18"},
                                                {"batch", 1},
                                                {"arrival_s", 0.0},
                                                {"iterations", 2}}}}});
  const ExperimentResult r = test::run_config(doc);
  REQUIRE(r.run.jobs_finished == 1);
  CHECK_FALSE(is_loaded("libcudart"));
  CHECK_FALSE(is_loaded("libcublas"));
  CHECK_FALSE(is_loaded("libgpumux_cuda"));
}

#ifdef GPUMUX_WITH_CUDA
TEST_CASE("platform cuda loads the CUDA backend library on first use", "[realtime]") {
  REQUIRE_FALSE(is_loaded("libgpumux_cuda"));
  PlatformSetup setup;
  setup.profiles.push_back(
      find_device_profile(test::source_dir() / "traces" / "devices", "v100-pcie3x16"));
  setup.params = nlohmann::json{{"preload", nlohmann::json::array()}};
  try {
    auto platform = PlatformRegistry::instance().create("cuda", setup);
  } catch (const DeviceUnavailable&) {
    // No GPU here: the library was loaded and its platform said so.
  }
  CHECK(is_loaded("libgpumux_cuda"));
  CHECK(is_loaded("libcudart"));
}
#endif
