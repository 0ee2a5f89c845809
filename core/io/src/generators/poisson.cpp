// Arrival generator "poisson": open-loop requests with exponential gaps (rate_per_s).
#include <cmath>

#include "arrival_window.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/workload.hpp"

namespace gpumux::generators {
namespace {

class PoissonGenerator final : public WindowedGenerator {
 public:
  explicit PoissonGenerator(const GeneratorArgs& a) : WindowedGenerator(a) {
    read_params(a, [this](JsonReader& r) { rate_per_s_ = read_rate(r); });
  }

  std::vector<TimeNs> generate(std::mt19937_64& rng, TimeNs default_start_ns) const override {
    const double mean_gap_ns = 1e9 / rate_per_s_;
    double t = 0;  // ns since start
    return collect(default_start_ns, kRateHint, [&] {
      t -= mean_gap_ns * std::log1p(-uniform01(rng));
      return t;
    });
  }

 private:
  double rate_per_s_ = 0;
};

}  // namespace

GPUMUX_REGISTER_GENERATOR("poisson", PoissonGenerator,
                          "open-loop Poisson arrivals: rate_per_s, start_s, duration_s/count");

}  // namespace gpumux::generators
