// How the summary counts a service's requests against its spec: those that arrived before the
// run's end, those never served, and a closed-loop client's "on" phases begun.
#include <algorithm>
#include <limits>

#include "summary_state.hpp"

namespace gpumux::summary_detail {

/// Requests that arrived before the run's end, and those of them never served. An open-loop
/// service's arrivals come from its spec: requests due after the service was rejected are never
/// logged, but they arrived and were not served. A closed-loop client's come from the log.
/// An unserved request whose SLO deadline passed before the end counts as an SLO miss; one
/// whose deadline lies beyond the end is not judged.
RequestCounts count_requests(const JobSpec& spec, JobAcc& a, TimeNs end_ns) {
  std::vector<TimeNs> arrivals;
  if (spec.closed_loop.enabled) {
    arrivals = a.arrivals;
  } else {
    for (TimeNs t : spec.requests_ns) {
      if (t <= end_ns) arrivals.push_back(t);
    }
    // Never fewer than logged (a platform may log what the spec does not list).
    if (arrivals.size() < a.arrivals.size()) arrivals = a.arrivals;
  }
  std::sort(arrivals.begin(), arrivals.end());
  std::sort(a.served_arrivals.begin(), a.served_arrivals.end());
  RequestCounts c;
  c.arrived = arrivals.size();
  // A served request's logged arrival is its spec time in the simulator, and a little later
  // on a real platform (its timer fired late: 7-36 us on the H100 machine, 2026-11-25). So
  // the requests due at t are matched by served arrivals in [t, next due time).
  std::size_t k = 0;
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    const TimeNs t = arrivals[i];
    const auto next =
        std::upper_bound(arrivals.begin() + static_cast<std::ptrdiff_t>(i), arrivals.end(), t);
    const TimeNs until = next == arrivals.end() ? std::numeric_limits<TimeNs>::max() : *next;
    while (k < a.served_arrivals.size() && a.served_arrivals[k] < t) ++k;
    if (k < a.served_arrivals.size() && a.served_arrivals[k] < until) {
      ++k;  // served
      continue;
    }
    ++c.unserved;
    if (spec.slo_ns > 0 && t + spec.slo_ns < end_ns) ++c.slo_missed_unserved;
  }
  return c;
}

/// Number of "on" phases of a closed-loop client that began before `until` (and before the
/// client's end).
std::uint64_t phases_begun(const ClosedLoop& c, TimeNs until) {
  if (c.on_ns <= 0) return 0;
  const TimeNs stop = std::min(until, c.end_ns);
  if (stop <= c.start_ns) return 0;
  const DurationNs period = c.on_ns + c.off_ns;
  return static_cast<std::uint64_t>((stop - c.start_ns + period - 1) / period);
}

}  // namespace gpumux::summary_detail
