// fakecuda internals (see include/gpumux/fakecuda/fakecuda.hpp for the model): the devices,
// their streams and engines, events, the fault counters. One mutex guards all of it; work runs
// outside it on the engine threads.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gpumux/fakecuda/fakecuda.hpp"

// The opaque handle types of the CUDA headers, defined by the double.
struct CUevent_st {
  int device = 0;
  std::uint64_t recorded = 0;   ///< generation of the last cudaEventRecord
  std::uint64_t completed = 0;  ///< generation whose marker reached its stream's head
  std::chrono::steady_clock::time_point when{};
};

namespace gpumux::fakecuda::detail {

enum class Engine : std::uint8_t { Compute, Copy, Host, Marker };

struct Task {
  Engine engine = Engine::Marker;
  std::function<void()> work;    ///< Compute, Copy, Host
  CUevent_st* record = nullptr;  ///< Marker: completes `record` at generation `gen`
  CUevent_st* wait = nullptr;    ///< Marker: waits until `wait` completed generation `gen`
  std::uint64_t gen = 0;
  std::uint64_t seq = 0;  ///< enqueue order over the device (oldest head first)
  bool fault = false;     ///< injected: sets the sticky error instead of working
  std::uint64_t ns = 0;   ///< modelled time to sleep after the work
};

}  // namespace gpumux::fakecuda::detail

struct CUstream_st {
  int device = 0;
  int priority = 0;
  std::uint64_t number = 0;
  bool blocking = true;  ///< created without cudaStreamNonBlocking (the null stream too)
  std::deque<gpumux::fakecuda::detail::Task> queue;
  bool running = false;  ///< an engine runs its head
};

namespace gpumux::fakecuda::detail {

struct Device {
  CUstream_st null_stream;
  std::vector<CUstream_st*> streams;  ///< including &null_stream
  std::uint64_t used = 0;
  cudaError_t sticky = cudaSuccess;
  bool held = false;
  std::vector<bool> peer_enabled;
  std::vector<std::thread> engines;
};

class State {
 public:
  State();
  ~State();
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  std::mutex mutex;
  std::condition_variable changed;  ///< any queue, event or sticky error changed
  Options options;
  std::vector<std::unique_ptr<Device>> devices;
  std::map<const void*, std::pair<std::size_t, int>> device_memory;  ///< ptr -> bytes, device
  std::map<const void*, std::size_t> host_memory;
  FaultKind fault = FaultKind::None;
  std::uint64_t fault_countdown = 0;
  Counters counts;
  std::vector<Executed> log;
  std::vector<GemmCall> gemms;
  std::uint64_t next_seq = 1, next_stream = 1;
  bool stopping = false;

  /// Requires the lock. Counts a call of `kind`; true when it is the injected fault.
  bool count_and_check(FaultKind kind);
  /// Requires the lock. Appends `t` to `s` and wakes the engines. The legacy null stream's
  /// order, as a host wait: work for the null stream waits until every blocking stream of the
  /// device is idle, work for a blocking stream until the null stream is (CUDA makes the GPU
  /// wait instead; the backend uses only non-blocking streams, which are never ordered).
  void enqueue(std::unique_lock<std::mutex>& lock, CUstream_st* s, Task t);
  /// Requires the lock. The device's sticky error: its queues are discarded.
  void set_sticky(Device& d, cudaError_t e);
  /// Requires the lock: whether `s` has nothing queued or running (or its device faulted).
  [[nodiscard]] bool drained(const CUstream_st* s) const;

  void start_engines(int devices);
  void stop_engines(std::unique_lock<std::mutex>& lock);

 private:
  void engine_loop(int device, Engine engine);
  /// Requires the lock. Completes record markers and satisfied waits at stream heads.
  void advance_markers(Device& d);
};

State& state();
/// The calling thread's current device (cudaSetDevice).
int& current_device();
/// `e` as the calling thread's last error (cudaGetLastError); returns it.
cudaError_t fail(cudaError_t e);
cudaError_t& thread_local_error();
/// Requires the lock. `stream`, or the current device's null stream for nullptr.
CUstream_st* resolve(State& s, cudaStream_t stream);
/// Enqueues `work` (then a sleep of `ns`) on `stream`'s compute engine (kind Launch) or copy
/// engine (kind Copy), counted for fault injection; the stream's sticky error if it has one.
cudaError_t enqueue_work(cudaStream_t stream, FaultKind kind, std::function<void()> work,
                         std::uint64_t ns);
/// Requires the lock. The sticky error of `device` (cudaSuccess when none or out of range).
cudaError_t sticky(int device);
[[nodiscard]] std::uint64_t now_ns();

}  // namespace gpumux::fakecuda::detail
