#include "gpumux/backend/emulated_device.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "gpumux/backend/cpu_executor.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/host_link.hpp"

namespace gpumux {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kDefaultArenaCap = std::uint64_t{256} << 20;
constexpr std::uint64_t kDefaultStateCap = std::uint64_t{64} << 20;

bool positive_finite(double v) noexcept {
  return v > 0.0 && std::isfinite(v);
}

// ns to move `bytes` at `gbps` bytes per ns, rounded up.
DurationNs transfer_ns(std::uint64_t bytes, double gbps, double scale) noexcept {
  return ceil_ns(static_cast<double>(bytes) / gbps * scale);
}

// A window of `want` bytes at `offset` inside a buffer of `size` bytes; offsets wrap around.
std::pair<std::uint64_t, std::uint64_t> place(std::uint64_t offset, std::uint64_t want,
                                              std::uint64_t size) noexcept {
  if (size == 0) return {0, 0};
  const std::uint64_t off = offset % size;
  return {off, std::min(want, size - off)};
}

}  // namespace

EmulatedDevice::EmulatedDevice(DeviceId id, DeviceProfile profile, RealRuntime& runtime,
                               HostStore& store, EmulatedDeviceOptions options)
    : QueuedDevice(id, std::move(profile), "EmulatedDevice"),
      runtime_(runtime),
      store_(store),
      options_(options) {
  if (!positive_finite(options_.time_scale)) {
    throw std::invalid_argument("EmulatedDevice " + profile_.name + ": time_scale must be > 0");
  }
  if (!positive_finite(profile_.pageable_factor) && is_gpu()) {
    throw std::invalid_argument("device profile '" + profile_.name +
                                "': pageable_factor must be positive");
  }
  if (is_gpu()) {
    std::uint64_t bytes = options_.arena_bytes;
    if (bytes == 0) bytes = std::min(profile_.memory_bytes, kDefaultArenaCap);
    arena_ = HostBuffer(static_cast<std::size_t>(bytes));
    std::uint64_t state = options_.host_state_bytes;
    if (state == 0) state = std::min<std::uint64_t>(bytes, kDefaultStateCap);
    host_state_ = HostBuffer(static_cast<std::size_t>(state));
    std::memset(arena_.data(), 0, arena_.size());  // touch the pages now, not in the first copy
    std::memset(host_state_.data(), 0, host_state_.size());
  }
}

EmulatedDevice::~EmulatedDevice() {
  shutdown();
}

void EmulatedDevice::shutdown() {
  for (OpState& op : queues_.ops()) {
    if (op.cancel) op.cancel->cancel();
  }
  pool_.shutdown();
}

void EmulatedDevice::add_stream(StreamId stream, ContextId ctx, StreamOptions options) {
  check_new_stream(stream, ctx, options);
  queues_.add_stream(stream, options, StreamState{});
}

DurationNs EmulatedDevice::scaled(DurationNs ns) const noexcept {
  if (options_.time_scale == 1.0 || ns <= 0) return ns;
  return static_cast<DurationNs>(std::llround(static_cast<double>(ns) * options_.time_scale));
}

void EmulatedDevice::free_slot(std::uint32_t slot) {
  OpState& op = queues_.op(slot);
  op.phase = Phase::Free;
  op.cancel.reset();
  queues_.release(slot);
}

// ---- commands (runtime thread) ----

void EmulatedDevice::submit(const OpSpec& op) {
  const std::uint32_t si = queues_.check_submit(op, id_, profile_, observer_, /*models_link=*/true);
  if (op.kind == OpKind::Compute && !is_gpu() && op.model == nullptr) {
    throw std::invalid_argument(queues_.owner() + ": op " + std::to_string(raw(op.id)) +
                                ": a CPU compute op needs its model");
  }
  enqueue_op(si, op, runtime_.now());
  // Issuing and dispatching call no observer notification (only is_complete), so they can run
  // here: queued()/in_flight() are right at once and an idle stream starts without a delay.
  evaluate();
}

