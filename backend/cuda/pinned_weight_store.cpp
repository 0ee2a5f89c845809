#include "gpumux/backend/cuda/pinned_weight_store.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>

#include "gpumux/backend/cuda/cuda_check.hpp"
#include "gpumux/backend/weight_fill.hpp"

namespace gpumux {

PinnedBuffer::PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  void* p = nullptr;
  GPUMUX_CUDA_ALLOC_TRY(cudaHostAlloc(&p, bytes, cudaHostAllocPortable), bytes);
  ptr_ = static_cast<std::byte*>(p);
}

PinnedBuffer::~PinnedBuffer() {
  if (ptr_ != nullptr) (void)cudaFreeHost(ptr_);
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_ != nullptr) (void)cudaFreeHost(ptr_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

PinnedWeightStore::~PinnedWeightStore() {
  for (auto& [name, p] : pageable_) std::free(p.data);
  for (auto& p : retired_pageable_) std::free(p.data);
}

std::span<const std::byte> PinnedWeightStore::pinned(const Model& model, std::uint64_t min_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uint64_t want = std::max<std::uint64_t>({model.weight_bytes(), min_bytes, 4});
  auto it = pinned_.find(model.name());
  if (it == pinned_.end() || it->second.size() < want) {
    const auto t0 = std::chrono::steady_clock::now();
    PinnedBuffer fresh(static_cast<std::size_t>(want));
    fill_weights_parallel(fresh.data(), fresh.size(), seed_for(model.name().c_str()));
    pinned_bytes_ += want;
    staging_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (it == pinned_.end()) {
      it = pinned_.emplace(model.name(), std::move(fresh)).first;
    } else {
      retired_pinned_.push_back(std::move(it->second));
      it->second = std::move(fresh);
    }
  }
  return {it->second.data(), it->second.size()};
}

std::span<const std::byte> PinnedWeightStore::pageable(const Model& model,
                                                       std::uint64_t min_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uint64_t want = std::max<std::uint64_t>({model.weight_bytes(), min_bytes, 4});
  auto it = pageable_.find(model.name());
  if (it == pageable_.end() || it->second.size < want) {
    auto* p = static_cast<std::byte*>(std::malloc(static_cast<std::size_t>(want)));
    if (p == nullptr) throw std::bad_alloc();
    fill_weights_parallel(p, static_cast<std::size_t>(want), seed_for(model.name().c_str()));
    if (it == pageable_.end()) {
      it = pageable_.emplace(model.name(), Pageable{p, static_cast<std::size_t>(want)}).first;
    } else {
      retired_pageable_.push_back(it->second);
      it->second = Pageable{p, static_cast<std::size_t>(want)};
    }
  }
  return {it->second.data, it->second.size};
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
