// The host side of a device's streams, the part of the stream contract (device.hpp) that is the
// same on every platform: ops live in reusable slots (a free list, no allocation once grown),
// each submission tagged with a token unique within the device; each stream has a FIFO host
// queue and the list of its issued, unfinished ops, at most max_in_flight long; streams are
// found by id; drop_pending()/abort() remove a job's ops through one walk; an op leaving its
// stream is reported by one record. What an issued op does (phases, timing, cancellation, when
// it is reported) stays in the device: in its op payload `Op` (which has a member
// `OpSpec spec`) and its stream type `Stream` (derived from QueuedStream).
//
// Units: slots and stream indices are indices (dense, from 0), tokens counters (from 1; 0 is
// never a live token); times are ns on the runtime's clock, passed in (no clock is read here).
//
// Thread rules: not thread-safe; the device's runtime thread only. A worker thread carries a
// (slot, token) pair and the runtime thread checks it with current() before believing it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpumux/api/device.hpp"
#include "gpumux/api/ids.hpp"
#include "gpumux/api/op.hpp"
#include "gpumux/api/time.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/host_link.hpp"

namespace gpumux {

/// A growable FIFO of slot indices (no allocation once grown).
class IndexRing {
 public:
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] std::uint32_t front() const noexcept { return buf_[head_]; }
  /// The i-th oldest entry, i < size().
  [[nodiscard]] std::uint32_t operator[](std::size_t i) const noexcept {
    return buf_[(head_ + i) & (buf_.size() - 1)];
  }
  void push_back(std::uint32_t v) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = v;
    ++size_;
  }
  /// Requires !empty().
  void pop_front() noexcept {
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
  }
  /// Removes, keeping the order of the rest, the entries for which pred(v) is true, calling
  /// take(v) for each, oldest first.
  template <class Pred, class Take>
  void remove_if(Pred pred, Take take) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < size_; ++i) {
      const std::uint32_t v = (*this)[i];
      if (pred(v)) {
        take(v);
      } else {
        buf_[(head_ + kept++) & (buf_.size() - 1)] = v;  // kept <= i: already read
      }
    }
    size_ = kept;
  }
  /// Removes every entry equal to `v`.
  void erase(std::uint32_t v) {
    remove_if([v](std::uint32_t x) { return x == v; }, [](std::uint32_t) {});
  }

 private:
  void grow();  ///< doubles the buffer (8 at first), oldest entry first

  std::vector<std::uint32_t> buf_;  ///< power-of-two size
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

/// What every device keeps per stream; a device derives its own stream state from it.
struct QueuedStream {
  StreamId id{};
  int priority = 0;  ///< StreamOptions::priority (larger = more urgent)
  std::uint32_t max_in_flight = 1;
  IndexRing host;    ///< slots queued, not issued
  IndexRing issued;  ///< slots issued, unfinished; front() is the head
};

/// The record of an op leaving its stream (finished, dropped or aborted); spec.device is the
/// device (submit checks it).
[[nodiscard]] inline OpRecord op_record(const OpSpec& spec, OpStatus status, TimeNs submitted_ns,
                                        TimeNs started_ns, TimeNs finished_ns) noexcept {
  OpRecord r;
  r.op = spec.id;
  copy_op_identity(spec, r);
  r.status = status;
  r.submitted_ns = submitted_ns;
  r.started_ns = started_ns;
  r.finished_ns = finished_ns;
  return r;
}

/// Streams by id and the checks of add_stream() and submit(): the part of StreamQueues that
/// does not depend on its types, compiled once (core/model/src/stream_queues.cpp), off the inlined
/// hot path. Error messages start with `owner` ("SimDevice v100-pcie3x16") and are built only
/// on failure.
class StreamDirectory {
 public:
  explicit StreamDirectory(std::string owner) : owner_(std::move(owner)) {}

