// The measurements of `gpumux calibrate` (calibration.cpp): host and event timers, the
// least-squares fits, and one function per measured quantity of the GPU.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/backend/cuda/cuda_check.hpp"
#include "gpumux/backend/cuda/cuda_layer_executor.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux::calibration {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

inline std::int64_t host_ns(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

template <class T>
T median(std::vector<T> v) {
  if (v.empty()) return T{};
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

struct LineFit {
  double intercept = 0;  // ns
  double slope = 0;      // ns per unit
  double max_rel_error = 0;
};

// Least squares t = a + b x with relative residuals ((t - fit) / t).
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& t, bool relative);

// cudaFree(0) in a fresh process: fork before the parent initialises CUDA.
std::vector<std::int64_t> measure_context_startup(int runs);

struct CopyFit {
  LineFit fit;
  std::vector<double> sizes, times;
  [[nodiscard]] double gbps() const { return 1.0 / fit.slope; }  // bytes per ns
  [[nodiscard]] json to_json() const {
    return {{"latency_ns", fit.intercept},
            {"gbps", gbps()},
            {"max_rel_error", fit.max_rel_error},
            {"bytes", sizes},
            {"median_ns", times}};
  }
};

/// H2D and D2H copies, pinned and pageable, 4 KiB .. max_bytes.
struct CopyFits {
  CopyFit h2d, d2h, h2d_pageable, d2h_pageable;
  /// pageable / pinned fitted bandwidth, mean of both directions, in [0.01, 1].
  [[nodiscard]] double pageable_factor() const {
    return std::clamp(0.5 * (h2d_pageable.gbps() / h2d.gbps() + d2h_pageable.gbps() / d2h.gbps()),
                      0.01, 1.0);
  }
};
CopyFits measure_copies(cudaStream_t s, std::size_t max_bytes, int reps);

/// Host times of an empty-kernel launch (per launch, batches of 2000), of an event record and
/// synchronize on an idle stream, and of a stream creation.
struct HostCosts {
  std::vector<double> launch, event, stream_create;
};
HostCosts measure_host_costs(cudaStream_t s);

/// cudaMalloc against size (1 MiB .. max_bytes) fitted as base + per GiB, cudaFree per size,
/// and page-locking per GiB (cudaHostAlloc of 256 MiB).
struct AllocationCosts {
  std::vector<double> gib, malloc_ns, free_ns;
  LineFit malloc_fit;
  double pin_per_gib = 0;
};
AllocationCosts measure_allocation(std::size_t max_bytes, int reps);

/// Per-layer forward and backward times of `m` at `batch`: events between consecutive layers
/// of one pass, the pass repeated, the median per layer.
json layer_times(CudaLayerExecutor& exec, const Model& m, std::uint32_t batch, cudaStream_t s,
                 int warmup, int reps);

}  // namespace gpumux::calibration
