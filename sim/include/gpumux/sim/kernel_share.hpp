// Kernel-level sharing of one GPU context (streams of a process, or MPS clients): how much
// each co-running op is slowed because its kernels wait for other ops' running blocks.
//
// The hardware rule (NVIDIA MPS guide, docs.nvidia.com/deploy/mps, "Architecture"; CUDA driver API
// cuStreamCreateWithPriority: priorities "do not preempt already-running work"; R. Crovella in the
// NVIDIA developer forum thread "how high priority stream preemption"): a kernel's blocks are
// placed only on SMs with free resources, and running blocks are never preempted, neither between
// streams nor between MPS clients; stream priority only picks which *pending* blocks go next. So a
// kernel that arrives while another op's kernel fills every SM waits for that kernel to retire (a
// higher-priority kernel: only for its running wave). Kernels that leave SMs free run beside each
// other; the compute capacity is then shared by occupancy (fluid_share.hpp).
//
// Analytic form (our approximation of block placement): an op's kernel that arrives at a
// random instant of op j waits on average r_j x w_j, where w_j is op j's expected residual of
// GPU-filling kernels when alone (OpSpec::kernel_wait_ns, computed by CostModel::op_kernels
// from the per-layer kernel durations) and r_j the speed op j runs at (its timeline stretches
// by 1 / r_j, so the chance of meeting one of its kernels shrinks by r_j). Op i then needs
//   G_i + K_i x sum_j r_j w_j        of device time, against its solo S_i = max(G_i, H_i)
// (G: device busy time alone, K: kernels, H: host launch time, which overlaps the waits), so
//   r_i = S_i / max(S_i, G_i + K_i x sum_j r_j w_j).
// The speeds are the fixed point of these equations. With one stream priority every op waits
// for the same total sum_j r_j w_j minus its own term, so the fixed point is one scalar
// equation in that total (solved by safeguarded Newton); with several priorities, damped
// iteration. tests/sim checks this
// against a per-kernel block-scheduling simulation on small cases.
//
// Pure, deterministic, allocation-free; O(n) per Newton step when all ops share one stream
// priority, O(n^2) per iteration otherwise.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
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

namespace detail {

// Op j's speed when the waits of all ops add up to `total` = sum_k r_k w_k (its own term
// included, so it waits for total - r w): the root in (0, 1] of r = S / (G + K (total - r w)),
// i.e. K w r^2 - (G + K total) r + S = 0 (smaller root, in its cancellation-free form).
// `slope` gets dr / dtotal (0 where r = 1).
inline double speed_at(const KernelLoad& a, double total, double* slope) noexcept {
  *slope = 0;
  if (a.kernels <= 0 || a.solo_ns <= 0) return 1.0;
  const double gpu = a.gpu_ns > 0 ? a.gpu_ns : a.solo_ns;
  if (gpu + a.kernels * std::fmax(total - a.wait_ns, 0.0) <= a.solo_ns) return 1.0;
  const double b = gpu + a.kernels * total;
  const double disc = std::fmax(b * b - 4 * a.kernels * a.wait_ns * a.solo_ns, 0.0);
  const double r = std::fmin(2 * a.solo_ns / (b + std::sqrt(disc)), 1.0);
  const double denom = 2 * a.kernels * a.wait_ns * r - b;  // < 0 on the smaller root
  if (denom < 0) *slope = a.kernels * r / denom;
  return r;
}

// Whether two loads are bit-for-bit equal (speed_at then gives them the same speed and slope).
inline bool same_load(const KernelLoad& a, const KernelLoad& b) noexcept {
  const auto bits = [](double v) { return std::bit_cast<std::uint64_t>(v); };
  return bits(a.solo_ns) == bits(b.solo_ns) && bits(a.gpu_ns) == bits(b.gpu_ns) &&
         bits(a.kernels) == bits(b.kernels) && bits(a.wait_ns) == bits(b.wait_ns) &&
         bits(a.wait_priority_ns) == bits(b.wait_priority_ns) && a.priority == b.priority;
}

}  // namespace detail

/// Writes speeds[i] in (0, 1]: op i's progress rate from kernel waits alone. speeds.size()
/// must equal ops.size(). An op with no kernels (K = 0) or no co-runner keeps speed 1.
/// `total_hint` (optional, in/out): the previous solution's total of waits, a warm start for
/// the next call on a similar set of ops (a device's consecutive events change one op).
inline void kernel_wait_speeds(std::span<const KernelLoad> ops, std::span<double> speeds,
                               double* total_hint = nullptr) noexcept {
  const std::size_t n = ops.size();
  for (std::size_t i = 0; i < n; ++i) speeds[i] = 1.0;
  if (n < 2) return;
  bool one_priority = true;
  for (std::size_t i = 1; i < n; ++i)
    one_priority = one_priority && ops[i].priority == ops[0].priority;
  if (one_priority) {
    // Every op sees the same total of waits: solve the scalar equation h(T) = sum_j w_j r_j(T)
    // - T = 0 (h decreases from h(0) >= 0 to h(sum w) <= 0) by Newton steps kept inside a
    // shrinking bracket. O(n) per step, a handful of steps: Salus runs dozens of lanes.
    double lo = 0, hi = 0;
    for (const KernelLoad& a : ops) hi += a.wait_ns;
    if (hi <= 0) return;
    double t = total_hint != nullptr && *total_hint > 0 && *total_hint < hi ? *total_hint : hi;
    for (int it = 0; it < 100; ++it) {
      double h = -t, dh = -1, slope = 0, r = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const KernelLoad& a = ops[i];
        // Runs of equal loads (a lane per job of one model) share one speed_at: the same
        // values, added in the same order.
        if (i == 0 || !detail::same_load(a, ops[i - 1])) r = detail::speed_at(a, t, &slope);
        h += a.wait_ns * r;
        dh += a.wait_ns * slope;
      }
      if (h > 0)
        lo = t;
      else
        hi = t;
      if (std::fabs(h) <= 1e-12 * (1 + t) || hi - lo <= 1e-12 * (1 + hi)) break;
      const double newton = t - h / dh;
      t = newton > lo && newton < hi ? newton : 0.5 * (lo + hi);
    }
    double slope = 0;
    for (std::size_t i = 0; i < n; ++i) speeds[i] = detail::speed_at(ops[i], t, &slope);
    if (total_hint != nullptr) *total_hint = t;
    return;
  }
  // Several priorities: a higher-priority kernel sees the wave residual of lower-priority ops.
  // Damped Jacobi iteration (each speed falls as the others rise, so the plain map can
  // oscillate); prioritised scenarios run few ops at once.
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
      const double next = 0.5 * (speeds[i] + target);
      change = std::fmax(change, std::fabs(next - speeds[i]));
      speeds[i] = next;
    }
    if (change < kTolerance) break;
  }
}

}  // namespace gpumux