  [[nodiscard]] const std::string& owner() const noexcept { return owner_; }
  /// add_stream()'s checks, made before the device creates anything for the stream. Throws
  /// std::invalid_argument for a duplicate stream, an unknown context (!context_known) or
  /// max_in_flight == 0.
  void check_new_stream(StreamId stream, ContextId ctx, bool context_known,
                        const StreamOptions& options) const;
  /// The index of a registered stream. Throws std::invalid_argument for an unknown stream.
  [[nodiscard]] std::uint32_t index(StreamId stream) const {
    const std::uint32_t id = raw(stream);
    if (id < dense_.size() && dense_[id] != kNoIndex) return dense_[id];
    const auto it = index_.find(stream);
    if (it == index_.end()) reject_stream(stream);
    return it->second;
  }
  /// submit()'s checks that every device makes; returns the op's stream index. Throws
  /// std::logic_error (no observer) or std::invalid_argument (op.device != device, unknown
  /// stream, negative solo_ns or setup_ns, compute demand outside (0, 1]). With
  /// `models_link` (the device times copies from the profile's link) a copy to a CPU, or over
  /// a direction with no bandwidth in the profile, throws std::logic_error. Inline: the
  /// simulator submits every op through it; a failure is explained out of line.
  [[nodiscard]] std::uint32_t check_submit(const OpSpec& op, DeviceId device,
                                           const DeviceProfile& profile,
                                           const DeviceObserver* observer, bool models_link) const {
    bool ok = observer != nullptr && op.device == device && op.solo_ns >= 0 && op.setup_ns >= 0;
    if (op.kind == OpKind::Compute) {
      ok = ok && op.demand > 0.0 && op.demand <= 1.0;
    } else if (models_link && is_copy(op.kind)) {
      ok = ok && profile.kind == DeviceKind::Gpu &&
           copy_link(profile, op.kind, /*pageable=*/false).own_gbps > 0;
    }
    if (!ok) reject_submit(op, device, profile, observer);
    return index(op.stream);
  }

 protected:
  void add(StreamId stream, std::uint32_t index) {
    index_.emplace(stream, index);
    const std::uint32_t id = raw(stream);
    if (id < kDenseIds) {
      if (id >= dense_.size()) dense_.resize(id + 1, kNoIndex);
      dense_[id] = index;
    }
  }

 private:
  [[noreturn]] void reject_stream(StreamId stream) const;
  /// Throws the error of the first check_submit() check `op` fails, in the order documented
  /// there (the stream lookup after the device check).
  [[noreturn]] void reject_submit(const OpSpec& op, DeviceId device, const DeviceProfile& profile,
                                  const DeviceObserver* observer) const;

  std::string owner_;
  std::map<StreamId, std::uint32_t> index_;
  // The same for ids below kDenseIds (an engine numbers its streams from 0): a lookup per op
  // without walking the map.
  static constexpr std::uint32_t kDenseIds = 1u << 16;
  static constexpr std::uint32_t kNoIndex = ~0u;
  std::vector<std::uint32_t> dense_;
};

template <class Op, class Stream = QueuedStream>
class StreamQueues : public StreamDirectory {
  static_assert(std::is_base_of_v<QueuedStream, Stream>, "Stream derives from QueuedStream");

 public:
  /// `owner` starts every error message (StreamDirectory).
  explicit StreamQueues(std::string owner) : StreamDirectory(std::move(owner)) {}

  // ---- streams ----

  /// Registers a stream that passed check_new_stream(); sets s's id, priority and
  /// max_in_flight. Returns its index (registration order).
  std::uint32_t add_stream(StreamId stream, const StreamOptions& options, Stream s) {
    s.id = stream;
    s.priority = options.priority;
    s.max_in_flight = options.max_in_flight;
    const auto i = static_cast<std::uint32_t>(streams_.size());
    add(stream, i);
    streams_.push_back(std::move(s));
    return i;
  }
  [[nodiscard]] Stream& stream(std::uint32_t i) noexcept { return streams_[i]; }
  [[nodiscard]] const Stream& stream(std::uint32_t i) const noexcept { return streams_[i]; }
  /// Every stream, in registration order.
  [[nodiscard]] std::span<Stream> streams() noexcept { return streams_; }
  [[nodiscard]] std::span<const Stream> streams() const noexcept { return streams_; }
  /// Ops in the stream's host queue / issued and unfinished. Throw as index().
  [[nodiscard]] std::size_t queued(StreamId stream) const {
    return streams_[index(stream)].host.size();
  }
  [[nodiscard]] std::size_t in_flight(StreamId stream) const {
    return streams_[index(stream)].issued.size();
  }

