// Memory resources over offsets in a fixed-capacity arena (RMM-style NVI wrappers + pools).
#include "gpumux/model/memory.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpumux/api/errors.hpp"

namespace gpumux {
namespace {

bool is_power_of_two(std::uint64_t v) noexcept {
  return v != 0 && (v & (v - 1)) == 0;
}

// Rounds up to a power-of-two alignment; false on overflow.
bool align_up(std::uint64_t v, std::uint64_t align, std::uint64_t& out) noexcept {
  if (v > std::numeric_limits<std::uint64_t>::max() - (align - 1)) return false;
  out = (v + align - 1) & ~(align - 1);
  return true;
}

}  // namespace

// ---- MemoryResource --------------------------------------------------------------------------

std::optional<Allocation> MemoryResource::try_allocate(std::uint64_t bytes,
                                                       std::uint64_t align_bytes) {
  if (!is_power_of_two(align_bytes)) {
    throw std::invalid_argument("alignment " + std::to_string(align_bytes) +
                                " is not a power of two");
  }
  if (bytes == 0) return Allocation{};
  std::uint64_t rounded = 0;
  std::optional<Allocation> a;
  if (align_up(bytes, align_bytes, rounded)) a = do_allocate(rounded, align_bytes);
  if (!a) {
    ++failures_;
    return std::nullopt;
  }
  in_use_ += a->bytes;
  peak_ = std::max(peak_, in_use_);
  ++allocations_;
  return a;
}

Allocation MemoryResource::allocate(std::uint64_t bytes, const std::string& where,
                                    std::uint64_t align_bytes) {
  auto a = try_allocate(bytes, align_bytes);
  if (!a) {
    std::uint64_t rounded = bytes;
    if (!align_up(bytes, align_bytes, rounded)) rounded = bytes;
    throw OutOfMemory(rounded, do_largest_free(), where);
  }
  return *a;
}

void MemoryResource::deallocate(const Allocation& a) {
  if (!a.valid()) return;
  do_deallocate(a);  // throws std::logic_error for unknown or double-freed allocations
  in_use_ -= a.bytes;
}

std::optional<Allocation> MemoryResource::probe(std::uint64_t bytes,
                                                std::uint64_t align_bytes) const {
  if (!is_power_of_two(align_bytes)) {
    throw std::invalid_argument("alignment " + std::to_string(align_bytes) +
                                " is not a power of two");
  }
  if (bytes == 0) return Allocation{};
  std::uint64_t rounded = 0;
  if (!align_up(bytes, align_bytes, rounded)) return std::nullopt;
  return do_probe(rounded, align_bytes);
}

bool MemoryResource::can_allocate(std::span<const std::uint64_t> sizes,
                                  std::uint64_t align_bytes) const {
  if (!is_power_of_two(align_bytes)) {
    throw std::invalid_argument("alignment " + std::to_string(align_bytes) +
                                " is not a power of two");
  }
  std::uint64_t rounded[8];
  if (sizes.size() > std::size(rounded)) {
    throw std::invalid_argument("can_allocate: at most 8 sizes");
  }
  std::size_t n = 0;
  for (const std::uint64_t bytes : sizes) {
    if (bytes == 0) continue;
    if (!align_up(bytes, align_bytes, rounded[n])) return false;
    ++n;
  }
  return n == 0 || do_can_allocate(std::span<const std::uint64_t>(rounded, n), align_bytes);
}

void MemoryResource::claim(const Allocation& a) {
  if (!a.valid()) return;
  do_claim(a);
  in_use_ += a.bytes;
  peak_ = std::max(peak_, in_use_);
}

void MemoryResource::do_claim(const Allocation& /*a*/) {
  throw std::logic_error("this memory resource cannot claim a given range");
}

MemoryStats MemoryResource::stats() const noexcept {
  MemoryStats s;
  s.capacity_bytes = do_capacity();
  s.in_use_bytes = in_use_;
  s.peak_bytes = peak_;
  s.largest_free_bytes = do_largest_free();
  s.allocations = allocations_;
  s.failures = failures_;
  return s;
}

// ---- BestFitPool -----------------------------------------------------------------------------

BestFitPool::BestFitPool(std::uint64_t capacity_bytes, std::uint64_t base_offset)
    : capacity_(capacity_bytes) {
  if (capacity_bytes > std::numeric_limits<std::uint64_t>::max() - base_offset) {
    throw std::invalid_argument("BestFitPool: base_offset + capacity overflows");
  }
  if (capacity_bytes > 0) insert_free(base_offset, capacity_bytes);
}

void BestFitPool::insert_free(std::uint64_t offset, std::uint64_t bytes) {
  by_offset_.emplace(offset, bytes);
  by_size_.emplace(bytes, offset);
}

void BestFitPool::erase_free(std::uint64_t offset, std::uint64_t bytes) {
  by_offset_.erase(offset);
  by_size_.erase({bytes, offset});
}

std::optional<Allocation> BestFitPool::do_allocate(std::uint64_t bytes, std::uint64_t align) {
  // Smallest block that fits, lowest offset among equals. With aligned offsets (the usual
  // case) the first candidate fits; padding can only disqualify a few small blocks.
  for (auto it = by_size_.lower_bound({bytes, 0}); it != by_size_.end(); ++it) {
    const auto [size, offset] = *it;
    std::uint64_t start = 0;
    if (!align_up(offset, align, start)) continue;
    const std::uint64_t pad = start - offset;
    if (pad > size || size - pad < bytes) continue;
    erase_free(offset, size);
    if (pad > 0) insert_free(offset, pad);
    const std::uint64_t tail = size - pad - bytes;
    if (tail > 0) insert_free(start + bytes, tail);
    live_.emplace(start, bytes);
    return Allocation{start, bytes};
  }
  return std::nullopt;
}

namespace {

// Where a block (size, offset) would place `bytes` at `align`: its start, or nullopt.
std::optional<std::uint64_t> start_in(std::uint64_t size, std::uint64_t offset, std::uint64_t bytes,
                                      std::uint64_t align) {
  std::uint64_t start = 0;
  if (!align_up(offset, align, start)) return std::nullopt;
  const std::uint64_t pad = start - offset;
  if (pad > size || size - pad < bytes) return std::nullopt;
  return start;
}

}  // namespace

std::optional<Allocation> BestFitPool::do_probe(std::uint64_t bytes, std::uint64_t align) const {
  for (auto it = by_size_.lower_bound({bytes, 0}); it != by_size_.end(); ++it) {
    if (const auto start = start_in(it->first, it->second, bytes, align)) {
      return Allocation{*start, bytes};
    }
  }
  return std::nullopt;
}

bool BestFitPool::do_can_allocate(std::span<const std::uint64_t> sizes, std::uint64_t align) const {
  // do_allocate replayed on an overlay: the free blocks it would split (`taken`, still in
  // the lists) and the pieces it would leave (`added`). Splits never touch a neighbour, so
  // no coalescing is needed; with a handful of sizes the overlay stays tiny.
  using Block = std::pair<std::uint64_t, std::uint64_t>;  // (size, offset), as by_size_
  std::vector<Block> taken, added;
  for (const std::uint64_t bytes : sizes) {
    std::optional<Block> best;
    std::uint64_t best_start = 0;
    for (auto it = by_size_.lower_bound({bytes, 0}); it != by_size_.end(); ++it) {
      if (std::find(taken.begin(), taken.end(), *it) != taken.end()) continue;
      if (const auto start = start_in(it->first, it->second, bytes, align)) {
        best = *it;
        best_start = *start;
        break;
      }
    }
    bool from_added = false;
    for (const Block& b : added) {
      if (best && !(b < *best)) continue;
      if (const auto start = start_in(b.first, b.second, bytes, align)) {
        best = b;
        best_start = *start;
        from_added = true;
      }
    }
    if (!best) return false;
    if (from_added) {
      added.erase(std::find(added.begin(), added.end(), *best));
    } else {
      taken.push_back(*best);
    }
    const std::uint64_t pad = best_start - best->second;
    if (pad > 0) added.emplace_back(pad, best->second);
    const std::uint64_t tail = best->first - pad - bytes;
    if (tail > 0) added.emplace_back(tail, best_start + bytes);
  }
  return true;
}

std::map<std::uint64_t, std::uint64_t>::const_iterator BestFitPool::block_holding(
    std::uint64_t offset, std::uint64_t bytes) const {
  auto it = by_offset_.upper_bound(offset);
  if (it == by_offset_.begin()) return by_offset_.end();
  --it;
  if (offset + bytes > it->first + it->second) return by_offset_.end();
  return it;
}

void BestFitPool::do_claim(const Allocation& a) {
  const auto it = block_holding(a.offset, a.bytes);
  if (it == by_offset_.end()) {
    throw std::logic_error("BestFitPool: claim of a range that is not free (offset " +
                           std::to_string(a.offset) + ", " + std::to_string(a.bytes) + " B)");
  }
  const std::uint64_t offset = it->first, size = it->second;
  erase_free(offset, size);
  if (a.offset > offset) insert_free(offset, a.offset - offset);
  const std::uint64_t end = a.offset + a.bytes;
  if (offset + size > end) insert_free(end, offset + size - end);
  live_.emplace(a.offset, a.bytes);
}

std::uint64_t BestFitPool::largest_free_after_claim(const Allocation& a) const {
  if (!a.valid()) return do_largest_free();
  const auto it = block_holding(a.offset, a.bytes);
  if (it == by_offset_.end()) {
    throw std::logic_error("BestFitPool: largest_free_after_claim of a range that is not free");
  }
  const std::uint64_t offset = it->first, size = it->second;
  // The split block leaves two pieces; every other block stays: the largest of those is
  // the largest in by_size_ unless that is the split block itself.
  std::uint64_t best = std::max(a.offset - offset, offset + size - (a.offset + a.bytes));
  for (auto s = by_size_.rbegin(); s != by_size_.rend(); ++s) {
    if (s->second == offset) continue;
    best = std::max(best, s->first);
    break;
  }
  return best;
}

void BestFitPool::do_deallocate(const Allocation& a) {
  auto live = live_.find(a.offset);
  if (live == live_.end() || live->second != a.bytes) {
    throw std::logic_error(
        "BestFitPool: deallocate of an unknown or already freed allocation "
        "(offset " +
        std::to_string(a.offset) + ", " + std::to_string(a.bytes) + " B)");
  }
  live_.erase(live);
  std::uint64_t offset = a.offset;
  std::uint64_t bytes = a.bytes;
  // Merge with the free block that ends where this one starts...
  auto next = by_offset_.lower_bound(offset);
  if (next != by_offset_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      const std::uint64_t prev_offset = prev->first, prev_bytes = prev->second;
      erase_free(prev_offset, prev_bytes);
      offset = prev_offset;
      bytes += prev_bytes;
    }
  }
  // ...and with the one that starts where it ends.
  next = by_offset_.find(a.offset + a.bytes);
  if (next != by_offset_.end()) {
    const std::uint64_t next_offset = next->first, next_bytes = next->second;
    erase_free(next_offset, next_bytes);
    bytes += next_bytes;
  }
  insert_free(offset, bytes);
}

