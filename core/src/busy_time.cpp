// Incremental interval union and the ops-in-flight watermark (busy_time.hpp).
#include "busy_time.hpp"

#include <algorithm>
#include <iterator>

namespace gpumux {

void BusyUnion::add(TimeNs s, TimeNs e) {
  if (e <= s) return;  // empty (as union_length skipped it)
  if (s < settled_until_) {
    ++late_;
    s = settled_until_;
    if (e <= s) return;
  }
  // Merge with every piece that overlaps or touches [s, e).
  auto it = pieces_.upper_bound(s);
  if (it != pieces_.begin()) {
    auto prev = std::prev(it);
    if (prev->second >= s) {
      if (prev->second >= e) return;  // already covered
      s = prev->first;
      it = prev;
    }
  }
  while (it != pieces_.end() && it->first <= e) {
    e = std::max(e, it->second);
    it = pieces_.erase(it);
  }
  pieces_.emplace_hint(it, s, e);
}

void BusyUnion::settle(TimeNs w) {
  if (w <= settled_until_) return;
  settled_until_ = w;
  auto it = pieces_.begin();
  while (it != pieces_.end() && it->second <= w) {
    settled_total_ += it->second - it->first;
    it = pieces_.erase(it);
  }
}

TimeNs BusyUnion::total() const {
  TimeNs t = settled_total_;
  for (const auto& [s, e] : pieces_) t += e - s;
  return t;
}

void InFlightOps::submit(std::uint64_t op, TimeNs t) {
  live_[op] = t;
  if (!order_.empty() && t < last_) ordered_ = false;
  last_ = std::max(last_, t);
  order_.emplace_back(t, op);
}

void InFlightOps::end(std::uint64_t op) {
  if (live_.erase(op) == 0) return;
  // Ended ops leave order_ lazily (from its front); rebuild it when they dominate, so its
  // size stays within a constant factor of the ops in flight.
  if (order_.size() > 2 * live_.size() + 1024) {
    std::deque<std::pair<TimeNs, std::uint64_t>> kept;
    for (const auto& entry : order_) {
      const auto found = live_.find(entry.second);
      if (found != live_.end() && found->second == entry.first) kept.push_back(entry);
    }
    order_.swap(kept);
  }
}

TimeNs InFlightOps::earliest() {
  if (!ordered_) {
    TimeNs m = kTimeNever;
    for (const auto& [op, t] : live_) m = std::min(m, t);
    return m;
  }
  while (!order_.empty()) {
    const auto found = live_.find(order_.front().second);
    if (found != live_.end() && found->second == order_.front().first) return found->second;
    order_.pop_front();
  }
  return kTimeNever;
}

}  // namespace gpumux
