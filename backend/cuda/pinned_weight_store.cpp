#include "gpumux/backend/cuda/pinned_weight_store.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "gpumux/backend/cuda/cuda_check.hpp"
#include "gpumux/backend/weight_fill.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

void CudaFreeHost::operator()(void* p) const noexcept {
  (void)cudaFreeHost(p);  // never throws from a destructor
}

namespace {

/// `bytes` of pinned host memory, nullptr for none.
std::byte* pinned_alloc(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  GPUMUX_CUDA_ALLOC_TRY(cudaHostAlloc(&p, bytes, cudaHostAllocPortable), bytes);
  return static_cast<std::byte*>(p);
}

}  // namespace

PinnedBuffer::PinnedBuffer(std::size_t bytes) : OwnedBuffer(pinned_alloc(bytes), bytes) {}

template <class Buffer, class Make>
std::span<const std::byte> PinnedWeightStore::filled(Buffers<Buffer>& buffers, const Model& model,
                                                     std::uint64_t min_bytes, Make make) {
  const std::uint64_t want = std::max<std::uint64_t>({model.weight_bytes(), min_bytes, 4});
  auto it = buffers.current.find(model.name());
  if (it == buffers.current.end() || it->second.size() < want) {
    Buffer fresh = make(static_cast<std::size_t>(want));
    if (it == buffers.current.end()) {
      it = buffers.current.emplace(model.name(), std::move(fresh)).first;
    } else {
      buffers.retired.push_back(std::move(it->second));
      it->second = std::move(fresh);
    }
  }
  return {it->second.data(), it->second.size()};
}

std::span<const std::byte> PinnedWeightStore::pinned(const Model& model, std::uint64_t min_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  return filled(pinned_, model, min_bytes, [&](std::size_t want) {
    const auto t0 = std::chrono::steady_clock::now();
    PinnedBuffer fresh(want);
    fill_weights_parallel(fresh.data(), fresh.size(), seed_for(model.name().c_str()));
    pinned_bytes_ += want;
    staging_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return fresh;
  });
}

std::span<const std::byte> PinnedWeightStore::pageable(const Model& model,
                                                       std::uint64_t min_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  return filled(pageable_, model, min_bytes, [&](std::size_t want) {
    MallocBuffer fresh = malloc_buffer(want);
    fill_weights_parallel(fresh.data(), fresh.size(), seed_for(model.name().c_str()));
    return fresh;
  });
}

std::uint64_t PinnedWeightStore::pinned_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pinned_bytes_;
}

double PinnedWeightStore::staging_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return staging_seconds_;
}

std::span<std::byte> PinnedStateBuffer::get(std::uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (current_.size() < bytes) {
    PinnedBuffer fresh(static_cast<std::size_t>(std::max<std::uint64_t>(bytes, 1u << 20)));
    if (current_.size() > 0) retired_.push_back(std::move(current_));
    current_ = std::move(fresh);
  }
  return {current_.data(), current_.size()};
}

}  // namespace gpumux
