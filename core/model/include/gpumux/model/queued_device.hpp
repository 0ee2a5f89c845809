// The part of a Device that is the same on every platform (SimDevice, EmulatedDevice,
// CudaDevice): its id, profile and observer, its contexts, its streams' host queues and issued
// lists (StreamQueues), the queries on them, drop_pending()/abort() as one removal walk that
// reports what it removed (the device contract, device.hpp), the record of a submission
// (enqueue_op) and the ticket a worker thread posts back with (WorkTicket). What an op does once
// issued (phases, timing, workers, CUDA) stays in the device: its `Op` payload, its `Stream` state
// (StreamQueues' types), and its remove_job() hook, which decides per op whether it is reported
// at once or later (an op a worker or the GPU still holds, device.hpp "Drop and abort").
//
// The accessors are `final` (a call through the concrete device type is devirtualized); the
// device's per-op paths (issue, evaluation, progress) stay its own non-virtual members.
//
// Units: times ns on the runtime's clock (passed in; no clock is read here).
// Thread rules: as StreamQueues, the device's runtime thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpumux/api/device.hpp"
#include "gpumux/api/ids.hpp"
#include "gpumux/api/op.hpp"
#include "gpumux/api/time.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/stream_queues.hpp"

namespace gpumux {

template <class Op, class Stream = QueuedStream>
class QueuedDevice : public Device {
 public:
  // A device owns streams, slots and work in progress: never copied (nor its derived devices).
  QueuedDevice(const QueuedDevice&) = delete;
  QueuedDevice& operator=(const QueuedDevice&) = delete;

  [[nodiscard]] DeviceId id() const noexcept final { return id_; }
  [[nodiscard]] const DeviceProfile& profile() const noexcept final { return profile_; }
  void set_observer(DeviceObserver* observer) noexcept final { observer_ = observer; }

  /// Records the context (platforms that model contexts extend this). Throws
  /// std::invalid_argument for a duplicate.
  void add_context(ContextId ctx, ContextOptions options) override {
    if (!contexts_.emplace(ctx, options).second) {
      throw std::invalid_argument(queues_.owner() + ": context " + std::to_string(raw(ctx)) +
                                  " added twice");
    }
  }

  std::size_t drop_pending(JobId job) final { return remove_job(job, false); }
  std::size_t abort(JobId job) final { return remove_job(job, true); }

  /// Throw std::invalid_argument for an unknown stream.
  [[nodiscard]] std::size_t queued(StreamId stream) const final { return queues_.queued(stream); }
  [[nodiscard]] std::size_t in_flight(StreamId stream) const final {
    return queues_.in_flight(stream);
  }

 protected:
  using OpState = Op;          ///< the device's op payload (a slot of queues_)
  using StreamState = Stream;  ///< the device's stream state

  /// `kind` ("SimDevice") and the profile's name start every error message.
  QueuedDevice(DeviceId id, DeviceProfile profile, std::string_view kind)
      : id_(id), profile_(std::move(profile)), queues_(std::string(kind) + " " + profile_.name) {}

  [[nodiscard]] bool is_gpu() const noexcept { return profile_.kind == DeviceKind::Gpu; }

  /// add_stream()'s checks against the registered contexts (StreamDirectory::check_new_stream).
  void check_new_stream(StreamId stream, ContextId ctx, const StreamOptions& options) const {
    queues_.check_new_stream(stream, ctx, contexts_.count(ctx) != 0, options);
  }

  /// Takes a slot on stream `si` for `spec`, submitted at `now` (StreamQueues::enqueue: the
  /// payload is reset), records what every device keeps of a submission (spec, submitted_ns,
  /// stream index, phase Queued: Op has these members) and returns the slot. The caller then
  /// issues.
  std::uint32_t enqueue_op(std::uint32_t si, const OpSpec& spec, TimeNs now) {
    const std::uint32_t slot = queues_.enqueue(si);
    Op& op = queues_.op(slot);
    op.spec = spec;
    op.submitted_ns = now;
    op.stream = si;
    op.phase = decltype(Op::phase)::Queued;
    return slot;
  }

  /// What a worker thread carries about one op to post back with: the device (`Self`, the
  /// derived one), the op's stream index and slot, and its submission's token, which the
  /// runtime thread checks with StreamQueues::current() before believing the post. A device's
  /// work order derives from it.
  template <class Self>
  struct WorkTicket {
    Self* device = nullptr;
    std::uint32_t stream = 0;
    std::uint32_t slot = 0;
    std::uint64_t token = 0;
  };
  /// Writes the ticket of the op in `slot` into `t`.
  template <class Self>
  void fill_ticket(WorkTicket<Self>& t, Self* self, std::uint32_t slot) const {
    t.device = self;
    t.stream = queues_.op(slot).stream;
    t.slot = slot;
    t.token = queues_.token(slot);
  }

  /// drop_pending() (issued_too false) and abort() (true): the device's removal, mostly a call
  /// of remove_and_report().
  virtual std::size_t remove_job(JobId job, bool issued_too) = 0;

  /// The removal walk every device makes: StreamQueues::remove_job over `job`'s ops with
  /// take(slot, status) for each, which releases the slot and returns the op's record to report
  /// now, or nothing when the op is reported later (a worker still holds it); on_issue(Op&) as
  /// StreamQueues::issue. If anything was removed, settle() (the device re-evaluates), then the
  /// records are reported (on_op_finished, in removal order). Returns how many were removed.
  template <class Take, class OnIssue, class Settle>
  std::size_t remove_and_report(JobId job, bool issued_too, Take take, OnIssue on_issue,
                                Settle settle) {
    const OpStatus status = issued_too ? OpStatus::Aborted : OpStatus::Dropped;
    std::vector<OpRecord> records;  // rare path: allocation is fine
    std::size_t n = 0;
    queues_.remove_job(
        job, issued_too,
        [&](std::uint32_t slot) {
          ++n;
          std::optional<OpRecord> now = take(slot, status);
          if (now) records.push_back(*now);
        },
        on_issue);
    if (n == 0) return 0;
    settle();
    if (observer_ != nullptr) {
      for (const OpRecord& r : records) observer_->on_op_finished(r);
    }
    return n;
  }

  DeviceId id_;
  DeviceProfile profile_;
  DeviceObserver* observer_ = nullptr;
  std::map<ContextId, ContextOptions> contexts_;
  StreamQueues<Op, Stream> queues_;
};

}  // namespace gpumux
