// Host-side weight stores: the bytes a weight load copies to a device. "emulated" keeps them in
// ordinary memory (HostWeightStore), "cuda" in pinned memory (PinnedWeightStore); the CPU
// device reads them for its Eigen compute.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <span>
#include <string>

#include "gpumux/backend/owned_buffer.hpp"
#include "gpumux/model/model.hpp"

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

/// Hands memory from std::malloc or std::calloc back (std::free).
struct StdFree {
  void operator()(void* p) const noexcept;
};
/// Host memory from std::malloc or std::calloc.
using MallocBuffer = OwnedBuffer<std::byte, StdFree>;
/// `bytes` of uninitialised host memory (std::malloc); throws std::bad_alloc.
[[nodiscard]] MallocBuffer malloc_buffer(std::size_t bytes);

/// Ordinary (pageable) memory, one buffer per model, at most `cap_bytes` each, created on
/// first use.
class HostWeightStore final : public HostStore {
 public:
  explicit HostWeightStore(std::size_t cap_bytes) : cap_bytes_(cap_bytes) {}
  [[nodiscard]] std::span<const std::byte> weights(const Model& model) override;

 private:
  std::size_t cap_bytes_;
  std::mutex mutex_;
  std::map<std::string, MallocBuffer, std::less<>> stores_;
};

/// A zero-initialised host buffer whose pages are only touched when written (calloc).
class HostBuffer : public MallocBuffer {
 public:
  HostBuffer() = default;
  /// Throws std::bad_alloc.
  explicit HostBuffer(std::size_t bytes);
};

}  // namespace gpumux
