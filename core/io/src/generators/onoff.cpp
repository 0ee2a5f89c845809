// Arrival generator "onoff": Poisson arrivals at rate_per_s during "on" phases only. Phases
// start at start_s: on for on_s, off for off_s, repeating.
#include <cmath>

#include "arrival_window.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/workload.hpp"

namespace gpumux::generators {
namespace {

class OnOffGenerator final : public WindowedGenerator {
 public:
  explicit OnOffGenerator(const GeneratorArgs& a) : WindowedGenerator(a) {
    read_params(a, [this](JsonReader& r) {
      rate_per_s_ = read_rate(r);
      on_ns_ = r.required_duration("on_s", TimeUnit::Seconds, Sign::Positive);
      if (on_ns_ < 1) r.fail("on_s", "must be at least 1 ns");
      off_ns_ = r.required_duration("off_s", TimeUnit::Seconds);
    });
  }

  std::vector<TimeNs> generate(std::mt19937_64& rng, TimeNs default_start_ns) const override {
    auto sink = open_sink(default_start_ns, kRateHint);
    const double mean_gap_ns = 1e9 / rate_per_s_;
    const DurationNs period = on_ns_ + off_ns_;
    double on_time = 0;  // a Poisson process in "on" time, mapped onto the wall schedule
    while (sink.wants_more()) {
      on_time -= mean_gap_ns * std::log1p(-uniform01(rng));
      const auto tau = static_cast<TimeNs>(std::llround(on_time));
      const TimeNs cycles = tau / on_ns_;
      const double wall = static_cast<double>(cycles) * static_cast<double>(period) +
                          static_cast<double>(tau % on_ns_);
      if (!sink.add(wall, cycles * period + tau % on_ns_)) break;
    }
    return sink.take();
  }

 private:
  double rate_per_s_ = 0;
  DurationNs on_ns_ = 0, off_ns_ = 0;
};

}  // namespace

GPUMUX_REGISTER_GENERATOR("onoff", OnOffGenerator,
                          "Poisson arrivals during on phases only: rate_per_s, on_s, off_s, "
                          "start_s, duration_s/count");

}  // namespace gpumux::generators
