#include "salus/arena_check.hpp"

#include <algorithm>

#include "gpumux/memory.hpp"

namespace gpumux::policies::salus {
namespace {

/// Free blocks of [0, capacity) around `used`, in offset order.
std::vector<Interval> holes(std::uint64_t capacity, std::vector<Interval> used) {
  std::sort(used.begin(), used.end(),
            [](const Interval& a, const Interval& b) { return a.offset < b.offset; });
  std::vector<Interval> out;
  std::uint64_t at = 0;
  for (const Interval& u : used) {
    if (u.bytes == 0) continue;
    if (u.offset > at) out.push_back({at, u.offset - at});
    at = std::max(at, u.offset + u.bytes);
  }
  if (capacity > at) out.push_back({at, capacity - at});
  return out;
}

}  // namespace

bool peak_fits_after_load(std::uint64_t capacity_bytes, std::vector<Interval> persistent,
                          std::vector<Interval> activations, std::uint64_t state_bytes,
                          std::uint64_t peak_bytes) {
  const std::uint64_t state = round_to_allocation(state_bytes);
  if (state > 0) {
    std::vector<Interval> live = persistent;
    live.insert(live.end(), activations.begin(), activations.end());
    const Interval* best = nullptr;
    const auto free = holes(capacity_bytes, std::move(live));
    for (const Interval& h : free) {  // smallest that fits; offset order breaks ties
      if (h.bytes >= state && (best == nullptr || h.bytes < best->bytes)) best = &h;
    }
    if (best == nullptr) return false;
    persistent.push_back({best->offset, state});
  }
  const std::uint64_t peak = round_to_allocation(peak_bytes);
  for (const Interval& h : holes(capacity_bytes, std::move(persistent))) {
    if (h.bytes >= peak) return true;
  }
  return peak == 0;
}

}  // namespace gpumux::policies::salus
