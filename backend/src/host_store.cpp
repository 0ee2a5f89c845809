#include "gpumux/backend/host_store.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>

#include "gpumux/backend/weight_fill.hpp"

namespace gpumux {

void HostWeightStore::Free::operator()(std::byte* p) const noexcept {
  std::free(p);
}

std::span<const std::byte> HostWeightStore::weights(const Model& model) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = stores_.find(model.name());
  if (it == stores_.end()) {
    const std::size_t bytes =
        std::max<std::size_t>(std::min<std::uint64_t>(model.weight_bytes(), cap_bytes_), 4);
    auto* p = static_cast<std::byte*>(std::malloc(bytes));
    if (p == nullptr) throw std::bad_alloc();
    fill_weights(p, bytes, seed_for(model.name().c_str()));
    it = stores_.emplace(model.name(), std::make_pair(std::unique_ptr<std::byte, Free>(p), bytes))
             .first;
  }
  return {it->second.first.get(), it->second.second};
}

HostBuffer::HostBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  data_ = static_cast<std::byte*>(std::calloc(bytes, 1));
  if (data_ == nullptr) throw std::bad_alloc();
}

HostBuffer::~HostBuffer() {
  std::free(data_);
}

HostBuffer& HostBuffer::operator=(HostBuffer&& o) noexcept {
  if (this != &o) {
    std::free(data_);
    data_ = o.data_;
    bytes_ = o.bytes_;
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

}  // namespace gpumux
