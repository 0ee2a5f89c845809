// The Engine: job state machine, command validation, dispatch, and the event log.
//
// Re-entrancy: devices report completions synchronously (sometimes from inside a command a
// policy is issuing, e.g. preempt() reporting the ops it dropped). State changes are applied
// at once, so the policy always sees a consistent view; hook calls are queued and delivered
// one at a time, never nested inside another hook.
#include "gpumux/engine.hpp"

#include <algorithm>
#include <cassert>
#include <limits>
#include <sstream>

#include "gpumux/errors.hpp"
#include "gpumux/op_cost_memo.hpp"
#include "gpumux/ring_fifo.hpp"
#include "note_labels.hpp"
#include "op_table.hpp"

namespace gpumux {

namespace {

constexpr JobId kSystemJob{0xffffffffu};
constexpr std::uint64_t kAlign = 256;

std::string job_label(const JobSpec& spec) {
  return "'" + spec.name + "'";
}

/// Device bytes a job keeps per weight byte: the weights alone (inference), or weights,
/// gradients and optimizer slots (training).
std::uint64_t state_factor(const JobState& s) {
  return s.training() ? 2 + optimizer_slots(s.spec->optimizer) : 1;
}

/// Records where each layer of `range` lives when the layers' state is packed from `offset`.
void place_layers(const JobState& s, DeviceResidency& res, LayerRange range, std::uint64_t offset) {
  const std::uint64_t factor = state_factor(s);
  for (std::uint32_t i = range.first; i < range.last; ++i) {
    res.offsets[i] = offset;
    offset += s.model->layer(i).weight_bytes * factor;
  }
}

}  // namespace

// ------------------------------------------------------------------------------------------

class EngineImpl final : public DeviceObserver, public Context {
 public:
  EngineImpl(Platform& platform, Policy& policy, std::vector<JobSpec> jobs,
             const ModelCatalog& models, EngineOptions options);

  RunResult run();
  const EventLog& log() const noexcept { return log_.log(); }
  EventLog take_log() noexcept { return log_.take_log(); }
  EventStream& events() noexcept { return log_; }
  const std::vector<JobSpec>& jobs() const noexcept { return specs_; }

  // DeviceObserver
  void on_op_started(OpId op, TimeNs when_ns) override;
  void on_op_finished(const OpRecord& record) override;
  [[nodiscard]] bool is_complete(OpId op) const noexcept override {
    return ops_.complete(index_of(op));
  }
  void on_device_note(DeviceId device, TimeNs when_ns, std::string_view what,
                      std::int64_t value) override;

  // Context: queries
  [[nodiscard]] TimeNs now() const noexcept override { return runtime_.now(); }
  [[nodiscard]] std::size_t device_count() const noexcept override { return devices_.size(); }
  [[nodiscard]] const DeviceProfile& device(DeviceId id) const override {
    check_device(id, "device");
    return devices_[index_of(id)]->profile();
  }
  [[nodiscard]] const CostModel& cost(DeviceId id) const override {
    check_device(id, "cost");
    return costs_[index_of(id)];
  }
  [[nodiscard]] std::span<const JobId> arrived_jobs() const noexcept override { return arrived_; }
  [[nodiscard]] const JobState& job(JobId id) const override {
    check_job(id, "job");
    return states_[index_of(id)];
  }
  [[nodiscard]] MemoryStats memory(DeviceId id) const override {
    check_device(id, "memory");
    return memory_[index_of(id)]->stats();
  }
  [[nodiscard]] std::size_t queued(StreamId s) const override {
    check_stream(s, "queued");
    return devices_[index_of(streams_[index_of(s)].device)]->queued(s);
  }
  [[nodiscard]] std::size_t in_flight(StreamId s) const override {
    check_stream(s, "in_flight");
    return devices_[index_of(streams_[index_of(s)].device)]->in_flight(s);
  }
  [[nodiscard]] DeviceId device_of(StreamId s) const override {
    check_stream(s, "device_of");
    return streams_[index_of(s)].device;
  }
  [[nodiscard]] ContextId default_context(DeviceId id) const override {
    check_device(id, "default_context");
    return ContextId{static_cast<std::uint32_t>(index_of(id))};
  }
  [[nodiscard]] TimeNs request_arrival(RequestId r) const override {
    if (index_of(r) >= requests_.size()) fail("request_arrival", "unknown request");
    return requests_[index_of(r)].arrival_ns;
  }
  [[nodiscard]] std::size_t request_count() const noexcept override { return requests_.size(); }
  [[nodiscard]] JobId request_job(RequestId r) const override {
    if (index_of(r) >= requests_.size()) fail("request_job", "unknown request");
    return requests_[index_of(r)].job;
  }
  [[nodiscard]] DurationNs estimate_next_ns(JobId job, DeviceId device,
                                            std::uint32_t layers) const override;
  [[nodiscard]] DurationNs estimate_unit_ns(JobId job, DeviceId device) const override;
  [[nodiscard]] std::uint64_t load_bytes(JobId job, LayerRange range) const override;
  [[nodiscard]] std::uint64_t ephemeral_bytes(JobId job) const override;
  [[nodiscard]] std::uint64_t persistent_bytes(JobId job) const override;
  [[nodiscard]] std::mt19937_64& rng() noexcept override { return rng_; }

  // Context: commands
  ContextId create_context(DeviceId device, ContextOptions options, ContextStart start,
                           std::optional<JobId> build) override;
  StreamId create_stream(ContextId ctx, StreamOptions options) override;
  OpHandle dispatch(JobId job, StreamId stream, DispatchOptions options) override;
  OpHandle load(JobId job, StreamId copy_stream, LayerRange range, LoadOptions options) override;
  void evict(JobId job, DeviceId device) override;
  OpHandle migrate(JobId job, DeviceId to, StreamId copy_stream) override;
  std::size_t preempt(JobId job, PreemptMode mode) override;
  OpHandle delay(JobId job, StreamId stream, DurationNs duration_ns) override;
  TimerId set_timer(DurationNs delay_ns, std::uint64_t tag) override;
  void cancel_timer(TimerId id) override;
  void reject(JobId job, std::string_view reason) override;
  void record(std::string_view metric, double value) override;

