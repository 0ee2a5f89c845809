// Salus' lane rule guarantees that every admitted job's iteration finds its ephemeral memory
// (Σ P' + max peak <= lane size). That holds in bytes; gpumux's device arena, however, is one
// offset-addressed best-fit pool (no virtual memory, unlike cudaMalloc on a real GPU, and no
// per-lane double-ended BFC allocator as in Salus), so bytes may be free yet not in one piece.
// This check keeps the guarantee on gpumux's arena: before a job's state is loaded, it
// replays the arena's placement (best fit: the smallest free block that fits, lowest offset
// among equals, at the block's start; sizes rounded by round_to_allocation) and requires that, with
// only persistent state allocated, some free block can still hold the largest ephemeral peak.
// Activations only come and go, and departures only merge free blocks, so when no iteration
// runs every admitted job's iteration can allocate: fragmentation can delay, never deadlock.
#pragma once

#include <cstdint>
#include <vector>

namespace gpumux::policies::salus {

struct Interval {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

/// `persistent` and `activations`: every live allocation of the arena [0, capacity), disjoint.
/// Returns whether, once `state_bytes` is placed best fit among the current free blocks, the
/// free blocks around the persistent allocations (new state included) hold one of at least
/// `peak_bytes`. False when the state itself does not fit.
[[nodiscard]] bool peak_fits_after_load(std::uint64_t capacity_bytes,
                                        std::vector<Interval> persistent,
                                        std::vector<Interval> activations,
                                        std::uint64_t state_bytes, std::uint64_t peak_bytes);

/// The same check for many jobs against one arena: the free blocks are computed once per
/// arena (not once per job), and the sorted persistent blocks are kept while the persistent
/// allocations stay the same (they change only when a job is loaded or leaves; activations
/// change at every iteration). fits() == peak_fits_after_load() on the arena last given.
/// Buffers are reused: no allocation per arena once grown. Single-threaded.
class ArenaCheck {
 public:
  /// Starts describing an arena of `capacity_bytes`: add() every live allocation, then seal().
  void begin(std::uint64_t capacity_bytes);
  void add_persistent(Interval a) { persistent_.push_back(a); }
  void add_activation(Interval a) { activations_.push_back(a); }
  void seal();
  /// peak_fits_after_load(capacity, persistent, activations, state_bytes, peak_bytes).
  [[nodiscard]] bool fits(std::uint64_t state_bytes, std::uint64_t peak_bytes) const noexcept;

 private:
  std::uint64_t capacity_ = 0;
  std::vector<Interval> persistent_;         // as added (this arena)
  std::vector<Interval> activations_;        // as added, then sorted
  std::vector<Interval> last_persistent_;    // as added, the arena persistent_holes_ is of
  std::vector<Interval> sorted_persistent_;  // last_persistent_ by offset
  std::vector<Interval> persistent_holes_;   // free blocks around persistent state
  std::vector<Interval> live_holes_;         // free blocks around every allocation
  bool have_last_ = false;
};

}  // namespace gpumux::policies::salus
