#include "gpumux/backend/cuda/warm_up.hpp"

#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

#include "gpumux/api/errors.hpp"
#include "gpumux/backend/cuda/cuda_check.hpp"
#include "gpumux/backend/cuda/training_layout.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/model/model.hpp"
#include "kernels.h"

namespace gpumux {

namespace {

void warm_up_one(CudaLayerExecutor& exec, const Model& m, const ModelUse& use, cudaStream_t s,
                 std::byte* region, std::uint64_t region_bytes) {
  const std::uint32_t n = m.layer_count();
  const TrainingLayout layout(m);
  const std::uint64_t weight_bytes = layout.weight_region_bytes();
  const std::uint64_t per_sample = use.training ? m.training_activation_bytes_per_sample()
                                                : m.inference_activation_bytes_per_sample();
  const std::uint64_t act_bytes = std::max<std::uint64_t>(
      std::min<std::uint64_t>(per_sample * use.batch, std::uint64_t{1} << 30), 256);
  if (weight_bytes + act_bytes > region_bytes) {
    throw OutOfMemory(weight_bytes + act_bytes, region_bytes, "warm-up of " + m.name());
  }
  // Filled values, not whatever the memory held: NaN or denormal operands could take other
  // code paths than the run's.
  GPUMUX_CUDA_TRY(
      static_cast<cudaError_t>(gpumux_fill_weights(region, weight_bytes / 4, /*seed=*/1, 0, s)));
  std::byte* act = region + weight_bytes;
  const auto mem = [&](std::uint32_t i) {
    return layout.layer(i, region, act, act_bytes, use.training);
  };
  for (std::uint32_t i = 0; i < n; ++i) exec.forward(m, i, use.batch, mem(i), s);
  if (use.training) {
    for (std::uint32_t i = n; i-- > 0;) exec.backward(m, i, use.batch, mem(i), s);
    for (std::uint32_t i = 0; i < n; ++i) {
      if (m.layer(i).weight_bytes > 0) exec.update(mem(i), s);
    }
  }
  GPUMUX_CUDA_TRY(cudaStreamSynchronize(s));  // before the region is used for the next
}

}  // namespace

void warm_up(CudaLayerExecutor& executor, int ordinal, const ModelCatalog& models,
             const std::vector<ModelUse>& uses, void* region, std::uint64_t region_bytes) {
  if (uses.empty()) return;
  GPUMUX_CUDA_TRY(cudaSetDevice(ordinal));
  cudaStream_t s = nullptr;
  GPUMUX_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  try {
    for (const ModelUse& use : uses)
      warm_up_one(executor, models.at(use.model), use, s, static_cast<std::byte*>(region),
                  region_bytes);
  } catch (...) {
    executor.unbind_stream();
    (void)cudaStreamDestroy(s);
    throw;
  }
  executor.unbind_stream();
  GPUMUX_CUDA_TRY(cudaStreamDestroy(s));
}

}  // namespace gpumux