 private:
  struct RequestInfo {
    JobId job{};
    TimeNs arrival_ns = 0;
  };
  struct ContextInfo {
    DeviceId device{};
    ContextOptions options;
    OpId start_op{};
    bool has_start_op = false;
  };
  struct StreamInfo {
    DeviceId device{};
    ContextId context{};
  };
  /// What the Engine remembers of each op (compact; devices hold the full spec).
  struct OpInfo {
    JobId job{};
    DeviceId device{};
    StreamId stream{};
    OpKind kind = OpKind::Compute;
    OpPurpose purpose = OpPurpose::Other;
    LayerRange layers{};
    Cursor before{};
    Cursor after{};
    bool ends_unit = false;
    bool complete = false;
    bool finished = false;  ///< complete, dropped or aborted
    bool counts_in_flight = false;
    DeviceId migrate_from{};
    DeviceId migrate_to{};  ///< destination of a migration (the job may move on meanwhile)
    std::size_t load_allocation = 0;  ///< index into residency allocations (loads)
    TimeNs submitted_ns = 0;
  };
  /// The bookkeeping of an op, started from what its spec already says.
  static OpInfo info_of(const OpSpec& spec) {
    OpInfo info;
    info.job = spec.job;
    info.device = spec.device;
    info.stream = spec.stream;
    info.kind = spec.kind;
    info.purpose = spec.purpose;
    info.layers = spec.layers;
    return info;
  }
  struct Hook {
    enum class Kind : std::uint8_t {
      JobArrival,
      RequestArrival,
      OpComplete,
      RequestComplete,
      IterationEnd,
      JobFinish,
      Timer
    } kind;
    JobId job{};
    RequestId request{};
    OpRecord record{};
    TimerId timer{};
    std::uint64_t tag = 0;
  };
  struct Arrival {
    TimeNs t_ns;
    std::uint8_t is_request;  // job arrivals first at equal times
    std::uint64_t seq;
    std::uint32_t job;
    std::uint64_t request_index;  // index into the job's requests_ns
  };

  // validation helpers
  [[noreturn]] void fail(const std::string& command, const std::string& problem) const {
    throw PolicyError(std::string(policy_.name()), command, problem);
  }
  // Inlined range checks; the message is built out of line (policies call these per op).
  [[noreturn, gnu::cold, gnu::noinline]] void fail_unknown(const char* command, const char* what,
                                                           std::uint64_t id) const {
    fail(command, std::string("unknown ") + what + " " + std::to_string(id));
  }
  void check_job(JobId id, const char* command) const {
    if (index_of(id) >= states_.size()) [[unlikely]]
      fail_unknown(command, "job", raw(id));
  }
  void check_device(DeviceId id, const char* command) const {
    if (index_of(id) >= devices_.size()) [[unlikely]]
      fail_unknown(command, "device", raw(id));
  }
  void check_stream(StreamId id, const char* command) const {
    if (index_of(id) >= streams_.size()) [[unlikely]]
      fail_unknown(command, "stream", raw(id));
  }
  JobState& active_job(JobId id, const char* command);

  // event emission
  void emit(Event e) {
    e.t_ns = runtime_.now();
    log_.add(e);
  }
  Event op_event(EventKind kind, OpId id) const;

  // internals
  void schedule_next_arrival();
  void handle_arrival(const Arrival& a);
  void arrive_request(JobId job, TimeNs when_ns);
  void queue_hook(const Hook& h) { hooks_.push_back(h); }
  void drain_hooks();
  void deliver(const Hook& h);

  /// Numbers `spec` (sets its id), logs and submits it (no copy of the spec on the way).
  OpId new_op(OpSpec& spec, const OpInfo& info);
  void add_dep(OpSpec& spec, OpId dep, const char* command) const;
  /// Makes `spec` wait for the start-up (process, context) of `stream`'s context, if any.
  void add_context_dep(OpSpec& spec, StreamId stream, const char* command) const;
  Cursor advance(const JobState& s, Cursor c, std::uint32_t layers, bool* ends_unit) const;
  LayerRange range_for(const JobState& s, const Cursor& c, std::uint32_t layers) const;
  DurationNs op_cost(const JobState& s, DeviceId device, const Cursor& c, LayerRange r) const;
  OpKernels op_kernels(const JobState& s, DeviceId device, const Cursor& c, LayerRange r) const;

  Allocation allocate(JobState& s, DeviceId device, std::uint64_t bytes, std::string_view what);
  void release(JobState& s, DeviceId device, const Allocation& a, std::string_view what);
  void release_weights(JobState& s, DeviceId device);
  void release_activations(JobState& s, DeviceId device);
  void ensure_activations(JobState& s, DeviceId device);

  void complete_unit(JobState& s, const OpRecord& r);
  void finish_job(JobState& s, std::string_view how);
  void rewind(JobState& s, const OpInfo& info, bool lose_unit);
  bool is_gpu(DeviceId d) const { return devices_[index_of(d)]->profile().kind == DeviceKind::Gpu; }

  Platform& platform_;
  Runtime& runtime_;
  Policy& policy_;
  const ModelCatalog& models_;
  EngineOptions options_;
  std::vector<Device*> devices_;
  std::vector<CostModel> costs_;
  mutable std::vector<OpCostMemo> cost_memos_;  // per device, over costs_ (dispatch hot path)
  std::vector<std::unique_ptr<BestFitPool>> memory_;

  std::vector<JobSpec> specs_;
  std::vector<JobState> states_;
  std::vector<JobId> arrived_;
  std::vector<RequestInfo> requests_;
  std::vector<ContextInfo> contexts_;
  std::vector<StreamInfo> streams_;
  OpTable<OpInfo> ops_;  // finished ops are released: memory O(ops in flight)
  std::vector<Arrival> arrivals_;
  std::size_t next_arrival_ = 0;
  RingFifo<Hook> hooks_;  // no allocation per hook once grown
  bool in_hook_ = false;
  std::vector<TimerId> timers_;  // engine timer id -> runtime timer id
  std::vector<bool> timer_live_;
  std::mt19937_64 rng_;
  EventStream log_;         // the log (when kept) and the attached sinks
  NoteLabels note_labels_;  // device notes' labels, interned in log_
  std::size_t done_jobs_ = 0;
  // A kill's memory on a device, kept from the pool until the device has reported the `ops`
  // aborted ops still running there (device.hpp, abort semantics); freed at due_ns at the
  // earliest (process reaping).
  struct Parked {
    JobId job;
    DeviceId device;
    std::uint32_t ops;
    TimeNs due_ns;
    std::vector<Allocation> held;
  };
  std::vector<Parked> parked_;
  bool in_abort_ = false;  // inside Device::abort(): its Aborted reports are the kill itself
  void unpark(JobId job, DeviceId device);
};

EngineImpl::EngineImpl(Platform& platform, Policy& policy, std::vector<JobSpec> jobs,
                       const ModelCatalog& models, EngineOptions options)
    : platform_(platform),
      runtime_(platform.runtime()),
      policy_(policy),
      models_(models),
      options_(options),
      devices_(platform.devices()),
      specs_(std::move(jobs)),
      rng_(options.seed) {
  costs_.reserve(devices_.size());
  for (Device* d : devices_) {
    costs_.emplace_back(d->profile(), options_.cost);
    memory_.push_back(std::make_unique<BestFitPool>(d->profile().memory_bytes));
    d->set_observer(this);
  }
  for (const CostModel& c : costs_) cost_memos_.emplace_back(c);
  states_.resize(specs_.size());
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    JobState& s = states_[i];
    s.id = JobId{static_cast<std::uint32_t>(i)};
    s.spec = &specs_[i];
    s.model = &models_.at(specs_[i].model);
    s.arrival_ns = specs_[i].arrival_ns;
    s.residency.resize(devices_.size());
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      auto& r = s.residency[d];
      const bool cpu = devices_[d]->profile().kind == DeviceKind::Cpu;
      r.reset(s.model->layer_count(), cpu ? Residency::Resident : Residency::Absent);
      r.loading_op.assign(s.model->layer_count(), OpId{});
      r.offsets.assign(s.model->layer_count(), 0);
    }
  }
  // Every job arrival and open-loop request arrival, merged in (time, kind, order) order.
  std::uint64_t seq = 0;
  for (std::size_t j = 0; j < specs_.size(); ++j) {
    arrivals_.push_back({specs_[j].arrival_ns, 0, seq++, static_cast<std::uint32_t>(j), 0});
  }
  for (std::size_t j = 0; j < specs_.size(); ++j) {
    for (std::size_t r = 0; r < specs_[j].requests_ns.size(); ++r) {
      arrivals_.push_back({specs_[j].requests_ns[r], 1, seq++, static_cast<std::uint32_t>(j), r});
    }
  }
  std::sort(arrivals_.begin(), arrivals_.end(), [](const Arrival& a, const Arrival& b) {
    if (a.t_ns != b.t_ns) return a.t_ns < b.t_ns;
    if (a.is_request != b.is_request) return a.is_request < b.is_request;
    return a.seq < b.seq;
  });
  // One warm context per device (ContextId == device index).
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    contexts_.push_back({DeviceId{static_cast<std::uint16_t>(d)}, {}, {}, false});
    devices_[d]->add_context(ContextId{static_cast<std::uint32_t>(d)}, {});
  }
}

