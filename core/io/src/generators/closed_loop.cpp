// Arrival generator "closed_loop": a client that sends its next request think_ms after the
// previous one completes, only in "on" phases (PipeSwitch's scheduling-cycle experiment). The
// Engine produces the arrivals while the run proceeds; this only describes the client.
#include <cmath>
#include <optional>

#include "arrival_window.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/workload.hpp"

namespace gpumux {
namespace {

class ClosedLoopGenerator final : public ArrivalGenerator {
 public:
  explicit ClosedLoopGenerator(const GeneratorArgs& a) {
    JsonReader r = generators::generator_params(a);
    count_ = generators::optional_count(r, "count").value_or(0);
    if (r.has("duration_s"))
      duration_ns_ = r.required_duration("duration_s", TimeUnit::Seconds, Sign::Positive);
    if (count_ == 0 && !duration_ns_) r.fail("", "needs count or duration_s (or both)");
    if (r.has("think_ms")) {
      think_ns_ = r.required_duration("think_ms", TimeUnit::Milliseconds);
    }
    if (r.has("start_s")) start_ns_ = r.required_duration("start_s", TimeUnit::Seconds);
    on_ns_ = r.has("on_s") ? r.required_duration("on_s", TimeUnit::Seconds) : 0;
    off_ns_ = r.has("off_s") ? r.required_duration("off_s", TimeUnit::Seconds) : 0;
    if (on_ns_ == 0 && off_ns_ > 0) r.fail("off_s", "an off phase needs on_s > 0");
    r.finish();
  }

  std::vector<TimeNs> generate(std::mt19937_64& /*rng*/, TimeNs /*start*/) const override {
    return {};
  }

  std::optional<ClosedLoop> closed_loop(TimeNs default_start_ns) const override {
    ClosedLoop c;
    c.enabled = true;
    c.count = count_;
    c.think_ns = think_ns_;
    c.start_ns = start_ns_.value_or(default_start_ns);
    c.end_ns = duration_ns_ ? c.start_ns + *duration_ns_ : kTimeNever;
    c.on_ns = on_ns_;
    c.off_ns = off_ns_;
    return c;
  }

 private:
  std::uint64_t count_ = 0;
  std::optional<DurationNs> duration_ns_;
  DurationNs think_ns_ = 0, on_ns_ = 0, off_ns_ = 0;
  std::optional<TimeNs> start_ns_;
};

}  // namespace

GPUMUX_REGISTER_GENERATOR("closed_loop", ClosedLoopGenerator,
                          "closed-loop client: count and/or duration_s, think_ms, start_s, "
                          "on_s/off_s");

}  // namespace gpumux
