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

bool by_offset(const Interval& a, const Interval& b) {
  return a.offset < b.offset;
}

/// holes() of intervals already sorted by offset, into `out`.
void holes_of_sorted(std::uint64_t capacity, const std::vector<Interval>& used,
                     std::vector<Interval>& out) {
  out.clear();
  std::uint64_t at = 0;
  for (const Interval& u : used) {
    if (u.bytes == 0) continue;
    if (u.offset > at) out.push_back({at, u.offset - at});
    at = std::max(at, u.offset + u.bytes);
  }
  if (capacity > at) out.push_back({at, capacity - at});
}

/// holes() of the union of two offset-sorted lists, into `out` (a merge, no sort).
void holes_of_merged(std::uint64_t capacity, const std::vector<Interval>& a,
                     const std::vector<Interval>& b, std::vector<Interval>& out) {
  out.clear();
  std::uint64_t at = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const Interval& u =
        j == b.size() || (i < a.size() && a[i].offset <= b[j].offset) ? a[i++] : b[j++];
    if (u.bytes == 0) continue;
    if (u.offset > at) out.push_back({at, u.offset - at});
    at = std::max(at, u.offset + u.bytes);
  }
  if (capacity > at) out.push_back({at, capacity - at});
}

}  // namespace

void ArenaCheck::begin(std::uint64_t capacity_bytes) {
  if (capacity_bytes != capacity_) have_last_ = false;
  capacity_ = capacity_bytes;
  persistent_.clear();
  activations_.clear();
}

void ArenaCheck::seal() {
  // Same persistent allocations in the same order as last time: same sorted list and holes.
  const bool same = have_last_ && persistent_.size() == last_persistent_.size() &&
                    std::equal(persistent_.begin(), persistent_.end(), last_persistent_.begin(),
                               [](const Interval& a, const Interval& b) {
                                 return a.offset == b.offset && a.bytes == b.bytes;
                               });
  if (!same) {
    last_persistent_ = persistent_;
    sorted_persistent_ = persistent_;
    std::sort(sorted_persistent_.begin(), sorted_persistent_.end(), by_offset);
    holes_of_sorted(capacity_, sorted_persistent_, persistent_holes_);
    have_last_ = true;
  }
  std::sort(activations_.begin(), activations_.end(), by_offset);
  holes_of_merged(capacity_, sorted_persistent_, activations_, live_holes_);
}

bool ArenaCheck::fits(std::uint64_t state_bytes, std::uint64_t peak_bytes) const noexcept {
  const std::uint64_t state = round_to_allocation(state_bytes);
  const std::uint64_t peak = round_to_allocation(peak_bytes);
  if (state == 0) {
    for (const Interval& h : persistent_holes_) {
      if (h.bytes >= peak) return true;
    }
    return peak == 0;
  }
  const Interval* best = nullptr;
  for (const Interval& h : live_holes_) {  // smallest that fits; offset order breaks ties
    if (h.bytes >= state && (best == nullptr || h.bytes < best->bytes)) best = &h;
  }
  if (best == nullptr) return false;
  if (peak == 0) return true;
  // The state goes at best->offset, inside one free block of the persistent state (a free
  // block around every allocation lies in one): that block splits in two, the others stay.
  const std::uint64_t at = best->offset;
  for (const Interval& h : persistent_holes_) {
    if (at >= h.offset && at < h.offset + h.bytes) {
      if (at - h.offset >= peak || h.offset + h.bytes - (at + state) >= peak) return true;
    } else if (h.bytes >= peak) {
      return true;
    }
  }
  return false;
}

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
