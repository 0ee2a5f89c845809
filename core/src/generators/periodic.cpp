// Arrival generator "periodic": one request every interval_s, starting at start_s.
#include <cmath>
#include <optional>

#include "arrival_window.hpp"
#include "gpumux/json_reader.hpp"
#include "gpumux/workload.hpp"

namespace gpumux {
namespace {

using generators::bounded;
using generators::kMaxArrivals;

class PeriodicGenerator final : public ArrivalGenerator {
 public:
  explicit PeriodicGenerator(const GeneratorArgs& a) : file_(a.file), path_(a.key_path) {
    JsonReader r(a.params, a.file, a.key_path);
    (void)r.optional("generator");
    interval_ns_ = static_cast<double>(seconds_to_ns(bounded(r, "interval_s", true)));
    if (interval_ns_ < 1) r.fail("interval_s", "must be at least 1 ns");
    const generators::ArrivalWindow window = generators::ArrivalWindow::read(r);
    start_ns_ = window.start_ns;
    duration_ns_ = window.duration_ns;
    count_ = window.count;
    r.finish();
  }

  std::vector<TimeNs> generate(std::mt19937_64& /*rng*/, TimeNs default_start_ns) const override {
    const TimeNs start = start_ns_.value_or(default_start_ns);
    const TimeNs end = duration_ns_ ? start + *duration_ns_ : kTimeNever;
    std::vector<TimeNs> out;
    for (std::uint64_t i = 0; !count_ || i < *count_; ++i) {
      // i * interval from the start (not accumulated), so rounding never drifts.
      const double t = static_cast<double>(i) * interval_ns_;
      if (t > 4e18 - static_cast<double>(start)) {
        throw ConfigError(file_, path_, "arrival times overflow; lower count");
      }
      const TimeNs x = start + static_cast<TimeNs>(std::llround(t));
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
  double interval_ns_ = 0;
  std::optional<TimeNs> start_ns_;
  std::optional<DurationNs> duration_ns_;
  std::optional<std::uint64_t> count_;
};

}  // namespace

GPUMUX_REGISTER_GENERATOR("periodic", PeriodicGenerator,
                          "one request every interval_s: interval_s, start_s, duration_s/count");

}  // namespace gpumux
