// For test_invalid_commands.cpp (and any later test of what the Context refuses): the ids its
// test policy names, the config it runs and a memory comparison.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/api/ids.hpp"
#include "gpumux/model/memory.hpp"
#include "test_support.hpp"

namespace gpumux::test {

inline constexpr DeviceId kGpu{0};
inline constexpr DeviceId kCpu{1};
inline constexpr DeviceId kUnknownDevice{9};
inline constexpr JobId kTrain{0};
inline constexpr JobId kSvc{1};
inline constexpr JobId kUnknownJob{99};
inline constexpr StreamId kUnknownStream{999};

/// A V100 and a CPU (or `devices`); "train" (VAE, 2 iterations) arrives at 0 and "svc"
/// (AlexNet, one request at 20 ms) at 10 ms, under `policy`.
inline nlohmann::json invalid_command_config(const std::string& policy,
                                             std::vector<std::string> devices = {"v100-pcie3x16",
                                                                                 "xeon-2x18"}) {
  nlohmann::json workload = {{"jobs",
                              {{{"name", "train"},
                                {"kind", "training"},
                                {"model", "vae"},
                                {"batch", 8},
                                {"arrival_s", 0.0},
                                {"iterations", 2}},
                               {{"name", "svc"},
                                {"kind", "inference"},
                                {"model", "alexnet"},
                                {"batch", 1},
                                {"arrival_s", 0.01},
                                {"requests", {0.02}}}}}};
  nlohmann::json doc = make_config(policy, workload, std::move(devices));
  doc["horizon_s"] = 5.0;
  return doc;
}

/// Whether nothing was allocated or freed between two snapshots.
inline bool same_memory(const MemoryStats& a, const MemoryStats& b) {
  return a.in_use_bytes == b.in_use_bytes && a.allocations == b.allocations &&
         a.failures == b.failures && a.largest_free_bytes == b.largest_free_bytes;
}

}  // namespace gpumux::test
