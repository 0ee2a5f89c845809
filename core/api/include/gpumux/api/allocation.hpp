// What a device's memory resource hands out and reports (the resources themselves are in
// gpumux/model/memory.hpp): an allocation's place and size, and a resource's statistics.
// Bytes throughout.
#pragma once

#include <cstdint>

namespace gpumux {

struct Allocation {
  std::uint64_t offset = 0;  ///< bytes from the arena base
  std::uint64_t bytes = 0;   ///< size as requested, rounded up to the alignment
  [[nodiscard]] bool valid() const noexcept { return bytes != 0; }
  friend bool operator==(const Allocation&, const Allocation&) = default;
};

struct MemoryStats {
  std::uint64_t capacity_bytes = 0;
  std::uint64_t in_use_bytes = 0;
  std::uint64_t peak_bytes = 0;
  std::uint64_t largest_free_bytes = 0;
  std::uint64_t allocations = 0;  ///< successful allocate calls
  std::uint64_t failures = 0;     ///< allocate calls that found no room
};

}  // namespace gpumux
