// The Eigen primitives of the CPU executor against naive loops, and the layer mapping.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "gpumux/backend/cpu_executor.hpp"
#include "gpumux/backend/layer_plan.hpp"
#include "gpumux/backend/weight_fill.hpp"

using namespace gpumux;

namespace {

std::vector<float> random_matrix(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

}  // namespace

TEST_CASE("CPU executor GEMMs match a naive triple loop", "[realtime]") {
  std::mt19937 rng(7);
  const std::size_t rows = 13, k = 7, n = 5;
  const auto x = random_matrix(rows * k, rng);
  const auto w = random_matrix(k * n, rng);
  const auto dy = random_matrix(rows * n, rng);

  std::vector<float> y(rows * n);
  cpu::gemm(x.data(), w.data(), y.data(), rows, k, n);
  std::vector<double> ref(rows * n, 0.0);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < n; ++c)
      for (std::size_t i = 0; i < k; ++i) ref[r * n + c] += double(x[r * k + i]) * w[i * n + c];
  CHECK(max_abs_diff(y, ref) < 1e-5);

  std::vector<float> dx(rows * k);
  cpu::gemm_dx(dy.data(), w.data(), dx.data(), rows, k, n);
  std::vector<double> ref_dx(rows * k, 0.0);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t c = 0; c < n; ++c) ref_dx[r * k + i] += double(dy[r * n + c]) * w[i * n + c];
  CHECK(max_abs_diff(dx, ref_dx) < 1e-5);

  std::vector<float> dw(k * n);
  cpu::gemm_dw(x.data(), dy.data(), dw.data(), rows, k, n);
  std::vector<double> ref_dw(k * n, 0.0);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t c = 0; c < n; ++c)
      for (std::size_t r = 0; r < rows; ++r)
        ref_dw[i * n + c] += double(x[r * k + i]) * dy[r * n + c];
  CHECK(max_abs_diff(dw, ref_dw) < 1e-5);

  std::vector<float> b = random_matrix(n, rng);
  std::vector<float> z = y;
  cpu::bias_relu(z.data(), b.data(), rows, n);
  std::vector<double> ref_z(rows * n);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < n; ++c)
      ref_z[r * n + c] = std::max(0.0, double(y[r * n + c]) + b[c]);
  CHECK(max_abs_diff(z, ref_z) < 1e-6);

  std::vector<float> wm = w, v(k * n, 0.5f);
  const std::vector<float> g = dw;
  cpu::momentum_update(wm.data(), g.data(), v.data(), k * n, 0.1f, 0.9f);
  for (std::size_t i = 0; i < k * n; ++i) {
    const double vv = 0.9 * 0.5 + g[i];
    CHECK(v[i] == Approx(vv).margin(1e-6));
    CHECK(wm[i] == Approx(w[i] - 0.1 * vv).margin(1e-6));
  }
}

TEST_CASE("GEMM chunking keeps every chunk inside the region", "[realtime]") {
  const GemmChunking a = plan_gemm(1000, 64, 32, 1, 6400);
  CHECK(a.rows_chunk == 100);
  CHECK(a.count_chunk == 1);
  const GemmChunking b = plan_gemm(10, 8, 8, 12, 1000);
  CHECK(b.rows_chunk == 10);
  CHECK(b.count_chunk == 12);
  const GemmChunking c = plan_gemm(10, 8, 8, 100, 1000);
  CHECK(c.count_chunk * c.rows_chunk * 8 <= 1000);
  const GemmChunking d = plan_gemm(5, 5000, 5, 1, 1000);  // one row does not fit: still 1
  CHECK(d.rows_chunk == 1);
}

TEST_CASE("fill_weights is deterministic and finite in fp32 and bf16", "[realtime]") {
  std::vector<std::uint32_t> a(1000), b(1000);
  fill_weights(a.data(), a.size() * 4, 99);
  fill_weights(b.data() + 10, (b.size() - 10) * 4, 99, 10);
  fill_weights(b.data(), 40, 99);
  CHECK(a == b);
  for (const std::uint32_t word : a) {
    float f;
    std::memcpy(&f, &word, 4);
    CHECK(std::isfinite(f));
    CHECK(std::abs(f) <= 0.051f);
    for (const std::uint32_t half : {word >> 16, word & 0xffffu}) {
      const std::uint32_t as_fp32 = half << 16;  // bf16 -> fp32
      float h;
      std::memcpy(&h, &as_fp32, 4);
      CHECK(std::isfinite(h));
    }
  }
}
