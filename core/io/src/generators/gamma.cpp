// Arrival generator "gamma": bursty open-loop requests whose gaps are gamma-distributed with
// mean 1/rate_per_s and coefficient of variation cv (shape 1/cv^2; cv = 1 is Poisson).
#include <cmath>

#include "arrival_window.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/workload.hpp"

namespace gpumux::generators {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Box-Muller; written out (not std::normal_distribution) so sequences match across libraries.
double standard_normal(std::mt19937_64& rng) {
  const double u1 = 1.0 - uniform01(rng);  // (0, 1]
  const double u2 = uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
}

// Marsaglia & Tsang (2000), with the shape < 1 boost Gamma(k) = Gamma(k + 1) * U^(1/k).
double standard_gamma(std::mt19937_64& rng, double shape) {
  if (shape < 1.0) {
    const double g = standard_gamma(rng, shape + 1.0);
    return g * std::pow(1.0 - uniform01(rng), 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double x = standard_normal(rng);
    double v = 1.0 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    const double u = 1.0 - uniform01(rng);
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

class GammaGenerator final : public WindowedGenerator {
 public:
  explicit GammaGenerator(const GeneratorArgs& a) : WindowedGenerator(a) {
    read_params(a, [this](JsonReader& r) {
      rate_per_s_ = read_rate(r);
      const double cv = bounded(r, "cv", true);
      if (cv < 1e-3 || cv > 100) r.fail("cv", "must be in [0.001, 100]");
      shape_ = 1.0 / (cv * cv);
    });
  }

  std::vector<TimeNs> generate(std::mt19937_64& rng, TimeNs default_start_ns) const override {
    const double scale_ns = 1e9 / rate_per_s_ / shape_;  // mean gap = shape * scale
    double t = 0;
    return collect(default_start_ns, kRateHint, [&] {
      t += standard_gamma(rng, shape_) * scale_ns;
      return t;
    });
  }

 private:
  double rate_per_s_ = 0, shape_ = 1;
};

}  // namespace

GPUMUX_REGISTER_GENERATOR("gamma", GammaGenerator,
                          "bursty open-loop arrivals, gamma gaps: rate_per_s, cv, start_s, "
                          "duration_s/count");

}  // namespace gpumux::generators
