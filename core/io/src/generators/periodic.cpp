// Arrival generator "periodic": one request every interval_s, starting at start_s.
#include <cmath>

#include "arrival_window.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/workload.hpp"

namespace gpumux::generators {
namespace {

class PeriodicGenerator final : public WindowedGenerator {
 public:
  explicit PeriodicGenerator(const GeneratorArgs& a) : WindowedGenerator(a) {
    read_params(a, [this](JsonReader& r) {
      interval_ns_ =
          static_cast<double>(r.required_duration("interval_s", TimeUnit::Seconds, Sign::Positive));
      if (interval_ns_ < 1) r.fail("interval_s", "must be at least 1 ns");
    });
  }

  std::vector<TimeNs> generate(std::mt19937_64& /*rng*/, TimeNs default_start_ns) const override {
    // i * interval from the start (not accumulated), so rounding never drifts.
    std::uint64_t i = 0;
    return collect(default_start_ns, "lower count",
                   [&] { return static_cast<double>(i++) * interval_ns_; });
  }

 private:
  double interval_ns_ = 0;
};

}  // namespace

GPUMUX_REGISTER_GENERATOR("periodic", PeriodicGenerator,
                          "one request every interval_s: interval_s, start_s, duration_s/count");

}  // namespace gpumux::generators
