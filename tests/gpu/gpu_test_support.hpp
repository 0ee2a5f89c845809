// What the tests of platform cuda share (label gpu): the GPU check, the model catalog, a
// platform set-up on the h100-sxm profile and an observer that records each op's start and end.
#pragma once

#include <map>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "gpumux/api/device.hpp"
#include "gpumux/backend/cuda/cuda_platform.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "test_support.hpp"

namespace gpu_test {

inline void require_gpu() {
  if (gpumux::cuda_device_count() == 0) {
    FAIL(
        "no usable GPU: the [gpu] tests need one (run `ctest -L gpu` on a GPU machine; CI "
        "excludes them with `ctest -LE gpu`)");
  }
}

inline const gpumux::ModelCatalog& catalog() {
  static gpumux::ModelCatalog c(gpumux::test::source_dir() / "traces" / "models");
  return c;
}

/// One GPU on the h100-sxm profile with a 4 GiB arena and `params` (default: no preload).
inline gpumux::PlatformSetup gpu_setup(nlohmann::json params = {{"preload", "none"}}) {
  gpumux::PlatformSetup setup;
  setup.profiles.push_back(
      gpumux::find_device_profile(gpumux::test::source_dir() / "traces" / "devices", "h100-sxm"));
  setup.models = &catalog();
  params["arena_gib"] = 4;
  setup.params = params;
  return setup;
}

class Recorder final : public gpumux::DeviceObserver {
 public:
  void on_op_started(gpumux::OpId op, gpumux::TimeNs t) override { started[op] = t; }
  void on_op_finished(const gpumux::OpRecord& r) override {
    if (!ended.emplace(r.op, r).second) FAIL("op reported twice");
  }
  [[nodiscard]] bool is_complete(gpumux::OpId op) const noexcept override {
    const auto it = ended.find(op);
    return it != ended.end() && it->second.status == gpumux::OpStatus::Ok;
  }
  std::map<gpumux::OpId, gpumux::TimeNs> started;
  std::map<gpumux::OpId, gpumux::OpRecord> ended;
};

}  // namespace gpu_test
