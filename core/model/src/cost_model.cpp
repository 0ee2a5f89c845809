// Analytic per-layer cost model (roofline + tile occupancy + launch costs). The reference
// for the formulas is traces/tools/predict_layer_times.py; differences are noted inline.
#include "gpumux/model/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "gpumux/api/errors.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/host_link.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

namespace {

// GEMM layers run on the precision's (tensor-core) peak; the rest on the fp32 CUDA cores.
bool is_gemm_kind(LayerKind k) noexcept {
  return k == LayerKind::Conv || k == LayerKind::Linear || k == LayerKind::Attention;
}

bool is_half(Precision p) noexcept {
  return p == Precision::Fp16 || p == Precision::Bf16;
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) noexcept {
  return (a + b - 1) / b;
}

// Bytes moved per weight byte by an optimizer step: read and write the weights, and read and
// write each optimizer slot (momentum: 1, Adam: 2).
double update_passes(Optimizer o) noexcept {
  return 2.0 + 2.0 * optimizer_slots(o);
}

}  // namespace

double CostModel::occupancy(const Layer& layer, std::uint32_t batch) const noexcept {
  const double t = tiles(layer, batch);
  if (t < 0) return 1.0;
  const double sms = std::max<std::uint32_t>(profile_->sm_count, 1);
  return std::clamp(t / sms, 1.0 / sms, 1.0);
}

double CostModel::tiles(const Layer& layer, std::uint32_t batch) const noexcept {
  if (layer.gemms.empty()) return -1.0;
  const std::uint64_t tm = std::max<std::uint32_t>(profile_->tile_m, 1);
  const std::uint64_t tn = std::max<std::uint32_t>(profile_->tile_n, 1);
  const std::uint64_t b = std::max<std::uint32_t>(batch, 1);
  double tiles = 0;
  for (const GemmShape& g : layer.gemms) {
    if (g.count > 1) {
      // Batched GEMMs (heads, groups): count*b independent problems of m rows each.
      tiles += static_cast<double>(ceil_div(g.m, tm)) * static_cast<double>(ceil_div(g.n, tn)) *
               static_cast<double>(g.count) * static_cast<double>(b);
    } else {
      // One GEMM whose rows are the whole batch.
      // Products in double: GEMM sides up to 2^40 would overflow 64-bit tile counts.
      tiles += static_cast<double>(ceil_div(b * g.m, tm)) * static_cast<double>(ceil_div(g.n, tn)) *
               static_cast<double>(g.count);
    }
  }
  return tiles;
}

const std::vector<DurationNs>* CostModel::calibrated_times(const Model& model, std::uint32_t batch,
                                                           Pass pass) const {
  if (pass == Pass::Update) return nullptr;
  const DeviceProfile& p = *profile_;
  // Times measured in one precision say nothing exact about another: the roofline, which
  // models the precision, serves then (D37).
  if (options_.precision != p.calibrated_precision) return nullptr;
  const auto m = p.calibrated.find(model.name());
  if (m == p.calibrated.end()) return nullptr;
  const auto b = m->second.find(batch);
  if (b == m->second.end()) return nullptr;
  const auto& times = pass == Pass::Forward ? b->second.forward_ns : b->second.backward_ns;
  if (times.empty()) return nullptr;
  if (times.size() != model.layer_count()) {
    throw TraceError(p.name, "calibrated." + model.name() + "." + std::to_string(batch),
                     "has " + std::to_string(times.size()) + " " + std::string(to_string(pass)) +
                         " times but the model has " + std::to_string(model.layer_count()) +
                         " layers");
  }
  return &times;
}

