// Arrival generator "replay": request times from an arrivals CSV (traces/arrivals/*.csv),
// shifted by offset_s and stretched by time_scale.
#include <cmath>
#include <optional>

#include "arrival_window.hpp"
#include "gpumux/io/input_path.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/workload.hpp"

namespace gpumux {
namespace {

class ReplayGenerator final : public ArrivalGenerator {
 public:
  explicit ReplayGenerator(const GeneratorArgs& a) {
    JsonReader r = generators::generator_params(a);
    const std::string file = r.required_string("file");
    if (r.has("offset_s")) {
      const double offset_s = r.non_negative("offset_s", r.required_number("offset_s"));
      if (offset_s > 1e9) r.fail("offset_s", "out of range (more than 1e9 s)");
      offset_ns_ = seconds_to_ns(offset_s);
    }
    time_scale_ = r.positive("time_scale", r.number_or("time_scale", 1.0));
    if (time_scale_ > 1e6) r.fail("time_scale", "out of range (more than 1e6)");
    const std::optional<std::uint64_t> limit = generators::optional_count(r, "limit");
    r.finish();
    // Read now, so a bad file is reported when the config is loaded.
    // Relative: the config's folder first, then the repository root (input_path.hpp).
    const std::filesystem::path path = resolve_input_path(file, a.file, a.repo_root).path;
    try {
      times_s_ = load_arrivals_csv(path);
    } catch (const InputError& e) {
      r.fail("file", e.what());
    }
    if (limit && times_s_.size() > *limit) times_s_.resize(*limit);
    if (times_s_.empty()) r.fail("file", "the arrivals file has no rows");
  }

  std::vector<TimeNs> generate(std::mt19937_64& /*rng*/, TimeNs default_start_ns) const override {
    const TimeNs offset = offset_ns_.value_or(default_start_ns);
    std::vector<TimeNs> out;
    out.reserve(times_s_.size());
    // CSV times are at most 1e9 s and the scale at most 1e6: 1e24 ns would overflow, so clamp
    // the product in double before converting.
    for (double t : times_s_) {
      const double ns = std::min(t * time_scale_ * 1e9, 4e18);
      out.push_back(offset + static_cast<TimeNs>(std::llround(ns)));
    }
    return out;
  }

 private:
  std::optional<TimeNs> offset_ns_;
  double time_scale_ = 1.0;
  std::vector<double> times_s_;
};

}  // namespace

GPUMUX_REGISTER_GENERATOR("replay", ReplayGenerator,
                          "replays an arrivals CSV: file, offset_s, time_scale, limit");

}  // namespace gpumux
