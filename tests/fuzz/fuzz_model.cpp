// Harness: a model file (parse_model_text), then every cost of the parsed model on the
// fixture root's device profile (cost_checks.hpp).
#include <cstddef>
#include <cstdint>

#include "cost_checks.hpp"
#include "fuzz_support.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto profile =
      gpumux::load_device_profile(gpumux::fuzz::root() / "traces/devices/t4-pcie3x8.json");
  gpumux::fuzz::input_errors_only([&] {
    const auto model = gpumux::parse_model_text(gpumux::fuzz::as_text(data, size), "model.json");
    gpumux::fuzz::check_costs(model, profile);
  });
  return 0;
}
