// fakecuda: CPU versions of gpumux's own kernels (backend/cuda/kernels.h), enqueued on the
// stream's compute engine like a launch. The fill kernel always writes (it is what the weight
// tests compare); the others compute only under Arithmetic::Exact.
#include <algorithm>
#include <cstdint>

#include "../../cuda/kernels.h"
#include "fake_state.hpp"
#include "gpumux/backend/weight_fill.hpp"

using gpumux::fakecuda::Arithmetic;
using gpumux::fakecuda::FaultKind;
using gpumux::fakecuda::detail::enqueue_work;
using gpumux::fakecuda::detail::state;

namespace {

/// The launch's options: whether it computes, and its modelled time.
std::pair<bool, std::uint64_t> launch_options() {
  auto& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  return {s.options.arithmetic == Arithmetic::Exact, s.options.kernel_ns};
}

int launch(CUstream_st* stream, bool always, std::function<void()> work) {
  const auto [exact, ns] = launch_options();
  if (!exact && !always) work = nullptr;
  return static_cast<int>(enqueue_work(stream, FaultKind::Launch, std::move(work), ns));
}

}  // namespace

extern "C" {

int gpumux_bias_relu(float* y, const float* bias, unsigned long long rows, unsigned long long n,
                     CUstream_st* stream) {
  return launch(stream, false, [=] {
    for (unsigned long long r = 0; r < rows; ++r) {
      for (unsigned long long c = 0; c < n; ++c) {
        float& v = y[r * n + c];
        v = std::max(v + (bias != nullptr ? bias[c] : 0.0f), 0.0f);
      }
    }
  });
}

int gpumux_elementwise(float* y, unsigned long long n, CUstream_st* stream) {
  return launch(stream, false, [=] {
    for (unsigned long long i = 0; i < n; ++i) y[i] = std::max(0.5f * y[i] + 0.1f, 0.0f);
  });
}

int gpumux_momentum_update(float* w, const float* g, float* v, unsigned long long n, float lr,
                           float mu, CUstream_st* stream) {
  return launch(stream, false, [=] {
    for (unsigned long long i = 0; i < n; ++i) {
      float step = g[i];
      if (v != nullptr) {
        v[i] = mu * v[i] + g[i];
        step = v[i];
      }
      w[i] -= lr * step;
    }
  });
}

int gpumux_fill_weights(void* data, unsigned long long words, unsigned long long seed,
                        unsigned long long first_word, CUstream_st* stream) {
  return launch(stream, true, [=] { gpumux::fill_weights(data, 4 * words, seed, first_word); });
}

int gpumux_fault(CUstream_st* stream) {
  // The real kernel writes through an address nothing owns: the context's sticky error.
  auto& s = state();
  std::unique_lock<std::mutex> lock(s.mutex);
  auto* st = gpumux::fakecuda::detail::resolve(s, stream);
  if (const cudaError_t e = gpumux::fakecuda::detail::sticky(st->device); e != cudaSuccess) {
    return static_cast<int>(gpumux::fakecuda::detail::fail(e));
  }
  gpumux::fakecuda::detail::Task t;
  t.engine = gpumux::fakecuda::detail::Engine::Compute;
  t.fault = true;
  ++s.counts.launches;
  s.enqueue(lock, st, std::move(t));
  return 0;
}

int gpumux_noop(CUstream_st* stream) {
  return launch(stream, true, nullptr);
}

}  // extern "C"
