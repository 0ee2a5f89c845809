#include "gpumux/sim/sim_runtime.hpp"

#include <stdexcept>

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
  while (!stop_ && !queue_.empty()) {
    const TimeNs t = queue_.next_time();
    if (t > horizon_ns) {
      if (horizon_ns > now_) now_ = horizon_ns;
      break;
    }
    queue_.pop(cb);
    now_ = t;
    ++executed_;
    cb();
    cb.reset();  // release captures now, not when the next event overwrites them
  }
}

}  // namespace gpumux
