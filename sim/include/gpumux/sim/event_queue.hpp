// The pending-event set of the simulator: an implicit 4-ary min-heap of 16-byte POD keys
// ordered by (time, seq), where seq is a counter that increases with every push, so events at
// the same time pop in the order they were scheduled. Callbacks live in a slab indexed by slot
// (with a free list); a generation per slot makes cancel() O(1): the callback is destroyed at
// once and the key stays in the heap as a tombstone that pop() skips. Keys and slots are laid
// out on 64-byte lines (the four children of a heap node share one line).
//
// Time is int64 ns. No heap allocation per event once warmed up (the vectors only grow).
// Not thread-safe: one owner (the SimRuntime, on the runtime thread).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include "gpumux/api/ids.hpp"
#include "gpumux/api/runtime.hpp"
#include "gpumux/api/time.hpp"

namespace gpumux {

class EventQueue {
 public:
  using Callback = Runtime::Callback;

  /// Slots are packed into the low bits of the key's order word (seq in the high bits), so at
  /// most 2^24 events may be pending at once and 2^40 may be pushed over the queue's life.
  static constexpr unsigned kSlotBits = 24;
  static constexpr std::uint64_t kMaxSlots = std::uint64_t{1} << kSlotBits;
  static constexpr std::uint64_t kMaxSeq = std::uint64_t{1} << (64 - kSlotBits);

  EventQueue() : heap_(kPad) {}

  /// Adds an event at `when_ns` (any value; the runtime clamps). Returns an id that is never
  /// TimerId{0}. Throws std::invalid_argument for an empty callback, std::length_error beyond
  /// the limits above.
  TimerId push(TimeNs when_ns, Callback&& cb) {
    if (!cb) throw std::invalid_argument("EventQueue: empty callback");
    if (seq_ >= kMaxSeq) throw std::length_error("EventQueue: sequence counter exhausted");
    std::uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      if (slots_.size() >= kMaxSlots) throw std::length_error("EventQueue: too many events");
      slot = static_cast<std::uint32_t>(slots_.size());
      slots_.emplace_back();
      // pop() and cancel() are noexcept: the free list must never need to grow there.
      if (free_.capacity() < slots_.capacity()) free_.reserve(slots_.capacity());
    }
    Slot& s = slots_[slot];
    s.cb = std::move(cb);
    if (++s.generation == 0) s.generation = 1;  // ids are never 0
    heap_.push_back(make_key(when_ns, (seq_++ << kSlotBits) | slot));
    sift_up(size_heap() - 1);
    ++live_;
    return TimerId{(std::uint64_t{s.generation} << 32) | slot};
  }

  /// Cancels a pending event: true if it was pending, false if it already ran, was cancelled,
  /// or the id is unknown. O(1); the heap key becomes a tombstone (its slot has no callback).
  bool cancel(TimerId id) noexcept {
    const std::uint64_t bits = raw(id);
    const auto slot = static_cast<std::uint32_t>(bits & 0xffffffffu);
    const auto gen = static_cast<std::uint32_t>(bits >> 32);
    if (slot >= slots_.size()) return false;
    Slot& s = slots_[slot];
    if (s.generation != gen || !s.cb) return false;
    s.cb.reset();
    --live_;
    ++tombstones_;
    if (tombstones_ > 1024 && tombstones_ > live_) compact();
    return true;
  }

  /// Live (not cancelled) events.
  [[nodiscard]] std::size_t size() const noexcept { return live_; }
  [[nodiscard]] bool empty() const noexcept { return live_ == 0; }
  /// Events pushed so far.
  [[nodiscard]] std::uint64_t pushed() const noexcept { return seq_; }

  /// Time of the earliest live event, kTimeNever if none. Discards tombstones on top.
  [[nodiscard]] TimeNs next_time() noexcept {
    drop_top_tombstones();
    return size_heap() == 0 ? kTimeNever : time_of(at(0));
  }

