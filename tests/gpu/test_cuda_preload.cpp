// Platform cuda's start-up for a workload (D30; label gpu: needs a GPU): preload pins a
// training job's model at the size its first load copies (weights, gradients, momentum), so
// the load pins nothing at run time. On the H100 of 2026-11-25, before this, the first training
// load of ResNet-50 waited 147 ms while the store grew from the weights to 3x the weights.
#include <catch2/catch.hpp>

#include "gpu_test_support.hpp"
#include "gpumux/backend/cuda/cuda_platform.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/model.hpp"

using namespace gpumux;

TEST_CASE("cuda: a preloaded training job's first load pins nothing at run time", "[gpu]") {
  gpu_test::require_gpu();
  const Model& m = gpu_test::catalog().at("resnet50");
  const std::uint32_t factor = 2 + optimizer_slots(Optimizer::Momentum);  // as the engine asks
  PlatformSetup setup = gpu_test::gpu_setup(nlohmann::json::object());    // preload, warm-up
  setup.workload_models = {"resnet50"};
  setup.workload_uses = {ModelUse{"resnet50", 32, true, factor}};
  CudaPlatform platform(setup);
  const std::uint64_t pinned_at_start = platform.store().pinned_bytes();
  CHECK(pinned_at_start >= m.weight_bytes() * factor);

  CudaDevice& dev = *platform.gpu(0);
  gpu_test::Recorder ends;
  dev.set_observer(&ends);
  dev.add_context(ContextId{0}, {});
  dev.add_stream(StreamId{0}, ContextId{0}, StreamOptions{0, 1});
  OpSpec load;  // what the engine submits for a training job's first load
  load.id = OpId{0};
  load.device = DeviceId{0};
  load.stream = StreamId{0};
  load.kind = OpKind::CopyH2D;
  load.purpose = OpPurpose::LoadWeights;
  load.model = &m;
  load.layers = LayerRange{0, m.layer_count()};
  load.bytes = m.weight_bytes() * factor;
  dev.submit(load);
  platform.real_runtime().run();
  REQUIRE(ends.ended.size() == 1);
  CHECK(ends.ended.at(OpId{0}).status == OpStatus::Ok);
  CHECK(platform.store().pinned_bytes() == pinned_at_start);
}
