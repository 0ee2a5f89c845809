#include "gpumux/backend/cpu_executor.hpp"

#include <algorithm>
#include <cstring>

#include <Eigen/Core>

#include "gpumux/backend/layer_plan.hpp"
#include "gpumux/backend/weight_fill.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

namespace cpu {

namespace {
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Map = Eigen::Map<RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;
auto idx(std::size_t v) {
  return static_cast<Eigen::Index>(v);
}
}  // namespace

void gemm(const float* x, const float* w, float* y, std::size_t rows, std::size_t k,
          std::size_t n) {
  Map(y, idx(rows), idx(n)).noalias() =
      ConstMap(x, idx(rows), idx(k)) * ConstMap(w, idx(k), idx(n));
}

void gemm_dx(const float* dy, const float* w, float* dx, std::size_t rows, std::size_t k,
             std::size_t n) {
  Map(dx, idx(rows), idx(k)).noalias() =
      ConstMap(dy, idx(rows), idx(n)) * ConstMap(w, idx(k), idx(n)).transpose();
}

void gemm_dw(const float* x, const float* dy, float* dw, std::size_t rows, std::size_t k,
             std::size_t n) {
  Map(dw, idx(k), idx(n)).noalias() =
      ConstMap(x, idx(rows), idx(k)).transpose() * ConstMap(dy, idx(rows), idx(n));
}

void bias_relu(float* y, const float* bias, std::size_t rows, std::size_t n) {
  Map m(y, idx(rows), idx(n));
  if (bias != nullptr) {
    const Eigen::Map<const Eigen::RowVectorXf> b(bias, idx(n));
    m.rowwise() += b;
  }
  m = m.cwiseMax(0.0f);
}

void momentum_update(float* w, const float* g, float* v, std::size_t n, float lr, float mu) {
  Eigen::Map<Eigen::VectorXf> wv(w, idx(n));
  const Eigen::Map<const Eigen::VectorXf> gv(g, idx(n));
  if (v == nullptr) {
    wv -= lr * gv;
    return;
  }
  Eigen::Map<Eigen::VectorXf> vv(v, idx(n));
  vv = mu * vv + gv;
  wv -= lr * vv;
}

}  // namespace cpu

CpuExecutor::CpuExecutor(std::size_t region_bytes)
    : region_elems_(std::max<std::size_t>(region_bytes / sizeof(float), 1024)) {}

std::vector<float>& CpuExecutor::region(std::vector<float>& v, std::size_t elems,
                                        std::uint64_t seed) {
  if (v.size() < elems) {
    const std::size_t old = v.size();
    v.resize(elems);
    fill_weights(v.data() + old, (elems - old) * sizeof(float), seed, old);
  }
  return v;
}

const float* CpuExecutor::weights_for(const GemmShape& g, const float* w, std::size_t w_elems,
                                      std::size_t* stride) {
  const std::size_t kn = g.k * g.n;
  if (w != nullptr && w_elems >= kn) {
    *stride = w_elems >= kn * g.count ? kn : 0;
    return w;
  }
  *stride = 0;
  return region(w_, kn, 0x5eed).data();
}

template <class PerGemm>
bool CpuExecutor::for_each_gemm(const Layer& l, std::uint32_t batch,
                                std::uint64_t elementwise_sweeps, const float* w,
                                std::size_t w_elems, PerGemm&& per_gemm) {
  if (l.gemms.empty()) {
    elementwise(elementwise_sweeps * elementwise_elems(l, batch));
    return true;
  }
  for (const GemmShape& g : l.gemms) {
    const std::uint64_t rows = g.m * batch;
    const GemmChunking c = plan_gemm(rows, g.k, g.n, g.count, region_elems_);
    GemmOperands o{region(x_, c.count_chunk * c.rows_chunk * g.k, 0x1).data(),
                   region(y_, c.count_chunk * c.rows_chunk * g.n, 0x2).data(), nullptr, 0};
    o.w = weights_for(g, w, w_elems, &o.w_stride);
    if (!per_gemm(g, rows, c, o)) return false;
  }
  return true;
}

bool CpuExecutor::forward_layer(const Model& model, std::uint32_t layer, std::uint32_t batch,
                                const float* w, std::size_t w_elems,
                                const std::atomic<bool>* cancel) {
  return for_each_gemm(
      model.layer(layer), batch, 1, w, w_elems,
      [&](const GemmShape& g, std::uint64_t rows, const GemmChunking& c, const GemmOperands& o) {
        const float* bias = (w != nullptr && w_elems >= g.k * g.n + g.n) ? w + g.k * g.n : o.w;
        return walk_chunks(
            g, rows, c, cancel, [&](std::uint64_t c0, std::uint64_t cn, std::uint64_t rn) {
              for (std::uint64_t i = 0; i < cn; ++i) {
                float* yi = o.y + i * rn * g.n;
                cpu::gemm(o.x + i * rn * g.k, o.w + (c0 + i) * o.w_stride, yi, rn, g.k, g.n);
                cpu::bias_relu(yi, bias, rn, g.n);
              }
              flops_ += 2.0 * static_cast<double>(cn * rn * g.k * g.n);
            });
      });
}

