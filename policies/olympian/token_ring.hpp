// Olympian's token list (USC-NSL/TF-TF-Downloads, OlympiaScheduler): the registered runs in
// round-robin order and the rule that names the token holder.
//   fair           one entry per run; the holder is the front; a spent quantum rotates it.
//   weighted_fair  a run appears `copies` times, consecutively (the code appends w copies), so
//                  it keeps the token for `copies` quanta per round.
//   priority       the holder is the first entry of the highest priority (the code's priority
//                  queue top); a spent quantum moves it behind its equals, so equal
//                  priorities take turns (the code's heap leaves ties unspecified).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>

#include "gpumux/api/ids.hpp"

namespace gpumux::policies::olympian {

class TokenRing {
 public:
  explicit TokenRing(bool by_priority) : by_priority_(by_priority) {}

  /// register(r): appends `copies` entries at the back.
  void add(JobId job, std::uint32_t copies, int priority) {
    for (std::uint32_t i = 0; i < copies; ++i) entries_.push_back({job, priority});
  }
  /// deregister(r): removes every entry of the run.
  void remove(JobId job) {
    std::erase_if(entries_, [job](const Entry& e) { return e.job == job; });
  }
  /// A spent quantum: the holder's first entry goes to the back.
  void rotate(JobId holder) {
    const auto it = std::find_if(entries_.begin(), entries_.end(),
                                 [holder](const Entry& e) { return e.job == holder; });
    if (it == entries_.end()) return;
    const Entry e = *it;
    entries_.erase(it);
    entries_.push_back(e);
  }
  /// The token holder, skipping runs in `skip` (runs that cannot start for lack of memory).
  [[nodiscard]] std::optional<JobId> holder(const std::set<JobId>& skip) const {
    const Entry* best = nullptr;
    for (const Entry& e : entries_) {
      if (skip.contains(e.job)) continue;
      if (!by_priority_) return e.job;
      if (best == nullptr || e.priority > best->priority) best = &e;
    }
    if (best == nullptr) return std::nullopt;
    return best->job;
  }
  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }

 private:
  struct Entry {
    JobId job;
    int priority;
  };
  bool by_priority_;
  std::deque<Entry> entries_;
};

}  // namespace gpumux::policies::olympian