void EmulatedDevice::issue(StreamState& s) {
  queues_.issue(s, [](OpState& op) { op.phase = Phase::Issued; });
}

void EmulatedDevice::evaluate() {
  for (StreamState& s : queues_.streams()) {
    issue(s);
    if (s.busy || s.issued.empty()) continue;
    const std::uint32_t head = s.issued.front();
    const OpState& op = queues_.op(head);
    if (op.phase != Phase::Issued) continue;
    bool ready = true;
    for (const OpId dep : op.spec.after) {
      if (!observer_->is_complete(dep)) {
        ready = false;
        break;
      }
    }
    if (ready) dispatch(s, head);
  }
}

void EmulatedDevice::dependencies_changed() {
  evaluate();
}

void EmulatedDevice::prepare_copy(const OpState& op, Task& t) {
  const OpSpec& spec = op.spec;
  t.bytes = spec.bytes;
  const CopyLink link = copy_link(profile_, spec.kind, spec.pageable);
  t.latency_ns = scaled(link.latency_ns);
  t.link_gbps = link.link_gbps;
  t.own_gbps = link.own_gbps;
  const std::uint64_t dst_offset =
      spec.layer_offsets != nullptr ? spec.layer_offsets[spec.layers.first] : spec.weight_offset;
  std::span<const std::byte> src;
  std::span<std::byte> dst;
  switch (spec.kind) {
    case OpKind::CopyH2D: {
      t.pacer = &h2d_;
      if (spec.purpose == OpPurpose::LoadWeights && spec.model != nullptr) {
        // The store may not exist yet: the worker resolves the source.
        t.src_model = spec.model;
        t.src_offset = spec.model->weight_bytes(LayerRange{0, spec.layers.first});
      } else {  // state coming back from the host (a CPU->GPU migration)
        src = {host_state_.data(), host_state_.size()};
      }
      const auto [off, len] = place(dst_offset, spec.bytes, arena_.size());
      dst = {arena_.data() + off, len};
      t.lock_a = &memory_mutex_;
      break;
    }
    case OpKind::CopyD2H: {
      t.pacer = &d2h_;
      const auto [off, len] = place(spec.source_offset, spec.bytes, arena_.size());
      src = {arena_.data() + off, len};
      dst = {host_state_.data(), host_state_.size()};
      t.lock_a = &memory_mutex_;
      break;
    }
    case OpKind::CopyD2D: {
      t.pacer = &d2h_;
      const auto [off, len] = place(spec.source_offset, spec.bytes, arena_.size());
      src = {arena_.data() + off, len};
      const std::size_t p = index_of(spec.peer);
      EmulatedDevice* peer = p < peers_.size() ? peers_[p] : nullptr;
      if (peer != nullptr && peer->arena_.size() > 0) {
        const auto [poff, plen] = place(dst_offset, spec.bytes, peer->arena_.size());
        dst = {peer->arena_.data() + poff, plen};
        t.lock_b = &peer->memory_mutex_;
      }
      t.lock_a = &memory_mutex_;
      break;
    }
    default:
      break;
  }
  t.copy_len = std::min<std::uint64_t>({spec.bytes, dst.size(), options_.max_copy_bytes});
  if (t.src_model == nullptr) t.copy_len = std::min<std::uint64_t>(t.copy_len, src.size());
  t.src = src.data();
  t.dst = dst.data();
}

void EmulatedDevice::dispatch(StreamState& s, std::uint32_t slot) {
  OpState& op = queues_.op(slot);
  op.phase = Phase::Running;
  op.cancel = std::make_shared<CancelToken>();
  s.busy = true;

  Task t;
  fill_ticket(t, this, slot);
  t.kind = op.spec.kind;
  t.setup_ns = scaled(op.spec.setup_ns);
  t.solo_ns = scaled(op.spec.solo_ns);
  t.cancel = op.cancel;
  t.store = &store_;
  if (op.spec.kind == OpKind::Compute && !is_gpu()) {
    t.model = op.spec.model;
    t.layers = op.spec.layers;
    t.pass = op.spec.pass;
    t.batch = op.spec.batch;
    t.inference = op.spec.inference;
  } else if (is_copy(op.spec.kind)) {
    prepare_copy(op, t);
  }
  runtime_.hand_off([&] { pool_.submit([t = std::move(t)] { execute(t); }); });
}

