// The measurements of `gpumux calibrate` (calibration_measure.hpp); calibration.cpp says what
// each one measures and how.
#include "calibration_measure.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <iostream>

#include <Eigen/Dense>

#include "gpumux/backend/cuda/cuda_arena.hpp"
#include "gpumux/backend/cuda/pinned_weight_store.hpp"
#include "gpumux/backend/cuda/training_layout.hpp"
#include "gpumux/backend/weight_fill.hpp"
#include "kernels.h"

namespace gpumux::calibration {

namespace {

class Timer {  // two events on one stream
 public:
  explicit Timer(cudaStream_t s) : s_(s) {
    GPUMUX_CUDA_TRY(cudaEventCreate(&a_));
    GPUMUX_CUDA_TRY(cudaEventCreate(&b_));
  }
  ~Timer() {
    (void)cudaEventDestroy(a_);
    (void)cudaEventDestroy(b_);
  }
  void start() { GPUMUX_CUDA_TRY(cudaEventRecord(a_, s_)); }
  double stop_ns() {
    GPUMUX_CUDA_TRY(cudaEventRecord(b_, s_));
    GPUMUX_CUDA_TRY(cudaEventSynchronize(b_));
    float ms = 0;
    GPUMUX_CUDA_TRY(cudaEventElapsedTime(&ms, a_, b_));
    return static_cast<double>(ms) * 1e6;
  }

 private:
  cudaStream_t s_;
  cudaEvent_t a_ = nullptr, b_ = nullptr;
};

CopyFit measure_copy(cudaStream_t s, void* dst, const void* src, cudaMemcpyKind kind,
                     const std::vector<std::size_t>& sizes, int reps) {
  Timer timer(s);
  CopyFit out;
  for (const std::size_t bytes : sizes) {
    std::vector<double> t;
    for (int r = 0; r < reps + 2; ++r) {
      timer.start();
      GPUMUX_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kind, s));
      const double ns = timer.stop_ns();
      if (r >= 2) t.push_back(ns);  // two warm-ups
    }
    out.sizes.push_back(static_cast<double>(bytes));
    out.times.push_back(median(t));
  }
  out.fit = fit_line(out.sizes, out.times, true);
  return out;
}

}  // namespace

// Least squares t = a + b x with relative residuals ((t - fit) / t).
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& t, bool relative) {
  const auto n = static_cast<Eigen::Index>(x.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double w = relative ? 1.0 / std::max(t[i], 1.0) : 1.0;
    a(i, 0) = w;
    a(i, 1) = x[i] * w;
    y(i) = t[i] * w;
  }
  const Eigen::Vector2d c = a.colPivHouseholderQr().solve(y);
  LineFit f{std::max(0.0, c(0)), std::max(c(1), 1e-12), 0};
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double fit = f.intercept + f.slope * x[i];
    f.max_rel_error = std::max(f.max_rel_error, std::abs(fit - t[i]) / std::max(t[i], 1.0));
  }
  return f;
}

// cudaFree(0) in a fresh process: fork before the parent initialises CUDA.
std::vector<std::int64_t> measure_context_startup(int runs) {
  std::vector<std::int64_t> out;
  for (int i = 0; i < runs; ++i) {
    int fds[2];
    if (pipe(fds) != 0) break;
    const pid_t pid = fork();
    if (pid < 0) {
      close(fds[0]);
      close(fds[1]);
      break;
    }
    if (pid == 0) {  // child: first CUDA call of this process
      close(fds[0]);
      const auto t0 = Clock::now();
      const cudaError_t st = cudaFree(nullptr);
      const std::int64_t ns = st == cudaSuccess ? host_ns(t0, Clock::now()) : -1;
      (void)!write(fds[1], &ns, sizeof ns);
      close(fds[1]);
      _exit(0);
    }
    close(fds[1]);
    std::int64_t ns = -1;
    if (read(fds[0], &ns, sizeof ns) != static_cast<ssize_t>(sizeof ns)) ns = -1;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (ns > 0) out.push_back(ns);
  }
  return out;
}

CopyFits measure_copies(cudaStream_t s, std::size_t max_bytes, int reps) {
  std::vector<std::size_t> sizes;
  for (std::size_t b = 4096; b <= max_bytes; b *= 4) sizes.push_back(b);
  CopyFit h2d, d2h, h2d_pageable, d2h_pageable;
  {
    DeviceBuffer dev(max_bytes);
    PinnedBuffer pinned(max_bytes);
    std::vector<std::byte> pageable(max_bytes);
    std::memset(pageable.data(), 1, pageable.size());  // touch every page
    std::memset(pinned.data(), 1, pinned.size());
    std::cerr << "  copies\n";
    h2d = measure_copy(s, dev.data(), pinned.data(), cudaMemcpyHostToDevice, sizes, reps);
    d2h = measure_copy(s, pinned.data(), dev.data(), cudaMemcpyDeviceToHost, sizes, reps);
    h2d_pageable =
        measure_copy(s, dev.data(), pageable.data(), cudaMemcpyHostToDevice, sizes, reps);
    d2h_pageable =
        measure_copy(s, pageable.data(), dev.data(), cudaMemcpyDeviceToHost, sizes, reps);
  }
  return CopyFits{h2d, d2h, h2d_pageable, d2h_pageable};
}

