// The Engine's per-op bookkeeping, indexed by op id, in memory bounded by the ops not yet
// finished rather than by every op of the run: finished ops leave from the front of a
// sliding window (a long run submits tens of millions of ops, and a vector of all of them
// was its largest allocation). What later code still asks about a released op is kept in
// compact form: whether it completed (only the ids of those that did not: dropped or aborted
// ops, which are rare) and, per job, its latest completed chain op (the one a preemption
// falls back to).
//
// Internal to gpumux_engine. Thread rules: runtime thread only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "gpumux/api/ids.hpp"
#include "gpumux/api/op.hpp"
#include "gpumux/api/ring_fifo.hpp"

namespace gpumux {

/// `Info` has bool `finished` and `complete`, `job` (a JobId), `kind` and `purpose`.
template <class Info>
class OpTable {
 public:
  /// The id the next op gets (ids are dense from 0).
  [[nodiscard]] std::size_t size() const noexcept { return base_ + window_.size(); }
  /// Ids below base() were released (finished).
  [[nodiscard]] std::size_t base() const noexcept { return base_; }
  /// An op not yet released (id in [base(), size())).
  Info& operator[](std::size_t id) { return window_[id - base_]; }
  const Info& operator[](std::size_t id) const { return window_[id - base_]; }

  void push_back(const Info& info) {
    release();
    window_.push_back(info);
  }
  [[nodiscard]] bool complete(std::size_t id) const noexcept {
    if (id >= base_) return id < size() && window_[id - base_].complete;
    return !std::binary_search(released_incomplete_.begin(), released_incomplete_.end(), id);
  }
  [[nodiscard]] bool finished(std::size_t id) const noexcept {
    return id < base_ || (id < size() && window_[id - base_].finished);
  }
  /// The latest op of `job` before `id` where its chain of compute continues after a
  /// preemption: a compute or migrate-state op that was not dropped or aborted. `id` is the
  /// job's latest chain op (none of the job's ops after it qualify), as the engine asks.
  [[nodiscard]] std::optional<std::size_t> last_chain_op_before(std::size_t id, JobId job) const {
    for (std::size_t i = std::min(id, size()); i-- > base_;) {
      const Info& o = window_[i - base_];
      if (o.job == job && chain(o) && !(o.finished && !o.complete)) return i;
    }
    // Older ops were released: the latest of them that qualifies was remembered.
    const std::size_t j = raw(job);
    if (j >= last_chain_.size() || last_chain_[j] == kNone || last_chain_[j] >= id) {
      return std::nullopt;
    }
    return last_chain_[j];
  }

 private:
  static bool chain(const Info& o) noexcept {
    return o.kind == OpKind::Compute || o.purpose == OpPurpose::MigrateState;
  }

  void release() {
    while (!window_.empty() && window_.front().finished) {
      const Info& front = window_.front();
      if (!front.complete) {
        released_incomplete_.push_back(base_);
      } else if (chain(front)) {
        const std::size_t j = raw(front.job);
        if (j >= last_chain_.size()) last_chain_.resize(j + 1, kNone);
        last_chain_[j] = base_;
      }
      window_.pop_front();
      ++base_;
    }
  }

  RingFifo<Info> window_;  ///< no allocation per op once grown (a deque allocates every few)
  std::size_t base_ = 0;
  std::vector<std::size_t> released_incomplete_;  ///< sorted (released in id order)
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  /// Per job (dense ids, as the engine numbers them): the latest released chain op, or kNone.
  std::vector<std::size_t> last_chain_;
};

}  // namespace gpumux
