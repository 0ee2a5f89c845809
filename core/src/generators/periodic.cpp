// Arrival generator "periodic": one request every interval_s, starting at start_s.
#include <cmath>

#include "arrival_window.hpp"
#include "gpumux/json_reader.hpp"
#include "gpumux/workload.hpp"

namespace gpumux {
namespace {

using generators::ArrivalSink;
using generators::ArrivalWindow;

class PeriodicGenerator final : public ArrivalGenerator {
 public:
  explicit PeriodicGenerator(const GeneratorArgs& a) : file_(a.file), path_(a.key_path) {
    JsonReader r(a.params, a.file, a.key_path);
    (void)r.optional("generator");
    interval_ns_ =
        static_cast<double>(r.required_duration("interval_s", TimeUnit::Seconds, Sign::Positive));
    if (interval_ns_ < 1) r.fail("interval_s", "must be at least 1 ns");
    window_ = ArrivalWindow::read(r);
    r.finish();
  }

  std::vector<TimeNs> generate(std::mt19937_64& /*rng*/, TimeNs default_start_ns) const override {
    ArrivalSink sink(window_, default_start_ns, file_, path_, "lower count");
    // i * interval from the start (not accumulated), so rounding never drifts.
    for (std::uint64_t i = 0; sink.wants_more(); ++i) {
      if (!sink.add(static_cast<double>(i) * interval_ns_)) break;
    }
    return sink.take();
  }

 private:
  std::string file_, path_;
  double interval_ns_ = 0;
  ArrivalWindow window_;
};

}  // namespace

GPUMUX_REGISTER_GENERATOR("periodic", PeriodicGenerator,
                          "one request every interval_s: interval_s, start_s, duration_s/count");

}  // namespace gpumux
