// One move-only owner for a raw buffer, whatever releases it (std::free, cudaFree,
// cudaFreeHost): HostBuffer, DeviceBuffer and PinnedBuffer are it with their own allocation.
//
// Thread rules: none of its own; a buffer is used like a value. Sizes in bytes.
#pragma once

#include <cstddef>
#include <utility>

namespace gpumux {

/// Owns `size()` bytes at `data()` (nullptr when empty) and hands them to `Release{}(data)` at
/// destruction. `T` is the pointer's element type (std::byte, or void for device memory);
/// `Release` is stateless and never throws.
template <class T, class Release>
class OwnedBuffer {
 public:
  OwnedBuffer() = default;
  /// Takes ownership of `data`, `bytes` long.
  OwnedBuffer(T* data, std::size_t bytes) noexcept : data_(data), bytes_(bytes) {}
  ~OwnedBuffer() { release(); }
  OwnedBuffer(OwnedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  OwnedBuffer& operator=(OwnedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  OwnedBuffer(const OwnedBuffer&) = delete;
  OwnedBuffer& operator=(const OwnedBuffer&) = delete;
  [[nodiscard]] T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }

 private:
  void release() noexcept {
    if (data_ != nullptr) Release{}(data_);
  }

  T* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace gpumux
