#include "gpumux/backend/host_store.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <utility>

#include "gpumux/backend/weight_fill.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

void StdFree::operator()(void* p) const noexcept {
  std::free(p);
}

MallocBuffer malloc_buffer(std::size_t bytes) {
  auto* p = static_cast<std::byte*>(std::malloc(bytes));
  if (p == nullptr) throw std::bad_alloc();
  return {p, bytes};
}

std::span<const std::byte> HostWeightStore::weights(const Model& model) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = stores_.find(model.name());
  if (it == stores_.end()) {
    const std::size_t bytes =
        std::max<std::size_t>(std::min<std::uint64_t>(model.weight_bytes(), cap_bytes_), 4);
    MallocBuffer store = malloc_buffer(bytes);
    fill_weights(store.data(), store.size(), seed_for(model.name().c_str()));
    it = stores_.emplace(model.name(), std::move(store)).first;
  }
  return {it->second.data(), it->second.size()};
}

namespace {

/// `bytes` of zeroed host memory (std::calloc), nullptr for none; throws std::bad_alloc.
std::byte* zeroed(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  auto* p = static_cast<std::byte*>(std::calloc(bytes, 1));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

HostBuffer::HostBuffer(std::size_t bytes) : MallocBuffer(zeroed(bytes), bytes) {}

}  // namespace gpumux
