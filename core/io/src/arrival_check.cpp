// Arrival sanity at load time (arrival_check.hpp).
#include "gpumux/io/arrival_check.hpp"

#include <algorithm>
#include <cstdio>

namespace gpumux {
namespace {

std::string secs(TimeNs ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f", ns_to_seconds(ns));
  return buf;
}

std::string number(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

std::string describe(const ServiceArrivals& s) {
  std::string out = "service '" + s.name + "': " + std::to_string(s.count) + " requests, " +
                    secs(s.first_ns) + "-" + secs(s.last_ns) + " s (span " +
                    secs(s.last_ns - s.first_ns) + " s)";
  if (s.rate_per_s > 0) out += ", " + number(s.rate_per_s) + " req/s";
  return out;
}

ArrivalReport check_arrivals(const ExperimentConfig& config) {
  ArrivalReport report;
  const bool has_horizon = config.horizon_ns != kTimeNever;
  const std::string horizon = has_horizon ? secs(config.horizon_ns) + " s" : "";
  for (const JobSpec& job : config.jobs) {
    if (job.kind != JobKind::Inference || job.requests_ns.empty()) continue;
    ServiceArrivals s;
    s.name = job.name;
    s.count = job.requests_ns.size();
    s.first_ns = job.requests_ns.front();
    s.last_ns = job.requests_ns.back();
    const double span_s = ns_to_seconds(s.last_ns - s.first_ns);
    if (span_s > 0) s.rate_per_s = static_cast<double>(s.count) / span_s;
    if (has_horizon) {
      s.after_horizon = static_cast<std::size_t>(
          job.requests_ns.end() -
          std::upper_bound(job.requests_ns.begin(), job.requests_ns.end(), config.horizon_ns));
    }
    const std::string who = "service '" + s.name + "': ";
    const std::string span = "requests span " + secs(s.first_ns) + "-" + secs(s.last_ns) + " s";
    if (s.after_horizon > 0) {
      report.warnings.push_back(who + std::to_string(s.after_horizon) + " of " +
                                std::to_string(s.count) + " requests arrive after the horizon (" +
                                span + ", horizon_s " + horizon + ")");
    }
    const char* const unit_hint =
        "are the times in milliseconds? (requests.time_scale 0.001, or gpumux trace import "
        "--time-unit ms)";
    if (has_horizon && span_s > kUnitMistakeHorizonFactor * ns_to_seconds(config.horizon_ns)) {
      report.warnings.push_back(who + span + ", more than " + number(kUnitMistakeHorizonFactor) +
                                " x the horizon (" + horizon + "): " + unit_hint);
    } else if (!has_horizon && span_s > kUnitMistakeSpanS) {
      char limit[32];
      std::snprintf(limit, sizeof limit, "%.0f", kUnitMistakeSpanS);
      report.warnings.push_back(who + span + ", more than " + limit +
                                " s (11.6 days) of simulated time and no horizon_s: " + unit_hint);
    }
    if (s.rate_per_s > kUnitMistakeRatePerS) {
      report.warnings.push_back(who + number(s.rate_per_s) + " req/s on average (" + span +
                                "), more than one request per microsecond: are the times in a "
                                "smaller unit than seconds?");
    }
    report.services.push_back(std::move(s));
  }
  return report;
}

}  // namespace gpumux
