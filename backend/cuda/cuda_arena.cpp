#include "gpumux/backend/cuda/cuda_arena.hpp"

#include <algorithm>

#include "gpumux/backend/cuda/cuda_check.hpp"
#include "kernels.h"

namespace gpumux {

namespace {

/// `bytes` of device memory on the current device, nullptr for none.
void* device_alloc(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  GPUMUX_CUDA_ALLOC_TRY(cudaMalloc(&p, bytes), bytes);
  return p;
}

}  // namespace

void CudaFree::operator()(void* p) const noexcept {
  (void)cudaFree(p);  // never throws from a destructor
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : OwnedBuffer(device_alloc(bytes), bytes) {}

void fill_device_weights(void* data, std::size_t bytes, std::uint64_t seed, cudaStream_t stream) {
  GPUMUX_CUDA_TRY(static_cast<cudaError_t>(gpumux_fill_weights(data, bytes / 4, seed, 0, stream)));
}

CudaArena::CudaArena(int ordinal, std::uint64_t bytes) : ordinal_(ordinal) {
  GPUMUX_CUDA_TRY(cudaSetDevice(ordinal));
  buffer_ = DeviceBuffer(static_cast<std::size_t>(bytes));
}

std::uint64_t CudaArena::fit(int ordinal, std::uint64_t wanted, std::uint64_t margin_bytes) {
  GPUMUX_CUDA_TRY(cudaSetDevice(ordinal));
  std::size_t free_bytes = 0, total = 0;
  GPUMUX_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total));
  const std::uint64_t usable = free_bytes > margin_bytes ? free_bytes - margin_bytes : 0;
  // Keep the Engine's 256-byte alignment meaningful: a whole number of MiB.
  return std::min<std::uint64_t>(wanted, usable) & ~((std::uint64_t{1} << 20) - 1);
}

std::byte* CudaArena::address(std::uint64_t offset, std::uint64_t* bytes) const noexcept {
  const std::uint64_t cap = capacity();
  if (offset > cap) offset = cap;
  if (bytes != nullptr) *bytes = std::min(*bytes, cap - offset);
  return static_cast<std::byte*>(buffer_.data()) + offset;
}

}  // namespace gpumux
