#include "gpumux/backend/real_runtime.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <stdexcept>

#include "gpumux/backend/thread_tuning.hpp"

namespace gpumux {

// ---- LatenessHistogram ----

std::size_t LatenessHistogram::bucket_of(std::uint64_t v) noexcept {
  constexpr std::uint64_t kSub = 1u << kSubBits;
  if (v < kSub) return static_cast<std::size_t>(v);
  const int e = 63 - std::countl_zero(v);  // >= kSubBits
  const std::uint64_t sub = (v >> (e - kSubBits)) & (kSub - 1);
  return (static_cast<std::size_t>(e - kSubBits + 1) << kSubBits) + sub;
}

std::uint64_t LatenessHistogram::bucket_upper(std::size_t b) noexcept {
  constexpr std::size_t kSub = std::size_t{1} << kSubBits;
  if (b < kSub) return b;
  const int e = static_cast<int>(b >> kSubBits) + kSubBits - 1;
  const std::uint64_t sub = b & (kSub - 1);
  const std::uint64_t lower = (kSub + sub) << (e - kSubBits);
  return lower + ((std::uint64_t{1} << (e - kSubBits)) - 1);
}

void LatenessHistogram::add(std::int64_t ns) noexcept {
  if (ns < 0) ns = 0;
  ++counts_[bucket_of(static_cast<std::uint64_t>(ns))];
  ++count_;
  sum_ += static_cast<long double>(ns);
  max_ = std::max(max_, ns);
}

std::int64_t LatenessHistogram::quantile(double q) const noexcept {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  auto target = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  target = std::max<std::uint64_t>(target, 1);
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < counts_.size(); ++b) {
    seen += counts_[b];
    if (seen >= target) {
      return std::min(static_cast<std::int64_t>(bucket_upper(b)), max_);
    }
  }
  return max_;
}

LatenessStats LatenessHistogram::stats() const noexcept {
  LatenessStats s;
  s.count = count_;
  s.max_ns = max_;
  s.mean_ns = count_ == 0 ? 0.0 : static_cast<double>(sum_ / static_cast<long double>(count_));
  s.p99_ns = quantile(0.99);
  return s;
}

// ---- RealRuntime ----

RealRuntime::RealRuntime() : origin_(Clock::now()) {}

RealRuntime::~RealRuntime() = default;

void RealRuntime::reset_origin() {
  if (!live_.empty()) throw std::logic_error("RealRuntime::reset_origin with timers scheduled");
  origin_ = Clock::now();
}

bool RealRuntime::on_runtime_thread() const noexcept {
  return loop_thread_.load(std::memory_order_acquire) == std::this_thread::get_id();
}

TimerId RealRuntime::schedule_at(TimeNs when_ns, Callback cb) {
  const TimeNs now_ns = now();
  const TimeNs due = std::max(when_ns, now_ns);
  const std::uint64_t seq = next_seq_++;
  live_.emplace(seq, TimerSlot{std::move(cb), due});
  heap_.push(TimerEntry{due, seq});
  return TimerId{seq};
}

bool RealRuntime::cancel(TimerId id) noexcept {
  return live_.erase(raw(id)) != 0;
}

void RealRuntime::post(Callback cb) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    posted_.push_back(std::move(cb));
  }
  wake_.notify_one();
}

void RealRuntime::stop() noexcept {
  stop_.store(true, std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(mutex_);  // pairs with the predicate check in run()
  }
  wake_.notify_all();
}

void RealRuntime::add_pending() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  ++pending_;
}

void RealRuntime::done_pending() noexcept {
  bool last;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --pending_;
    last = pending_ <= 0;
  }
  if (last) wake_.notify_all();
}

std::int64_t RealRuntime::pending() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_;
}

void RealRuntime::drop_dead_timers() noexcept {
  while (!heap_.empty() && live_.find(heap_.top().seq) == live_.end()) heap_.pop();
}

TimeNs RealRuntime::next_timer_ns() const noexcept {
  return heap_.empty() ? kTimeNever : heap_.top().when_ns;
}

bool RealRuntime::pop_due_timer(TimeNs limit_ns, Callback& cb, TimeNs& due_ns) {
  drop_dead_timers();
  if (heap_.empty() || heap_.top().when_ns > limit_ns) return false;
  const auto it = live_.find(heap_.top().seq);
  heap_.pop();
  cb = std::move(it->second.cb);
  due_ns = it->second.due_ns;
  live_.erase(it);
  return true;
}

bool RealRuntime::run_posted() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (posted_.empty()) return !stop_.load(std::memory_order_acquire);
    draining_.swap(posted_);
  }
  std::size_t i = 0;
  // Callbacks not yet run go back to the front of the queue (keeping their order) when the
  // loop is stopped or a callback throws.
  auto requeue_rest = [&](std::size_t from) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto first = draining_.begin() + static_cast<std::ptrdiff_t>(from);
    posted_.insert(posted_.begin(), std::make_move_iterator(first),
                   std::make_move_iterator(draining_.end()));
    draining_.clear();
  };
  try {
    for (; i < draining_.size(); ++i) {
      if (stop_.load(std::memory_order_acquire)) {
        requeue_rest(i);
        return false;
      }
      Callback cb = std::move(draining_[i]);
      executed_.fetch_add(1, std::memory_order_relaxed);
      cb();
    }
  } catch (...) {
    requeue_rest(i + 1);
    throw;
  }
  draining_.clear();
  return !stop_.load(std::memory_order_acquire);
}

void RealRuntime::run(TimeNs horizon_ns) {
  if (running_) throw std::logic_error("RealRuntime::run called from inside a callback");
  running_ = true;
  stop_.store(false, std::memory_order_release);
  loop_thread_.store(std::this_thread::get_id(), std::memory_order_release);
  struct Reset {
    RealRuntime& rt;
    ~Reset() {
      rt.running_ = false;
      rt.loop_thread_.store(std::thread::id{}, std::memory_order_release);
    }
  } reset{*this};
  reduce_timer_slack();

  Callback cb;
  for (;;) {
    if (!run_posted()) break;
    TimeNs now_ns = now();
    TimeNs due_ns = 0;
    if (pop_due_timer(std::min(now_ns, horizon_ns), cb, due_ns)) {
      lateness_.add(now() - due_ns);
      executed_.fetch_add(1, std::memory_order_relaxed);
      cb();
      cb.reset();  // release captures now
      if (stop_.load(std::memory_order_acquire)) break;
      continue;
    }
    if (now_ns >= horizon_ns) break;  // no timer at or before the horizon is left
    const TimeNs next_ns = next_timer_ns();
    const TimeNs deadline_ns = std::min(next_ns, horizon_ns);
    std::unique_lock<std::mutex> lock(mutex_);
    const auto wake_up = [&] {
      return !posted_.empty() || stop_.load(std::memory_order_acquire) ||
             (next_ns == kTimeNever && pending_ <= 0);
    };
    if (wake_up()) {
      if (posted_.empty() && !stop_.load(std::memory_order_acquire)) break;  // nothing left
      continue;
    }
    if (deadline_ns == kTimeNever) {
      wake_.wait(lock, wake_up);
    } else {
      wake_.wait_until(lock, to_clock(deadline_ns), wake_up);
    }
  }
}

}  // namespace gpumux
