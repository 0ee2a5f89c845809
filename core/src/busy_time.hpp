// Incremental busy time: the total length of a union of intervals fed one at a time, in
// memory bounded by what is still open rather than by the number of intervals (summary.cpp's
// device utilisation, computed while the run streams its events).
//
// Internal to gpumux_core. Thread rules: one owner thread.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#include "gpumux/time.hpp"

namespace gpumux {

/// Union length of half-open intervals [s, e) added in any order. Disjoint merged pieces are
/// kept in a map; settle(w) folds every piece that ends at or before `w` into the total, which
/// is exact as long as no interval added afterwards starts before `w`. An interval that does
/// (a caller's promise broken) is clipped at the settled point and counted in late().
class BusyUnion {
 public:
  void add(TimeNs s, TimeNs e);
  /// No interval added from now on starts before `w`.
  void settle(TimeNs w);
  /// Settled total plus the pieces still open.
  [[nodiscard]] TimeNs total() const;
  [[nodiscard]] std::size_t open_pieces() const noexcept { return pieces_.size(); }
  [[nodiscard]] std::uint64_t late() const noexcept { return late_; }

 private:
  std::map<TimeNs, TimeNs> pieces_;  ///< start -> end, disjoint, none touching
  TimeNs settled_total_ = 0;
  TimeNs settled_until_ = std::numeric_limits<TimeNs>::min();  ///< nothing settled yet
  std::uint64_t late_ = 0;
};

/// Ops submitted and not yet ended, with the earliest submission time among them: no op that
/// ends later can have started before it (an op starts after its submission), so busy time
/// before it is settled. Memory: O(ops in flight), amortised O(1) per op.
class InFlightOps {
 public:
  void submit(std::uint64_t op, TimeNs t);
  void end(std::uint64_t op);
  /// Earliest submission among the ops in flight; kTimeNever when none.
  [[nodiscard]] TimeNs earliest();
  [[nodiscard]] std::size_t size() const noexcept { return live_.size(); }

 private:
  std::unordered_map<std::uint64_t, TimeNs> live_;
  std::deque<std::pair<TimeNs, std::uint64_t>> order_;  ///< by submission; ended ops removed lazily
  TimeNs last_ = 0;
  bool ordered_ = true;  ///< submissions came in time order (always, from the Engine)
};

}  // namespace gpumux