// ---- running ------------------------------------------------------------------------------

RunResult EngineImpl::run() {
  Event start;
  start.kind = EventKind::RunStart;
  start.a = static_cast<std::int64_t>(specs_.size());
  start.b = static_cast<std::int64_t>(devices_.size());
  start.label = log_.intern(policy_.name());
  emit(start);

  in_hook_ = true;
  policy_.on_start(*this);
  in_hook_ = false;
  drain_hooks();
  schedule_next_arrival();
  runtime_.run(options_.horizon_ns);

  RunResult result;
  result.end_ns = runtime_.now();
  for (auto& s : states_) {
    if (s.phase == JobPhase::Finished) {
      ++result.jobs_finished;
    } else if (s.phase == JobPhase::Rejected) {
      ++result.jobs_rejected;
    } else {
      ++result.jobs_unfinished;
      Event e;
      e.kind = EventKind::JobEnd;
      e.job = raw(s.id);
      const bool cut = options_.horizon_ns != kTimeNever && runtime_.now() >= options_.horizon_ns;
      e.label = log_.intern(cut ? "horizon" : "unfinished: no work left to run");
      emit(e);
    }
  }
  result.runtime_events = runtime_.events_executed();
  Event end;
  end.kind = EventKind::RunEnd;
  end.a = static_cast<std::int64_t>(result.runtime_events);
  emit(end);
  return result;
}

void EngineImpl::schedule_next_arrival() {
  if (next_arrival_ >= arrivals_.size()) return;
  const Arrival& a = arrivals_[next_arrival_];
  runtime_.schedule_at(a.t_ns, [this] {
    // Deliver every arrival due now, then schedule the next (keeps the pending set small).
    while (next_arrival_ < arrivals_.size() && arrivals_[next_arrival_].t_ns <= runtime_.now()) {
      handle_arrival(arrivals_[next_arrival_++]);
    }
    schedule_next_arrival();
    drain_hooks();
  });
}

void EngineImpl::handle_arrival(const Arrival& a) {
  JobState& s = states_[a.job];
  if (a.is_request == 0) {
    s.phase = JobPhase::Waiting;
    arrived_.push_back(s.id);
    Event e;
    e.kind = EventKind::JobArrival;
    e.job = a.job;
    e.label = log_.intern(s.spec->name);
    emit(e);
    queue_hook({Hook::Kind::JobArrival, s.id, {}, {}, {}, 0});
    if (s.spec->closed_loop.enabled) {
      const TimeNs first = s.spec->closed_loop.next_send_time(runtime_.now());
      if (first != kTimeNever) {
        const JobId id = s.id;
        runtime_.schedule_at(first, [this, id] {
          arrive_request(id, runtime_.now());
          drain_hooks();
        });
      }
    }
    return;
  }
  if (s.done()) return;  // a rejected service's later requests are not served
  arrive_request(s.id, a.t_ns);
}

void EngineImpl::arrive_request(JobId job, TimeNs when_ns) {
  JobState& s = states_[index_of(job)];
  if (s.done()) return;
  const RequestId id{requests_.size()};
  requests_.push_back({job, when_ns});
  s.pending_requests.push_back(id);
  Event e;
  e.kind = EventKind::RequestArrival;
  e.job = raw(job);
  e.a = static_cast<std::int64_t>(raw(id));
  emit(e);
  queue_hook({Hook::Kind::RequestArrival, job, id, {}, {}, 0});
}

void EngineImpl::drain_hooks() {
  if (in_hook_) return;
  while (!hooks_.empty()) {
    Hook h = std::move(hooks_.front());
    hooks_.pop_front();
    in_hook_ = true;
    try {
      deliver(h);
    } catch (...) {
      in_hook_ = false;
      throw;
    }
    in_hook_ = false;
  }
}

void EngineImpl::deliver(const Hook& h) {
  switch (h.kind) {
    case Hook::Kind::JobArrival:
      policy_.on_job_arrival(*this, h.job);
      break;
    case Hook::Kind::RequestArrival:
      policy_.on_request_arrival(*this, h.job, h.request);
      break;
    case Hook::Kind::OpComplete:
      policy_.on_op_complete(*this, h.record);
      break;
    case Hook::Kind::RequestComplete:
      policy_.on_request_complete(*this, h.job, h.request);
      break;
    case Hook::Kind::IterationEnd:
      policy_.on_iteration_end(*this, h.job);
      break;
    case Hook::Kind::JobFinish:
      policy_.on_job_finish(*this, h.job);
      break;
    case Hook::Kind::Timer:
      policy_.on_timer(*this, h.timer, h.tag);
      break;
  }
}

// ---- device notifications -------------------------------------------------------------------

Event EngineImpl::op_event(EventKind kind, OpId id) const {
  const OpInfo& info = ops_[index_of(id)];
  Event e;
  e.kind = kind;
  e.op_kind = info.kind;
  e.purpose = info.purpose;
  e.job = raw(info.job);
  e.op = raw(id);
  e.device = raw(info.device);
  e.stream = raw(info.stream);
  e.first_layer = info.layers.first;
  e.last_layer = info.layers.last;
  return e;
}

void EngineImpl::on_op_started(OpId op, TimeNs when_ns) {
  Event e = op_event(EventKind::OpStart, op);
  e.t_ns = when_ns;
  log_.add(e);
  const OpInfo& info = ops_[index_of(op)];
  if (info.job != kSystemJob) {
    JobState& s = states_[index_of(info.job)];
    if (s.first_start_ns < 0) s.first_start_ns = when_ns;
  }
}

