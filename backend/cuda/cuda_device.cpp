#include "gpumux/backend/cuda/cuda_device.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

#include "gpumux/api/errors.hpp"
#include "gpumux/backend/cuda/cuda_check.hpp"
#include "gpumux/backend/layer_plan.hpp"
#include "gpumux/model/device_profile.hpp"

namespace gpumux {

namespace {

bool positive_finite(double v) noexcept {
  return v > 0.0 && std::isfinite(v);
}

}  // namespace

// ---- EventPool ----

EventPool::~EventPool() {
  for (const Pair& p : all_) {
    (void)cudaEventDestroy(p.start);
    (void)cudaEventDestroy(p.end);
  }
}

std::shared_ptr<EventPool::Pair> EventPool::acquire() {
  Pair p;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      p = free_.back();
      free_.pop_back();
    }
  }
  if (p.start == nullptr) {
    GPUMUX_CUDA_TRY(cudaSetDevice(ordinal_));
    GPUMUX_CUDA_TRY(cudaEventCreate(&p.start));
    GPUMUX_CUDA_TRY(cudaEventCreate(&p.end));
    std::lock_guard<std::mutex> lock(mutex_);
    all_.push_back(p);
  }
  return std::shared_ptr<Pair>(new Pair(p), [this](Pair* q) {
    release(*q);
    delete q;
  });
}

void EventPool::release(Pair p) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(p);
}

// ---- set-up ----

CudaDevice::CudaDevice(DeviceId id, DeviceProfile profile, RealRuntime& runtime,
                       PinnedWeightStore& store, CudaDeviceOptions options)
    : QueuedDevice(id, std::move(profile), "CudaDevice"),
      runtime_(runtime),
      store_(store),
      options_(options),
      arena_(options.ordinal,
             options.arena_bytes != 0
                 ? options.arena_bytes
                 : CudaArena::fit(options.ordinal, profile_.memory_bytes, options.margin_bytes)),
      executor_(options.ordinal, options.executor),
      events_(options.ordinal),
      launchers_([ordinal = options.ordinal] { (void)cudaSetDevice(ordinal); }) {
  if (profile_.kind != DeviceKind::Gpu) {
    throw std::invalid_argument("CudaDevice: profile '" + profile_.name + "' is not a GPU");
  }
  if (!positive_finite(profile_.pageable_factor)) {
    throw std::invalid_argument("device profile '" + profile_.name +
                                "': pageable_factor must be positive");
  }
  profile_.memory_bytes = arena_.capacity();  // the Engine's pools must fit the real arena
  GPUMUX_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&priority_low_, &priority_high_));
  try {
    GPUMUX_CUDA_TRY(cudaStreamCreateWithFlags(&anchor_stream_, cudaStreamNonBlocking));
    GPUMUX_CUDA_TRY(cudaEventCreate(&anchor_));
    GPUMUX_CUDA_TRY(cudaEventCreate(&next_anchor_));
    sync_clock();
  } catch (...) {
    release_clock();  // no destructor runs after a throwing constructor
    throw;
  }
}

void CudaDevice::release_clock() noexcept {
  if (anchor_ != nullptr) (void)cudaEventDestroy(anchor_);
  if (next_anchor_ != nullptr) (void)cudaEventDestroy(next_anchor_);
  if (anchor_stream_ != nullptr) (void)cudaStreamDestroy(anchor_stream_);
  anchor_ = next_anchor_ = nullptr;
  anchor_stream_ = nullptr;
}

CudaDevice::~CudaDevice() {
  for (OpState& op : queues_.ops()) {
    if (op.cancel) op.cancel->cancel();
  }
  launchers_.shutdown();
  poller_.stop();  // before the events it watches go
  (void)cudaSetDevice(options_.ordinal);
  executor_.unbind_stream();  // cuBLAS must not hold a stream destroyed below
  for (StreamState& s : queues_.streams()) {
    (void)cudaStreamSynchronize(s.cuda);  // host functions included: nothing refers to us after
    (void)cudaStreamDestroy(s.cuda);
  }
  for (OpState& op : queues_.ops()) op.events.reset();  // back to the pool before it is destroyed
  release_clock();
  (void)cudaGetLastError();
  if (std::getenv("GPUMUX_CUDA_ROUND_TRIP") != nullptr && round_trips_.count() > 0) {
    std::fprintf(stderr, "gpumux: GPU %d (%s): %s\n", options_.ordinal, profile_.name.c_str(),
                 round_trips_.report().c_str());
  }
}

