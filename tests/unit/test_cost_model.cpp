// Cost model on a hand-built profile and a two-layer model; every expected number is computed
// by hand in the comments (1 TFLOPS = 1e3 FLOP/ns, 1 GB/s = 1 B/ns).
#include <catch2/catch.hpp>

#include <stdexcept>

#include "gpumux/api/errors.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"

using gpumux::CostModel;
using gpumux::CostOptions;
using gpumux::LayerKind;
using gpumux::LayerRange;
using gpumux::Pass;
using gpumux::Precision;

namespace {

// 4 SMs; 10 TFLOPS fp32, 40 fp16, no tf32; 1000 GB/s at 50 % = 500 B/ns; 64x64 tiles;
// 1 us per launch; conv/norm 1 kernel, linear 2.
gpumux::DeviceProfile hand_profile() {
  gpumux::DeviceProfile p;
  p.name = "hand";
  p.sm_count = 4;
  p.fp32_tflops = 10;
  p.fp16_tflops = 40;
  p.mem_bandwidth_gbps = 1000;
  p.memory_efficiency = 0.5;
  p.efficiency = {0.5, 0.8, 1.0, 1.0, 1.0, 0.4, 1.0};  // conv linear norm pool embed attn elem
  p.tile_m = 64;
  p.tile_n = 64;
  p.launch_ns = 1000;
  p.kernels_per_layer = {1, 2, 1, 1, 1, 3, 1};
  p.h2d_gbps = 10;
  p.d2h_gbps = 20;
  p.h2d_latency_ns = 2000;
  p.d2h_latency_ns = 3000;
  p.pageable_factor = 0.5;
  p.malloc_base_ns = 50000;
  p.malloc_per_gib_ns = 1000000;
  return p;
}

// conv: one GEMM 64 x 128 x 1000 per sample = 8,192,000 MACs = 16,384,000 FLOPs;
//       weights 128,000 params = 512,000 B; activations 10,000 B in, 32,768 B out.
// norm: 128 params + 128 buffers = 1,024 B; 32,768 B in and out; 32,768 FLOPs.
gpumux::Model two_layer_model(bool norm_is_aux = false) {
  std::vector<gpumux::Layer> layers(2);
  layers[0].name = "conv";
  layers[0].kind = LayerKind::Conv;
  layers[0].params = 128000;
  layers[0].weight_bytes = 512000;
  layers[0].input_bytes = 10000;
  layers[0].output_bytes = 32768;
  layers[0].fwd_flops = 16384000;
  layers[0].bwd_flops = 32768000;
  layers[0].gemms = {{64, 128, 1000, 1}};
  layers[1].name = "bn";
  layers[1].kind = LayerKind::Norm;
  layers[1].params = 128;
  layers[1].buffers = 128;
  layers[1].weight_bytes = 1024;
  layers[1].input_bytes = 32768;
  layers[1].output_bytes = 32768;
  layers[1].fwd_flops = 32768;
  layers[1].bwd_flops = 65536;
  layers[1].aux = norm_is_aux;
  return gpumux::Model("two", "Two layers", layers, {}, 0);
}

gpumux::Model single_layer(LayerKind kind, gpumux::GemmShape g, double flops) {
  std::vector<gpumux::Layer> layers(1);
  layers[0].kind = kind;
  layers[0].gemms = {g};
  layers[0].fwd_flops = flops;
  layers[0].bwd_flops = 2 * flops;
  return gpumux::Model("one", "One", layers, {}, 0);
}

}  // namespace

TEST_CASE("Forward layer times: compute- and memory-bound, occupancy", "[cost_model]") {
  const auto profile = hand_profile();
  const auto model = two_layer_model();
  const CostModel cost(profile, CostOptions{});

  // conv, batch 1: tiles = ceil(64/64) * ceil(128/64) = 2 of 4 SMs -> occupancy 0.5.
  //   compute = 16,384,000 / (1e4 * 0.5 eff * 0.5 occ) = 6553.6 ns
  //   memory  = (512,000 + 42,768) / 500 = 1109.5 ns  -> compute-bound, ceil -> 6554
  CHECK(cost.layer_compute_ns(model, 0, 1, Pass::Forward) == 6554);
  // conv, batch 8: tiles = ceil(512/64) * 2 = 16 -> occupancy 1.
  //   compute = 131,072,000 / (1e4 * 0.5) = 26,214.4 ns; memory = 854,144 / 500 = 1708.3 ns
  CHECK(cost.layer_compute_ns(model, 0, 8, Pass::Forward) == 26215);
  // norm, batch 1 (no GEMM: occupancy 1, fp32 peak): compute = 32,768 / 1e4 = 3.3 ns;
  //   memory = (1,024 + 65,536) / 500 = 133.12 ns -> memory-bound, 134
  CHECK(cost.layer_compute_ns(model, 1, 1, Pass::Forward) == 134);
  // norm, batch 8: memory = (1,024 + 524,288) / 500 = 1050.6 -> 1051
  CHECK(cost.layer_compute_ns(model, 1, 8, Pass::Forward) == 1051);
}

