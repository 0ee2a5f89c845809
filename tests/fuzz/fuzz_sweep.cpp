// Harness: a sweep file (parse_sweep_text: parsing and expansion of the points, no files),
// with and without its "quick" section.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "sweep_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(gpumux::fuzz::as_text(data, size));
  for (const bool quick : {false, true}) {
    gpumux::fuzz::input_errors_only(
        [&] { (void)gpumux::cli::parse_sweep_text(text, "sweep.json", quick); });
  }
  return 0;
}
