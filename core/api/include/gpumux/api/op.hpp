// Ops: what a device executes, and the unit of preemption. A compute op runs a layer range of
// one model in one pass for one request or iteration; a copy op moves bytes over the host link;
// a host op is a host-side delay on a stream (process start, context creation, cudaMalloc).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "gpumux/api/enum_names.hpp"
#include "gpumux/api/ids.hpp"
#include "gpumux/api/time.hpp"
#include "gpumux/api/work.hpp"

namespace gpumux {

class Model;  // gpumux/model/model.hpp

enum class OpKind : std::uint8_t { Compute, CopyH2D, CopyD2H, CopyD2D, Host };
/// Names in events.jsonl and traces.
inline constexpr EnumNames<OpKind, 5> kOpKindNames{{{OpKind::Compute, "compute"},
                                                    {OpKind::CopyH2D, "h2d"},
                                                    {OpKind::CopyD2H, "d2h"},
                                                    {OpKind::CopyD2D, "d2d"},
                                                    {OpKind::Host, "host"}}};
[[nodiscard]] constexpr std::string_view to_string(OpKind k) noexcept {
  return kOpKindNames.name(k);
}
[[nodiscard]] constexpr bool is_copy(OpKind k) noexcept {
  return k == OpKind::CopyH2D || k == OpKind::CopyD2H || k == OpKind::CopyD2D;
}

/// What the op is for, so metrics and backends can tell weight loads from state migration.
enum class OpPurpose : std::uint8_t {
  Forward,       ///< compute: forward pass layers
  Backward,      ///< compute: backward pass layers
  Update,        ///< compute: optimizer step
  LoadWeights,   ///< copy: weights host -> device
  MigrateState,  ///< copy: training state between devices
  StartContext,  ///< host: process start and/or context creation
  Allocate,      ///< host: naive cudaMalloc calls
  Other,
  /// host: a data-parallel job's gradient all-reduce on one replica GPU (set_replicas). Timed
  /// by the ring's links, not by the GPU: NCCL's use of SMs and memory bandwidth is not modelled.
  AllReduce,
  /// host, zero length: waits for a data-parallel job's ops on all its replicas (a barrier).
  Barrier
};
inline constexpr EnumNames<OpPurpose, 10> kOpPurposeNames{
    {{OpPurpose::Forward, "forward"},
     {OpPurpose::Backward, "backward"},
     {OpPurpose::Update, "update"},
     {OpPurpose::LoadWeights, "load_weights"},
     {OpPurpose::MigrateState, "migrate_state"},
     {OpPurpose::StartContext, "start_context"},
     {OpPurpose::Allocate, "allocate"},
     {OpPurpose::Other, "other"},
     {OpPurpose::AllReduce, "all_reduce"},
     {OpPurpose::Barrier, "barrier"}}};
[[nodiscard]] constexpr std::string_view to_string(OpPurpose p) noexcept {
  return kOpPurposeNames.name(p);
}

/// Up to four ops this op waits for (on any device); allocation-free.
class DepList {
 public:
  static constexpr std::size_t kCapacity = 4;
  void add(OpId op);  ///< throws std::length_error beyond kCapacity; ignores duplicates
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] OpId operator[](std::size_t i) const noexcept { return ops_[i]; }
  [[nodiscard]] const OpId* begin() const noexcept { return ops_.data(); }
  [[nodiscard]] const OpId* end() const noexcept { return ops_.data() + size_; }

 private:
  std::array<OpId, kCapacity> ops_{};
  std::size_t size_ = 0;
};

struct OpSpec {
  OpId id{};
  JobId job{};
  DeviceId device{};
  StreamId stream{};
  OpKind kind = OpKind::Compute;
  OpPurpose purpose = OpPurpose::Other;

  // compute
  const Model* model = nullptr;
  LayerRange layers{};
  Pass pass = Pass::Forward;
  std::uint32_t batch = 1;
  bool inference = false;

  // copy
  std::uint64_t bytes = 0;
  bool pageable = false;
  DeviceId peer{};  ///< destination device of a CopyD2D

  // memory the op touches on its device (offsets into the device arena)
  /// Per-layer weight offsets on this device, indexed by layer (nullptr where memory is not
  /// tracked, e.g. on a CPU device); valid until the op finishes.
  const std::uint64_t* layer_offsets = nullptr;
  /// Bytes of state at each layer offset per weight byte: 1 (weights alone), or for training
  /// 2 + optimizer slots (weights, then gradients, then each slot, each weight_bytes long).
  std::uint32_t state_factor = 1;
  std::uint64_t weight_offset = 0;  ///< copies: destination offset of the first byte
  /// Copies leaving a GPU (CopyD2H, CopyD2D): offset of the first byte on the source device.
  std::uint64_t source_offset = 0;
  std::uint64_t activation_offset = 0;

  /// Predicted solo time on the device (compute, host ops); copies are timed by the link.
  DurationNs solo_ns = 0;
  /// Host-side cost paid before the op can start (e.g. naive cudaMalloc), ns.
  DurationNs setup_ns = 0;
  /// Fraction of the device the op can use alone, (0, 1].
  double demand = 1.0;

  // kernels (compute ops; all zero = unknown, the device then shares by `demand` alone)
  /// Kernels the op launches.
  std::uint32_t kernels = 0;
  /// Time the device is busy running the op alone (<= solo_ns; less when the op is bound by
  /// its host-side launch cost), ns. 0 = solo_ns.
  DurationNs gpu_ns = 0;
  /// Expected wait of another stream's kernel that needs SMs and arrives at a random instant
  /// while this op runs alone: the residual of this op's GPU-filling kernels (running blocks
  /// are not preempted), ns. `kernel_wait_priority_ns`: the same for a kernel of higher stream
  /// priority, which waits only for the running wave to retire. See CostModel::op_kernels.
  double kernel_wait_ns = 0;
  double kernel_wait_priority_ns = 0;
  DepList after;
};

enum class OpStatus : std::uint8_t { Ok, Dropped, Aborted };
inline constexpr EnumNames<OpStatus, 3> kOpStatusNames{
    {{OpStatus::Ok, "ok"}, {OpStatus::Dropped, "dropped"}, {OpStatus::Aborted, "aborted"}}};
[[nodiscard]] constexpr std::string_view to_string(OpStatus s) noexcept {
  return kOpStatusNames.name(s);
}

struct OpRecord {
  OpId op{};
  JobId job{};
  DeviceId device{};
  StreamId stream{};
  OpKind kind = OpKind::Compute;
  OpPurpose purpose = OpPurpose::Other;
  OpStatus status = OpStatus::Ok;
  LayerRange layers{};
  TimeNs submitted_ns = 0;
  TimeNs started_ns = 0;  ///< == finished_ns for ops dropped before they started
  TimeNs finished_ns = 0;
  [[nodiscard]] DurationNs duration_ns() const noexcept { return finished_ns - started_ns; }
};

/// Copies what names an op's place and work (job, device, stream, kind, purpose, layers) from
/// its spec to `to`: an OpRecord, or the engine's bookkeeping of the op.
template <class T>
constexpr void copy_op_identity(const OpSpec& spec, T& to) noexcept {
  to.job = spec.job;
  to.device = spec.device;
  to.stream = spec.stream;
  to.kind = spec.kind;
  to.purpose = spec.purpose;
  to.layers = spec.layers;
}

}  // namespace gpumux
