// Host-side weight stores: the bytes a weight load copies to a device. "emulated" keeps them in
// ordinary memory (HostWeightStore), "cuda" in pinned memory (PinnedWeightStore); the CPU
// device reads them for its Eigen compute.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "gpumux/model.hpp"

namespace gpumux {

class HostStore {
 public:
  virtual ~HostStore() = default;
  /// The model's weights on the host: layer i starts at model.weight_bytes({0, i}); a store
  /// shorter than the model (capped) wraps offsets around. Filled with fill_weights(seed_for(
  /// model name)). Thread-safe: the first call for a model creates and fills its store (which
  /// takes a while: worker threads make it, not the runtime thread); the returned bytes stay
  /// valid and unchanged for the store's lifetime.
  [[nodiscard]] virtual std::span<const std::byte> weights(const Model& model) = 0;
};

/// Ordinary (pageable) memory, one buffer per model, at most `cap_bytes` each, created on
/// first use.
class HostWeightStore final : public HostStore {
 public:
  explicit HostWeightStore(std::size_t cap_bytes) : cap_bytes_(cap_bytes) {}
  [[nodiscard]] std::span<const std::byte> weights(const Model& model) override;

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept;
  };
  std::size_t cap_bytes_;
  std::mutex mutex_;
  std::map<std::string, std::pair<std::unique_ptr<std::byte, Free>, std::size_t>, std::less<>>
      stores_;
};

/// A zero-initialised host buffer whose pages are only touched when written (calloc).
class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(std::size_t bytes);
  ~HostBuffer();
  HostBuffer(HostBuffer&& o) noexcept : data_(o.data_), bytes_(o.bytes_) {
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  HostBuffer& operator=(HostBuffer&& o) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace gpumux