TEST_CASE("Backward layer times use bwd_flops and twice the bytes", "[cost_model]") {
  const auto profile = hand_profile();
  const auto model = two_layer_model();
  const CostModel cost(profile, CostOptions{});
  // conv: 32,768,000 / 2500 = 13,107.2 ns vs memory 2 * 1109.5 -> 13108
  CHECK(cost.layer_compute_ns(model, 0, 1, Pass::Backward) == 13108);
  // norm: compute 6.6 ns vs memory 2 * 133.12 = 266.24 -> 267
  CHECK(cost.layer_compute_ns(model, 1, 1, Pass::Backward) == 267);
}

TEST_CASE("Op time: device time with launches, at least the host's per-kernel cost",
          "[cost_model]") {
  const auto profile = hand_profile();
  const auto model = two_layer_model();
  const CostModel cost(profile, CostOptions{Precision::Fp32, 500});
  CHECK(cost.layer_kernels(model, 0, Pass::Forward) == 1);
  CHECK(cost.layer_kernels(model, 0, Pass::Backward) == 2);
  CHECK(cost.layer_kernels(model, 0, Pass::Update) == 1);
  // The host spends 500 (framework) + 1000 (launch) per kernel, ahead of the device.
  // forward: device 6554 + 134 + 2 kernels * 1000 = 8688; host 2 * 1500 = 3000 -> 8688
  CHECK(cost.op_ns(model, LayerRange{0, 2}, 1, Pass::Forward, false) == 8688);
  // backward: 13108 + 267 + 4 kernels * 1000 = 17375; host 6000 -> 17375
  CHECK(cost.op_ns(model, LayerRange{0, 2}, 1, Pass::Backward, false) == 17375);
  // one norm layer: device 134 + 1000 = 1134 < host 1500: host-bound
  CHECK(cost.op_ns(model, LayerRange{1, 2}, 1, Pass::Forward, false) == 1500);
  CHECK(cost.op_ns(model, LayerRange{1, 1}, 1, Pass::Forward, false) == 0);
  CHECK_THROWS_AS(cost.op_ns(model, LayerRange{0, 3}, 1, Pass::Forward, false), std::out_of_range);
}

TEST_CASE("Op kernels: counts, device and host time, residuals of GPU-filling kernels",
          "[cost_model]") {
  const auto profile = hand_profile();
  const auto model = two_layer_model();
  const CostModel cost(profile, CostOptions{Precision::Fp32, 500});
  // batch 1: the conv's 2 tiles leave 2 of 4 SMs free (no blocking); the norm is memory-bound
  // and blocks for its 134 ns: residual sum 134^2 / 2 = 8978.
  const auto b1 = cost.op_kernels(model, LayerRange{0, 2}, 1, Pass::Forward, false);
  CHECK(b1.kernels == 2);
  CHECK(b1.gpu_ns == 8688);
  CHECK(b1.host_ns == 3000);
  CHECK(b1.solo_ns() == 8688);
  CHECK(b1.full_residual_ns2 == Approx(8978));
  CHECK(b1.full_wave_residual_ns2 == 0);
  // batch 8: the conv has 8 x 2 = 16 tiles = 4 full waves of d / 4 (d = 26215): it blocks
  // for all of d: 26215^2 / 2; a higher-priority kernel waits for one wave: 4 (d/4)^2 / 2.
  // The norm (1051 ns) adds 1051^2 / 2.
  const auto b8 = cost.op_kernels(model, LayerRange{0, 2}, 8, Pass::Forward, false);
  CHECK(b8.full_residual_ns2 == Approx(26215.0 * 26215 / 2 + 1051.0 * 1051 / 2));
  CHECK(b8.full_wave_residual_ns2 == Approx(26215.0 * 26215 / 8));
  // batch 5: 5 x 2 = 10 tiles = 3 waves of d / 3 (d = 16384), the last one partial (2 of 4
  // SMs): only the first two block, 2d/3. Norm: 658 ns.
  const auto b5 = cost.op_kernels(model, LayerRange{0, 2}, 5, Pass::Forward, false);
  const double blocking = 2 * 16384.0 / 3;
  CHECK(b5.full_residual_ns2 == Approx(blocking * blocking / 2 + 658.0 * 658 / 2));
  CHECK(b5.full_wave_residual_ns2 == Approx(2 * (16384.0 / 3) * (16384.0 / 3) / 2));
}

