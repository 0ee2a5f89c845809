// Salus' iteration scheduler, the choice part: given the sessions (jobs) of one lane, in which
// order may they start their next iteration? Pure functions, no Context, so every policy is
// unit-tested on hand-built sessions.
//
// From Salus' `src/execution/executionengine.cpp` (SymbioticLab/Salus):
//   PACK     no reordering: pending iterations in the order they became pending
//   FAIR     least attained running time (usedRunningTime) first
//   RR       fewest finished iterations first
//   FIFO     only the earliest-admitted live session of the lane
//   PREEMPT  only the session with the least (expected total - used) time (Salus' SRTF)
//   SRTF     gpumux's oracle variant: least remaining work by the cost model (or the user's
//            expected-duration hint scaled by the units left), re-sorted at every boundary
// Work conservation (Salus' default): when the policy's pick cannot start, any other runnable
// session may (PACK order). Without it, only the policy's pick may start; if it has nothing
// to run, the lane waits.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "gpumux/api/enum_names.hpp"
#include "gpumux/api/ids.hpp"
#include "gpumux/api/time.hpp"

namespace gpumux::policies::salus {

enum class SchedPolicy : std::uint8_t { Pack, Fair, Rr, Fifo, Preempt, Srtf };

inline constexpr EnumNames<SchedPolicy, 6> kSchedNames{{{SchedPolicy::Pack, "pack"},
                                                        {SchedPolicy::Fair, "fair"},
                                                        {SchedPolicy::Rr, "rr"},
                                                        {SchedPolicy::Fifo, "fifo"},
                                                        {SchedPolicy::Preempt, "preempt"},
                                                        {SchedPolicy::Srtf, "srtf"}}};
[[nodiscard]] constexpr std::optional<SchedPolicy> parse_sched(std::string_view text) noexcept {
  return kSchedNames.parse(text);
}
[[nodiscard]] constexpr std::string_view to_string(SchedPolicy p) noexcept {
  return kSchedNames.name(p);
}

/// One live job of a lane, as the scheduler sees it.
struct Session {
  JobId job{};
  std::uint64_t admitted_seq = 0;  ///< admission order into Salus (FIFO, and every tie-break)
  bool runnable = false;           ///< its state is resident and an iteration is pending
  TimeNs pending_since_ns = 0;     ///< when its oldest pending iteration became pending (PACK)
  DurationNs used_ns = 0;          ///< wall-clock time of its finished iterations (FAIR, PREEMPT)
  std::uint64_t iterations_done = 0;  ///< RR
  DurationNs remaining_ns = 0;        ///< SRTF: predicted remaining work
  DurationNs expected_total_ns = 0;   ///< PREEMPT: the job's declared total time (TIME:TOTAL)
};

/// Whether `a` goes before `b` under `policy` (a strict total order when admitted_seq is unique:
/// every tie is broken by it). iteration_order sorts by it.
[[nodiscard]] bool precedes(SchedPolicy policy, const Session& a, const Session& b) noexcept;

/// Whether iteration_order(policy, sessions, work_conserving) is just every runnable session by
/// precedes() (so a caller may pick them one at a time instead of sorting all).
[[nodiscard]] inline bool orders_runnable_only(SchedPolicy policy, bool work_conserving) noexcept {
  return work_conserving && policy != SchedPolicy::Fifo && policy != SchedPolicy::Preempt;
}

/// Indices into `sessions` of the runnable sessions the lane should try, in order (the first
/// whose iteration can start wins). Empty when the lane should stay idle.
[[nodiscard]] std::vector<std::size_t> iteration_order(SchedPolicy policy,
                                                       std::span<const Session> sessions,
                                                       bool work_conserving);

}  // namespace gpumux::policies::salus
