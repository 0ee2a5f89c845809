// What the open-loop arrival generators share: when arrivals start (start_s, default: the
// service's arrival) and stop (after duration_s, after count arrivals, or whichever comes
// first), the collection of arrival times against that window, and the uniform draw their
// random gaps are built from. Times in ns.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/time.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/workload.hpp"

namespace gpumux::generators {

inline constexpr std::size_t kMaxArrivals = 10'000'000;

/// A reader over a generator's params; the "generator" key (its name) is the registry's.
inline JsonReader generator_params(const GeneratorArgs& a) {
  JsonReader r(a.params, a.file, a.key_path);
  (void)r.optional("generator");
  return r;
}

/// rate_per_s, requests per second (> 0), and the overflow hint of the generators that use it.
inline double read_rate(JsonReader& r) {
  return r.positive("rate_per_s", r.required_number("rate_per_s"));
}
inline constexpr const char* kRateHint = "lower count or raise rate_per_s";

/// An optional whole number >= 1 (a count, a limit); nullopt when the key is absent.
inline std::optional<std::uint64_t> optional_count(JsonReader& r, const std::string& key) {
  if (!r.has(key)) return std::nullopt;
  const std::int64_t c = r.required_int(key);
  if (c < 1) r.fail(key, "must be >= 1");
  return static_cast<std::uint64_t>(c);
}

/// A non-negative (or, with `positive`, strictly positive) plain number of at most 1e9;
/// errors name the key. Durations use JsonReader::required_duration instead.
inline double bounded(JsonReader& r, const std::string& key, bool positive) {
  const double v = r.required_number(key);
  if (positive ? !(v > 0) : !(v >= 0)) r.fail(key, positive ? "must be > 0" : "must be >= 0");
  if (v > 1e9) r.fail(key, "out of range (more than 1e9)");
  return v;
}

struct ArrivalWindow {
  std::optional<TimeNs> start_ns;
  std::optional<DurationNs> duration_ns;
  std::optional<std::uint64_t> count;

  /// Reads start_s, duration_s and count; at least one of duration_s and count is required.
  static ArrivalWindow read(JsonReader& r) {
    ArrivalWindow w;
    if (r.has("start_s")) w.start_ns = r.required_duration("start_s", TimeUnit::Seconds);
    if (r.has("duration_s"))
      w.duration_ns = r.required_duration("duration_s", TimeUnit::Seconds, Sign::Positive);
    if (r.has("count")) {
      w.count = r.integer_in<std::uint64_t>("count", 1, static_cast<std::int64_t>(kMaxArrivals));
    }
    if (!w.duration_ns && !w.count) r.fail("", "needs duration_s or count (or both)");
    return w;
  }
};

/// Uniform in [0, 1) from the top 53 bits: the same sequence on every standard library.
inline double uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

/// Collects one generate() call's arrivals, in order, against a window.
class ArrivalSink {
 public:
  /// `file` and `path` name the generator's config for errors; `hint` ends the overflow
  /// message ("lower count or raise rate_per_s").
  ArrivalSink(const ArrivalWindow& window, TimeNs default_start_ns, const std::string& file,
              const std::string& path, const char* hint)
      : start_(window.start_ns.value_or(default_start_ns)),
        end_(window.duration_ns ? start_ + *window.duration_ns : kTimeNever),
        count_(window.count),
        file_(file),
        path_(path),
        hint_(hint) {}

  [[nodiscard]] TimeNs start() const noexcept { return start_; }
  /// Whether the count allows another arrival.
  [[nodiscard]] bool wants_more() const noexcept { return !count_ || out_.size() < *count_; }
  /// Adds the arrival `offset_ns` after the start (rounded to the ns); false, adding nothing,
  /// when it falls at or after the window's end. Throws ConfigError past 4e18 ns or beyond
  /// kMaxArrivals arrivals.
  bool add(double offset_ns) {
    check_overflow(offset_ns);
    return add_exact(static_cast<TimeNs>(std::llround(offset_ns)));
  }
  /// As add() for an offset already in whole ns; `approx_ns` is its value as a double, for
  /// the overflow check.
  bool add(double approx_ns, TimeNs offset_ns) {
    check_overflow(approx_ns);
    return add_exact(offset_ns);
  }
  [[nodiscard]] std::vector<TimeNs> take() { return std::move(out_); }

 private:
  void check_overflow(double offset_ns) const {
    if (offset_ns > 4e18 - static_cast<double>(start_)) {
      throw ConfigError(file_, path_, std::string("arrival times overflow; ") + hint_);
    }
  }
  bool add_exact(TimeNs offset_ns) {
    const TimeNs x = start_ + offset_ns;
    if (x >= end_) return false;
    if (out_.size() >= kMaxArrivals) {
      throw ConfigError(file_, path_, "more than " + std::to_string(kMaxArrivals) + " arrivals");
    }
    out_.push_back(x);
    return true;
  }

  TimeNs start_, end_;
  std::optional<std::uint64_t> count_;
  const std::string& file_;
  const std::string& path_;
  const char* hint_;
  std::vector<TimeNs> out_;
};

/// Base of the open-loop generators: the window and where the config stands (for errors).
class WindowedGenerator : public ArrivalGenerator {
 protected:
  explicit WindowedGenerator(const GeneratorArgs& a) : file_(a.file), path_(a.key_path) {}

  /// Reads the params: `own(JsonReader&)` takes the generator's own keys, then the window is
  /// read and unknown keys are refused.
  template <class ReadOwn>
  void read_params(const GeneratorArgs& a, ReadOwn&& own) {
    JsonReader r = generator_params(a);
    own(r);
    window_ = ArrivalWindow::read(r);
    r.finish();
  }

  /// The arrivals of one generate() call: `next()` gives each one's offset from the start in
  /// ns (non-decreasing), asked only while the count allows another, until one falls past the
  /// window. `hint` ends the overflow message.
  template <class Next>
  [[nodiscard]] std::vector<TimeNs> collect(TimeNs default_start_ns, const char* hint,
                                            Next&& next) const {
    ArrivalSink sink = open_sink(default_start_ns, hint);
    while (sink.wants_more()) {
      if (!sink.add(next())) break;
    }
    return sink.take();
  }

  /// The sink of one generate() call; `hint` ends the overflow message.
  [[nodiscard]] ArrivalSink open_sink(TimeNs default_start_ns, const char* hint) const {
    return {window_, default_start_ns, file_, path_, hint};
  }

 private:
  std::string file_, path_;
  ArrivalWindow window_;
};

}  // namespace gpumux::generators