TEST_CASE("Inference skips aux layers", "[cost_model]") {
  const auto profile = hand_profile();
  const auto model = two_layer_model(/*norm_is_aux=*/true);
  const CostModel cost(profile, CostOptions{Precision::Fp32, 500});
  CHECK(cost.op_ns(model, LayerRange{0, 2}, 1, Pass::Forward, true) == 6554 + 1000);
  CHECK(cost.op_ns(model, LayerRange{0, 2}, 1, Pass::Forward, false) == 8688);
}

TEST_CASE("Precision: tensor peaks for GEMM layers, halved bytes for 16-bit", "[cost_model]") {
  const auto profile = hand_profile();
  const auto model = two_layer_model();
  const CostModel fp16(profile, CostOptions{Precision::Fp16, 0});
  // conv: 16,384,000 / (4e4 * 0.5 * 0.5) = 1638.4; memory 1109.5 / 2 = 554.8 -> 1639
  CHECK(fp16.layer_compute_ns(model, 0, 1, Pass::Forward) == 1639);
  // norm stays on the fp32 peak; memory halves: 66,560 / 2 / 500 = 66.56 -> 67
  CHECK(fp16.layer_compute_ns(model, 1, 1, Pass::Forward) == 67);
  // tf32 has no peak in this profile: falls back to fp32
  const CostModel tf32(profile, CostOptions{Precision::Tf32, 0});
  CHECK(tf32.layer_compute_ns(model, 0, 1, Pass::Forward) == 6554);
  CHECK(profile.peak_tflops(Precision::Tf32) == 10);
  CHECK(profile.peak_tflops(Precision::Fp16) == 40);
  CHECK(profile.peak_tflops(Precision::Bf16) == 10);
}

TEST_CASE("Optimizer update: memory passes over the weights plus launches", "[cost_model]") {
  const auto profile = hand_profile();
  const auto model = two_layer_model();
  const CostModel cost(profile, CostOptions{});
  // weights 513,024 B; passes 2 + 2 * slots; 500 B/ns; both layers have params: 2 launches.
  // sgd: 1,026,048 / 500 = 2052.1 -> 2053 + 2000
  CHECK(cost.update_ns(model, gpumux::Optimizer::Sgd) == 4053);
  // momentum: 2,052,096 / 500 = 4104.2 -> 4105 + 2000
  CHECK(cost.update_ns(model, gpumux::Optimizer::Momentum) == 6105);
  // adam: 3,078,144 / 500 = 6156.3 -> 6157 + 2000
  CHECK(cost.update_ns(model, gpumux::Optimizer::Adam) == 8157);
  CHECK(gpumux::optimizer_slots(gpumux::Optimizer::Adam) == 2);
  CHECK(gpumux::parse_optimizer("momentum") == gpumux::Optimizer::Momentum);
  CHECK_THROWS_AS(gpumux::parse_optimizer("lamb"), gpumux::UsageError);
}

TEST_CASE("Op demand is the FLOP-weighted occupancy, at least 1/SMs", "[cost_model]") {
  const auto profile = hand_profile();
  const auto model = two_layer_model();
  const CostModel cost(profile, CostOptions{});
  // batch 1: conv occupancy 0.5 (16,384,000 FLOPs), norm 1 (32,768 FLOPs)
  const double expected = (0.5 * 16384000 + 1.0 * 32768) / (16384000 + 32768);
  CHECK(cost.op_demand(model, LayerRange{0, 2}, 1, Pass::Forward) == Approx(expected));
  CHECK(cost.op_demand(model, LayerRange{0, 2}, 8, Pass::Forward) == Approx(1.0));
  // a 1x1x1 GEMM fills one tile of 4 SMs: the floor 1/4
  const auto tiny = single_layer(LayerKind::Linear, {1, 1, 1, 1}, 2);
  CHECK(cost.op_demand(tiny, LayerRange{0, 1}, 1, Pass::Forward) == Approx(0.25));
  // count > 1: count * batch GEMMs of m rows. 32x32 GEMMs, 3 per sample: 3 tiles at batch 1
  // (0.75), 6 tiles at batch 2 (capped at 1).
  const auto heads = single_layer(LayerKind::Attention, {32, 32, 8, 3}, 100);
  CHECK(cost.op_demand(heads, LayerRange{0, 1}, 1, Pass::Forward) == Approx(0.75));
  CHECK(cost.op_demand(heads, LayerRange{0, 1}, 2, Pass::Forward) == Approx(1.0));
}