void CudaDevice::sync_clock() {
  GPUMUX_CUDA_TRY(cudaSetDevice(options_.ordinal));
  const TimeNs before = runtime_.now();
  GPUMUX_CUDA_TRY(cudaEventRecord(anchor_, anchor_stream_));
  GPUMUX_CUDA_TRY(cudaEventSynchronize(anchor_));
  const TimeNs after = runtime_.now();
  // The event ran between the two readings (an idle stream runs it within microseconds).
  anchor_ns_ = before + (after - before) / 2;
}

void CudaDevice::maybe_reanchor(TimeNs now) {
  if (now - anchor_ns_ < options_.anchor_interval_ns) return;
  // Chained, so float milliseconds stay short but the mapping never jumps: the new anchor's
  // time is the old one's plus the GPU's elapsed time, nudged at most 1 us towards the host's
  // reading (a fresh host estimate errs by half the round trip, enough to reorder ops that
  // ran back to back). The nudge follows drift between the two clocks.
  GPUMUX_CUDA_TRY(cudaSetDevice(options_.ordinal));
  const TimeNs before = runtime_.now();
  GPUMUX_CUDA_TRY(cudaEventRecord(next_anchor_, anchor_stream_));
  GPUMUX_CUDA_TRY(cudaEventSynchronize(next_anchor_));
  const TimeNs after = runtime_.now();
  float ms = 0;
  GPUMUX_CUDA_TRY(cudaEventElapsedTime(&ms, anchor_, next_anchor_));
  const TimeNs chained =
      anchor_ns_ + static_cast<TimeNs>(std::llround(static_cast<double>(ms) * 1e6));
  const TimeNs host = before + (after - before) / 2;
  anchor_ns_ = chained + std::clamp<TimeNs>(host - chained, -1000, 1000);
  std::swap(anchor_, next_anchor_);
}

TimeNs CudaDevice::event_time(cudaEvent_t e) {
  float ms = 0;
  GPUMUX_CUDA_TRY(cudaEventElapsedTime(&ms, anchor_, e));  // negative for events before it
  return anchor_ns_ + static_cast<TimeNs>(std::llround(static_cast<double>(ms) * 1e6));
}

void CudaDevice::add_stream(StreamId stream, ContextId ctx, StreamOptions options) {
  check_new_stream(stream, ctx, options);
  // Larger gpumux priority = more urgent; 0 (or less) is CUDA's least urgent level.
  const int levels = priority_low_ - priority_high_;  // e.g. 0 - (-5) = 5
  const int cuda_priority = priority_low_ - std::clamp(options.priority, 0, levels);
  StreamState s;
  GPUMUX_CUDA_TRY(cudaSetDevice(options_.ordinal));
  GPUMUX_CUDA_TRY(cudaStreamCreateWithPriority(&s.cuda, cudaStreamNonBlocking, cuda_priority));
  try {
    executor_.prepare_stream(s.cuda);  // its own cuBLAS workspace, allocated at set-up
  } catch (...) {
    (void)cudaStreamDestroy(s.cuda);
    throw;
  }
  queues_.add_stream(stream, options, std::move(s));
}

cudaStream_t CudaDevice::cuda_stream(StreamId stream) const {
  return queues_.stream(queues_.index(stream)).cuda;
}

void CudaDevice::free_slot(std::uint32_t slot) {
  OpState& op = queues_.op(slot);
  if (op.phase == Phase::Enqueued) enqueued_.erase(raw(op.spec.id));
  op.phase = Phase::Free;
  op.events.reset();
  op.cancel.reset();
  queues_.release(slot);
}

// ---- commands (runtime thread) ----

