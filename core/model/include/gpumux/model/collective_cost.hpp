// Cost of data-parallel training across GPUs: the gradient all-reduce of a ring
// over the links of a Topology, and one data-parallel iteration built from it.
//
// Ring all-reduce (Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
// workstations", JPDC 69(2), 2009; the ring NCCL runs, NVIDIA/nccl src/graph/tuning.cc counts
// its 2 (w - 1) steps): w GPUs in a ring, the buffer cut into w chunks; w - 1 reduce-scatter
// steps then w - 1 all-gather steps, each GPU sending one chunk (bytes / w) to its successor
// per step, all at once. A step ends when its slowest transfer does, so with the ring's
// bottleneck link (bandwidth B, per-message latency L):
//     T = 2 (w - 1) (L + bytes / (w B)) = 2 (w - 1) / w * bytes / B + 2 (w - 1) L.
// The bottleneck is the slowest link kind the ring crosses:
// the intra-node link when all w GPUs share a node, else the network and, where a node holds
// two or more of them, the intra-node link too; of those, the one whose step L + bytes/(w B) is
// longer. The ring visits GPUs in node-major order, so it has one network edge per node used
// and each node's NIC carries one flow out and one in (no NIC sharing modelled). NCCL's own
// model refines this: only its 2 (nodes - 1) inter-node steps pay the network latency.
//
// Units: bytes, ns, Gbit/s (bits per ns). Thread rules: pure functions.
#pragma once

#include <cstdint>
#include <span>

#include "gpumux/api/ids.hpp"
#include "gpumux/api/time.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "gpumux/model/topology.hpp"

namespace gpumux {

/// Ring all-reduce of `bytes` over `gpus` GPUs whose every step crosses `bottleneck`:
/// 2 (w - 1) / w * 8 bytes / gbit_per_s + 2 (w - 1) latency_ns, rounded to the nearest ns and
/// clamped to kMaxDurationNs. 0 for w <= 1 (nothing to exchange) or bytes == 0.
[[nodiscard]] DurationNs ring_allreduce_ns(std::uint64_t bytes, std::uint32_t gpus,
                                           const Link& bottleneck) noexcept;

/// The link kinds a node-major ring over `gpus` crosses.
struct RingCrossing {
  bool intra_node = false;  ///< some node holds two or more of the GPUs
  bool network = false;     ///< the GPUs span two or more nodes
};

/// Which links a ring over `gpus` (distinct devices of `topology`) crosses. Throws
/// std::invalid_argument for a device outside the topology or a repeated device.
[[nodiscard]] RingCrossing ring_crossing(const Topology& topology, std::span<const DeviceId> gpus);

/// The ring's bottleneck for an all-reduce of `bytes`: of the links it crosses, the one with
/// the longer step (latency + bytes / gpus over its bandwidth); the intra-node link when it
/// crosses none (one GPU). Throws as ring_crossing.
[[nodiscard]] Link ring_bottleneck(const Topology& topology, std::span<const DeviceId> gpus,
                                   std::uint64_t bytes);

/// ring_allreduce_ns over the ring's bottleneck. Throws as ring_crossing.
[[nodiscard]] DurationNs ring_allreduce_ns(const Topology& topology, std::span<const DeviceId> gpus,
                                           std::uint64_t bytes);

/// Bytes a data-parallel step all-reduces: the model's gradients, one per weight element, as
/// the training memory layout counts them (op.hpp: gradients are weight_bytes long; buffers
/// such as BatchNorm statistics are included, which DDP broadcasts each step anyway). Halved in
/// fp16 / bf16, as the cost model halves weight bytes (a model trained in half precision).
[[nodiscard]] std::uint64_t gradient_bytes(const Model& model, Precision precision) noexcept;

/// Samples per GPU when `batch` samples are split over `gpus` (> 0): ceil(batch / gpus), the
/// share of the most loaded GPU, which the synchronous step waits for.
[[nodiscard]] std::uint32_t per_gpu_batch(std::uint32_t batch, std::uint32_t gpus) noexcept;

/// One data-parallel iteration: the compute of one GPU at its per-GPU batch (forward, backward,
/// update; the caller computes it with the cost model at per_gpu_batch) plus the gradient
/// all-reduce. Assumption: compute and communication do not overlap (overlap = 0, the default:
/// the all-reduce runs after the backward pass, as a plain synchronous step does). `overlap` in
/// [0, 1] is the fraction of the all-reduce hidden behind compute when gradients are reduced in
/// buckets during the backward pass (PyTorch DDP, Li et al., VLDB 2020); 1 gives
/// max(compute, all-reduce). Values outside [0, 1] are clamped.
[[nodiscard]] DurationNs data_parallel_iteration_ns(DurationNs compute_ns, DurationNs allreduce_ns,
                                                    double overlap = 0.0) noexcept;

/// The profile's own GPU-to-GPU link (the intra-node default, D39): link.peer_gbps (GB/s) x 8
/// = Gbit/s, with NCCL's per-step latency of NVLink or PCIe by the link's kind (topology.hpp).
/// gbit_per_s is 0 for a profile without a peer link.
[[nodiscard]] Link intra_node_default(const DeviceProfile& p);

}  // namespace gpumux
