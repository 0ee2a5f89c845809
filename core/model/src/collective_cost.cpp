// Ring all-reduce over a topology's links and the data-parallel iteration built from it; the
// model and its sources are in collective_cost.hpp.
#include "gpumux/model/collective_cost.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpumux {
namespace {

// One ring step over `link`: latency + (bytes / gpus) * 8 / gbit_per_s, in ns (not rounded).
long double step_ns(std::uint64_t bytes, std::uint32_t gpus, const Link& link) {
  const long double chunk_bits = static_cast<long double>(bytes) * 8.0L / gpus;
  return static_cast<long double>(link.latency_ns) +
         chunk_bits / static_cast<long double>(link.gbit_per_s);
}

DurationNs round_clamped(long double ns) noexcept {
  if (!(ns < static_cast<long double>(kMaxDurationNs))) return kMaxDurationNs;
  return static_cast<DurationNs>(std::llround(ns));
}

}  // namespace

DurationNs ring_allreduce_ns(std::uint64_t bytes, std::uint32_t gpus,
                             const Link& bottleneck) noexcept {
  if (gpus <= 1 || bytes == 0) return 0;
  if (!(bottleneck.gbit_per_s > 0)) return kMaxDurationNs;
  // 2 (w - 1) steps of one chunk each (Patarasuk & Yuan 2009).
  return round_clamped(2.0L * (gpus - 1) * step_ns(bytes, gpus, bottleneck));
}

RingCrossing ring_crossing(const Topology& topology, std::span<const DeviceId> gpus) {
  std::vector<std::uint32_t> per_node(topology.nodes, 0);
  std::vector<bool> seen(topology.gpu_count(), false);
  RingCrossing crossing;
  std::uint32_t nodes_used = 0;
  for (const DeviceId gpu : gpus) {
    const std::size_t i = index_of(gpu);
    if (i >= seen.size()) {
      throw std::invalid_argument("device " + std::to_string(i) + " is outside the cluster (" +
                                  std::to_string(seen.size()) + " GPUs)");
    }
    if (seen[i]) throw std::invalid_argument("device " + std::to_string(i) + " repeated");
    seen[i] = true;
    std::uint32_t& count = per_node[topology.node_of(gpu)];
    if (++count == 1) ++nodes_used;
    if (count == 2) crossing.intra_node = true;
  }
  crossing.network = nodes_used >= 2;
  return crossing;
}

Link ring_bottleneck(const Topology& topology, std::span<const DeviceId> gpus,
                     std::uint64_t bytes) {
  const RingCrossing crossing = ring_crossing(topology, gpus);
  if (!crossing.network) return topology.intra_node;
  if (!crossing.intra_node) return topology.network;
  const auto w = static_cast<std::uint32_t>(gpus.size());
  // Both crossed: the longer step; ties go to the network (the usual bottleneck).
  return step_ns(bytes, w, topology.intra_node) > step_ns(bytes, w, topology.network)
             ? topology.intra_node
             : topology.network;
}

DurationNs ring_allreduce_ns(const Topology& topology, std::span<const DeviceId> gpus,
                             std::uint64_t bytes) {
  const Link link = ring_bottleneck(topology, gpus, bytes);
  return ring_allreduce_ns(bytes, static_cast<std::uint32_t>(gpus.size()), link);
}

std::uint64_t gradient_bytes(const Model& model, Precision precision) noexcept {
  const bool half = precision == Precision::Fp16 || precision == Precision::Bf16;
  return half ? model.weight_bytes() / 2 : model.weight_bytes();
}

std::uint32_t per_gpu_batch(std::uint32_t batch, std::uint32_t gpus) noexcept {
  if (gpus == 0) return batch;
  return batch / gpus + (batch % gpus != 0 ? 1 : 0);
}

DurationNs data_parallel_iteration_ns(DurationNs compute_ns, DurationNs allreduce_ns,
                                      double overlap) noexcept {
  const double f = std::clamp(std::isnan(overlap) ? 0.0 : overlap, 0.0, 1.0);
  const auto hidden = static_cast<DurationNs>(std::llround(f * static_cast<double>(allreduce_ns)));
  return saturating_add(compute_ns, allreduce_ns) - std::min(hidden, compute_ns);
}

// A peer rate above the host link's cannot be PCIe staged through the host, so it is NVLink
// (h100-sxm: 365 GB/s against 55 GB/s H2D); otherwise PCIe.
Link intra_node_default(const DeviceProfile& p) {
  const bool nvlink = p.peer_gbps > std::max(p.h2d_gbps, p.d2h_gbps);
  return Link{p.peer_gbps * 8.0, nvlink ? kRingStepLatencyNvlinkNs : kRingStepLatencyPcieNs};
}

}  // namespace gpumux
