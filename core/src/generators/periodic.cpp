// Arrival generator "periodic": one request every interval_s, starting at start_s.
#include <cmath>
#include <optional>

#include "gpumux/json_reader.hpp"
#include "gpumux/workload.hpp"

namespace gpumux {
namespace {

constexpr std::size_t kMaxArrivals = 10'000'000;

double bounded(JsonReader& r, const std::string& key, bool positive) {
  const double v = r.required_number(key);
  if (positive ? !(v > 0) : !(v >= 0)) r.fail(key, positive ? "must be > 0" : "must be >= 0");
  if (v > 1e9) r.fail(key, "out of range (more than 1e9 s)");
  return v;
}

class PeriodicGenerator final : public ArrivalGenerator {
 public:
  explicit PeriodicGenerator(const GeneratorArgs& a) : file_(a.file), path_(a.key_path) {
    JsonReader r(a.params, a.file, a.key_path);
    (void)r.optional("generator");
    interval_ns_ = static_cast<double>(seconds_to_ns(bounded(r, "interval_s", true)));
    if (interval_ns_ < 1) r.fail("interval_s", "must be at least 1 ns");
    if (r.has("start_s")) start_ns_ = seconds_to_ns(bounded(r, "start_s", false));
    if (r.has("duration_s")) duration_ns_ = seconds_to_ns(bounded(r, "duration_s", true));
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