void CudaDevice::submit(const OpSpec& op) {
  // No link model: real copies are not timed from the profile.
  const std::uint32_t si =
      queues_.check_submit(op, id_, profile_, observer_, /*models_link=*/false);
  const auto where = [&] { return queues_.owner() + ": op " + std::to_string(raw(op.id)); };
  if (op.kind == OpKind::Compute && op.model == nullptr) {
    throw std::invalid_argument(where() + ": a compute op needs its model");
  }
  if (op.kind == OpKind::CopyH2D && op.purpose == OpPurpose::LoadWeights && op.model == nullptr) {
    throw std::invalid_argument(where() + ": a weight load needs its model");
  }
  OpState& st = queues_.op(enqueue_op(si, op, runtime_.now()));
  st.host_side = op.kind == OpKind::Host || op.setup_ns > 0;
  st.start_reported = st.waits_on_gpu = false;
  evaluate();  // no observer notification happens in here
}

void CudaDevice::issue(StreamState& s) {
  queues_.issue(s, [](OpState& op) { op.phase = Phase::Issued; });
}

void CudaDevice::evaluate() {
  for (StreamState& s : queues_.streams()) {
    issue(s);
    (void)try_hand(s);
  }
}

void CudaDevice::dependencies_changed() {
  evaluate();
}

bool CudaDevice::try_hand(StreamState& s) {
  if (s.launching) return false;
  std::size_t k = 0;
  while (k < s.issued.size() && queues_.op(s.issued[k]).phase != Phase::Issued) ++k;
  if (k == s.issued.size()) return false;
  const std::uint32_t slot = s.issued[k];
  OpState& op = queues_.op(slot);
  if (op.host_side && k != 0) return false;  // host work starts only as the stream's head

  Launch l;
  for (const OpId dep : op.spec.after) {
    if (observer_->is_complete(dep)) continue;
    const auto it = op.host_side ? enqueued_.end() : enqueued_.find(raw(dep));
    if (it == enqueued_.end()) return false;
    l.wait_for.push_back(queues_.op(it->second).events);  // a GPU-side wait on its end event
  }

  if (op.spec.kind == OpKind::CopyD2D) {
    const std::size_t p = index_of(op.spec.peer);
    CudaDevice* peer = p < peers_.size() ? peers_[p] : nullptr;
    if (peer == nullptr) {
      throw std::invalid_argument("CudaDevice " + profile_.name + ": op " +
                                  std::to_string(raw(op.spec.id)) + ": D2D peer is not a GPU");
    }
    l.peer_base = static_cast<std::byte*>(peer->arena_.base());
    l.peer_capacity = peer->arena_.capacity();
    l.peer_ordinal = peer->ordinal();
  }

  op.phase = Phase::Launching;
  op.handed_ns = runtime_.now();
  op.waits_on_gpu = !l.wait_for.empty();
  try {
    op.events = events_.acquire();
  } catch (const CudaError& e) {  // a sticky error from a fault elsewhere shows here first
    throw CudaError("GPU " + std::to_string(options_.ordinal) + ": op " +
                    std::to_string(raw(op.spec.id)) + " (" + std::string(to_string(op.spec.kind)) +
                    "), creating its events: " + e.what());
  }
  op.cancel = std::make_shared<CancelToken>();
  s.launching = true;

  fill_ticket(l, this, slot);
  l.spec = op.spec;
  l.cuda = s.cuda;
  l.host_side = op.host_side;
  l.events = op.events;
  l.cancel = op.cancel;
  if (op.spec.layer_offsets != nullptr && op.spec.model != nullptr) {
    const LayerRange r = op.spec.layers;
    l.layer_offsets.assign(op.spec.layer_offsets + r.first, op.spec.layer_offsets + r.last);
    l.state_factor = op.spec.kind == OpKind::Compute ? std::max(1u, op.spec.state_factor) : 1;
  }
  l.spec.layer_offsets = nullptr;  // use the copy
  runtime_.hand_off([&] { launchers_.submit([l = std::move(l)] { launch(l); }); });
  return true;
}

// ---- runtime side of the launchers' posts ----

void CudaDevice::on_enqueued(std::uint32_t stream, std::uint32_t slot, std::uint64_t token,
                             bool gpu, TimeNs launched_ns) {
  queues_.stream(stream).launching = false;
  // Skipped (!gpu): the hand-off's unit, no completion will follow. Enqueued: the unit the
  // launcher added for this post (the completion retires the hand-off's, maybe before this).
  runtime_.done_pending();
  OpState& op = queues_.op(slot);
  if (gpu && queues_.current(slot, token) && op.phase == Phase::Launching) {
    op.phase = Phase::Enqueued;
    op.launched_ns = launched_ns;
    enqueued_[raw(op.spec.id)] = slot;
  }
  evaluate();
  if (!gpu) report_aborted(token, runtime_.now());  // an aborted op its launcher skipped
  report_starts();
}