// ---- worker side ----

bool EmulatedDevice::run_copy(const Task& t, Clock::time_point start) {
  CancelToken& cancel = *t.cancel;
  const std::byte* src = t.src;
  std::uint64_t copy_len = t.copy_len;
  if (t.src_model != nullptr) {
    const std::span<const std::byte> w = t.store->weights(*t.src_model);  // exists by now
    const auto [off, len] = place(t.src_offset, t.bytes, w.size());
    src = w.data() + off;
    copy_len = std::min(copy_len, len);
  }
  Clock::time_point ready = start + std::chrono::nanoseconds(t.latency_ns);
  if (!cancel.sleep_until(ready)) return false;
  const double scale = t.device->options_.time_scale;
  // Chunks of about 2 ms of link time keep the per-chunk wake-up lateness small while letting
  // concurrent copies interleave.
  const std::uint64_t chunk = std::max<std::uint64_t>(
      std::uint64_t{1} << 20, static_cast<std::uint64_t>(t.link_gbps * 2e6));
  __extension__ using U128 = unsigned __int128;
  std::uint64_t done = 0;
  Clock::time_point prev_end = ready;
  while (done < t.bytes) {
    const std::uint64_t n = std::min(chunk, t.bytes - done);
    const auto link_time = std::chrono::nanoseconds(transfer_ns(n, t.link_gbps, scale));
    const auto own_time = std::chrono::nanoseconds(transfer_ns(n, t.own_gbps, scale));
    Clock::time_point end = t.pacer->reserve(prev_end, link_time);
    end = std::max(end, prev_end + own_time);
    if (copy_len > 0) {
      const auto p0 = static_cast<std::uint64_t>(U128{copy_len} * done / t.bytes);
      const auto p1 = static_cast<std::uint64_t>(U128{copy_len} * (done + n) / t.bytes);
      if (p1 > p0) {
        if (t.lock_b != nullptr && t.lock_b != t.lock_a) {
          std::scoped_lock lock(*t.lock_a, *t.lock_b);
          std::memcpy(t.dst + p0, src + p0, p1 - p0);
        } else if (t.lock_a != nullptr) {
          std::lock_guard<std::mutex> lock(*t.lock_a);
          std::memcpy(t.dst + p0, src + p0, p1 - p0);
        } else {
          std::memcpy(t.dst + p0, src + p0, p1 - p0);
        }
      }
    }
    if (!cancel.sleep_until(end)) return false;
    prev_end = end;
    done += n;
  }
  return true;
}