  // ---- submitting ----

  /// Takes a free slot (payload reset to Op{}, a new token) and appends it to the host queue
  /// of stream `si`; returns it. The caller fills the payload, then calls issue().
  std::uint32_t enqueue(std::uint32_t si) {
    return enqueue_with(si, [](Op& op) { op = Op{}; });
  }
  /// As enqueue(), but fill(Op&) writes the payload in place of the reset (the slot holds a
  /// stale payload: fill must set every field the device reads). Saves writing the payload
  /// twice on a device's per-op path.
  template <class Fill>
  std::uint32_t enqueue_with(std::uint32_t si, Fill fill) {
    std::uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(ops_.size());
      ops_.emplace_back();
      tokens_.push_back(0);
    }
    fill(ops_[slot]);
    tokens_[slot] = next_token_++;
    streams_[si].host.push_back(slot);
    return slot;
  }

  // ---- slots ----

  [[nodiscard]] Op& op(std::uint32_t slot) noexcept { return ops_[slot]; }
  [[nodiscard]] const Op& op(std::uint32_t slot) const noexcept { return ops_[slot]; }
  /// Every slot, free ones included (their payload is stale).
  [[nodiscard]] std::span<Op> ops() noexcept { return ops_; }
  /// The token of the submission in `slot`; 0 while the slot is free.
  [[nodiscard]] std::uint64_t token(std::uint32_t slot) const noexcept { return tokens_[slot]; }
  /// Whether `slot` still holds the submission that was given `token`.
  [[nodiscard]] bool current(std::uint32_t slot, std::uint64_t token) const noexcept {
    return tokens_[slot] == token;
  }
  /// Returns a slot to the free list (its token becomes 0). It must be in no queue.
  void release(std::uint32_t slot) {
    tokens_[slot] = 0;
    free_.push_back(slot);
  }

  // ---- issuing and removing ----

  /// Moves slots from the host queue to the issued list, oldest first, while fewer than
  /// max_in_flight are issued; on_issue(Op&) for each, before it is appended.
  template <class OnIssue>
  void issue(Stream& s, OnIssue on_issue) {
    while (!s.host.empty() && s.issued.size() < s.max_in_flight) {
      const std::uint32_t slot = s.host.front();
      s.host.pop_front();
      on_issue(ops_[slot]);
      s.issued.push_back(slot);
    }
  }
  /// The drop_pending() (issued_too false) / abort() (true) walk over `job`'s ops: stream by
  /// stream in registration order, first the host queue, then with issued_too the issued list,
  /// oldest first, calls take(slot) for each op of the job and removes it from the queue
  /// (take must release() it), then issues as issue(). A drop spares queued copies (weight
  /// loads, migrations): ops already issued elsewhere may depend on them.
  template <class Take, class OnIssue>
  void remove_job(JobId job, bool issued_too, Take take, OnIssue on_issue) {
    const auto of_job = [&](std::uint32_t slot) {
      const OpSpec& spec = ops_[slot].spec;
      return spec.job == job && (issued_too || !is_copy(spec.kind));
    };
    for (Stream& s : streams_) {
      s.host.remove_if(of_job, take);
      if (issued_too) s.issued.remove_if(of_job, take);
      issue(s, on_issue);
    }
  }

 private:
  std::vector<Stream> streams_;        ///< registration order
  std::vector<Op> ops_;                ///< by slot
  std::vector<std::uint64_t> tokens_;  ///< by slot
  std::vector<std::uint32_t> free_;
  std::uint64_t next_token_ = 1;
};

}  // namespace gpumux
