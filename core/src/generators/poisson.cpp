// Arrival generator "poisson": open-loop requests with exponential gaps (rate_per_s).
#include <cmath>
#include <optional>

#include "gpumux/json_reader.hpp"
#include "gpumux/workload.hpp"

namespace gpumux {
namespace {

constexpr std::size_t kMaxArrivals = 10'000'000;  // guards memory against a typo in the rate

// Uniform in [0, 1) from the top 53 bits: the same sequence on every standard library.
double uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

class PoissonGenerator final : public ArrivalGenerator {
 public:
  explicit PoissonGenerator(const GeneratorArgs& a) : file_(a.file), path_(a.key_path) {
    JsonReader r(a.params, a.file, a.key_path);
    (void)r.optional("generator");
    rate_per_s_ = r.positive("rate_per_s", r.required_number("rate_per_s"));
    if (r.has("start_s")) start_ns_ = seconds_to_ns(bounded(r, "start_s", 0));
    if (r.has("duration_s")) duration_ns_ = seconds_to_ns(bounded(r, "duration_s", 1));
    if (r.has("count")) {
      const std::int64_t c = r.required_int("count");
      if (c < 1 || static_cast<std::uint64_t>(c) > kMaxArrivals) {
        r.fail("count", "must be in [1, " + std::to_string(kMaxArrivals) + "]");
      }
      count_ = static_cast<std::uint64_t>(c);
    }
    if (!duration_ns_ && !count_) r.fail("", "needs duration_s or count (or both)");
    r.finish();
  }

  std::vector<TimeNs> generate(std::mt19937_64& rng, TimeNs default_start_ns) const override {
    const TimeNs start = start_ns_.value_or(default_start_ns);
    const TimeNs end = duration_ns_ ? start + *duration_ns_ : kTimeNever;
    const double mean_gap_ns = 1e9 / rate_per_s_;
    std::vector<TimeNs> out;
    double t = 0;  // ns since start
    while (!count_ || out.size() < *count_) {
      t -= mean_gap_ns * std::log1p(-uniform01(rng));
      if (t > 4e18 - static_cast<double>(start)) {
        throw ConfigError(file_, path_, "arrival times overflow; lower count or raise rate_per_s");
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
  static double bounded(JsonReader& r, const std::string& key, int positive) {
    const double v = r.required_number(key);
    if (positive ? !(v > 0) : !(v >= 0)) r.fail(key, positive ? "must be > 0" : "must be >= 0");
    if (v > 1e9) r.fail(key, "out of range (more than 1e9 s)");
    return v;
  }

  std::string file_, path_;
  double rate_per_s_ = 0;
  std::optional<TimeNs> start_ns_;
  std::optional<DurationNs> duration_ns_;
  std::optional<std::uint64_t> count_;
};

}  // namespace

GPUMUX_REGISTER_GENERATOR("poisson", PoissonGenerator,
                          "open-loop Poisson arrivals: rate_per_s, start_s, duration_s/count");

}  // namespace gpumux