  /// Removes the earliest live event, moves its callback into `out` and returns its time.
  /// Precondition: !empty().
  TimeNs pop(Callback& out) noexcept {
    drop_top_tombstones();
    const Key top = at(0);
    remove_top();
    const auto slot = static_cast<std::uint32_t>(top.order & (kMaxSlots - 1));
    out = std::move(slots_[slot].cb);  // leaves the slot empty: a later cancel() is false
    free_.push_back(slot);
    --live_;
    return time_of(top);
  }

  /// Takes the next sequence number without pushing: an event kept outside the heap (a
  /// SimRuntime re-armable timer) orders among the heap's events by (time, this seq), exactly as
  /// if it had been pushed now. Throws std::length_error when exhausted.
  std::uint64_t take_seq() {
    if (seq_ >= kMaxSeq) throw std::length_error("EventQueue: sequence counter exhausted");
    return seq_++;
  }

  /// Whether the earliest live event orders before (time_ns, seq), a key from take_seq().
  /// Precondition: !empty(). Discards tombstones on top.
  [[nodiscard]] bool top_precedes(TimeNs time_ns, std::uint64_t seq) noexcept {
    drop_top_tombstones();
    const Key& top = at(0);
    const TimeNs t = time_of(top);
    return t < time_ns || (t == time_ns && (top.order >> kSlotBits) < seq);
  }

  /// Pre-sizes the storage for `events` pending events.
  void reserve(std::size_t events) {
    heap_.reserve(events + kPad);
    slots_.reserve(events);
    free_.reserve(slots_.capacity());
  }

 private:
  // Keys order by (time, order). Seen as one unsigned 128-bit number (time with its sign bit
  // flipped) they compare branch-free, which is much faster while the heap sits in cache; on a
  // large heap the branchy comparison wins because speculation overlaps the cache misses.
  struct Key {
    std::uint64_t order;      ///< seq << kSlotBits | slot: unique, so keys are totally ordered
    std::uint64_t time_bits;  ///< time_ns ^ kSignBit
  };
  static constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;
  __extension__ using U128 = unsigned __int128;
  static Key make_key(TimeNs time, std::uint64_t order) noexcept {
    return Key{order, static_cast<std::uint64_t>(time) ^ kSignBit};
  }
  static TimeNs time_of(const Key& k) noexcept {
    return static_cast<TimeNs>(k.time_bits ^ kSignBit);
  }
  static U128 value(const Key& k) noexcept { return (U128{k.time_bits} << 64) | k.order; }
  static bool less(const Key& a, const Key& b) noexcept {
    return a.time_bits < b.time_bits || (a.time_bits == b.time_bits && a.order < b.order);
  }
  template <bool kBranchFree>
  static bool less_as(const Key& a, const Key& b) noexcept {
    if constexpr (kBranchFree) return value(a) < value(b);
    return less(a, b);
  }
  /// Heaps up to this many keys (1 MiB) use the branch-free comparison (measured crossover).
  static constexpr std::size_t kBranchFreeMaxKeys = std::size_t{1} << 16;

  // The heap is stored with kPad unused entries in front so that the four children of a node
  // (logical 4i+1..4i+4, physical 4i+4..4i+7) share one 64-byte cache line.
  static constexpr std::size_t kPad = 3;

