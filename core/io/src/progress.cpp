// Progress text for sweeps and long runs (progress.hpp).
#include "gpumux/io/progress.hpp"

#include <cmath>
#include <cstdio>

namespace gpumux {

std::string format_wall_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<std::uint64_t>(seconds);
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%llus", static_cast<unsigned long long>(s));
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%llum%02llus", static_cast<unsigned long long>(s / 60),
                  static_cast<unsigned long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lluh%02llum", static_cast<unsigned long long>(s / 3600),
                  static_cast<unsigned long long>((s % 3600) / 60));
  }
  return buf;
}

std::string sweep_progress_line(std::size_t done, std::size_t total, std::size_t ran,
                                std::size_t to_run, double elapsed_s) {
  const double percent =
      total == 0 ? 100.0 : 100.0 * static_cast<double>(done) / static_cast<double>(total);
  const double remaining =
      ran >= to_run ? 0.0
      : ran == 0    ? -1.0  // no point has ended yet: no estimate
                    : elapsed_s / static_cast<double>(ran) * static_cast<double>(to_run - ran);
  char buf[96];
  std::snprintf(buf, sizeof buf, "[%zu/%zu] %.0f%% elapsed ", done, total, percent);
  return buf + format_wall_duration(elapsed_s) + ", ETA " + format_wall_duration(remaining);
}

std::string heartbeat_line(TimeNs simulated_ns, TimeNs horizon_ns, std::uint64_t events,
                           double wall_s) {
  char buf[160];
  const double sim_s = static_cast<double>(simulated_ns) * 1e-9;
  if (horizon_ns == kTimeNever || horizon_ns <= 0) {
    std::snprintf(buf, sizeof buf, "simulated %.3f s, %llu events, ", sim_s,
                  static_cast<unsigned long long>(events));
  } else {
    const double horizon_s = static_cast<double>(horizon_ns) * 1e-9;
    std::snprintf(buf, sizeof buf, "simulated %.3f s of %.3f s (%.1f%%), %llu events, ", sim_s,
                  horizon_s, 100.0 * sim_s / horizon_s, static_cast<unsigned long long>(events));
  }
  return buf + format_wall_duration(wall_s) + " wall";
}

}  // namespace gpumux
