// Harness: a JSONL job file (parse_jobs_jsonl_text; request files resolve in the fixture root).
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "gpumux/io/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto root = gpumux::fuzz::root();
  gpumux::fuzz::input_errors_only([&] {
    (void)gpumux::parse_jobs_jsonl_text(gpumux::fuzz::as_text(data, size), "jobs.jsonl", root);
  });
  return 0;
}