  template <class T>
  struct CacheLineAllocator {
    using value_type = T;
    CacheLineAllocator() = default;
    template <class U>  // NOLINT below: implicit, as the Allocator requirements ask (rebind)
    CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}  // NOLINT
    T* allocate(std::size_t n) {
      return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
    }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete (p, std::align_val_t{64}); }
    friend bool operator==(const CacheLineAllocator&, const CacheLineAllocator&) { return true; }
  };

  [[nodiscard]] std::size_t size_heap() const noexcept { return heap_.size() - kPad; }
  Key& at(std::size_t i) noexcept { return heap_[i + kPad]; }

  void sift_up(std::size_t i) noexcept {
    const Key key = at(i);
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!less(key, at(parent))) break;
      at(i) = at(parent);
      i = parent;
    }
    at(i) = key;
  }

  // Places `key` in the subtree whose root hole is `i`: the hole moves down to the smallest of
  // up to four children (a tournament of three comparisons) until `key` fits.
  void sift_down(std::size_t i, Key key) noexcept {
    if (size_heap() <= kBranchFreeMaxKeys) {
      sift_down_as<true>(i, key);
    } else {
      sift_down_as<false>(i, key);
    }
  }

  template <bool kBranchFree>
  void sift_down_as(std::size_t i, Key key) noexcept {
    const std::size_t n = size_heap();
    for (;;) {
      const std::size_t first = 4 * i + 1;
      std::size_t best;
      if (first + 3 < n) {
        if constexpr (kBranchFree) {  // index arithmetic, so the compiler cannot add branches
          const std::size_t a = first + less_as<true>(at(first + 1), at(first));
          const std::size_t b = first + 2 + less_as<true>(at(first + 3), at(first + 2));
          const std::size_t pick_b = less_as<true>(at(b), at(a));
          best = a ^ ((a ^ b) & (std::size_t{0} - pick_b));
        } else {
          const std::size_t a = less(at(first + 1), at(first)) ? first + 1 : first;
          const std::size_t b = less(at(first + 3), at(first + 2)) ? first + 3 : first + 2;
          best = less(at(b), at(a)) ? b : a;
        }
      } else if (first < n) {
        best = first;
        for (std::size_t c = first + 1; c < n; ++c) {
          if (less(at(c), at(best))) best = c;
        }
      } else {
        break;
      }
      if (!less_as<kBranchFree>(at(best), key)) break;
      at(i) = at(best);
      i = best;
    }
    at(i) = key;
  }

  void remove_top() noexcept {
    const Key last = heap_.back();
    heap_.pop_back();
    if (size_heap() > 0) sift_down(0, last);
  }

  [[nodiscard]] bool is_tombstone(const Key& key) const noexcept {
    return !slots_[key.order & (kMaxSlots - 1)].cb;
  }

  // Inline check, out-of-line removal: the top is rarely a tombstone, and this runs on every
  // look at the top (the runtime looks two or three times per event).
  void drop_top_tombstones() noexcept {
    if (size_heap() > 0 && is_tombstone(at(0))) drop_top_tombstones_slow();
  }
  [[gnu::noinline]] void drop_top_tombstones_slow() noexcept {
    while (size_heap() > 0 && is_tombstone(at(0))) {
      free_.push_back(static_cast<std::uint32_t>(at(0).order & (kMaxSlots - 1)));
      remove_top();
      --tombstones_;
    }
  }

  // Removes every tombstone and re-heapifies: keeps the heap small when many far-future
  // timers are cancelled. The pop order depends on the keys only, so this is deterministic.
  void compact() noexcept {
    std::size_t out = 0;
    for (std::size_t i = 0; i < size_heap(); ++i) {
      if (is_tombstone(at(i))) {
        free_.push_back(static_cast<std::uint32_t>(at(i).order & (kMaxSlots - 1)));
      } else {
        at(out++) = at(i);
      }
    }
    heap_.resize(out + kPad);
    tombstones_ = 0;
    for (std::size_t i = out / 4 + 1; i-- > 0;) {
      if (i < out) sift_down(i, at(i));
    }
  }

  // A callback and its generation share one 64-byte line: a hold touches one slab line.
  struct alignas(64) Slot {
    Callback cb;  ///< empty: free, or cancelled (a tombstone while its key is in the heap)
    std::uint32_t generation = 0;
  };

  std::vector<Key, CacheLineAllocator<Key>> heap_;
  std::vector<Slot, CacheLineAllocator<Slot>> slots_;
  std::vector<std::uint32_t> free_;
  std::uint64_t seq_ = 0;
  std::size_t live_ = 0;
  std::size_t tombstones_ = 0;
};

}  // namespace gpumux
