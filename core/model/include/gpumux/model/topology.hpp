// A cluster's shape: `nodes` machines of `gpus_per_node` identical GPUs each, one
// link kind between GPUs of a node and one network between nodes. GPUs are numbered
// node-major: DeviceId i is GPU (i % gpus_per_node) of node (i / gpus_per_node), the order in
// which the config's "cluster" object expands into the devices list (docs/configuration.md).
//
// Units: bandwidth in Gbit/s (= bits per ns), latency in ns. Thread rules: plain values.
#pragma once

#include <cstdint>

#include "gpumux/api/ids.hpp"
#include "gpumux/api/time.hpp"

namespace gpumux {

/// One kind of link: a message of b bytes over it takes latency_ns + 8 b / gbit_per_s ns.
struct Link {
  double gbit_per_s = 0;      ///< bandwidth, Gbit/s (bits per ns), > 0
  DurationNs latency_ns = 0;  ///< per message (one step of a ring), >= 0

  friend bool operator==(const Link&, const Link&) = default;
};

struct Topology {
  std::uint32_t nodes = 1;          ///< >= 1
  std::uint32_t gpus_per_node = 1;  ///< >= 1
  Link intra_node;                  ///< between two GPUs of one node (PCIe or NVLink)
  Link network;                     ///< between nodes (one NIC per node)

  /// nodes x gpus_per_node: the number of devices the cluster expands to.
  [[nodiscard]] std::uint32_t gpu_count() const noexcept { return nodes * gpus_per_node; }
  /// The node holding `gpu` (node-major numbering). `gpu` must be < gpu_count().
  [[nodiscard]] std::uint32_t node_of(DeviceId gpu) const noexcept {
    return static_cast<std::uint32_t>(raw(gpu)) / gpus_per_node;
  }

  friend bool operator==(const Topology&, const Topology&) = default;
};

// Defaults for links a config does not describe (docs/configuration.md, "cluster").
//
// Per-step latencies of a ring: NCCL's own cost model, NVIDIA/nccl src/graph/tuning.cc
// (commit 01afd20a), table hwLat, algorithm Ring, protocol Simple (the protocol NCCL picks for
// the large gradient buffers of data-parallel training): NVLink 3.4 us, PCI 5.7 us, network
// 9.6 us per step.
inline constexpr DurationNs kRingStepLatencyNvlinkNs = 3'400;
inline constexpr DurationNs kRingStepLatencyPcieNs = 5'700;
inline constexpr DurationNs kRingStepLatencyNetworkNs = 9'600;
/// 10 GbE between nodes: the Fluid paper's Chameleon Cloud nodes (Fluid, MLSys'21, §6.1).
/// The line rate; TCP reaches somewhat less (assumption: not derated).
inline constexpr double kTenGbeGbitPerS = 10.0;

}  // namespace gpumux