void EngineImpl::on_device_note(DeviceId device, TimeNs when_ns, std::string_view what,
                                std::int64_t value) {
  Event e;
  e.t_ns = when_ns;
  e.kind = EventKind::DeviceNote;
  e.device = raw(device);
  e.a = value;
  e.label = note_labels_.get(what, [this](std::string_view w) { return log_.intern(w); });
  log_.add(e);
}

void EngineImpl::on_op_finished(const OpRecord& r) {
  if (index_of(r.op) < ops_.base() || ops_[index_of(r.op)].finished) {
    throw Error("device reported op " + std::to_string(raw(r.op)) + " twice");
  }
  OpInfo& slot = ops_[index_of(r.op)];
  slot.finished = true;
  slot.complete = r.status == OpStatus::Ok;
  // A copy: an op submitted from here on may release this one from the table.
  const OpInfo info = slot;

  Event e = op_event(EventKind::OpEnd, r.op);
  e.status = r.status;
  e.a = r.started_ns;
  // The device's own end time (as OpStart uses its start time): a real GPU reports an op
  // some microseconds after it ended, when the next op of the stream may already have
  // started. In the simulator the two are equal.
  e.t_ns = std::min(runtime_.now(), r.finished_ns);
  log_.add(e);

  if (info.job != kSystemJob) {
    JobState& s = states_[index_of(info.job)];
    if (info.counts_in_flight) {
      --s.ops_in_flight;
      --s.residency[index_of(info.device)].ops_in_flight;
    }
    DeviceResidency& res = s.residency[index_of(info.device)];
    if (r.status == OpStatus::Ok) {
      ++s.ops_completed;
      switch (info.purpose) {
        case OpPurpose::LoadWeights:
          for (std::uint32_t i = info.layers.first; i < info.layers.last; ++i) {
            if (res.layers[i] == Residency::Loading && res.loading_op[i] == r.op) {
              res.set(i, Residency::Resident);
            }
          }
          queue_hook({Hook::Kind::OpComplete, info.job, {}, r, {}, 0});
          break;
        case OpPurpose::MigrateState: {
          // Source state is released; the destination becomes resident.
          release_weights(s, info.migrate_from);
          release_activations(s, info.migrate_from);
          auto& dst = s.residency[index_of(info.migrate_to)];
          for (std::uint32_t i = 0; i < s.model->layer_count(); ++i) {
            if (dst.layers[i] == Residency::Loading && dst.loading_op[i] == r.op) {
              dst.set(i, Residency::Resident);
            }
          }
          queue_hook({Hook::Kind::OpComplete, info.job, {}, r, {}, 0});
          break;
        }
        case OpPurpose::Forward:
        case OpPurpose::Backward:
        case OpPurpose::Update:
          s.attained_ns += r.finished_ns - r.started_ns;
          s.completed = info.after;
          // The op's own hook comes first, then the unit's and the job's.
          queue_hook({Hook::Kind::OpComplete, info.job, {}, r, {}, 0});
          if (info.ends_unit) complete_unit(s, r);
          break;
        default:
          queue_hook({Hook::Kind::OpComplete, info.job, {}, r, {}, 0});
          break;
      }
    } else {
      if (r.status == OpStatus::Aborted && !in_abort_) {
        unpark(info.job, info.device);  // the kill already rewound the job; the device let go
        if (s.done() && res.ops_in_flight == 0) release_weights(s, info.device);
      } else {
        rewind(s, info, r.status == OpStatus::Aborted);
      }
      if (!s.done()) queue_hook({Hook::Kind::OpComplete, info.job, {}, r, {}, 0});
    }
  }
  for (Device* d : devices_) d->dependencies_changed();
  drain_hooks();
}

void EngineImpl::complete_unit(JobState& s, const OpRecord& r) {
  if (s.training()) {
    ++s.iterations_done;
    Event e;
    e.kind = EventKind::IterationEnd;
    e.job = raw(s.id);
    e.a = static_cast<std::int64_t>(s.iterations_done);
    emit(e);
    if (s.iterations_done >= s.spec->iterations) {
      finish_job(s, "finished");
    } else {
      queue_hook({Hook::Kind::IterationEnd, s.id, {}, r, {}, 0});
    }
  } else {
    const RequestId req = s.pending_requests.front();
    s.pending_requests.pop_front();
    ++s.requests_done;
    Event e;
    e.kind = EventKind::RequestEnd;
    e.job = raw(s.id);
    e.a = static_cast<std::int64_t>(raw(req));
    e.b = runtime_.now() - requests_[index_of(req)].arrival_ns;
    emit(e);
    bool more = false;
    if (s.spec->closed_loop.enabled) {
      const auto& cl = s.spec->closed_loop;
      const std::uint64_t issued = s.requests_done + s.pending_requests.size();
      const bool count_left = cl.count == 0 || issued < cl.count;
      const TimeNs next = count_left ? cl.next_send_time(runtime_.now() + cl.think_ns) : kTimeNever;
      if (next != kTimeNever) {
        more = true;
        const JobId id = s.id;
        runtime_.schedule_at(next, [this, id] {
          arrive_request(id, runtime_.now());
          drain_hooks();
        });
      }
      more = more || !s.pending_requests.empty();
    } else {
      more = s.requests_done < s.spec->requests_ns.size();
    }
    queue_hook({Hook::Kind::RequestComplete, s.id, req, r, {}, 0});
    if (!more) finish_job(s, "finished");
  }
  // Activations are released when nothing further of the job is dispatched.
  if (!s.done() && s.dispatched == s.completed) release_activations(s, r.device);
}

void EngineImpl::finish_job(JobState& s, std::string_view how) {
  s.phase = how == "finished" ? JobPhase::Finished : JobPhase::Rejected;
  s.finish_ns = runtime_.now();
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    const DeviceId dev{static_cast<std::uint16_t>(d)};
    release_activations(s, dev);
    if (s.residency[d].ops_in_flight == 0) release_weights(s, dev);
  }
  ++done_jobs_;
  Event e;
  e.kind = EventKind::JobEnd;
  e.job = raw(s.id);
  e.label = log_.intern(how);
  emit(e);
  if (s.phase == JobPhase::Finished) queue_hook({Hook::Kind::JobFinish, s.id, {}, {}, {}, 0});
}

void EngineImpl::unpark(JobId job, DeviceId device) {
  for (auto it = parked_.begin(); it != parked_.end(); ++it) {
    if (it->job != job || it->device != device || --it->ops > 0) continue;
    auto free = [this, job, device, held = std::move(it->held)] {
      for (const Allocation& a : held) release(states_[index_of(job)], device, a, "reaped");
    };
    const TimeNs due = it->due_ns;
    parked_.erase(it);
    if (due > runtime_.now()) {
      runtime_.schedule_at(due, std::move(free));
    } else {
      free();
    }
    return;
  }
}

