// A FIFO on a growable ring buffer: push_back / front / pop_front without allocation once it
// has grown to the largest backlog (std::deque allocates and frees a block every few elements
// as the queue moves through memory, which the engine's per-op hook queue did millions of
// times). T must be default-constructible and movable.
//
// Thread rules: not thread-safe (one owner thread). Sizes are element counts.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace gpumux {

template <class T>
class RingFifo {
 public:
  RingFifo() = default;
  RingFifo(const RingFifo&) = default;
  RingFifo& operator=(const RingFifo&) = default;
  /// A moved-from queue is empty (and usable).
  RingFifo(RingFifo&& o) noexcept { *this = std::move(o); }
  RingFifo& operator=(RingFifo&& o) noexcept {
    buf_ = std::move(o.buf_);
    o.buf_.clear();
    capacity_ = std::exchange(o.capacity_, 0);
    mask_ = std::exchange(o.mask_, 0);
    head_ = std::exchange(o.head_, 0);
    size_ = std::exchange(o.size_, 0);
    return *this;
  }

  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// The oldest element; requires !empty().
  [[nodiscard]] T& front() noexcept { return buf_[head_]; }
  /// The element `i` places behind the oldest; requires i < size().
  [[nodiscard]] T& operator[](std::size_t i) noexcept { return buf_[(head_ + i) & mask_]; }
  [[nodiscard]] const T& operator[](std::size_t i) const noexcept {
    return buf_[(head_ + i) & mask_];
  }
  /// Assigns straight into the slot (no temporary: engine hooks are ~100 bytes).
  template <class U>
  void push_back(U&& v) {
    if (size_ == capacity_) grow();
    buf_[(head_ + size_) & mask_] = std::forward<U>(v);
    ++size_;
  }
  /// Appends an element and returns it to be assigned in place (it holds a stale or
  /// default value: the caller sets every field).
  T& push_back_slot() {
    if (size_ == capacity_) grow();
    T& slot = buf_[(head_ + size_) & mask_];
    ++size_;
    return slot;
  }
  /// Requires !empty(). The slot keeps a moved-from value until it is reused.
  void pop_front() noexcept {
    head_ = (head_ + 1) & mask_;
    --size_;
  }

 private:
  void grow() {  // doubles the buffer (16 at first), oldest element first
    std::vector<T> next(buf_.empty() ? 16 : 2 * buf_.size());
    for (std::size_t i = 0; i < size_; ++i) {
      next[i] = std::move(buf_[(head_ + i) & (buf_.size() - 1)]);
    }
    buf_ = std::move(next);
    head_ = 0;
    capacity_ = buf_.size();
    mask_ = capacity_ - 1;
  }
  // The capacity is kept beside the vector: its size() divides by sizeof(T), which for the
  // engine's ~100-byte records costs a multiply on every access.
  std::vector<T> buf_;  ///< power-of-two size
  std::size_t capacity_ = 0;
  std::size_t mask_ = 0;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace gpumux