void CudaDevice::report_started(OpState& op, TimeNs when) {
  op.start_reported = true;
  op.reported_start_ns = when;
  observer_->on_op_started(op.spec.id, when);  // may re-enter
}

void CudaDevice::report_starts() {
  // The observer may re-enter (submit, abort) and change the streams: re-scan after a report.
  bool again = true;
  while (again) {
    again = false;
    const TimeNs now = runtime_.now();
    for (StreamState& s : queues_.streams()) {
      if (s.issued.empty()) continue;
      OpState& op = queues_.op(s.issued.front());
      if (op.phase != Phase::Enqueued || op.start_reported) continue;
      const bool ready = std::all_of(op.spec.after.begin(), op.spec.after.end(),
                                     [&](OpId d) { return observer_->is_complete(d); });
      if (!ready) continue;
      // Without a GPU-side wait it began when launched or when its predecessor ended; after
      // one, when the other stream's op ended, which the runtime has just learnt (now).
      const TimeNs when = op.waits_on_gpu ? now : std::max(op.launched_ns, s.last_end_ns);
      report_started(op, std::clamp(when, s.last_end_ns, now));
      again = true;
      break;
    }
  }
}

void CudaDevice::on_host_started(std::uint32_t stream, std::uint32_t slot, std::uint64_t token,
                                 TimeNs t0) {
  (void)stream;
  OpState& op = queues_.op(slot);
  if (!queues_.current(slot, token) || op.phase != Phase::Launching || op.start_reported) return;
  report_started(op, t0);
}

void CudaDevice::report_aborted(std::uint64_t token, TimeNs end) {
  const auto it = aborting_.find(token);
  if (it == aborting_.end()) return;
  const Aborting a = it->second;
  aborting_.erase(it);
  OpRecord r = a.record;
  r.finished_ns = std::max(r.started_ns, end);
  if (!a.started) r.started_ns = r.finished_ns;  // never reported started: started == finished
  observer_->on_op_finished(r);                  // may re-enter
}

OpRecord CudaDevice::make_record(const OpState& op, OpStatus status, TimeNs start,
                                 TimeNs end) const {
  return op_record(op.spec, status, op.submitted_ns, start, end);
}

bool CudaDevice::waits_for_unreported(std::uint32_t slot, std::uint64_t token) const {
  const OpState& op = queues_.op(slot);
  if (!queues_.current(slot, token)) return false;
  return std::any_of(op.spec.after.begin(), op.spec.after.end(), [&](OpId d) {
    return !observer_->is_complete(d) && enqueued_.count(raw(d)) != 0;
  });
}

void CudaDevice::on_gpu_done(std::uint32_t stream, std::uint32_t slot, std::uint64_t token,
                             TimeNs callback_ns) {
  // A dependant is never reported before its dependency (the engine's invariants, and its
  // memory bookkeeping, read the events in order).
  const bool behind = std::any_of(done_later_.begin(), done_later_.end(),
                                  [&](const DoneLater& d) { return d.stream == stream; });
  if (behind || waits_for_unreported(slot, token)) {
    done_later_.push_back(DoneLater{stream, slot, token, callback_ns});
    return;  // its pending unit is retired when it is reported
  }
  finish_gpu_op(stream, slot, token, callback_ns);
  // Report what waited for it (repeat: one report may release another).
  bool progress = true;
  while (progress && !done_later_.empty()) {
    progress = false;
    for (std::size_t i = 0; i < done_later_.size(); ++i) {
      const DoneLater d = done_later_[i];
      const bool first_of_stream =
          std::none_of(done_later_.begin(), done_later_.begin() + static_cast<std::ptrdiff_t>(i),
                       [&](const DoneLater& e) { return e.stream == d.stream; });
      if (!first_of_stream || waits_for_unreported(d.slot, d.token)) continue;
      done_later_.erase(done_later_.begin() + static_cast<std::ptrdiff_t>(i));
      finish_gpu_op(d.stream, d.slot, d.token, d.callback_ns);
      progress = true;
      break;
    }
  }
}

