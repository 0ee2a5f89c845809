// Arrival generator "poisson": open-loop requests with exponential gaps (rate_per_s).
#include <cmath>

#include "arrival_window.hpp"
#include "gpumux/json_reader.hpp"
#include "gpumux/workload.hpp"

namespace gpumux {
namespace {

using generators::ArrivalSink;
using generators::ArrivalWindow;
using generators::uniform01;

class PoissonGenerator final : public ArrivalGenerator {
 public:
  explicit PoissonGenerator(const GeneratorArgs& a) : file_(a.file), path_(a.key_path) {
    JsonReader r(a.params, a.file, a.key_path);
    (void)r.optional("generator");
    rate_per_s_ = r.positive("rate_per_s", r.required_number("rate_per_s"));
    window_ = ArrivalWindow::read(r);
    r.finish();
  }

  std::vector<TimeNs> generate(std::mt19937_64& rng, TimeNs default_start_ns) const override {
    ArrivalSink sink(window_, default_start_ns, file_, path_, "lower count or raise rate_per_s");
    const double mean_gap_ns = 1e9 / rate_per_s_;
    double t = 0;  // ns since start
    while (sink.wants_more()) {
      t -= mean_gap_ns * std::log1p(-uniform01(rng));
      if (!sink.add(t)) break;
    }
    return sink.take();
  }

 private:
  std::string file_, path_;
  double rate_per_s_ = 0;
  ArrivalWindow window_;
};

}  // namespace

GPUMUX_REGISTER_GENERATOR("poisson", PoissonGenerator,
                          "open-loop Poisson arrivals: rate_per_s, start_s, duration_s/count");

}  // namespace gpumux
