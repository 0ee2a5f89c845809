// The streams of one device that have issued, unfinished ops, in registration order: what the
// device's evaluation walks instead of every stream, so the cost of an event grows with the
// busy streams, not with the streams registered (a 100-service run has hundreds, mostly idle).
// Ascending index order keeps every walk in the order a full scan had, so sums, notices and
// tie-breaks are unchanged.
//
// Units: stream indices (dense, from 0, as in StreamQueues). Thread rules: not thread-safe; the
// device's runtime thread only. No allocation once grown to the number of streams.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace gpumux {

class ActiveStreams {
 public:
  /// Adds stream `i` (no effect if present). O(active) for the sorted insert.
  void add(std::uint32_t i) {
    if (i >= member_.size()) member_.resize(i + 1, 0);
    if (member_[i] != 0) return;
    member_[i] = 1;
    items_.insert(std::upper_bound(items_.begin(), items_.end(), i), i);
  }
  /// The members, ascending. Invalidated by add() and retain().
  [[nodiscard]] std::span<const std::uint32_t> items() const noexcept { return items_; }
  /// Keeps the members for which keep(i) is true, in order. keep is called once per member,
  /// ascending, and may do the caller's per-member work (it must not add members).
  template <class Keep>
  void retain(Keep keep) {
    std::size_t kept = 0;
    for (const std::uint32_t i : items_) {
      if (keep(i)) {
        items_[kept++] = i;
      } else {
        member_[i] = 0;
      }
    }
    items_.resize(kept);
  }

 private:
  std::vector<std::uint32_t> items_;  ///< ascending
  std::vector<std::uint8_t> member_;  ///< by stream index
};

}  // namespace gpumux
