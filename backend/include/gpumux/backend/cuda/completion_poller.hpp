// How a CudaDevice learns that an op ended on the GPU: one thread per device polls the end
// event of the oldest unfinished op of each stream (cudaEventQuery), in place of a
// cudaLaunchHostFunc host function per op.
//
// Why: on the H100 machine (first GPU session, 2026-11-25, docs/fidelity.md) a host function
// ran a median 95 us after its op's end event, most of the 134 us between two per-layer
// training ops of PipeSwitch (the simulator charges 7 us); a polled event is seen within a
// sweep. And CUDA does not call host functions once the context has a sticky error, so a
// faulted run waited forever; a query returns the error instead, and `done` receives it.
//
// Cost: while any op is watched, the thread sweeps without blocking (it yields between
// sweeps), i.e. one host core busy while the GPU works; with nothing watched it blocks.
//
// Thread rules: watch() from any thread (the launchers); `done` runs on the poller thread,
// once per watched op, in stream order per stream, and must not call back into the poller.
// stop() (and the destructor) joins the thread; ops still watched then get no `done`.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include <cuda_runtime.h>

namespace gpumux {

class CompletionPoller {
 public:
  /// `status` is cudaSuccess when the event completed, else the error the query returned.
  using Done = std::function<void(cudaError_t status)>;

  explicit CompletionPoller(int ordinal);
  ~CompletionPoller();
  CompletionPoller(const CompletionPoller&) = delete;
  CompletionPoller& operator=(const CompletionPoller&) = delete;

  /// Watches `end` (already recorded on the stream's CUDA stream; kept alive by the caller
  /// until `done` ran or the poller stopped). Ops of one stream must be watched in the order
  /// they were enqueued.
  void watch(std::uint32_t stream, cudaEvent_t end, Done done);
  void stop() noexcept;

 private:
  struct Watch {
    cudaEvent_t end = nullptr;
    Done done;
  };
  void loop() noexcept;

  int ordinal_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::uint32_t, std::deque<Watch>> pending_;  ///< per stream, in enqueue order
  std::size_t count_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpumux
