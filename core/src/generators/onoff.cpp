// Arrival generator "onoff": Poisson arrivals at rate_per_s during "on" phases only. Phases
// start at start_s: on for on_s, off for off_s, repeating.
#include <cmath>
#include <optional>

#include "arrival_window.hpp"
#include "gpumux/json_reader.hpp"
#include "gpumux/workload.hpp"

namespace gpumux {
namespace {

using generators::bounded;
using generators::kMaxArrivals;

double uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

class OnOffGenerator final : public ArrivalGenerator {
 public:
  explicit OnOffGenerator(const GeneratorArgs& a) : file_(a.file), path_(a.key_path) {
    JsonReader r(a.params, a.file, a.key_path);
    (void)r.optional("generator");
    rate_per_s_ = r.positive("rate_per_s", r.required_number("rate_per_s"));
    on_ns_ = seconds_to_ns(bounded(r, "on_s", true));
    if (on_ns_ < 1) r.fail("on_s", "must be at least 1 ns");
    off_ns_ = seconds_to_ns(bounded(r, "off_s", false));
    const generators::ArrivalWindow window = generators::ArrivalWindow::read(r);
    start_ns_ = window.start_ns;
    duration_ns_ = window.duration_ns;
    count_ = window.count;
    r.finish();
  }

  std::vector<TimeNs> generate(std::mt19937_64& rng, TimeNs default_start_ns) const override {
    const TimeNs start = start_ns_.value_or(default_start_ns);
    const TimeNs end = duration_ns_ ? start + *duration_ns_ : kTimeNever;
    const double mean_gap_ns = 1e9 / rate_per_s_;
    const DurationNs period = on_ns_ + off_ns_;
    std::vector<TimeNs> out;
    double on_time = 0;  // a Poisson process in "on" time, mapped onto the wall schedule
    while (!count_ || out.size() < *count_) {
      on_time -= mean_gap_ns * std::log1p(-uniform01(rng));
      const auto tau = static_cast<TimeNs>(std::llround(on_time));
      const TimeNs cycles = tau / on_ns_;
      const double wall = static_cast<double>(cycles) * static_cast<double>(period) +
                          static_cast<double>(tau % on_ns_);
      if (wall > 4e18 - static_cast<double>(start)) {
        throw ConfigError(file_, path_, "arrival times overflow; lower count or raise rate_per_s");
      }
      const TimeNs x = start + cycles * period + tau % on_ns_;
      if (x >= end) break;
      if (out.size() >= kMaxArrivals) {
        throw ConfigError(file_, path_, "more than " + std::to_string(kMaxArrivals) + " arrivals");
      }
      out.push_back(x);
    }
    return out;
  }

 private:
  std::string file_, path_;
  double rate_per_s_ = 0;
  DurationNs on_ns_ = 0, off_ns_ = 0;
  std::optional<TimeNs> start_ns_;
  std::optional<DurationNs> duration_ns_;
  std::optional<std::uint64_t> count_;
};

}  // namespace

GPUMUX_REGISTER_GENERATOR("onoff", OnOffGenerator,
                          "Poisson arrivals during on phases only: rate_per_s, on_s, off_s, "
                          "start_s, duration_s/count");

}  // namespace gpumux
