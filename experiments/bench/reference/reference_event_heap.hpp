// Benchmark reference (see reference_sim.hpp): its pending-event set, a binary min-heap of
// 24-byte POD events ordered by (time ns, scheduling order), so that events at the same time
// run in the order they were scheduled, as in gpumux. Cancellation is lazy: the owner bumps a
// generation and skips events whose generation is stale. Amortised no allocation per event
// (the vector only grows). Not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpumux/api/time.hpp"

namespace gpumux::bench {

enum class RefEventKind : std::uint8_t { Arrival, DeviceTimer };

struct RefEvent {
  TimeNs t;
  std::uint64_t seq;
  RefEventKind kind;
  std::uint32_t generation;  ///< device timers: stale (cancelled) unless it matches the owner's
};

class RefEventHeap {
 public:
  RefEventHeap() { heap_.reserve(64); }
  void push(TimeNs t, RefEventKind kind, std::uint32_t generation) {
    heap_.push_back(RefEvent{t, seq_++, kind, generation});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  [[nodiscard]] bool empty() const noexcept { return heap_.empty(); }
  [[nodiscard]] const RefEvent& top() const noexcept { return heap_.front(); }
  void pop() {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    heap_.pop_back();
  }

 private:
  // std::push_heap keeps the greatest on top: "later" is the smaller.
  struct Later {
    bool operator()(const RefEvent& a, const RefEvent& b) const noexcept {
      return a.t != b.t ? a.t > b.t : a.seq > b.seq;
    }
  };
  std::vector<RefEvent> heap_;
  std::uint64_t seq_ = 0;
};

}  // namespace gpumux::bench
