// Harness: a whole experiment config file (parse_experiment_text against the fixture root),
// and, when it parses, the resolved JSON the run would write (dump() throws on bad UTF-8).
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "gpumux/io/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto root = gpumux::fuzz::root();
  gpumux::fuzz::input_errors_only([&] {
    const auto cfg =
        gpumux::parse_experiment_text(gpumux::fuzz::as_text(data, size), "fuzz.json", {}, root);
    (void)cfg.resolved.dump();
  });
  return 0;
}
