// Arrival sanity at load time (traces/importing.md): per inference service, the request count,
// time span and mean rate, and warnings for requests after the horizon and for spans or rates
// that suggest a unit mistake (milliseconds read as seconds). The CLI prints these before a
// run (`--strict` makes a warning an error, exit 2).
//
// Times in ns; rates in requests per second. Thread rules: pure functions, any thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gpumux/api/time.hpp"
#include "gpumux/io/config.hpp"

namespace gpumux {

/// A span more than this many times the horizon is taken for a unit mistake: a trace in ms
/// read as seconds is 1000x too long. Documented assumption (traces/importing.md): a real
/// trace replayed for a shorter horizon is cut on purpose by a factor well below 1000.
inline constexpr double kUnitMistakeHorizonFactor = 1000.0;
/// Without a horizon: a span above this (1e6 s, 11.6 days of simulated time) is taken for a
/// unit mistake. Documented assumption: the public traces in traces/arrivals span about an
/// hour, and a simulated run of more than ten days is not what anyone replays by accident.
inline constexpr double kUnitMistakeSpanS = 1e6;
/// A mean rate above this (one request per microsecond, per service) is taken for times in a
/// smaller unit than read. Documented assumption: Azure's busiest 2023 LLM service averages
/// 5.5 req/s (traces/formats.md), five orders of magnitude below.
inline constexpr double kUnitMistakeRatePerS = 1e6;

struct ServiceArrivals {
  std::string name;
  std::size_t count = 0;
  TimeNs first_ns = 0;
  TimeNs last_ns = 0;
  /// count / (last - first) in requests per second; 0 for fewer than two distinct times.
  double rate_per_s = 0;
  std::size_t after_horizon = 0;  ///< requests arriving after the horizon
};

struct ArrivalReport {
  std::vector<ServiceArrivals> services;  ///< open-loop inference services, in job order
  std::vector<std::string> warnings;      ///< each names the service, the span and the horizon
};

/// The report of `config`'s open-loop services (closed-loop clients send as they go and are
/// left out).
[[nodiscard]] ArrivalReport check_arrivals(const ExperimentConfig& config);

/// "service 'svc': 8819 requests, 0.000-3435.948 s (span 3435.948 s), 2.567 req/s".
[[nodiscard]] std::string describe(const ServiceArrivals& s);

}  // namespace gpumux