void EmulatedDevice::execute(const Task& t) noexcept {
  EmulatedDevice* dev = t.device;
  RealRuntime& rt = dev->runtime_;
  const std::uint32_t stream = t.stream;
  const std::uint32_t slot = t.slot;
  const std::uint64_t token = t.token;
  try {
    CancelToken& cancel = *t.cancel;
    // The first use of a model fills its host store here, before the op starts.
    std::span<const std::byte> weights;
    if (t.model != nullptr) weights = t.store->weights(*t.model);
    if (t.src_model != nullptr) (void)t.store->weights(*t.src_model);
    bool ok = true;
    if (t.setup_ns > 0)
      ok = cancel.sleep_until(Clock::now() + std::chrono::nanoseconds(t.setup_ns));
    const Clock::time_point start = Clock::now();
    const TimeNs t0 = rt.to_ns(start);
    if (ok) {
      rt.post([dev, stream, slot, token, t0] { dev->on_started(stream, slot, token, t0); });
      switch (t.kind) {
        case OpKind::Host:
          ok = cancel.sleep_until(start + std::chrono::nanoseconds(t.solo_ns));
          break;
        case OpKind::Compute:
          if (t.model == nullptr) {
            ok = cancel.sleep_until(start + std::chrono::nanoseconds(t.solo_ns));
          } else {
            thread_local CpuExecutor executor(dev->options_.cpu_region_bytes);
            ok = executor.run(*t.model, t.layers, t.pass, t.batch, t.inference, weights.data(),
                              weights.size(), cancel.flag());
          }
          break;
        case OpKind::CopyH2D:
        case OpKind::CopyD2H:
        case OpKind::CopyD2D:
          ok = run_copy(t, start);
          break;
      }
    }
    const TimeNs t1 = rt.now();
    rt.post([dev, stream, slot, token, t0, t1] { dev->on_finished(stream, slot, token, t0, t1); });
  } catch (...) {
    // The failure surfaces on the runtime thread: run() rethrows it.
    std::exception_ptr error = std::current_exception();
    rt.post([dev, stream, error] {
      dev->queues_.stream(stream).busy = false;
      dev->runtime_.done_pending();
      std::rethrow_exception(error);
    });
  }
}

// ---- runtime side of the worker's posts ----

void EmulatedDevice::on_started(std::uint32_t stream, std::uint32_t slot, std::uint64_t token,
                                TimeNs t) {
  (void)stream;
  OpState& op = queues_.op(slot);
  if (!queues_.current(slot, token) || op.phase != Phase::Running) return;  // aborted meanwhile
  op.start_reported = true;
  op.started_ns = t;
  observer_->on_op_started(op.spec.id, t);
}

void EmulatedDevice::on_finished(std::uint32_t stream, std::uint32_t slot, std::uint64_t token,
                                 TimeNs t0, TimeNs t1) {
  runtime_.done_pending();
  StreamState& s = queues_.stream(stream);
  s.busy = false;
  if (s.aborting) {  // the worker let go of an aborted op: now it is reported (device.hpp)
    OpRecord r = *s.aborting;
    s.aborting.reset();
    r.finished_ns = std::max(r.started_ns, t1);
    if (!s.aborting_started) r.started_ns = r.finished_ns;  // never started: start == end
    evaluate();
    observer_->on_op_finished(r);  // may re-enter
    return;
  }
  OpState& op = queues_.op(slot);
  if (queues_.current(slot, token) && op.phase == Phase::Running) {
    OpRecord r = make_record(op, OpStatus::Ok, t1);
    r.started_ns = t0;
    r.finished_ns = std::max(t0, t1);
    s.issued.erase(slot);  // the head of its stream by construction (only the head is dispatched)
    free_slot(slot);
    issue(s);
    observer_->on_op_finished(r);  // may re-enter submit/drop/abort/dependencies_changed
  }
  evaluate();
}

// ---- drop and abort ----

OpRecord EmulatedDevice::make_record(const OpState& op, OpStatus status, TimeNs now) const {
  return op_record(op.spec, status, op.submitted_ns, op.start_reported ? op.started_ns : now, now);
}

std::size_t EmulatedDevice::remove_job(JobId job, bool issued_too) {
  const TimeNs now = runtime_.now();
  const auto take = [&](std::uint32_t slot, OpStatus status) -> std::optional<OpRecord> {
    OpState& op = queues_.op(slot);
    std::optional<OpRecord> report_now;
    if (op.phase == Phase::Running) {
      // A worker holds it: cancelled now, reported when the worker lets go (on_finished).
      queues_.stream(op.stream).aborting = make_record(op, status, now);
      queues_.stream(op.stream).aborting_started = op.start_reported;
    } else {
      report_now = make_record(op, status, now);
    }
    if (op.cancel) op.cancel->cancel();  // the worker lets go; its posts are ignored
    free_slot(slot);
    return report_now;
  };
  return remove_and_report(
      job, issued_too, take, [](OpState& op) { op.phase = Phase::Issued; }, [this] { evaluate(); });
}

}  // namespace gpumux
