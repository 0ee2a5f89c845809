// A small pool of worker threads for device work that blocks (sleeps standing in for GPU work,
// paced copies, Eigen compute, naive cudaMalloc loops). Tasks never wait for each other, so
// the pool grows on demand: a task is handed to an idle worker or to a new one, and the number
// of threads is the largest number of tasks that were ever in flight at once (one per stream
// with an executing op). Threads live until the pool is destroyed.
//
// Thread rules: submit() from any thread; the destructor waits for running tasks to return
// (cancel them first if they may sleep long) and joins every worker.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gpumux {

class WorkerPool {
 public:
  /// `on_thread_start` runs once on every new worker thread before its first task (e.g.
  /// cudaSetDevice); may be empty.
  explicit WorkerPool(std::function<void()> on_thread_start = {});
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Runs `task` on a worker thread. An exception escaping a task terminates the process
  /// (tasks report failures themselves).
  void submit(std::function<void()> task);

  /// Threads created so far.
  [[nodiscard]] std::size_t threads() const;

  /// Lets running tasks return, then joins every worker; later submit()s throw
  /// std::logic_error. Idempotent; the destructor calls it.
  void shutdown();

 private:
  struct Worker {
    std::thread thread;
    std::function<void()> task;  // guarded by mutex_
    bool has_task = false;
    std::condition_variable wake;
  };
  void loop(Worker* self);

  std::function<void()> on_thread_start_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<Worker*> idle_;
  bool stopping_ = false;
};

/// A cancellable sleep shared between the thread that owns an op (runtime thread) and the
/// worker executing it.
class CancelToken {
 public:
  /// Sets the flag and wakes a sleeper. Any thread.
  void cancel() noexcept;
  [[nodiscard]] bool cancelled() const noexcept { return flag_.load(std::memory_order_acquire); }
  [[nodiscard]] const std::atomic<bool>* flag() const noexcept { return &flag_; }
  /// Sleeps until `deadline` (never wakes early) or cancellation; returns false if cancelled.
  /// The last `spin` of the wait polls the clock instead of blocking: a blocked thread wakes
  /// tens of microseconds late in a VM, too coarse for a sleep that models a 7 us host
  /// synchronisation (CUDA launcher set-up, docs/fidelity.md).
  bool sleep_until(std::chrono::steady_clock::time_point deadline,
                   std::chrono::nanoseconds spin = std::chrono::nanoseconds{0});

 private:
  std::atomic<bool> flag_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
};

}  // namespace gpumux
