#include "gpumux/backend/cuda/completion_poller.hpp"

#include <utility>
#include <vector>

#include "gpumux/backend/thread_tuning.hpp"

namespace gpumux {

CompletionPoller::CompletionPoller(int ordinal) : ordinal_(ordinal) {
  thread_ = std::thread([this] { loop(); });
}

CompletionPoller::~CompletionPoller() {
  stop();
}

void CompletionPoller::stop() noexcept {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CompletionPoller::watch(std::uint32_t stream, cudaEvent_t end, Done done) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    pending_[stream].push_back(Watch{end, std::move(done)});
    ++count_;
  }
  cv_.notify_one();
}

void CompletionPoller::loop() noexcept {
  reduce_timer_slack();
  (void)cudaSetDevice(ordinal_);
  std::vector<Done> ready;  // called outside the lock, in stream order
  std::vector<cudaError_t> status;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (count_ == 0) {
      cv_.wait(lock, [this] { return stopping_ || count_ > 0; });
      continue;
    }
    for (auto& [stream, queue] : pending_) {
      // Only the oldest op of a stream can be next: a later one that completed between two
      // queries would otherwise be reported before its predecessor.
      while (!queue.empty()) {
        const cudaError_t st = cudaEventQuery(queue.front().end);
        if (st == cudaErrorNotReady) break;
        ready.push_back(std::move(queue.front().done));
        status.push_back(st);
        queue.pop_front();
        --count_;
        if (st != cudaSuccess) break;  // an error: the rest of this stream waits for the run's end
      }
    }
    lock.unlock();
    for (std::size_t i = 0; i < ready.size(); ++i) ready[i](status[i]);
    if (ready.empty()) std::this_thread::yield();
    ready.clear();
    status.clear();
    lock.lock();
  }
}

}  // namespace gpumux
