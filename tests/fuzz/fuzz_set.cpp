// Harness: --set overrides. The input is up to 8 assignments, one per line, applied to a
// fixed valid config, which is then parsed strictly and its resolved JSON dumped (as a run
// writes config.resolved.json).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "gpumux/io/config.hpp"

namespace {

const char* const kConfig = R"({
  "name": "fuzz", "seed": 3, "description": "d",
  "devices": [{"profile": "t4-pcie3x8", "memory_gib": 4}],
  "platform_params": {"a": [1, 2]},
  "policy": {"name": "fifo", "params": {"quantum_us": 100}},
  "workload": {
    "files": ["traces/workloads/mixed.jsonl"],
    "jobs": [{"name": "j", "kind": "inference", "model": "superres", "batch": 2,
              "arrival_s": 1, "requests": {"file": "traces/arrivals/steady.csv", "limit": 3}}],
    "services": [{"name": "p", "model": "superres",
                  "arrivals": {"generator": "poisson", "rate_per_s": 50, "count": 4}}]
  },
  "horizon_s": 10, "trace": false
})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto root = gpumux::fuzz::root();
  static const auto base = nlohmann::json::parse(kConfig);
  const std::string_view text = gpumux::fuzz::as_text(data, size);
  gpumux::fuzz::input_errors_only([&] {
    auto doc = base;
    std::size_t begin = 0;
    for (int n = 0; n < 8 && begin <= text.size(); ++n) {
      const auto end = std::min(text.find('\n', begin), text.size());
      gpumux::apply_override(doc, std::string(text.substr(begin, end - begin)), "fuzz.json");
      begin = end + 1;
    }
    const auto cfg = gpumux::parse_experiment(doc, "fuzz.json", root);
    (void)cfg.resolved.dump();
  });
  return 0;
}
