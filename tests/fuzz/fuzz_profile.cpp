// Harness: a device-profile file (parse_device_profile_text), then every cost of the fixture
// root's model on the parsed profile (cost_checks.hpp).
#include <cstddef>
#include <cstdint>

#include "cost_checks.hpp"
#include "fuzz_support.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto model =
      gpumux::load_model(gpumux::fuzz::root() / "traces/models/superres.json");
  gpumux::fuzz::input_errors_only([&] {
    const auto profile =
        gpumux::parse_device_profile_text(gpumux::fuzz::as_text(data, size), "profile.json");
    gpumux::fuzz::check_costs(model, profile);
  });
  return 0;
}
