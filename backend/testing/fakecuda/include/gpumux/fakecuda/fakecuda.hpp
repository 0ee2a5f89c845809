// fakecuda: a CPU TEST DOUBLE of the CUDA runtime, cuBLAS and gpumux's kernels (D52).
// It defines exactly the C entry points backend/cuda/ uses (`nm -u` on its objects) so the real
// backend sources, compiled against the CUDA headers without nvcc, run on a machine without a
// GPU. It is linked into test programs only, never into `gpumux` (a ctest checks with nm).
//
// Model (what a test may rely on):
// - Device memory is host memory (mmap, MAP_NORESERVE: untouched pages cost nothing); each
//   device has `memory_bytes` of it (cudaMemGetInfo, cudaMalloc fails beyond it).
// - A stream is an in-order queue. Each device has three engines, each one thread: compute
//   (kernels, GEMMs), copy (every memcpy), host (cudaLaunchHostFunc). An engine runs the
//   head of the most urgent stream whose head is its kind (CUDA priority: smaller is more
//   urgent; equal priorities: the oldest head first), so pending work of a higher-priority
//   stream goes first. Event records and stream waits act when they reach their stream's head.
// - Events are generation counters: cudaEventRecord bumps the event's generation, the marker
//   completes it; a query is ready when the last recorded generation completed.
// - The null stream is an ordinary stream of priority 0 (the backend uses non-blocking streams
//   only, which never synchronise with it).
// - Arithmetic: copies and the fill kernel always move real bytes. GEMMs (fp32 reference,
//   inputs fp32, bf16 or fp16) and the elementwise kernels compute only under
//   Arithmetic::Exact; under Arithmetic::Skip (default: model-sized runs stay fast) they only
//   take their paced time.
// - Faults (set by tests, or GPUMUX_FAKECUDA_FAULT=launch:N|copy:N|alloc:N at first use): the
//   Nth launch (kernel or GEMM) or copy counted from the setting faults when it executes: the
//   device gets a sticky cudaErrorIllegalAddress, its queues are discarded (no later work, no
//   host function runs, no event completes, as CUDA documents) and every later call on it
//   returns that error; the Nth allocation (cudaMalloc, cudaHostAlloc) returns
//   cudaErrorMemoryAllocation (not sticky). reset() clears a sticky error, which CUDA cannot.
// Thread rules: every function may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpumux::fakecuda {

enum class Arithmetic : std::uint8_t { Skip, Exact };
enum class FaultKind : std::uint8_t { None, Launch, Copy, Alloc };

struct Options {
  int devices = 1;
  /// Per device; 80 GiB: the H100 SXM's 80 GB HBM3 (NVIDIA H100 datasheet), rounded to GiB.
  std::uint64_t memory_bytes = std::uint64_t{80} << 30;
  Arithmetic arithmetic = Arithmetic::Skip;
  /// Modelled GPU time of each kernel or GEMM (0: none), slept on the compute engine.
  std::uint64_t kernel_ns = 0;
  /// Modelled copy bandwidth in bytes per ns = GB/s (0: as fast as memcpy), slept on the copy
  /// engine.
  double copy_gbps = 0.0;
};

/// Replaces the options (devices: at most 8) and clears faults, sticky errors and counters.
/// Call it between tests, when no stream has pending work.
void reset(const Options& options = {});

/// The `nth` (1-based) call of `kind` from now on fails (FaultKind::None: no fault).
void inject_fault(FaultKind kind, std::uint64_t nth);

/// Holds (true) or releases (false) every engine of `device`: work queues up but does not run
/// (a test of the order in which queued work then runs).
void hold(int device, bool held);

struct Counters {
  std::uint64_t launches = 0, copies = 0, allocations = 0, host_functions = 0;
  std::uint64_t device_bytes_in_use = 0;  ///< cudaMalloc'd and not yet freed, all devices
};
[[nodiscard]] Counters counters();

/// One executed launch, copy or host function, in the order the device ran them (for order tests).
struct Executed {
  int device;
  int priority;                    ///< CUDA priority of its stream
  std::uint64_t stream;            ///< the stream's creation number (0: a device's null stream)
  std::uint64_t start_ns, end_ns;  ///< steady_clock
  char kind;                       ///< 'k' kernel or GEMM, 'c' copy, 'h' host function
};
/// Everything executed since reset(), in order of completion.
[[nodiscard]] std::vector<Executed> execution_log();

/// One cuBLAS GEMM call as enqueued: its stream and the workspace its handle held then
/// (nullptr: cuBLAS's default pool, which cublasSetStream restores as cuBLAS documents).
struct GemmCall {
  std::uint64_t stream;  ///< the stream's creation number (0: a device's null stream)
  const void* workspace;
  std::size_t workspace_bytes;
};
/// Every GEMM enqueued since reset(), in call order (per-stream workspace tests).
[[nodiscard]] std::vector<GemmCall> gemm_calls();

}  // namespace gpumux::fakecuda
