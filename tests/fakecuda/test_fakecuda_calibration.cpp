// `gpumux calibrate` on the CUDA test double (D37): the profile it writes says which
// precision its per-layer times were measured in (fp32, the executor's), so the cost model
// applies them at fp32 only.
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "fakecuda_rig.hpp"
#include "gpumux/backend/calibration.hpp"
#include "gpumux/fakecuda/fakecuda.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/model/device_profile.hpp"

using namespace gpumux;
namespace fake = gpumux::fakecuda;

TEST_CASE("calibrate on fakecuda: the per-layer times are labelled with their precision, fp32",
          "[fakecuda]") {
  fake::reset();
  const std::filesystem::path root = GPUMUX_SOURCE_DIR;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "gpumux-fakecuda-calibration";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  CalibrationOptions o;
  o.device_name = "h100-sxm";
  o.out_file = dir / "h100-sxm.calibrated.json";
  o.base_profile = root / "traces" / "devices" / "h100-sxm.json";
  o.models_dir = root / "traces" / "models";
  o.models = {"resnet18"};
  o.batches = {1};
  o.quick = true;
  int rc = -1;
  fakecuda_test::within(std::chrono::seconds(120), [&] { rc = run_calibration(o); });
  REQUIRE(rc == 0);
  const DeviceProfile p = load_device_profile(o.out_file);
  CHECK(p.calibrated_precision == Precision::Fp32);
  REQUIRE(p.calibrated.count("resnet18") == 1);
  CHECK(p.calibrated.at("resnet18").count(1) == 1);
  std::filesystem::remove_all(dir);
  fake::reset();
}
