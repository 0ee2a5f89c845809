// Device-memory bookkeeping in the RMM mould: public allocate/deallocate/stats over private
// virtual hooks. Pools work on offsets inside an arena of fixed capacity, so fragmentation
// behaves the same in simulation (no backing store) and on CUDA (one cudaMalloc slab whose
// base address plus the offset is the pointer). Runtime thread only; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "gpumux/api/allocation.hpp"

namespace gpumux {

/// The alignment the engine rounds every device allocation up to, bytes (a power of two).
inline constexpr std::uint64_t kAllocationAlignBytes = 256;

/// `bytes` as the engine allocates it: rounded up to kAllocationAlignBytes (no overflow
/// check: for sizes below 2^64 - 256).
[[nodiscard]] constexpr std::uint64_t round_to_allocation(std::uint64_t bytes) noexcept {
  return (bytes + kAllocationAlignBytes - 1) / kAllocationAlignBytes * kAllocationAlignBytes;
}

class MemoryResource {
 public:
  virtual ~MemoryResource() = default;

  /// Returns an allocation of at least `bytes` (rounded up to `align_bytes`, a power of two),
  /// or nullopt when no free block fits. `bytes` == 0 yields an empty allocation.
  [[nodiscard]] std::optional<Allocation> try_allocate(
      std::uint64_t bytes, std::uint64_t align_bytes = kAllocationAlignBytes);
  /// As try_allocate, but throws OutOfMemory naming `where`.
  [[nodiscard]] Allocation allocate(std::uint64_t bytes, const std::string& where,
                                    std::uint64_t align_bytes = kAllocationAlignBytes);
  /// Returns memory; `a` must come from this resource and not be freed twice (checked: throws
  /// std::logic_error). Empty allocations are ignored.
  void deallocate(const Allocation& a);
  [[nodiscard]] MemoryStats stats() const noexcept;

  // ---- dry runs: what allocate would do now, without changing anything (stats included) --
  /// The allocation try_allocate(bytes, align_bytes) would return now, or nullopt.
  [[nodiscard]] std::optional<Allocation> probe(
      std::uint64_t bytes, std::uint64_t align_bytes = kAllocationAlignBytes) const;
  /// Whether try_allocate of each of `sizes`, one after another in that order, would all
  /// succeed now (each on the memory the earlier ones left). Zero sizes are skipped; at most
  /// 8 sizes (std::invalid_argument).
  [[nodiscard]] bool can_allocate(std::span<const std::uint64_t> sizes,
                                  std::uint64_t align_bytes = kAllocationAlignBytes) const;

  /// Takes exactly `a` as allocated: a mirror of an allocation made in another resource
  /// over the same range (the placement's view of memory once activations are gone).
  /// deallocate() returns it. Throws std::logic_error when `a` is not inside one free block
  /// or the resource cannot place at a given offset.
  void claim(const Allocation& a);

 private:
  virtual std::optional<Allocation> do_allocate(std::uint64_t bytes, std::uint64_t align) = 0;
  /// `sizes` already rounded up to `align`.
  [[nodiscard]] virtual bool do_can_allocate(std::span<const std::uint64_t> sizes,
                                             std::uint64_t align) const = 0;
  [[nodiscard]] virtual std::optional<Allocation> do_probe(std::uint64_t bytes,
                                                           std::uint64_t align) const = 0;
  virtual void do_claim(const Allocation& a);
  virtual void do_deallocate(const Allocation& a) = 0;
  [[nodiscard]] virtual std::uint64_t do_capacity() const noexcept = 0;
  [[nodiscard]] virtual std::uint64_t do_largest_free() const noexcept = 0;

  std::uint64_t in_use_ = 0, peak_ = 0, allocations_ = 0, failures_ = 0;
};

/// Best-fit free list with coalescing of neighbouring free blocks. O(log n) per operation.
class BestFitPool final : public MemoryResource {
 public:
  /// Manages [base_offset, base_offset + capacity_bytes).
  explicit BestFitPool(std::uint64_t capacity_bytes, std::uint64_t base_offset = 0);
  [[nodiscard]] std::size_t free_blocks() const noexcept { return by_offset_.size(); }
  /// The largest free block there would be once `a` (empty, or inside one free block:
  /// checked, std::logic_error) were claimed. Changes nothing. O(log n).
  [[nodiscard]] std::uint64_t largest_free_after_claim(const Allocation& a) const;

 private:
  std::optional<Allocation> do_allocate(std::uint64_t bytes, std::uint64_t align) override;
  [[nodiscard]] bool do_can_allocate(std::span<const std::uint64_t> sizes,
                                     std::uint64_t align) const override;
  [[nodiscard]] std::optional<Allocation> do_probe(std::uint64_t bytes,
                                                   std::uint64_t align) const override;
  void do_claim(const Allocation& a) override;
  /// The free block holding [offset, offset + bytes), or by_offset_.end().
  [[nodiscard]] std::map<std::uint64_t, std::uint64_t>::const_iterator block_holding(
      std::uint64_t offset, std::uint64_t bytes) const;
  void do_deallocate(const Allocation& a) override;
  [[nodiscard]] std::uint64_t do_capacity() const noexcept override { return capacity_; }
  [[nodiscard]] std::uint64_t do_largest_free() const noexcept override;
  void insert_free(std::uint64_t offset, std::uint64_t bytes);
  void erase_free(std::uint64_t offset, std::uint64_t bytes);

  std::uint64_t capacity_;
  std::map<std::uint64_t, std::uint64_t> by_offset_;           // offset -> size of free block
  std::set<std::pair<std::uint64_t, std::uint64_t>> by_size_;  // (size, offset)
  std::map<std::uint64_t, std::uint64_t> live_;                // offset -> size, for checks
};

/// Equal-size blocks (e.g. per-request activation slots): O(1) allocate and free.
class FixedBlockPool final : public MemoryResource {
 public:
  FixedBlockPool(std::uint64_t block_bytes, std::uint64_t block_count,
                 std::uint64_t base_offset = 0);
  [[nodiscard]] std::uint64_t block_bytes() const noexcept { return block_bytes_; }

 private:
  std::optional<Allocation> do_allocate(std::uint64_t bytes, std::uint64_t align) override;
  [[nodiscard]] bool do_can_allocate(std::span<const std::uint64_t> sizes,
                                     std::uint64_t align) const override;
  [[nodiscard]] std::optional<Allocation> do_probe(std::uint64_t bytes,
                                                   std::uint64_t align) const override;
  void do_deallocate(const Allocation& a) override;
  [[nodiscard]] std::uint64_t do_capacity() const noexcept override {
    return block_bytes_ * block_count_;
  }
  [[nodiscard]] std::uint64_t do_largest_free() const noexcept override {
    return free_.empty() ? 0 : block_bytes_;
  }

  std::uint64_t block_bytes_, block_count_, base_;
  std::vector<std::uint64_t> free_;  // free block indices, used as a stack
  std::vector<bool> used_;
};

}  // namespace gpumux
