// mps: NVIDIA MPS. Every job runs in its own resident process as an MPS client; their
// kernels share the GPU spatially: blocks go where SMs are free, running blocks are never
// preempted.
//
// Faithfulness notes (the MPS baselines of PipeSwitch §6, netx-repo/PipeSwitch
// mps/server_nonstop.py, and of SwitchFlow Fig. 7): the training process runs continuously and the
// inference process keeps its model resident; the latency penalty is contention. Interference is
// the simulator's kernel-level model (sim/kernel_share.hpp: each kernel waits for the other
// clients' GPU-filling kernels to retire, then ops share SMs by occupancy, times mps_efficiency
// when co-running); all clients are one time-slice group. Processes do not share an allocator: jobs
// that do not fit are rejected with an out-of-memory reason (SwitchFlow observed MPS crashing so,
// Fig. 7).
#include "common/resident_sharing.hpp"
#include "gpumux/io/policy_registry.hpp"

namespace gpumux::policies {
namespace {

class Mps final : public ResidentSharing {
 public:
  explicit Mps(const PolicyArgs& args) : ResidentSharing(args, /*mps=*/true) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "mps"; }
};

GPUMUX_REGISTER_POLICY("mps", Mps, "resident processes sharing the GPU spatially via MPS");

}  // namespace
}  // namespace gpumux::policies
