// The engine's parts that stand alone (core/src): job progress (cursor arithmetic, byte
// counts) and placement (allocation, layer offsets, fits, kill-time reaping), the latter
// over a simulated GPU with its Alloc/Free events read back from the engine's event sink.
#include <catch2/catch.hpp>

#include <vector>

#include "../../core/engine/src/engine_events.hpp"
#include "../../core/engine/src/job_progress.hpp"
#include "../../core/engine/src/placement.hpp"
#include "gpumux/api/platform.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "gpumux/sim/sim_platform.hpp"

using namespace gpumux;

namespace {

/// Three layers of 1000, 2000 and 3000 weight bytes, 100 activation bytes per sample each.
Model three_layers() {
  std::vector<Layer> layers(3);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    layers[i].kind = LayerKind::Elementwise;
    layers[i].weight_bytes = 1000 * (i + 1);
    layers[i].input_bytes = layers[i].output_bytes = 100;
  }
  return Model("three", "Three layers", layers, {}, 0);
}

JobState job(const JobSpec& spec, const Model& model, std::size_t devices) {
  JobState s;
  s.spec = &spec;
  s.model = &model;
  s.layer_count = model.layer_count();
  s.residency.resize(devices);
  for (auto& r : s.residency) {
    r.reset(model.layer_count(), Residency::Absent);
    r.loading_op.assign(model.layer_count(), OpId{});
    r.offsets.assign(model.layer_count(), 0);
  }
  return s;
}

}  // namespace

TEST_CASE("job progress walks a training iteration's passes layer by layer", "[unit][engine]") {
  const Model model = three_layers();
  JobSpec spec;
  spec.kind = JobKind::Training;
  spec.optimizer = Optimizer::Sgd;  // no optimizer slots: state = weights + gradients
  const JobState s = job(spec, model, 1);
  bool ends = true;

  Cursor c;  // forward, 2 layers then the rest
  CHECK(progress::range_for(s, c, 2).first == 0);
  CHECK(progress::range_for(s, c, 2).last == 2);
  c = progress::advance(s, c, 2, &ends);
  CHECK_FALSE(ends);
  CHECK(progress::range_for(s, c, 0).first == 2);
  CHECK(progress::range_for(s, c, 0).last == 3);
  c = progress::advance(s, c, 1, &ends);
  CHECK(c == Cursor{0, Pass::Backward, 0});

  // Backward runs from the last layer down.
  CHECK(progress::range_for(s, c, 1).first == 2);
  CHECK(progress::range_for(s, c, 1).last == 3);
  c = progress::advance(s, c, 3, &ends);
  CHECK(c == Cursor{0, Pass::Update, 0});
  CHECK(progress::range_for(s, c, 1).size() == 3);  // update covers the whole model
  c = progress::advance(s, c, 3, &ends);
  CHECK(ends);
  CHECK(c == Cursor{1, Pass::Forward, 0});

  CHECK(progress::state_factor(s) == 2);
  CHECK(progress::persistent_bytes(s) == 12000);
  CHECK(progress::load_bytes(s, LayerRange{1, 3}) == 5000);
}

TEST_CASE("job progress ends an inference unit after its forward pass", "[unit][engine]") {
  const Model model = three_layers();
  JobSpec spec;
  spec.kind = JobKind::Inference;
  spec.batch = 4;
  const JobState s = job(spec, model, 1);
  bool ends = false;
  const Cursor c = progress::advance(s, Cursor{}, 3, &ends);
  CHECK(ends);
  CHECK(c == Cursor{1, Pass::Forward, 0});
  CHECK(progress::state_factor(s) == 1);
  CHECK(progress::load_bytes(s, LayerRange{0, 3}) == 6000);
  CHECK(progress::ephemeral_bytes(s) == 4 * model.inference_activation_bytes_per_sample());
}

TEST_CASE("placement packs layers, logs allocations and reaps a killed job later",
          "[unit][engine]") {
  PlatformSetup setup;
  DeviceProfile gpu;
  gpu.name = "test-gpu";
  gpu.memory_bytes = 16384;
  gpu.h2d_gbps = gpu.d2h_gbps = 12.0;
  setup.profiles = {gpu};
  auto platform = PlatformRegistry::instance().create("sim", setup);
  const std::vector<Device*> devices = platform->devices();
  EngineEvents events(platform->runtime());
  Placement placement(devices, platform->runtime(), events);
  const DeviceId d0{0};

  const Model model = three_layers();
  JobSpec spec;
  spec.name = "a";
  spec.kind = JobKind::Inference;
  spec.batch = 1;
  JobState s = job(spec, model, 1);
  CHECK(placement.is_gpu(d0));
  CHECK(placement.fits(s, d0));

  // Layers 1 and 2 in one allocation: 5000 bytes, rounded to 5120, offsets packed from 0.
  const std::size_t a = placement.place_weights(s, d0, LayerRange{1, 3});
  CHECK(a == 0);
  CHECK(s.residency[0].offsets[1] == 0);
  CHECK(s.residency[0].offsets[2] == 2000);
  CHECK(placement.stats(d0).in_use_bytes == 5120);
  const auto& log = events.stream().log().events();
  REQUIRE(log.size() == 1);
  CHECK(log[0].kind == EventKind::Alloc);
  CHECK(log[0].a == 5120);
  CHECK(log[0].label == "weights");

  // A second job's whole state (6000 -> 6144 bytes) and activations (200 per sample, 256
  // aligned) must fit the one free block of 16384 - 5120 bytes.
  JobSpec other_spec = spec;
  JobState other = job(other_spec, model, 1);
  CHECK(placement.fits(other, d0));  // 6144 + 256
  other_spec.batch = 64;
  CHECK_FALSE(placement.fits(other, d0));  // 6144 + 12800

  // Killed with a reap delay: absent at once, memory back only when the process is reaped.
  s.residency[0].set(1, Residency::Resident);
  s.residency[0].set(2, Residency::Resident);
  placement.abandon(s, d0, 1000);
  CHECK(s.residency[0].absent == 3);
  CHECK(s.residency[0].bytes == 0);
  CHECK(placement.stats(d0).in_use_bytes == 5120);
  platform->runtime().run();
  CHECK(placement.stats(d0).in_use_bytes == 0);
  REQUIRE(log.size() == 2);
  CHECK(log[1].kind == EventKind::Free);
  CHECK(log[1].label == "reaped");
  CHECK(log[1].t_ns == 1000);
}

TEST_CASE("the event sink writes a rejection's reason into the JobEnd label", "[unit][engine]") {
  PlatformSetup setup;
  DeviceProfile cpu;
  cpu.name = "test-cpu";
  cpu.kind = DeviceKind::Cpu;
  setup.profiles = {cpu};
  auto platform = PlatformRegistry::instance().create("sim", setup);
  EngineEvents events(platform->runtime());
  events.job_end(JobId{3}, EndReason::Rejected, "too big");
  events.job_end(JobId{4}, EndReason::Finished, "ignored");
  events.job_end(JobId{5}, EndReason::Unfinished);
  const auto& log = events.stream().log().events();
  REQUIRE(log.size() == 3);
  CHECK(log[0].job == 3);
  CHECK(log[0].label == "rejected: too big");
  CHECK(log[1].label == "finished");
  CHECK(log[2].label == "unfinished: no work left to run");
}