DurationNs CostModel::layer_compute_ns(const Model& model, std::uint32_t layer_index,
                                       std::uint32_t batch, Pass pass) const {
  const Layer& layer = model.layer(layer_index);
  const DeviceProfile& p = *profile_;
  const double bw = p.mem_bandwidth_gbps * p.memory_efficiency;  // bytes per ns
  const double byte_scale = is_half(options_.precision) ? 0.5 : 1.0;

  if (pass == Pass::Update) {
    // Per-layer share of the optimizer step, for the default optimizer (momentum); whole-model
    // updates with a specific optimizer use update_ns().
    if (layer.params == 0) return 0;
    return ceil_ns(static_cast<double>(layer.weight_bytes) * update_passes(Optimizer::Momentum) /
                   bw);
  }

  // Measured per-layer times override the roofline for a calibrated (model, batch).
  if (const std::vector<DurationNs>* times = calibrated_times(model, batch, pass)) {
    return (*times)[layer_index];
  }

  const auto kind = static_cast<std::size_t>(layer.kind);
  const double peak_flop_per_ns =
      (is_gemm_kind(layer.kind) ? p.peak_tflops(options_.precision) : p.fp32_tflops) * 1e3;
  const double b = batch;
  const double flops = (pass == Pass::Forward ? layer.fwd_flops : layer.bwd_flops) * b;
  const double rate = peak_flop_per_ns * p.efficiency[kind] * occupancy(layer, batch);
  const double compute_ns = flops > 0 && rate > 0 ? flops / rate : 0.0;
  double bytes = (static_cast<double>(layer.weight_bytes) +
                  static_cast<double>(layer.input_bytes + layer.output_bytes) * b) *
                 byte_scale;
  if (pass == Pass::Backward) bytes *= 2;  // gradients are as large as what they differentiate
  const double memory_ns = bw > 0 ? bytes / bw : 0.0;
  return ceil_ns(std::max(compute_ns, memory_ns));
}

std::uint32_t CostModel::layer_kernels(const Model& model, std::uint32_t layer,
                                       Pass pass) const noexcept {
  if (layer >= model.layer_count()) return 0;
  const Layer& l = model.layers()[layer];
  switch (pass) {
    case Pass::Forward:
      return profile_->kernels_per_layer[static_cast<std::size_t>(l.kind)];
    case Pass::Backward:
      return 2 * profile_->kernels_per_layer[static_cast<std::size_t>(l.kind)];
    case Pass::Update:
      return l.params > 0 ? 1 : 0;
  }
  return 0;
}

DurationNs CostModel::op_ns(const Model& model, LayerRange range, std::uint32_t batch, Pass pass,
                            bool inference) const {
  return op_kernels(model, range, batch, pass, inference).solo_ns();
}

OpKernels CostModel::op_kernels(const Model& model, LayerRange range, std::uint32_t batch,
                                Pass pass, bool inference) const {
  if (range.last > model.layer_count() || range.first > range.last) {
    throw std::out_of_range("layer range [" + std::to_string(range.first) + ", " +
                            std::to_string(range.last) + ") outside model '" + model.name() +
                            "' of " + std::to_string(model.layer_count()) + " layers");
  }
  // Saturating: a layer's time is clamped at kMaxDurationNs, and a sum of such times (or the
  // kernel count times the launch cost) must not overflow int64.
  const DurationNs host_per_kernel =
      saturating_add(options_.framework_overhead_ns, profile_->launch_ns);
  const double sms = std::max<std::uint32_t>(profile_->sm_count, 1);
  // A calibrated layer time is a measured interval between events around the layer: the
  // GPU-side cost of launching its kernels is already in it (charging launch_ns again made
  // the H100's per-layer training ops 2-3x too long, docs/fidelity.md).
  const DurationNs gpu_launch_ns =
      calibrated_times(model, batch, pass) != nullptr ? 0 : profile_->launch_ns;
  OpKernels k;
  for (std::uint32_t i = range.first; i < range.last; ++i) {
    const Layer& layer = model.layers()[i];
    if (inference && layer.aux) continue;
    const DurationNs t = layer_compute_ns(model, i, batch, pass);
    const std::uint32_t n = layer_kernels(model, i, pass);
    k.kernels += n;
    k.gpu_ns = saturating_add(k.gpu_ns, t);
    k.gpu_ns = saturating_add(k.gpu_ns, saturating_mul(n, gpu_launch_ns));
    k.host_ns = saturating_add(k.host_ns, saturating_mul(n, host_per_kernel));
    if (n == 0 || t <= 0) continue;
    const double d = static_cast<double>(t) / n;  // the layer's kernels share its time evenly
    const double g = tiles(layer, batch);
    if (g < 0) {  // memory-bound: blocks over every SM until the end
      k.full_residual_ns2 += n * d * d / 2;
      continue;
    }
    if (g < sms) continue;  // leaves SMs free: other kernels fit beside it
    // w waves of d / w; a partial last wave leaves SMs free, so only the full waves block.
    const double waves = std::ceil(g / sms);
    const double full_waves = g >= waves * sms ? waves : waves - 1;
    const double blocking = full_waves * d / waves;
    k.full_residual_ns2 += n * blocking * blocking / 2;
    k.full_wave_residual_ns2 += n * full_waves * (d / waves) * (d / waves) / 2;
  }
  return k;
}