void EngineImpl::rewind(JobState& s, const OpInfo& info, bool lose_unit) {
  DeviceResidency& res = s.residency[index_of(info.device)];
  switch (info.purpose) {
    case OpPurpose::Forward:
    case OpPurpose::Backward:
    case OpPurpose::Update:
      if (info.before < s.dispatched) s.dispatched = info.before;
      if (lose_unit) {
        s.dispatched = Cursor{s.completed.unit, Pass::Forward, 0};
        s.completed = s.dispatched;
      }
      break;
    case OpPurpose::LoadWeights:
      for (std::uint32_t i = info.layers.first; i < info.layers.last; ++i) {
        if (res.layers[i] == Residency::Loading && res.loading_op[i] == OpId{}) continue;
        if (res.layers[i] == Residency::Loading) res.set(i, Residency::Absent);
      }
      if (info.load_allocation < res.allocations.size()) {
        Allocation a = res.allocations[info.load_allocation];
        if (a.valid()) {
          res.allocations[info.load_allocation] = Allocation{};
          release(s, info.device, a, "weights");
          res.bytes -= a.bytes;
        }
      }
      break;
    case OpPurpose::MigrateState: {
      // The copy never happened: the state stays where it was.
      const DeviceId dst = info.migrate_to;
      auto& d = s.residency[index_of(dst)];
      for (std::uint32_t i = 0; i < s.model->layer_count(); ++i) {
        if (d.layers[i] == Residency::Loading) {
          d.set(i, is_gpu(dst) ? Residency::Absent : Residency::Resident);
        }
      }
      if (is_gpu(dst)) release_weights(s, dst);
      if (s.device == dst) s.device = info.migrate_from;
      break;
    }
    default:
      break;
  }
}

// ---- memory -------------------------------------------------------------------------------

Allocation EngineImpl::allocate(JobState& s, DeviceId device, std::uint64_t bytes,
                                std::string_view what) {
  if (!is_gpu(device) || bytes == 0) return Allocation{};
  const std::string where = "device " + std::to_string(raw(device)) + " (" +
                            devices_[index_of(device)]->profile().name + "), " + std::string(what) +
                            " of job " + job_label(*s.spec);
  Allocation a = memory_[index_of(device)]->allocate(bytes, where, kAlign);
  Event e;
  e.kind = EventKind::Alloc;
  e.job = raw(s.id);
  e.device = raw(device);
  e.a = static_cast<std::int64_t>(a.bytes);
  e.b = static_cast<std::int64_t>(a.offset);
  e.label = log_.intern(what);
  emit(e);
  return a;
}

void EngineImpl::release(JobState& s, DeviceId device, const Allocation& a, std::string_view what) {
  if (!a.valid()) return;
  memory_[index_of(device)]->deallocate(a);
  Event e;
  e.kind = EventKind::Free;
  e.job = raw(s.id);
  e.device = raw(device);
  e.a = static_cast<std::int64_t>(a.bytes);
  e.b = static_cast<std::int64_t>(a.offset);
  e.label = log_.intern(what);
  emit(e);
}

void EngineImpl::release_weights(JobState& s, DeviceId device) {
  auto& res = s.residency[index_of(device)];
  if (!is_gpu(device)) return;
  for (const Allocation& a : res.allocations) release(s, device, a, "weights");
  res.allocations.clear();
  res.bytes = 0;
  res.reset(res.layers.size(), Residency::Absent);
}

void EngineImpl::release_activations(JobState& s, DeviceId device) {
  auto& res = s.residency[index_of(device)];
  if (res.activations.valid()) {
    release(s, device, res.activations, "activations");
    res.activations = Allocation{};
  }
}

void EngineImpl::ensure_activations(JobState& s, DeviceId device) {
  auto& res = s.residency[index_of(device)];
  if (res.activations.valid() || !is_gpu(device)) return;
  res.activations = allocate(s, device, ephemeral_bytes(s.id), "activations");
}

// ---- queries --------------------------------------------------------------------------------

std::uint64_t EngineImpl::load_bytes(JobId job, LayerRange range) const {
  check_job(job, "load_bytes");
  const JobState& s = states_[index_of(job)];
  const std::uint64_t w = s.model->weight_bytes(range);
  return s.training() ? w * (1 + optimizer_slots(s.spec->optimizer)) : w;
}

std::uint64_t EngineImpl::persistent_bytes(JobId job) const {
  check_job(job, "persistent_bytes");
  const JobState& s = states_[index_of(job)];
  const std::uint64_t w = s.model->weight_bytes();
  return w * state_factor(s);
}

std::uint64_t EngineImpl::ephemeral_bytes(JobId job) const {
  check_job(job, "ephemeral_bytes");
  const JobState& s = states_[index_of(job)];
  const std::uint64_t per_sample = s.training() ? s.model->training_activation_bytes_per_sample()
                                                : s.model->inference_activation_bytes_per_sample();
  // Saturates rather than wrapping, so an absurd model cannot look small (per_sample < 2^59).
  const std::uint64_t batch = s.spec->batch;
  if (batch > 0 && per_sample > std::numeric_limits<std::uint64_t>::max() / batch) {
    return std::numeric_limits<std::uint64_t>::max();
  }
  return per_sample * batch;
}

LayerRange EngineImpl::range_for(const JobState& s, const Cursor& c, std::uint32_t layers) const {
  const std::uint32_t n_layers = s.model->layer_count();
  if (c.pass == Pass::Update) return LayerRange{0, n_layers};
  const std::uint32_t left = n_layers - c.layers_done;
  const std::uint32_t n = layers == 0 ? left : std::min(layers, left);
  if (c.pass == Pass::Forward) return LayerRange{c.layers_done, c.layers_done + n};
  return LayerRange{n_layers - c.layers_done - n, n_layers - c.layers_done};  // backward
}

Cursor EngineImpl::advance(const JobState& s, Cursor c, std::uint32_t layers,
                           bool* ends_unit) const {
  const std::uint32_t n_layers = s.model->layer_count();
  *ends_unit = false;
  if (c.pass == Pass::Update) {
    *ends_unit = true;
    return Cursor{c.unit + 1, Pass::Forward, 0};
  }
  c.layers_done += layers;
  if (c.layers_done < n_layers) return c;
  if (c.pass == Pass::Forward && s.training()) return Cursor{c.unit, Pass::Backward, 0};
  if (c.pass == Pass::Backward) return Cursor{c.unit, Pass::Update, 0};
  *ends_unit = true;
  return Cursor{c.unit + 1, Pass::Forward, 0};
}

DurationNs EngineImpl::op_cost(const JobState& s, DeviceId device, const Cursor& c,
                               LayerRange r) const {
  return op_kernels(s, device, c, r).solo_ns();
}

OpKernels EngineImpl::op_kernels(const JobState& s, DeviceId device, const Cursor& c,
                                 LayerRange r) const {
  OpCostMemo& cm = cost_memos_[index_of(device)];
  if (c.pass == Pass::Update) return cm.update_kernels(*s.model, s.spec->optimizer);
  return cm.op_kernels(*s.model, r, s.spec->batch, c.pass, s.inference());
}

