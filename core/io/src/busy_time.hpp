// Incremental busy time: the total length of a union of intervals fed one at a time, in
// memory bounded by what is still open rather than by the number of intervals (summary.cpp's
// device utilisation, computed while the run streams its events).
//
// Internal to gpumux_io. Thread rules: one owner thread. Times in ns.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "gpumux/api/ring_fifo.hpp"
#include "gpumux/api/time.hpp"

namespace gpumux {

/// Union length of half-open intervals [s, e) added in any order. Disjoint merged pieces are
/// kept sorted; settle(w) folds every piece that ends at or before `w` into the total, which
/// is exact as long as no interval added afterwards starts before `w`. An interval that does
/// (a caller's promise broken) is clipped at the settled point and counted in late().
/// Intervals that end no earlier than every one before them (ops reported as they end) merge
/// at the back in amortised O(1) without allocation; others take a sorted insert.
class BusyUnion {
 public:
  void add(TimeNs s, TimeNs e) {  // inline: called for every op that ends
    if (e <= s) return;           // empty (as union_length skipped it)
    if (s < settled_until_ || (pieces_.size() > head_ && e < pieces_.back().e)) {
      add_slow(s, e);
      return;
    }
    // Ends no earlier than every piece: it merges with the pieces that end at or after its
    // start, which are the last ones.
    while (pieces_.size() > head_ && pieces_.back().e >= s) {
      s = std::min(s, pieces_.back().s);
      pieces_.pop_back();
    }
    pieces_.push_back({s, e});
  }
  /// No interval added from now on starts before `w`.
  void settle(TimeNs w) {
    if (w <= settled_until_) return;
    settled_until_ = w;
    while (head_ < pieces_.size() && pieces_[head_].e <= w) {
      settled_total_ += pieces_[head_].e - pieces_[head_].s;
      ++head_;
    }
    if (head_ > 64 && head_ * 2 > pieces_.size()) drop_settled();
  }
  /// Settled total plus the pieces still open.
  [[nodiscard]] TimeNs total() const;
  [[nodiscard]] std::size_t open_pieces() const noexcept { return pieces_.size() - head_; }
  [[nodiscard]] std::uint64_t late() const noexcept { return late_; }

 private:
  struct Piece {
    TimeNs s, e;
  };
  void add_slow(TimeNs s, TimeNs e);  ///< late or out-of-order intervals
  void insert_sorted(TimeNs s, TimeNs e);
  void drop_settled();

  std::vector<Piece> pieces_;  ///< [head_, size): disjoint, none touching, by start (and end)
  std::size_t head_ = 0;       ///< pieces before it were settled
  TimeNs settled_total_ = 0;
  TimeNs settled_until_ = std::numeric_limits<TimeNs>::min();  ///< nothing settled yet
  std::uint64_t late_ = 0;
};

/// Ops submitted and not yet ended, with the earliest submission time among them: no op that
/// ends later can have started before it (an op starts after its submission), so busy time
/// before it is settled. Memory: O(ops in flight), amortised O(1) per op.
///
/// The Engine numbers ops densely and submits them in id and time order: they are then kept
/// in a window of submission times indexed by id (no allocation once it has grown), ended ops
/// leaving from its front. Any other order (a log from elsewhere) switches to a map.
class InFlightOps {
 public:
  void submit(std::uint64_t op, TimeNs t) {  // inline: the next op, in time order
    if (!general_ && !window_.empty() && op == base_ + window_.size() && t >= last_) {
      window_.push_back(t);
      ++count_;
      last_ = t;
      return;
    }
    submit_slow(op, t);
  }
  void end(std::uint64_t op) {
    if (general_) {
      live_.erase(op);
      return;
    }
    if (op < base_ || op - base_ >= window_.size()) return;  // ended already, or never submitted
    TimeNs& slot = window_[op - base_];
    if (slot == kEnded) return;
    slot = kEnded;
    --count_;
    while (!window_.empty() && window_.front() == kEnded) {
      window_.pop_front();
      ++base_;
    }
  }
  /// Earliest submission among the ops in flight; kTimeNever when none.
  [[nodiscard]] TimeNs earliest() {
    if (!general_) return window_.empty() ? kTimeNever : window_.front();
    return earliest_general();
  }
  [[nodiscard]] std::size_t size() const noexcept { return general_ ? live_.size() : count_; }

 private:
  static constexpr TimeNs kEnded = std::numeric_limits<TimeNs>::min();
  void submit_slow(std::uint64_t op, TimeNs t);
  [[nodiscard]] TimeNs earliest_general() const;
  void to_general();

  // window mode
  RingFifo<TimeNs> window_;  ///< submission time of op base_ + i; kEnded once ended
  std::uint64_t base_ = 0;
  std::size_t count_ = 0;  ///< live ops in the window
  TimeNs last_ = std::numeric_limits<TimeNs>::min();
  // general mode
  bool general_ = false;
  std::unordered_map<std::uint64_t, TimeNs> live_;
};

}  // namespace gpumux