std::uint64_t BestFitPool::do_largest_free() const noexcept {
  return by_size_.empty() ? 0 : by_size_.rbegin()->first;
}

// ---- FixedBlockPool --------------------------------------------------------------------------

FixedBlockPool::FixedBlockPool(std::uint64_t block_bytes, std::uint64_t block_count,
                               std::uint64_t base_offset)
    : block_bytes_(block_bytes), block_count_(block_count), base_(base_offset) {
  if (block_bytes == 0 && block_count > 0) {
    throw std::invalid_argument("FixedBlockPool: block_bytes must be > 0");
  }
  free_.reserve(block_count);
  // A stack popped from the back: push in reverse so block 0 is handed out first.
  for (std::uint64_t i = block_count; i > 0; --i) free_.push_back(i - 1);
  used_.assign(block_count, false);
}

std::optional<Allocation> FixedBlockPool::do_allocate(std::uint64_t bytes, std::uint64_t align) {
  if (bytes > block_bytes_ || free_.empty()) return std::nullopt;
  const std::uint64_t index = free_.back();
  const std::uint64_t offset = base_ + index * block_bytes_;
  if (offset % align != 0) return std::nullopt;  // blocks are laid out at a fixed stride
  free_.pop_back();
  used_[index] = true;
  return Allocation{offset, block_bytes_};
}