DurationNs EngineImpl::estimate_next_ns(JobId job, DeviceId device, std::uint32_t layers) const {
  check_job(job, "estimate_next_ns");
  check_device(device, "estimate_next_ns");
  const JobState& s = states_[index_of(job)];
  return op_cost(s, device, s.dispatched, range_for(s, s.dispatched, layers));
}

DurationNs EngineImpl::estimate_unit_ns(JobId job, DeviceId device) const {
  check_job(job, "estimate_unit_ns");
  check_device(device, "estimate_unit_ns");
  const JobState& s = states_[index_of(job)];
  const LayerRange all{0, s.model->layer_count()};
  DurationNs t = op_cost(s, device, Cursor{0, Pass::Forward, 0}, all);
  if (s.training()) {
    t = saturating_add(t, op_cost(s, device, Cursor{0, Pass::Backward, 0}, all));
    t = saturating_add(t, op_cost(s, device, Cursor{0, Pass::Update, 0}, all));
  }
  return t;
}

// ---- commands ------------------------------------------------------------------------------

JobState& EngineImpl::active_job(JobId id, const char* command) {
  check_job(id, command);
  JobState& s = states_[index_of(id)];
  if (s.phase == JobPhase::NotArrived)
    fail(command, "job " + job_label(*s.spec) + " has not arrived");
  if (s.done())
    fail(command, "job " + job_label(*s.spec) + " is " + std::string(to_string(s.phase)));
  return s;
}

OpId EngineImpl::new_op(OpSpec& spec, const OpInfo& info) {
  spec.id = OpId{ops_.size()};
  ops_.push_back(info);
  ops_[index_of(spec.id)].submitted_ns = runtime_.now();
  Event e = op_event(EventKind::OpSubmit, spec.id);
  emit(e);
  if (info.job != kSystemJob && info.counts_in_flight) {
    JobState& s = states_[index_of(info.job)];
    ++s.ops_in_flight;
    ++s.residency[index_of(info.device)].ops_in_flight;
    if (s.phase == JobPhase::Waiting) s.phase = JobPhase::Running;
  }
  devices_[index_of(info.device)]->submit(spec);
  return spec.id;
}

void EngineImpl::add_dep(OpSpec& spec, OpId dep, const char* command) const {
  if (is_complete(dep)) return;
  for (OpId d : spec.after) {
    if (d == dep) return;
  }
  if (spec.after.size() >= DepList::kCapacity) {
    fail(command, "an op may wait for at most " + std::to_string(DepList::kCapacity) +
                      " unfinished ops; dispatch fewer layers at a time");
  }
  spec.after.add(dep);
}

void EngineImpl::add_context_dep(OpSpec& spec, StreamId stream, const char* command) const {
  const ContextInfo& ctx = contexts_[index_of(streams_[index_of(stream)].context)];
  if (ctx.has_start_op) add_dep(spec, ctx.start_op, command);
}

OpHandle EngineImpl::dispatch(JobId job, StreamId stream, DispatchOptions options) {
  JobState& s = active_job(job, "dispatch");
  check_stream(stream, "dispatch");
  const DeviceId device = streams_[index_of(stream)].device;
  if (!s.has_dispatchable_work()) {
    fail("dispatch", "job " + job_label(*s.spec) + " has no work to dispatch (" +
                         (s.training() ? "all iterations dispatched" : "no pending request") + ")");
  }
  // Training state must be whole on the device; inference needs the layers it runs.
  const LayerRange range = range_for(s, s.dispatched, options.layers);
  const LayerRange needed = s.training() ? LayerRange{0, s.model->layer_count()} : range;
  if (!s.resident_or_loading(device, needed)) {
    fail("dispatch", "weights of job " + job_label(*s.spec) + " layers [" +
                         std::to_string(needed.first) + ", " + std::to_string(needed.last) +
                         ") are not on device " + std::to_string(raw(device)) +
                         " (load or migrate them first)");
  }
  ensure_activations(s, device);

  OpSpec spec;
  spec.job = job;
  spec.device = device;
  spec.stream = stream;
  spec.kind = OpKind::Compute;
  spec.model = s.model;
  spec.layers = range;
  spec.pass = s.dispatched.pass;
  spec.batch = s.spec->batch;
  spec.inference = s.inference();
  spec.purpose = spec.pass == Pass::Forward    ? OpPurpose::Forward
                 : spec.pass == Pass::Backward ? OpPurpose::Backward
                                               : OpPurpose::Update;
  OpCostMemo& costs = cost_memos_[index_of(device)];
  const OpCostMemo::Compute cost =
      spec.pass == Pass::Update
          ? OpCostMemo::Compute{costs.update_kernels(*s.model, s.spec->optimizer), 1.0}
          : costs.op_compute(*s.model, range, s.spec->batch, spec.pass, s.inference());
  const OpKernels& kernels = cost.kernels;
  spec.solo_ns = kernels.solo_ns();
  spec.kernels = kernels.kernels;
  spec.gpu_ns = kernels.gpu_ns;
  if (spec.solo_ns > 0) {
    const double solo = static_cast<double>(spec.solo_ns);
    spec.kernel_wait_ns = kernels.full_residual_ns2 / solo;
    spec.kernel_wait_priority_ns = kernels.full_wave_residual_ns2 / solo;
  }
  if (options.setup_ns < 0) fail("dispatch", "negative setup_ns");
  spec.setup_ns = options.setup_ns;
  spec.demand = cost.demand;
  auto& res = s.residency[index_of(device)];
  if (is_gpu(device)) {
    spec.layer_offsets = res.offsets.data();
    spec.state_factor = static_cast<std::uint32_t>(state_factor(s));
    spec.activation_offset = res.activations.offset;
  }
  add_context_dep(spec, stream, "dispatch");
  if (s.has_last_op) add_dep(spec, s.last_op, "dispatch");
  // Wait for the loads (or migration) bringing in these layers.
  for (std::uint32_t i = needed.first; res.loading > 0 && i < needed.last; ++i) {
    if (res.layers[i] == Residency::Loading) add_dep(spec, res.loading_op[i], "dispatch");
  }
  for (const OpHandle& h : options.after) {
    if (h.valid()) add_dep(spec, h.op, "dispatch");
  }

  OpInfo info = info_of(spec);
  info.before = s.dispatched;
  info.after = advance(s, s.dispatched, range.size(), &info.ends_unit);
  info.counts_in_flight = true;
  s.dispatched = info.after;
  s.device = device;
  const OpId id = new_op(spec, info);
  s.last_op = id;
  s.has_last_op = true;
  return OpHandle{id, true};
}

