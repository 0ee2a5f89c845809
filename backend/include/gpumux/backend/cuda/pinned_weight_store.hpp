// Host memory for platform "cuda": the pinned weight store (the source of every weight load,
// page-locked once so copies run at full link speed and asynchronously), its pageable twin (for
// loads with op.pageable), and pinned buffers for training state leaving a GPU.
//
// One contiguous buffer per model: layer i at model.weight_bytes({0, i}), so a load of a layer
// range is ONE cudaMemcpyAsync. The bytes are fill_weights(seed_for(model name)), so numerics
// are real and reproducible. A training load moves weights plus optimizer state
// (op.bytes = weights x (1 + slots)); the store grows to hold such a load contiguously (the
// extra bytes continue the same fill). Grown-out buffers are kept until the store is destroyed,
// because copies enqueued earlier may still read them.
//
// Thread rules: every method is thread-safe (one mutex); creating or growing a buffer pins and
// fills it while holding the lock (slow: ~1 s per GiB); returned spans stay valid and unchanged
// for the store's lifetime. All pinned memory is released by the destructor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "gpumux/backend/host_store.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

/// Hands page-locked host memory back (cudaFreeHost; errors ignored: it runs in destructors).
struct CudaFreeHost {
  void operator()(void* p) const noexcept;
};

/// Page-locked host memory (cudaHostAlloc, portable across devices); RAII, move-only.
class PinnedBuffer : public OwnedBuffer<std::byte, CudaFreeHost> {
 public:
  PinnedBuffer() = default;
  /// Throws OutOfMemory / CudaError.
  explicit PinnedBuffer(std::size_t bytes);
};

class PinnedWeightStore final : public HostStore {
 public:
  /// Pinned weights of `model`, at least max(model weight bytes, min_bytes) long.
  [[nodiscard]] std::span<const std::byte> pinned(const Model& model, std::uint64_t min_bytes = 0);
  /// The same bytes in ordinary pageable memory (malloc), created on first use.
  [[nodiscard]] std::span<const std::byte> pageable(const Model& model,
                                                    std::uint64_t min_bytes = 0);
  /// HostStore: the pinned weights (the CPU device computes on them).
  [[nodiscard]] std::span<const std::byte> weights(const Model& model) override {
    return pinned(model);
  }

  /// Statistics: bytes pinned so far and wall seconds spent pinning and filling.
  [[nodiscard]] std::uint64_t pinned_bytes() const;
  [[nodiscard]] double staging_seconds() const;

 private:
  /// Buffers of one kind by model name, and those they replaced.
  template <class Buffer>
  struct Buffers {
    std::map<std::string, Buffer, std::less<>> current;
    std::vector<Buffer> retired;
  };
  /// The buffer of `model` in `buffers`; when it is missing or shorter than max(model weight
  /// bytes, min_bytes, 4) = want, `make(want)` makes its replacement, filled with the model's
  /// weights. Caller holds mutex_.
  template <class Buffer, class Make>
  std::span<const std::byte> filled(Buffers<Buffer>& buffers, const Model& model,
                                    std::uint64_t min_bytes, Make make);

  mutable std::mutex mutex_;
  Buffers<PinnedBuffer> pinned_;
  Buffers<MallocBuffer> pageable_;
  std::uint64_t pinned_bytes_ = 0;
  double staging_seconds_ = 0;
};

/// A growable pinned buffer for state copied off a GPU (D2H) and back (H2D). Thread-safe;
/// outgrown buffers are retired, not freed, until destruction (in-flight copies may use them).
class PinnedStateBuffer {
 public:
  /// A buffer of at least `bytes`.
  [[nodiscard]] std::span<std::byte> get(std::uint64_t bytes);

 private:
  std::mutex mutex_;
  PinnedBuffer current_;
  std::vector<PinnedBuffer> retired_;
};

}  // namespace gpumux
