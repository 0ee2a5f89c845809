// Incremental interval union and the ops-in-flight watermark (busy_time.hpp).
#include "busy_time.hpp"

#include <algorithm>

namespace gpumux {

void BusyUnion::add_slow(TimeNs s, TimeNs e) {
  if (s < settled_until_) {
    ++late_;
    s = settled_until_;
    if (e <= s) return;
  }
  if (pieces_.size() > head_ && e < pieces_.back().e) {
    insert_sorted(s, e);
    return;
  }
  add(s, e);  // in order after clipping
}

void BusyUnion::insert_sorted(TimeNs s, TimeNs e) {
  const auto first = pieces_.begin() + static_cast<std::ptrdiff_t>(head_);
  // Pieces that overlap or touch [s, e): from the first that ends at or after s to the last
  // that starts at or before e.
  const auto lo =
      std::lower_bound(first, pieces_.end(), s, [](const Piece& p, TimeNs v) { return p.e < v; });
  const auto hi =
      std::upper_bound(lo, pieces_.end(), e, [](TimeNs v, const Piece& p) { return v < p.s; });
  if (lo == hi) {
    pieces_.insert(lo, Piece{s, e});
    return;
  }
  const Piece merged{std::min(s, lo->s), std::max(e, (hi - 1)->e)};
  *lo = merged;
  pieces_.erase(lo + 1, hi);
}

void BusyUnion::drop_settled() {
  // The settled prefix is most of the vector: drop it (amortised O(1) per piece).
  pieces_.erase(pieces_.begin(), pieces_.begin() + static_cast<std::ptrdiff_t>(head_));
  head_ = 0;
}

TimeNs BusyUnion::total() const {
  TimeNs t = settled_total_;
  for (std::size_t i = head_; i < pieces_.size(); ++i) t += pieces_[i].e - pieces_[i].s;
  return t;
}

void InFlightOps::to_general() {
  general_ = true;
  for (std::size_t i = 0; i < window_.size(); ++i) {
    if (window_[i] != kEnded) live_[base_ + i] = window_[i];
  }
  window_ = RingFifo<TimeNs>{};
  count_ = 0;
}

void InFlightOps::submit_slow(std::uint64_t op, TimeNs t) {
  if (!general_) {
    const std::uint64_t next = base_ + window_.size();
    // Ops never submitted between the window's end and `op` (a filtered log) are not in
    // flight; a short gap is filled with ended slots.
    constexpr std::uint64_t kMaxGap = 4096;
    if (t >= last_ && (window_.empty() ? op >= base_ : op >= next) &&
        (window_.empty() || op - next <= kMaxGap)) {
      if (window_.empty()) {
        base_ = op;
      } else {
        for (std::uint64_t i = next; i < op; ++i) window_.push_back(kEnded);
      }
      window_.push_back(t);
      ++count_;
      last_ = t;
      return;
    }
    to_general();
  }
  live_[op] = t;
}

TimeNs InFlightOps::earliest_general() const {
  TimeNs m = kTimeNever;
  for (const auto& [op, t] : live_) m = std::min(m, t);
  return m;
}

}  // namespace gpumux