bool CpuExecutor::backward_layer(const Model& model, std::uint32_t layer, std::uint32_t batch,
                                 const float* w, std::size_t w_elems,
                                 const std::atomic<bool>* cancel) {
  return for_each_gemm(
      model.layer(layer), batch, 2, w, w_elems,
      [&](const GemmShape& g, std::uint64_t rows, const GemmChunking& c, const GemmOperands& o) {
        const float* dy = o.y;  // the output's gradient, where the forward pass wrote y
        float* dx = region(dx_, c.count_chunk * c.rows_chunk * g.k, 0x3).data();
        float* dw = region(g_, g.k * g.n, 0x4).data();
        return walk_chunks(
            g, rows, c, cancel, [&](std::uint64_t c0, std::uint64_t cn, std::uint64_t rn) {
              for (std::uint64_t i = 0; i < cn; ++i) {
                cpu::gemm_dx(dy + i * rn * g.n, o.w + (c0 + i) * o.w_stride, dx + i * rn * g.k, rn,
                             g.k, g.n);
                cpu::gemm_dw(o.x + i * rn * g.k, dy + i * rn * g.n, dw, rn, g.k, g.n);
              }
              flops_ += 4.0 * static_cast<double>(cn * rn * g.k * g.n);
            });
      });
}

void CpuExecutor::update_layer(const float* w, std::size_t w_elems) {
  if (w_elems == 0) return;
  // The store is read-only (it is the source of every weight load): update a working copy.
  float* ws = region(upd_w_, w_elems, 0x6).data();
  if (w != nullptr) std::memcpy(ws, w, w_elems * sizeof(float));
  float* gs = region(upd_g_, w_elems, 0x7).data();
  float* vs = region(upd_v_, w_elems, 0x8).data();
  cpu::momentum_update(ws, gs, vs, w_elems, kLearningRate, kMomentum);
  flops_ += 3.0 * static_cast<double>(w_elems);
}

void CpuExecutor::elementwise(std::uint64_t elems) {
  if (elems == 0) return;
  const std::size_t chunk = std::min<std::size_t>(elems, region_elems_);
  float* y = region(y_, chunk, 0x2).data();
  for (std::uint64_t done = 0; done < elems; done += chunk) {
    const std::size_t n = std::min<std::uint64_t>(chunk, elems - done);
    cpu::bias_relu(y, nullptr, 1, n);
  }
  flops_ += static_cast<double>(elems);
}

bool CpuExecutor::run(const Model& model, LayerRange range, Pass pass, std::uint32_t batch,
                      bool inference, const std::byte* weights, std::size_t weight_bytes,
                      const std::atomic<bool>* cancel) {
  range.last = std::min(range.last, model.layer_count());
  auto layer_weights = [&](std::uint32_t i, std::size_t* elems) -> const float* {
    *elems = 0;
    if (weights == nullptr || weight_bytes < sizeof(float)) return nullptr;
    std::uint64_t off = model.weight_bytes(LayerRange{0, i}) % weight_bytes;
    off -= off % sizeof(float);
    const std::uint64_t bytes =
        std::min<std::uint64_t>(model.layer(i).weight_bytes, weight_bytes - off);
    *elems = bytes / sizeof(float);
    return reinterpret_cast<const float*>(weights + off);
  };
  auto visit = [&](std::uint32_t i) -> bool {
    const Layer& l = model.layer(i);
    if (!layer_runs(l, inference)) return true;
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) return false;
    std::size_t elems = 0;
    const float* w = layer_weights(i, &elems);
    switch (pass) {
      case Pass::Forward:
        return forward_layer(model, i, batch, w, elems, cancel);
      case Pass::Backward:
        return backward_layer(model, i, batch, w, elems, cancel);
      case Pass::Update:
        update_layer(w, elems);
        return true;
    }
    return true;
  };
  if (pass == Pass::Backward) {
    for (std::uint32_t i = range.last; i-- > range.first;) {
      if (!visit(i)) return false;
    }
  } else {
    for (std::uint32_t i = range.first; i < range.last; ++i) {
      if (!visit(i)) return false;
    }
  }
  return true;
}

}  // namespace gpumux
