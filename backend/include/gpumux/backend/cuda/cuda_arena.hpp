// Device memory for platform "cuda": one cudaMalloc slab per GPU, on which the Engine's
// offset-based pools place weights, state and activations (address = base + offset), plus a
// small RAII wrapper for other device buffers. Released at destruction.
//
// Thread rules: construction and destruction on one thread; address() on any thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "gpumux/backend/owned_buffer.hpp"

namespace gpumux {

/// Hands device memory back (cudaFree; errors ignored: it runs in destructors).
struct CudaFree {
  void operator()(void* p) const noexcept;
};

/// One cudaMalloc'ed device buffer (RAII, move-only).
class DeviceBuffer : public OwnedBuffer<void, CudaFree> {
 public:
  DeviceBuffer() = default;
  /// cudaMalloc on the current device; throws OutOfMemory / CudaError.
  explicit DeviceBuffer(std::size_t bytes);
};

/// Enqueues on `stream` a fill of `bytes` (a multiple of 4) device bytes at `data` with exactly
/// what fill_weights(data, bytes, seed) writes on the host. Throws CudaError.
void fill_device_weights(void* data, std::size_t bytes, std::uint64_t seed, cudaStream_t stream);

class CudaArena {
 public:
  /// Allocates `bytes` on GPU `ordinal` (which becomes the current device of the calling
  /// thread). Throws OutOfMemory when the GPU cannot hold it, CudaError for other failures.
  CudaArena(int ordinal, std::uint64_t bytes);

  /// The size an arena should have on `ordinal`: `wanted` capped to the free memory minus
  /// `margin_bytes` (for cuBLAS workspaces, scratch, per-tensor cudaMalloc of the naive path).
  [[nodiscard]] static std::uint64_t fit(int ordinal, std::uint64_t wanted,
                                         std::uint64_t margin_bytes);

  [[nodiscard]] int ordinal() const noexcept { return ordinal_; }
  [[nodiscard]] std::uint64_t capacity() const noexcept { return buffer_.size(); }
  [[nodiscard]] void* base() const noexcept { return buffer_.data(); }
  /// base + offset, with `bytes` clamped so the range stays inside the arena.
  [[nodiscard]] std::byte* address(std::uint64_t offset,
                                   std::uint64_t* bytes = nullptr) const noexcept;

 private:
  int ordinal_;
  DeviceBuffer buffer_;
};

}  // namespace gpumux