std::optional<Allocation> FixedBlockPool::do_probe(std::uint64_t bytes, std::uint64_t align) const {
  if (bytes > block_bytes_ || free_.empty()) return std::nullopt;
  const std::uint64_t offset = base_ + free_.back() * block_bytes_;
  if (offset % align != 0) return std::nullopt;
  return Allocation{offset, block_bytes_};
}

bool FixedBlockPool::do_can_allocate(std::span<const std::uint64_t> sizes,
                                     std::uint64_t align) const {
  // Blocks are handed out from the back of the free stack, in order.
  if (sizes.size() > free_.size()) return false;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::uint64_t offset = base_ + free_[free_.size() - 1 - i] * block_bytes_;
    if (sizes[i] > block_bytes_ || offset % align != 0) return false;
  }
  return true;
}

void FixedBlockPool::do_deallocate(const Allocation& a) {
  const bool in_range = block_bytes_ > 0 && a.offset >= base_ &&
                        (a.offset - base_) % block_bytes_ == 0 &&
                        (a.offset - base_) / block_bytes_ < block_count_;
  if (!in_range || a.bytes != block_bytes_ || !used_[(a.offset - base_) / block_bytes_]) {
    throw std::logic_error(
        "FixedBlockPool: deallocate of an unknown or already freed block "
        "(offset " +
        std::to_string(a.offset) + ")");
  }
  const std::uint64_t index = (a.offset - base_) / block_bytes_;
  used_[index] = false;
  free_.push_back(index);
}

}  // namespace gpumux
