// Incremental busy time: the total length of a union of intervals fed one at a time, in
// memory bounded by what is still open rather than by the number of intervals (summary.cpp's
// device utilisation, computed while the run streams its events).
//
// Internal to gpumux_core. Thread rules: one owner thread. Times in ns.
#pragma once

#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "gpumux/ring_fifo.hpp"
#include "gpumux/time.hpp"

namespace gpumux {

/// Union length of half-open intervals [s, e) added in any order. Disjoint merged pieces are
/// kept sorted; settle(w) folds every piece that ends at or before `w` into the total, which
/// is exact as long as no interval added afterwards starts before `w`. An interval that does
/// (a caller's promise broken) is clipped at the settled point and counted in late().
/// Intervals that end no earlier than every one before them (ops reported as they end) merge
/// at the back in amortised O(1) without allocation; others take a sorted insert.
class BusyUnion {
 public:
  void add(TimeNs s, TimeNs e);
  /// No interval added from now on starts before `w`.
  void settle(TimeNs w);
  /// Settled total plus the pieces still open.
  [[nodiscard]] TimeNs total() const;
  [[nodiscard]] std::size_t open_pieces() const noexcept { return pieces_.size() - head_; }
  [[nodiscard]] std::uint64_t late() const noexcept { return late_; }

 private:
  struct Piece {
    TimeNs s, e;
  };
  void insert_sorted(TimeNs s, TimeNs e);

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
  void submit(std::uint64_t op, TimeNs t);
  void end(std::uint64_t op);
  /// Earliest submission among the ops in flight; kTimeNever when none.
  [[nodiscard]] TimeNs earliest();
  [[nodiscard]] std::size_t size() const noexcept { return general_ ? live_.size() : count_; }

 private:
  static constexpr TimeNs kEnded = std::numeric_limits<TimeNs>::min();
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
