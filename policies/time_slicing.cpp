// time_slicing: default CUDA sharing. Every job runs in its own resident process; the GPU
// time-slices between their contexts (the profile's time slice, ~1 ms on Volta+, and its
// context-switch cost).
//
// Faithfulness notes: the "multi-process, no MPS" sharing every paper compares against; the
// 1.024 ms TSG slice is the driver default (NVIDIA/open-gpu-kernel-modules
// src/nvidia/src/kernel/gpu/fifo/arch/volta/kernel_fifo_gv100.c). Models stay resident; memory
// is not shared, so jobs that do not fit are rejected with an out-of-memory reason.
#include "common/resident_sharing.hpp"
#include "gpumux/io/policy_registry.hpp"

namespace gpumux::policies {
namespace {

class TimeSlicing final : public ResidentSharing {
 public:
  explicit TimeSlicing(const PolicyArgs& args) : ResidentSharing(args, /*mps=*/false) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "time_slicing"; }
};

GPUMUX_REGISTER_POLICY("time_slicing", TimeSlicing,
                       "resident processes time-sliced by the GPU (default CUDA sharing)");

}  // namespace
}  // namespace gpumux::policies
