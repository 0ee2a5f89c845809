// Kernel-level sharing of one GPU context (streams of a process, or MPS clients): how much
// each co-running op is slowed because its kernels wait for other ops' running blocks.
//
// The hardware rule (interference-anchors.md §1.1-1.3): a kernel's blocks are placed only on
// SMs with free resources, and running blocks are never preempted, neither between streams
// nor between MPS clients; stream priority only picks which *pending* blocks go next. So a
// kernel that arrives while another op's kernel fills every SM waits for that kernel to
// retire (a higher-priority kernel: only for its running wave). Kernels that leave SMs free
// run beside each other; the compute capacity is then shared by occupancy (fluid_share.hpp).
//
// Analytic form (anchors §1.7, "cheaper approximation"): an op's kernel that arrives at a
// random instant of op j waits on average r_j x w_j, where w_j is op j's expected residual of
// GPU-filling kernels when alone (OpSpec::kernel_wait_ns, computed by CostModel::op_kernels
// from the per-layer kernel durations) and r_j the speed op j runs at (its timeline stretches
// by 1 / r_j, so the chance of meeting one of its kernels shrinks by r_j). Op i then needs
//   G_i + K_i x sum_j r_j w_j        of device time, against its solo S_i = max(G_i, H_i)
// (G: device busy time alone, K: kernels, H: host launch time, which overlaps the waits), so
//   r_i = S_i / max(S_i, G_i + K_i x sum_j r_j w_j).
// The speeds are the fixed point of these equations, found by damped iteration (each map is
// decreasing in the others' speeds, so plain iteration can oscillate). tests/sim checks this
// against a per-kernel block-scheduling simulation on small cases.
//
// Pure, deterministic, allocation-free; O(n^2) per iteration for the few ops co-running.
#pragma once

#include <cmath>
#include <cstddef>
#include <span>

namespace gpumux {

/// One co-running compute op, in the units of OpSpec (ns).
struct KernelLoad {
  double solo_ns = 0;           ///< S: duration alone
  double gpu_ns = 0;            ///< G: device busy time alone (<= S)
  double kernels = 0;           ///< K: kernels launched
  double wait_ns = 0;           ///< w: residual another kernel waits for (equal/lower priority)
  double wait_priority_ns = 0;  ///< the same for a higher-priority kernel (running wave only)
  int priority = 0;             ///< stream priority, larger = more urgent
};

/// Writes speeds[i] in (0, 1]: op i's progress rate from kernel waits alone. speeds.size()
/// must equal ops.size(). An op with no kernels (K = 0) or no co-runner keeps speed 1.
inline void kernel_wait_speeds(std::span<const KernelLoad> ops, std::span<double> speeds) noexcept {
  const std::size_t n = ops.size();
  for (std::size_t i = 0; i < n; ++i) speeds[i] = 1.0;
  if (n < 2) return;
  constexpr int kMaxIterations = 64;
  constexpr double kTolerance = 1e-12;
  for (int it = 0; it < kMaxIterations; ++it) {
    double change = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const KernelLoad& a = ops[i];
      if (a.kernels <= 0 || a.solo_ns <= 0) continue;
      double wait = 0;
      for (std::size_t j = 0; j < n; ++j) {
        if (j == i) continue;
        const KernelLoad& b = ops[j];
        wait += speeds[j] * (a.priority > b.priority ? b.wait_priority_ns : b.wait_ns);
      }
      const double gpu = a.gpu_ns > 0 ? a.gpu_ns : a.solo_ns;
      const double need = gpu + a.kernels * wait;
      const double target = need > a.solo_ns ? a.solo_ns / need : 1.0;
      // Damped (Gauss-Seidel) step: converges where the plain map would oscillate.
      const double next = 0.5 * (speeds[i] + target);
      change = std::fmax(change, std::fabs(next - speeds[i]));
      speeds[i] = next;
    }
    if (change < kTolerance) break;
  }
}

}  // namespace gpumux