OpHandle EngineImpl::load(JobId job, StreamId copy_stream, LayerRange range, LoadOptions options) {
  JobState& s = active_job(job, "load");
  check_stream(copy_stream, "load");
  const DeviceId device = streams_[index_of(copy_stream)].device;
  if (!is_gpu(device)) fail("load", "device " + std::to_string(raw(device)) + " is not a GPU");
  if (range.empty() || range.last > s.model->layer_count()) {
    fail("load", "bad layer range [" + std::to_string(range.first) + ", " +
                     std::to_string(range.last) + ") for job " + job_label(*s.spec));
  }
  auto& res = s.residency[index_of(device)];
  for (std::uint32_t i = range.first; i < range.last; ++i) {
    if (res.layers[i] != Residency::Absent) {
      fail("load", "layer " + std::to_string(i) + " of job " + job_label(*s.spec) +
                       " is already on device " + std::to_string(raw(device)));
    }
  }
  const Allocation a =
      allocate(s, device, s.model->weight_bytes(range) * state_factor(s), "weights");
  res.allocations.push_back(a);
  res.bytes += a.bytes;
  place_layers(s, res, range, a.offset);

  OpSpec spec;
  spec.job = job;
  spec.device = device;
  spec.stream = copy_stream;
  spec.kind = OpKind::CopyH2D;
  spec.purpose = OpPurpose::LoadWeights;
  spec.model = s.model;
  spec.layers = range;
  spec.bytes = load_bytes(job, range);
  spec.pageable = options.pageable;
  spec.weight_offset = a.offset;
  spec.layer_offsets = res.offsets.data();
  if (options.per_tensor_malloc) {
    const std::uint64_t tensors = std::max<std::uint64_t>(1, s.model->tensors(range));
    spec.setup_ns =
        saturating_mul(static_cast<std::int64_t>(tensors),
                       devices_[index_of(device)]->profile().malloc_ns(a.bytes / tensors));
  }
  add_context_dep(spec, copy_stream, "load");
  for (const OpHandle& h : options.after) {
    if (h.valid()) add_dep(spec, h.op, "load");
  }
  OpInfo info = info_of(spec);
  info.counts_in_flight = true;
  info.load_allocation = res.allocations.size() - 1;
  const OpId id{ops_.size()};
  for (std::uint32_t i = range.first; i < range.last; ++i) {
    res.set(i, Residency::Loading);
    res.loading_op[i] = id;
  }
  if (s.phase == JobPhase::Waiting) s.phase = JobPhase::Running;
  new_op(spec, info);
  return OpHandle{id, true};
}

void EngineImpl::evict(JobId job, DeviceId device) {
  check_job(job, "evict");
  check_device(device, "evict");
  JobState& s = states_[index_of(job)];
  auto& res = s.residency[index_of(device)];
  if (res.ops_in_flight > 0) {
    fail("evict", "job " + job_label(*s.spec) + " still has " + std::to_string(res.ops_in_flight) +
                      " ops in flight on device " + std::to_string(raw(device)));
  }
  release_weights(s, device);
}

OpHandle EngineImpl::migrate(JobId job, DeviceId to, StreamId copy_stream) {
  JobState& s = active_job(job, "migrate");
  check_device(to, "migrate");
  check_stream(copy_stream, "migrate");
  const DeviceId from = s.device;
  if (to == from) fail("migrate", "job " + job_label(*s.spec) + " is already on that device");
  const LayerRange all{0, s.model->layer_count()};
  if (!s.resident_or_loading(from, all)) {
    fail("migrate",
         "job " + job_label(*s.spec) + " has no state on device " + std::to_string(raw(from)));
  }
  const DeviceId stream_dev = streams_[index_of(copy_stream)].device;
  OpKind kind;
  if (is_gpu(from) && is_gpu(to)) {
    kind = OpKind::CopyD2D;
  } else if (is_gpu(from)) {
    kind = OpKind::CopyD2H;
  } else if (is_gpu(to)) {
    kind = OpKind::CopyH2D;
  } else {
    fail("migrate", "CPU to CPU migration is not supported");
  }
  const DeviceId expected = kind == OpKind::CopyH2D ? to : from;
  if (stream_dev != expected) {
    fail("migrate", "the copy stream must be on device " + std::to_string(raw(expected)));
  }
  auto& dst = s.residency[index_of(to)];
  if (is_gpu(to)) {
    release_weights(s, to);  // stale partial copies
    const Allocation a = allocate(s, to, persistent_bytes(job), "state");
    dst.allocations.push_back(a);
    dst.bytes += a.bytes;
    place_layers(s, dst, all, a.offset);
  }
  OpSpec spec;
  spec.job = job;
  spec.device = stream_dev;
  spec.stream = copy_stream;
  spec.kind = kind;
  spec.purpose = OpPurpose::MigrateState;
  spec.model = s.model;
  spec.layers = all;
  spec.bytes = load_bytes(job, all);
  spec.peer = to;
  spec.layer_offsets = dst.offsets.data();
  if (is_gpu(to)) spec.weight_offset = dst.offsets[0];
  const auto& src = s.residency[index_of(from)];
  if (is_gpu(from)) spec.source_offset = src.offsets[0];
  add_context_dep(spec, copy_stream, "migrate");
  if (s.has_last_op) add_dep(spec, s.last_op, "migrate");
  for (std::uint32_t i = 0; i < all.last; ++i) {
    if (src.layers[i] == Residency::Loading) add_dep(spec, src.loading_op[i], "migrate");
  }
  OpInfo info = info_of(spec);
  info.counts_in_flight = true;
  info.migrate_from = from;
  info.migrate_to = to;
  const OpId id{ops_.size()};
  for (std::uint32_t i = 0; i < all.last; ++i) {
    dst.set(i, Residency::Loading);
    dst.loading_op[i] = id;
  }
  s.device = to;
  Event e;
  e.kind = EventKind::Migrate;
  e.job = raw(job);
  e.device = raw(to);
  e.a = static_cast<std::int64_t>(spec.bytes);
  e.b = raw(from);
  emit(e);
  new_op(spec, info);
  s.last_op = id;
  s.has_last_op = true;
  return OpHandle{id, true};
}

