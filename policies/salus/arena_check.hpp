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

}  // namespace gpumux::policies::salus
