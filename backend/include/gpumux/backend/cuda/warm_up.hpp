// Warm-up of a GPU's layer executor before a run's time 0 (platform_params "warmup").
//
// The first pass of a model on a fresh CUDA context pays one-time costs a long-running server
// has already paid: cuBLAS picks and lazily loads its GEMM kernels (one module per kernel
// family under CUDA's default lazy loading), gpumux's own kernels load, and the executor's
// scratch is touched for the first time. Measured on an H100 (2026-11-25, first GPU session,
// docs/fidelity.md): ResNet-50's first training forward pass at batch 32 took 157 ms against
// 9 ms for the next ones. Warm-up runs each (model, batch, kind) once, on buffers of its own,
// and waits for the GPU, so the run's ops see the steady state the simulator models.
//
// Thread rules: call on the thread that owns the executor's GPU (it is made current).
#pragma once

#include <cstdint>
#include <vector>

#include "gpumux/api/platform.hpp"
#include "gpumux/backend/cuda/cuda_layer_executor.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

/// Runs one forward pass of every use (and, for training, one backward pass and one update)
/// through `executor` on GPU `ordinal`, on a stream of its own, in `region` (device memory
/// nothing else uses yet: the platform passes its still empty arena, since the memory left
/// beside the arena is only the margin), then synchronises. Activations are capped at 1 GiB
/// (as in calibration). Throws CudaError, OutOfMemory (a use does not fit the region).
void warm_up(CudaLayerExecutor& executor, int ordinal, const ModelCatalog& models,
             const std::vector<ModelUse>& uses, void* region, std::uint64_t region_bytes);

}  // namespace gpumux
