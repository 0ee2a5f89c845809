#include "gpumux/backend/worker_pool.hpp"

#include <stdexcept>

#include "gpumux/backend/thread_tuning.hpp"

namespace gpumux {

WorkerPool::WorkerPool(std::function<void()> on_thread_start)
    : on_thread_start_(std::move(on_thread_start)) {}

WorkerPool::~WorkerPool() {
  shutdown();
}

void WorkerPool::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    for (auto& w : workers_) w->wake.notify_one();
  }
  // workers_ only grows under the lock and not after stopping_, so iterating is safe.
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
}

std::size_t WorkerPool::threads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return workers_.size();
}

void WorkerPool::submit(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_) throw std::logic_error("WorkerPool::submit after shutdown");
  if (!idle_.empty()) {
    Worker* w = idle_.back();
    idle_.pop_back();
    w->task = std::move(task);
    w->has_task = true;
    w->wake.notify_one();
    return;
  }
  auto w = std::make_unique<Worker>();
  w->task = std::move(task);
  w->has_task = true;
  Worker* raw_worker = w.get();
  workers_.push_back(std::move(w));
  raw_worker->thread = std::thread([this, raw_worker] { loop(raw_worker); });
}

void WorkerPool::loop(Worker* self) {
  reduce_timer_slack();
  if (on_thread_start_) on_thread_start_();
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    self->wake.wait(lock, [&] { return self->has_task || stopping_; });
    if (!self->has_task) return;  // stopping, nothing to do
    std::function<void()> task = std::move(self->task);
    self->task = nullptr;
    lock.unlock();
    task();
    task = nullptr;  // release captures outside the lock
    lock.lock();
    self->has_task = false;
    if (stopping_) return;
    idle_.push_back(self);
  }
}

void CancelToken::cancel() noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    flag_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

bool CancelToken::sleep_until(std::chrono::steady_clock::time_point deadline,
                              std::chrono::nanoseconds spin) {
  const auto block_until = deadline - spin;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // wait_until may return early on a spurious wake-up: the predicate loop re-checks the clock.
    while (!flag_.load(std::memory_order_acquire)) {
      if (std::chrono::steady_clock::now() >= block_until) break;
      cv_.wait_until(lock, block_until);
    }
  }
  while (!flag_.load(std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() >= deadline) return true;
  }
  return false;
}

}  // namespace gpumux
