#include "gpumux/sim/sim_runtime.hpp"

#include <stdexcept>
#include <utility>

namespace gpumux {

void SimRuntime::run(TimeNs horizon_ns) {
  if (running_) throw std::logic_error("SimRuntime::run called from inside a callback");
  running_ = true;
  stop_ = false;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{running_};

  Callback cb;
  while (!stop_) {
    // The earliest of the heap's top and the earliest re-armable timer, by (time, seq).
    bool timer_first = false;
    if (earliest_ >= 0) {
      const Rearmable& r = *timers_[static_cast<std::size_t>(earliest_)];
      timer_first = queue_.empty() || !queue_.top_precedes(r.when_ns, r.seq);
    } else if (queue_.empty()) {
      break;
    }
    const TimeNs t =
        timer_first ? timers_[static_cast<std::size_t>(earliest_)]->when_ns : queue_.next_time();
    if (t > horizon_ns) {
      if (horizon_ns > now_) now_ = horizon_ns;
      break;
    }
    now_ = t;
    ++executed_;
    if (timer_first) {
      const auto id = static_cast<std::uint32_t>(earliest_);
      disarm_timer(id);
      timers_[id]->cb();  // may re-arm itself
    } else {
      queue_.pop(cb);
      cb();
      cb.reset();  // release captures now, not when the next event overwrites them
    }
  }
}

std::uint32_t SimRuntime::add_timer(Callback cb) {
  if (!cb) throw std::invalid_argument("SimRuntime: empty timer callback");
  timers_.push_back(std::make_unique<Rearmable>(Rearmable{std::move(cb), kTimeNever, 0, false}));
  return static_cast<std::uint32_t>(timers_.size() - 1);
}

void SimRuntime::arm_timer(std::uint32_t id, TimeNs when_ns) {
  Rearmable& r = *timers_[id];
  if (!r.armed) {
    r.armed = true;
    ++armed_;
  }
  r.when_ns = when_ns < now_ ? now_ : when_ns;
  r.seq = queue_.take_seq();
  if (earliest_ == static_cast<std::int64_t>(id)) {
    if (armed_ > 1) find_earliest();  // it moved later: another may now be first
  } else if (earliest_ < 0 || before(r, *timers_[static_cast<std::size_t>(earliest_)])) {
    earliest_ = id;
  }
}

void SimRuntime::disarm_timer(std::uint32_t id) noexcept {
  Rearmable& r = *timers_[id];
  if (!r.armed) return;
  r.armed = false;
  --armed_;
  if (earliest_ == static_cast<std::int64_t>(id)) find_earliest();
}

void SimRuntime::remove_timer(std::uint32_t id) noexcept {
  disarm_timer(id);
  timers_[id]->cb.reset();
}

void SimRuntime::find_earliest() noexcept {
  earliest_ = -1;
  if (armed_ == 0) return;
  for (std::size_t i = 0; i < timers_.size(); ++i) {
    const Rearmable& r = *timers_[i];
    if (r.armed && (earliest_ < 0 || before(r, *timers_[static_cast<std::size_t>(earliest_)]))) {
      earliest_ = static_cast<std::int64_t>(i);
    }
  }
}

}  // namespace gpumux
