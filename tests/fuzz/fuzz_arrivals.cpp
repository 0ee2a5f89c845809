// Harness: an arrivals CSV (parse_arrivals_csv_text).
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "gpumux/io/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gpumux::fuzz::input_errors_only([&] {
    (void)gpumux::parse_arrivals_csv_text(gpumux::fuzz::as_text(data, size), "arrivals.csv");
  });
  return 0;
}