std::size_t EngineImpl::preempt(JobId job, PreemptMode mode) {
  JobState& s = active_job(job, "preempt");
  std::size_t n = 0;
  const bool aborting = mode != PreemptMode::DropQueued;
  in_abort_ = aborting;
  for (Device* d : devices_) n += aborting ? d->abort(job) : d->drop_pending(job);
  in_abort_ = false;
  if (aborting) {
    // The task is gone: its device memory and the unit in progress are lost. A killed
    // process's memory stays allocated until the process is reaped (interference-anchors
    // §4.6): the job's layers are absent at once, the pool gets the memory back later.
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      const DeviceId dev{static_cast<std::uint16_t>(d)};
      const DurationNs reap =
          mode == PreemptMode::Kill && is_gpu(dev) ? devices_[d]->profile().process_reap_ns : 0;
      const std::uint32_t running = s.residency[d].ops_in_flight;  // aborted, not yet let go
      if (reap == 0 && running == 0) {
        release_activations(s, dev);
        release_weights(s, dev);
        continue;
      }
      auto& res = s.residency[d];
      std::vector<Allocation> held;
      for (const Allocation& a : res.allocations) {
        if (a.valid()) held.push_back(a);
      }
      if (res.activations.valid()) held.push_back(res.activations);
      res.activations = Allocation{};
      res.allocations.clear();
      res.bytes = 0;
      res.reset(res.layers.size(), Residency::Absent);
      if (held.empty()) continue;
      if (running > 0) {
        parked_.push_back({job, dev, running, runtime_.now() + reap, std::move(held)});
        continue;
      }
      runtime_.schedule_after(reap, [this, job, dev, held = std::move(held)] {
        for (const Allocation& a : held) release(states_[index_of(job)], dev, a, "reaped");
      });
    }
    s.dispatched = Cursor{s.completed.unit, Pass::Forward, 0};
    s.completed = s.dispatched;
    s.has_last_op = false;
  }
  // The chain continues from the last op that was not dropped.
  if (s.has_last_op && ops_.finished(index_of(s.last_op)) && !ops_.complete(index_of(s.last_op))) {
    const auto before = ops_.last_chain_op_before(index_of(s.last_op), job);
    s.has_last_op = before.has_value();
    if (before) s.last_op = OpId{*before};
  }
  Event e;
  e.kind = EventKind::Preempt;
  e.job = raw(job);
  e.a = static_cast<std::int64_t>(n);
  e.label = log_.intern(mode == PreemptMode::Kill      ? "kill"
                        : mode == PreemptMode::Discard ? "discard"
                                                       : "drop_queued");
  emit(e);
  return n;
}

OpHandle EngineImpl::delay(JobId job, StreamId stream, DurationNs duration_ns) {
  JobState& s = active_job(job, "delay");
  check_stream(stream, "delay");
  if (duration_ns < 0) fail("delay", "negative duration");
  OpSpec spec;
  spec.job = job;
  spec.device = streams_[index_of(stream)].device;
  spec.stream = stream;
  spec.kind = OpKind::Host;
  spec.purpose = OpPurpose::Other;
  spec.solo_ns = duration_ns;
  if (s.has_last_op) add_dep(spec, s.last_op, "delay");
  OpInfo info = info_of(spec);
  info.counts_in_flight = true;
  const OpId id = new_op(spec, info);
  return OpHandle{id, true};
}

ContextId EngineImpl::create_context(DeviceId device, ContextOptions options, ContextStart start,
                                     std::optional<JobId> build) {
  check_device(device, "create_context");
  if (build) {
    check_job(*build, "create_context");
    if (start != ContextStart::ColdProcess) {
      fail("create_context",
           "only a cold process builds a job's model (ContextStart::ColdProcess)");
    }
  }
  const ContextId id{static_cast<std::uint32_t>(contexts_.size())};
  contexts_.push_back({device, options, {}, false});
  devices_[index_of(device)]->add_context(id, options);
  const DeviceProfile& p = devices_[index_of(device)]->profile();
  DurationNs cost = 0;
  if (start == ContextStart::NewContext) cost = p.context_create_ns;
  if (start == ContextStart::ColdProcess) {
    // Interpreter + framework import + library init, the context, then the job's model.
    cost = saturating_add(p.process_start_ns, p.context_create_ns);
    if (build) cost = saturating_add(cost, p.model_build_ns(*states_[index_of(*build)].model));
  }
  Event e;
  e.kind = EventKind::ContextCreate;
  e.device = raw(device);
  e.a = raw(id);
  e.b = cost;
  e.label = log_.intern(options.mps ? "mps" : "exclusive");
  emit(e);
  if (cost > 0) {
    // Start-up runs on a private stream of the new context; its streams wait for it.
    const StreamId setup{static_cast<std::uint32_t>(streams_.size())};
    streams_.push_back({device, id});
    devices_[index_of(device)]->add_stream(setup, id, StreamOptions{0, 1});
    OpSpec spec;
    spec.job = kSystemJob;
    spec.device = device;
    spec.stream = setup;
    spec.kind = OpKind::Host;
    spec.purpose = OpPurpose::StartContext;
    spec.solo_ns = cost;
    contexts_.back().start_op = new_op(spec, info_of(spec));
    contexts_.back().has_start_op = true;
  }
  return id;
}

StreamId EngineImpl::create_stream(ContextId ctx, StreamOptions options) {
  if (index_of(ctx) >= contexts_.size()) fail("create_stream", "unknown context");
  if (options.max_in_flight == 0) fail("create_stream", "max_in_flight must be at least 1");
  const StreamId id{static_cast<std::uint32_t>(streams_.size())};
  const DeviceId device = contexts_[index_of(ctx)].device;
  streams_.push_back({device, ctx});
  devices_[index_of(device)]->add_stream(id, ctx, options);
  return id;
}

TimerId EngineImpl::set_timer(DurationNs delay_ns, std::uint64_t tag) {
  if (delay_ns < 0) fail("set_timer", "negative delay");
  const TimerId id{timers_.size()};
  timer_live_.push_back(true);
  timers_.push_back(runtime_.schedule_after(delay_ns, [this, id, tag] {
    if (!timer_live_[index_of(id)]) return;
    timer_live_[index_of(id)] = false;
    queue_hook({Hook::Kind::Timer, {}, {}, {}, id, tag});
    drain_hooks();
  }));
  return id;
}

void EngineImpl::cancel_timer(TimerId id) {
  if (index_of(id) >= timers_.size()) fail("cancel_timer", "unknown timer");
  if (!timer_live_[index_of(id)]) return;
  timer_live_[index_of(id)] = false;
  runtime_.cancel(timers_[index_of(id)]);
}

void EngineImpl::reject(JobId job, std::string_view reason) {
  JobState& s = active_job(job, "reject");
  in_abort_ = true;
  for (Device* d : devices_) d->abort(job);
  in_abort_ = false;
  s.has_last_op = false;
  finish_job(s, "rejected: " + std::string(reason));
}

void EngineImpl::record(std::string_view metric, double value) {
  Event e;
  e.kind = EventKind::PolicyMetric;
  e.label = log_.intern(metric);
  e.value = value;
  emit(e);
}

// ------------------------------------------------------------------------------------------

Engine::Engine(Platform& platform, Policy& policy, std::vector<JobSpec> jobs,
               const ModelCatalog& models, EngineOptions options)
    : impl_(std::make_unique<EngineImpl>(platform, policy, std::move(jobs), models, options)) {}
Engine::~Engine() = default;
RunResult Engine::run() {
  return impl_->run();
}
const EventLog& Engine::log() const noexcept {
  return impl_->log();
}
EventLog Engine::take_log() noexcept {
  return impl_->take_log();
}
void Engine::add_sink(EventSink& sink) {
  impl_->events().add_sink(sink);
}
void Engine::keep_log(bool keep) noexcept {
  impl_->events().keep_log(keep);
}
const std::vector<JobSpec>& Engine::jobs() const noexcept {
  return impl_->jobs();
}

}  // namespace gpumux