TEST_CASE("Calibrated per-layer times override the roofline", "[cost_model]") {
  auto profile = hand_profile();
  profile.calibrated["two"][1] = gpumux::LayerTimes{{5000, 700}, {9000, 1500}};
  profile.calibrated["two"][2] = gpumux::LayerTimes{{1, 2, 3}, {}};
  const auto model = two_layer_model();
  const CostModel cost(profile, CostOptions{Precision::Fp32, 500});
  CHECK(cost.layer_compute_ns(model, 0, 1, Pass::Forward) == 5000);
  CHECK(cost.layer_compute_ns(model, 1, 1, Pass::Backward) == 1500);
  // forward op: 5000 + 700, no launch cost on the GPU (a measured interval holds its kernels'
  // launches); the host's 2 x (500 + 1000) = 3000 is hidden. Backward: 9000 + 1500 = 10500
  // against the host's 4 x 1500 = 6000.
  CHECK(cost.op_ns(model, LayerRange{0, 2}, 1, Pass::Forward, false) == 5700);
  CHECK(cost.op_ns(model, LayerRange{0, 2}, 1, Pass::Backward, false) == 10500);
  // batch 8 is not calibrated: the roofline (26215 from above)
  CHECK(cost.layer_compute_ns(model, 0, 8, Pass::Forward) == 26215);
  // Measured in fp32 (the default): not applied at bf16, where the roofline serves; applied
  // when the profile says they were measured in bf16.
  const CostModel bf16(profile, CostOptions{Precision::Bf16, 500});
  CHECK(bf16.layer_compute_ns(model, 0, 1, Pass::Forward) != 5000);
  auto bf16_profile = profile;
  bf16_profile.calibrated_precision = Precision::Bf16;
  const CostModel bf16_calibrated(bf16_profile, CostOptions{Precision::Bf16, 500});
  CHECK(bf16_calibrated.layer_compute_ns(model, 0, 1, Pass::Forward) == 5000);
  CHECK(bf16_calibrated.op_ns(model, LayerRange{0, 2}, 1, Pass::Forward, false) == 5700);
  // batch 2 has the wrong number of layers: an error naming the profile and entry
  CHECK_THROWS_WITH(cost.layer_compute_ns(model, 0, 2, Pass::Forward),
                    Catch::Matchers::Contains("hand: calibrated.two.2: has 3 forward times"));
  // ...and no backward times: the roofline
  CHECK(cost.layer_compute_ns(model, 0, 2, Pass::Backward) > 0);
}

TEST_CASE("Copies: latency plus bytes over bandwidth", "[cost_model]") {
  const auto profile = hand_profile();
  const CostModel cost(profile, CostOptions{});
  CHECK(cost.h2d_ns(1000000, false) == 2000 + 100000);  // 1e6 B / 10 B/ns
  CHECK(cost.h2d_ns(1000000, true) == 2000 + 200000);   // pageable: half the bandwidth
  CHECK(cost.h2d_ns(1, false) == 2001);                 // never rounded down to zero
  CHECK(cost.h2d_ns(0, false) == 2000);
  CHECK(cost.d2h_ns(1000000, false) == 3000 + 50000);
  CHECK(profile.malloc_ns(1ull << 30) == 1050000);
  CHECK(profile.malloc_ns(512ull << 20) == 550000);
  CHECK(profile.malloc_ns(1) == 50001);
}

TEST_CASE("Names of passes, kinds and precisions", "[cost_model]") {
  CHECK(gpumux::to_string(Pass::Backward) == "backward");
  CHECK(gpumux::to_string(LayerKind::Attention) == "attention");
  CHECK(gpumux::to_string(Precision::Bf16) == "bf16");
  CHECK(gpumux::parse_precision("tf32") == Precision::Tf32);
  CHECK_THROWS_WITH(gpumux::parse_precision("int8"),
                    Catch::Matchers::Contains("valid names: fp32, tf32, fp16, bf16"));
}