DurationNs CostModel::update_ns(const Model& model, Optimizer optimizer) const {
  const double bw = profile_->mem_bandwidth_gbps * profile_->memory_efficiency;
  const double bytes = static_cast<double>(model.weight_bytes()) * update_passes(optimizer);
  DurationNs launches = 0;
  for (const Layer& l : model.layers()) {
    if (l.params > 0) launches = saturating_add(launches, profile_->launch_ns);
  }
  return saturating_add(bw > 0 ? ceil_ns(bytes / bw) : 0, launches);
}

OpKernels CostModel::update_kernels(const Model& model, Optimizer optimizer) const {
  OpKernels k;
  for (const Layer& l : model.layers()) k.kernels += l.params > 0 ? 1 : 0;
  k.gpu_ns = update_ns(model, optimizer);
  k.host_ns = saturating_mul(k.kernels,
                             saturating_add(options_.framework_overhead_ns, profile_->launch_ns));
  if (k.kernels > 0) {
    // Memory-bound passes over weights and optimizer slots: they fill the SMs, many waves.
    const double d = static_cast<double>(k.gpu_ns) / k.kernels;
    k.full_residual_ns2 = k.kernels * d * d / 2;
  }
  return k;
}

double CostModel::op_demand(const Model& model, LayerRange range, std::uint32_t batch,
                            Pass pass) const {
  const double min_demand = 1.0 / std::max<std::uint32_t>(profile_->sm_count, 1);
  if (pass == Pass::Update) return 1.0;  // a streaming elementwise pass fills the device
  const std::uint32_t last = std::min(range.last, model.layer_count());
  double weighted = 0, flops_total = 0, plain = 0;
  std::uint32_t layers = 0;
  for (std::uint32_t i = range.first; i < last; ++i) {
    const Layer& l = model.layers()[i];
    const double occ = occupancy(l, batch);
    const double flops = pass == Pass::Forward ? l.fwd_flops : l.bwd_flops;
    weighted += occ * flops;
    flops_total += flops;
    plain += occ;
    ++layers;
  }
  double demand = 1.0;
  if (flops_total > 0) {
    demand = weighted / flops_total;
  } else if (layers > 0) {
    demand = plain / layers;  // no FLOPs to weight by: a plain mean
  }
  return std::clamp(demand, min_demand, 1.0);
}

// A CPU profile has no link (bandwidth 0): its "copies" cost only the call latency.
DurationNs CostModel::h2d_ns(std::uint64_t bytes, bool pageable) const noexcept {
  return solo_copy_ns(*profile_, OpKind::CopyH2D, bytes, pageable);
}

DurationNs CostModel::d2h_ns(std::uint64_t bytes, bool pageable) const noexcept {
  return solo_copy_ns(*profile_, OpKind::CopyD2H, bytes, pageable);
}

}  // namespace gpumux
