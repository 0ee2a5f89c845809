#include "salus/iteration_order.hpp"

#include <algorithm>
#include <tuple>

namespace gpumux::policies::salus {

namespace {

// The policy's preference as a sortable key; smaller runs first. Sessions with nothing
// pending sort after every runnable one under PACK (they have no pending iteration).
std::tuple<std::int64_t, std::uint64_t> key(SchedPolicy policy, const Session& s) noexcept {
  switch (policy) {
    case SchedPolicy::Pack:
      return {s.runnable ? s.pending_since_ns : kTimeNever, s.admitted_seq};
    case SchedPolicy::Fair:
      return {s.used_ns, s.admitted_seq};
    case SchedPolicy::Rr:
      return {static_cast<std::int64_t>(s.iterations_done), s.admitted_seq};
    case SchedPolicy::Fifo:
      return {0, s.admitted_seq};
    case SchedPolicy::Preempt:
      return {s.expected_total_ns - s.used_ns, s.admitted_seq};
    case SchedPolicy::Srtf:
      return {s.remaining_ns, s.admitted_seq};
  }
  return {0, s.admitted_seq};
}

}  // namespace

bool precedes(SchedPolicy policy, const Session& a, const Session& b) noexcept {
  return key(policy, a) < key(policy, b);
}

namespace {

std::vector<std::size_t> sorted_by(SchedPolicy policy, std::span<const Session> sessions,
                                   bool runnable_only) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    if (!runnable_only || sessions[i].runnable) idx.push_back(i);
  }
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    return key(policy, sessions[a]) < key(policy, sessions[b]);
  });
  return idx;
}

}  // namespace

std::vector<std::size_t> iteration_order(SchedPolicy policy, std::span<const Session> sessions,
                                         bool work_conserving) {
  if (sessions.empty()) return {};
  // The policy's own pick among all live sessions, runnable or not.
  const std::vector<std::size_t> all = sorted_by(policy, sessions, /*runnable_only=*/false);
  const std::size_t pick = all.front();
  if (!work_conserving) {
    if (sessions[pick].runnable) return {pick};
    return {};
  }
  const bool single_session = policy == SchedPolicy::Fifo || policy == SchedPolicy::Preempt;
  if (!single_session) return sorted_by(policy, sessions, /*runnable_only=*/true);
  // FIFO / PREEMPT choose one session; work conservation lets the others fill in (PACK order).
  std::vector<std::size_t> out;
  if (sessions[pick].runnable) out.push_back(pick);
  for (std::size_t i : sorted_by(SchedPolicy::Pack, sessions, /*runnable_only=*/true)) {
    if (i != pick) out.push_back(i);
  }
  return out;
}

}  // namespace gpumux::policies::salus