HostCosts measure_host_costs(cudaStream_t s) {
  std::vector<double> launch;
  for (int b = 0; b < 5; ++b) {
    const int n = 2000;
    GPUMUX_CUDA_TRY(cudaStreamSynchronize(s));
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) {
      GPUMUX_CUDA_TRY(static_cast<cudaError_t>(gpumux_noop(s)));
    }
    launch.push_back(static_cast<double>(host_ns(t0, Clock::now())) / n);
    GPUMUX_CUDA_TRY(cudaStreamSynchronize(s));
  }
  std::vector<double> event;
  {
    cudaEvent_t e = nullptr;
    GPUMUX_CUDA_TRY(cudaEventCreate(&e));
    for (int i = 0; i < 200; ++i) {
      const auto t0 = Clock::now();
      GPUMUX_CUDA_TRY(cudaEventRecord(e, s));
      GPUMUX_CUDA_TRY(cudaEventSynchronize(e));
      event.push_back(static_cast<double>(host_ns(t0, Clock::now())));
    }
    (void)cudaEventDestroy(e);
  }
  std::vector<double> stream_create;
  for (int i = 0; i < 100; ++i) {
    cudaStream_t t = nullptr;
    const auto t0 = Clock::now();
    GPUMUX_CUDA_TRY(cudaStreamCreateWithPriority(&t, cudaStreamNonBlocking, 0));
    stream_create.push_back(static_cast<double>(host_ns(t0, Clock::now())));
    GPUMUX_CUDA_TRY(cudaStreamDestroy(t));
  }
  return HostCosts{launch, event, stream_create};
}

AllocationCosts measure_allocation(std::size_t max_bytes, int reps) {
  std::vector<double> malloc_gib, malloc_ns, free_ns;
  for (std::size_t b = std::size_t{1} << 20; b <= max_bytes; b *= 4) {
    std::vector<double> m, f;
    for (int r = 0; r < reps; ++r) {
      void* p = nullptr;
      const auto t0 = Clock::now();
      GPUMUX_CUDA_ALLOC_TRY(cudaMalloc(&p, b), b);
      const auto t1 = Clock::now();
      GPUMUX_CUDA_TRY(cudaFree(p));
      const auto t2 = Clock::now();
      m.push_back(static_cast<double>(host_ns(t0, t1)));
      f.push_back(static_cast<double>(host_ns(t1, t2)));
    }
    malloc_gib.push_back(static_cast<double>(b) / kGiB);
    malloc_ns.push_back(median(m));
    free_ns.push_back(median(f));
  }
  const LineFit malloc_fit = fit_line(malloc_gib, malloc_ns, false);
  double pin_per_gib = 0;
  {
    const std::size_t b = std::size_t{256} << 20;
    const auto t0 = Clock::now();
    PinnedBuffer p(b);
    pin_per_gib = static_cast<double>(host_ns(t0, Clock::now())) * kGiB / static_cast<double>(b);
  }
  return AllocationCosts{malloc_gib, malloc_ns, free_ns, malloc_fit, pin_per_gib};
}

json layer_times(CudaLayerExecutor& exec, const Model& m, std::uint32_t batch, cudaStream_t s,
                 int warmup, int reps) {
  const std::uint32_t n = m.layer_count();
  const TrainingLayout layout(m);
  DeviceBuffer weights(layout.weight_region_bytes());
  GPUMUX_CUDA_TRY(static_cast<cudaError_t>(
      gpumux_fill_weights(weights.data(), weights.size() / 4, seed_for(m.name().c_str()), 0, s)));
  const std::uint64_t act_bytes = std::min<std::uint64_t>(
      m.training_activation_bytes_per_sample() * batch, std::uint64_t{1} << 30);
  DeviceBuffer act(std::max<std::size_t>(act_bytes, 256));
  auto mem = [&](std::uint32_t i) {
    return layout.layer(i, static_cast<std::byte*>(weights.data()),
                        static_cast<std::byte*>(act.data()), act.size(), /*training=*/true);
  };
  std::vector<cudaEvent_t> ev(n + 1);
  for (auto& e : ev) GPUMUX_CUDA_TRY(cudaEventCreate(&e));
  std::vector<std::vector<double>> fwd(n), bwd(n);
  for (int r = 0; r < warmup + reps; ++r) {
    GPUMUX_CUDA_TRY(cudaEventRecord(ev[0], s));
    for (std::uint32_t i = 0; i < n; ++i) {
      exec.forward(m, i, batch, mem(i), s);
      GPUMUX_CUDA_TRY(cudaEventRecord(ev[i + 1], s));
    }
    GPUMUX_CUDA_TRY(cudaEventSynchronize(ev[n]));
    for (std::uint32_t i = 0; i < n && r >= warmup; ++i) {
      float ms = 0;
      GPUMUX_CUDA_TRY(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
      fwd[i].push_back(static_cast<double>(ms) * 1e6);
    }
    // Backward runs the layers in reverse; ev[i] ... ev[i+1] still brackets layer i.
    GPUMUX_CUDA_TRY(cudaEventRecord(ev[n], s));
    for (std::uint32_t i = n; i-- > 0;) {
      exec.backward(m, i, batch, mem(i), s);
      GPUMUX_CUDA_TRY(cudaEventRecord(ev[i], s));
    }
    GPUMUX_CUDA_TRY(cudaEventSynchronize(ev[0]));
    for (std::uint32_t i = 0; i < n && r >= warmup; ++i) {
      float ms = 0;
      GPUMUX_CUDA_TRY(cudaEventElapsedTime(&ms, ev[i + 1], ev[i]));
      bwd[i].push_back(static_cast<double>(ms) * 1e6);
    }
  }
  for (auto& e : ev) (void)cudaEventDestroy(e);
  json f = json::array(), b = json::array();
  for (std::uint32_t i = 0; i < n; ++i) {
    f.push_back(static_cast<std::int64_t>(std::llround(median(fwd[i]))));
    b.push_back(static_cast<std::int64_t>(std::llround(median(bwd[i]))));
  }
  return {{"forward_ns", f}, {"backward_ns", b}};
}

}  // namespace gpumux::calibration