void CudaDevice::finish_gpu_op(std::uint32_t stream, std::uint32_t slot, std::uint64_t token,
                               TimeNs callback_ns) {
  runtime_.done_pending();
  OpState& op = queues_.op(slot);
  if (!queues_.current(slot, token) ||
      (op.phase != Phase::Launching && op.phase != Phase::Enqueued)) {
    evaluate();  // an aborted op finished on the GPU: its memory is free now
    report_aborted(token, runtime_.now());
    return;
  }
  const TimeNs now = runtime_.now();
  TimeNs start = 0, end = 0;
  try {
    maybe_reanchor(now);
    (void)cudaSetDevice(options_.ordinal);
    start = event_time(op.events->start);
    end = event_time(op.events->end);
  } catch (const CudaError& e) {
    // A fault elsewhere on the GPU after this op ended: its sticky error shows here first.
    throw CudaError("GPU " + std::to_string(options_.ordinal) + ": op " +
                    std::to_string(raw(op.spec.id)) + " (" + std::string(to_string(op.spec.kind)) +
                    "), reading its times: " + e.what());
  }
  StreamState& s = queues_.stream(stream);
  // A stream runs its ops in order: no start before the previous op's end.
  start = std::clamp(start, std::max(op.handed_ns, s.last_end_ns), now);
  end = std::clamp(end, start, now);
  round_trips_.op_done(stream, op.handed_ns, op.launched_ns, start, end, callback_ns, now);
  // Starts stay in order on a stream: an op whose start was reported late (it waited on another
  // stream: reported when that op's end was seen) ends no earlier than that report, so the
  // next op's start, which follows this end, does not precede it.
  if (op.start_reported) end = std::max(end, op.reported_start_ns);
  s.last_end_ns = end;
  const OpRecord r = make_record(op, OpStatus::Ok, start, end);
  const bool start_reported = op.start_reported;
  s.issued.erase(slot);  // the head, by stream order
  free_slot(slot);
  issue(s);
  if (!start_reported) observer_->on_op_started(r.op, r.started_ns);
  observer_->on_op_finished(r);  // may re-enter
  evaluate();
  report_starts();  // the next op of this stream, and ops that waited on this one
}

void CudaDevice::on_host_done(std::uint32_t stream, std::uint32_t slot, std::uint64_t token,
                              TimeNs t0, TimeNs t1) {
  runtime_.done_pending();
  StreamState& s = queues_.stream(stream);
  s.launching = false;
  OpState& op = queues_.op(slot);
  if (queues_.current(slot, token) && op.phase == Phase::Launching) {
    const TimeNs start = op.start_reported ? op.reported_start_ns : t0;
    const OpRecord r = make_record(op, OpStatus::Ok, start, std::max(start, t1));
    const bool start_reported = op.start_reported;
    s.last_end_ns = std::max(s.last_end_ns, r.finished_ns);
    s.issued.erase(slot);
    free_slot(slot);
    issue(s);
    if (!start_reported) observer_->on_op_started(r.op, r.started_ns);
    observer_->on_op_finished(r);
    evaluate();
    report_starts();
    return;
  }
  evaluate();
  report_aborted(token, std::max(t0, t1));  // an aborted host op whose sleep ended
}

// ---- drop and abort ----

std::size_t CudaDevice::remove_job(JobId job, bool issued_too) {
  const TimeNs now = runtime_.now();
  const auto take = [&](std::uint32_t slot, OpStatus status) -> std::optional<OpRecord> {
    OpState& op = queues_.op(slot);
    std::optional<OpRecord> report_now;
    if (op.phase == Phase::Launching || op.phase == Phase::Enqueued) {
      // A launcher or the GPU holds it: reported when it lets go (report_aborted).
      const TimeNs start = op.start_reported ? op.reported_start_ns : now;
      aborting_.emplace(queues_.token(slot),
                        Aborting{make_record(op, status, start, now), op.start_reported});
    } else {
      report_now = make_record(op, status, now, now);
    }
    if (op.cancel) op.cancel->cancel();  // a launcher not yet past it skips it
    // Later posts about it carry a stale token and are ignored.
    free_slot(slot);
    return report_now;
  };
  return remove_and_report(
      job, issued_too, take, [](OpState& op) { op.phase = Phase::Issued; }, [this] { evaluate(); });
}

}  // namespace gpumux
