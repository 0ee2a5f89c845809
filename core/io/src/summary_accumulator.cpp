// The summary's event pass (SummaryAccumulator::on_event): everything summary.json needs is
// accumulated as events arrive, so a run can be summarised while it streams its events and
// without keeping them. Busy time is settled up to the earliest op still in flight.
#include <algorithm>

#include "gpumux/api/event_fields.hpp"
#include "gpumux/engine/tuning_spec.hpp"
#include "gpumux/io/summary.hpp"
#include "summary_state.hpp"

namespace gpumux {

using summary_detail::DeviceAcc;
using summary_detail::State;
using summary_detail::TuningAcc;

namespace {

/// The closed-loop "on" phase that contains `t` ends at the returned time; kTimeNever when the
/// client has no phases (always on).
TimeNs phase_end(const ClosedLoop& c, TimeNs t) {
  if (c.on_ns <= 0) return kTimeNever;
  const DurationNs period = c.on_ns + c.off_ns;
  const TimeNs k = t < c.start_ns ? 0 : (t - c.start_ns) / period;
  return c.start_ns + k * period + c.on_ns;
}

/// A trial's epoch report: counts, the best metric, the first time the target was reached.
void trial_epoch(State& st, const Event& e) {
  const TuningSpec& t = *(*st.jobs)[e.job].trial->tuning;
  if (t.index >= st.tuning.size()) return;
  TuningAcc& a = st.tuning[t.index];
  const double m = trial_metric_of(e);
  const bool max = t.mode == MetricMode::Max;
  ++a.epochs;
  if (!a.best || (max ? m > *a.best : m < *a.best)) a.best = m;
  if (t.target && a.first_target < 0 && (max ? m >= *t.target : m <= *t.target)) {
    a.first_target = e.t_ns;
  }
}

/// Every kind but the three on_event takes itself (they are most of a run's events). Out of
/// line so that on_event's own frame stays small: this switch's register saves were a third of
/// its cost per event.
[[gnu::noinline]] void other_event(State& st, const Event& e) {
  const std::vector<JobSpec>& jobs = *st.jobs;
  const std::size_t device_count = st.devices.size();
  const bool has_job = e.job != kNoJob && e.job < jobs.size();
  switch (e.kind) {
    case EventKind::JobArrival:
      if (has_job) st.acc[e.job].arrival = e.t_ns;
      break;
    case EventKind::OpEnd: {
      if (e.status == OpStatus::Dropped) ++st.dropped;
      if (e.status == OpStatus::Aborted) ++st.aborted;
      if (st.bounded) st.in_flight.end(e.op);
      if (e.device >= device_count) break;
      DeviceAcc& d = st.devices[e.device];
      BusyUnion* u = nullptr;
      if (e.op_kind == OpKind::Compute) {
        u = &d.compute;
        if (has_job && e.status == OpStatus::Ok) st.acc[e.job].gpu_ns += e.t_ns - op_started_ns(e);
      } else if (e.op_kind == OpKind::CopyH2D) {
        u = &d.h2d;
      } else if (e.op_kind == OpKind::CopyD2H || e.op_kind == OpKind::CopyD2D) {
        u = &d.d2h;
      }
      if (u != nullptr) {
        u->add(op_started_ns(e), e.t_ns);
        // Every op that ends from now on was submitted at or after this point, and starts
        // after its submission: busy time before it is final.
        if (st.bounded) u->settle(std::min(st.in_flight.earliest(), st.end_ns));
      }
      break;
    }
    case EventKind::RequestArrival:
      if (has_job) st.acc[e.job].arrivals.push_back(e.t_ns);
      break;
    case EventKind::RequestEnd:
      if (has_job) {
        auto& a = st.acc[e.job];
        const DurationNs latency = request_latency_ns(e);
        const double ms = static_cast<double>(latency) * 1e-6;
        a.latencies_ms.push_back(ms);
        const DurationNs slo = jobs[e.job].slo_ns;
        if (slo > 0 && latency <= slo) ++a.slo_met;
        a.served_arrivals.push_back(e.t_ns - latency);
        // Sent at t - latency; counted for its phase only if it ended inside it (PipeSwitch's
        // client does not count a reply that comes after its phase's time ran out).
        const ClosedLoop& c = jobs[e.job].closed_loop;
        if (c.enabled && c.on_ns > 0 && e.t_ns < phase_end(c, e.t_ns - latency)) ++a.in_phase;
      }
      break;
    case EventKind::RequestDrop:
      if (has_job) ++st.acc[e.job].dropped;
      break;
    case EventKind::IterationEnd:
      if (has_job) st.acc[e.job].iterations = iteration_of(e);
      break;
    case EventKind::JobEnd:
      if (has_job) {
        const JobEndView end = job_end_of(e);
        st.acc[e.job].end = e.t_ns;
        st.acc[e.job].status = std::string(end.label);
        st.acc[e.job].end_reason = end.reason;
        if (end.reason != EndReason::Horizon) st.last_job_end = std::max(st.last_job_end, e.t_ns);
      }
      break;
    case EventKind::Alloc:
      if (e.device < device_count) {
        DeviceAcc& d = st.devices[e.device];
        d.mem_now += alloc_bytes(e);
        d.mem_peak = std::max(d.mem_peak, d.mem_now);
      }
      break;
    case EventKind::Free:
      if (e.device < device_count) st.devices[e.device].mem_now -= free_bytes(e);
      break;
    case EventKind::ContextCreate:
      if (context_start_cost_ns(e) > 0) ++st.contexts_started;
      break;
    case EventKind::Preempt:
      ++st.preemptions;
      break;
    case EventKind::Migrate:
      ++st.migrations;
      break;
    case EventKind::PolicyMetric: {
      const std::string_view name = metric_name_of(e);
      auto it = st.metrics.find(name);
      if (it == st.metrics.end())
        it = st.metrics.emplace(std::string(name), std::vector<double>{}).first;
      it->second.push_back(metric_sample_of(e));
      break;
    }
    case EventKind::TrialEpoch:
      if (has_job && jobs[e.job].trial) trial_epoch(st, e);
      break;
    case EventKind::TrialFailed:
      if (has_job && jobs[e.job].trial && jobs[e.job].trial->tuning->index < st.tuning.size()) {
        ++st.tuning[jobs[e.job].trial->tuning->index].failed;
      }
      break;
    case EventKind::TuningEnd: {
      const std::size_t t = tuning_index_of(e);
      if (t < st.tuning.size()) {
        st.tuning[t].end = e.t_ns;
        st.tuning[t].target_reached = tuning_target_reached(e);
      }
      break;
    }
    case EventKind::RunEnd:
      st.runtime_events = runtime_events_of(e);
      break;
    default:  // OpSubmit, OpStart, DeviceNote: on_event
      break;
  }
}

}  // namespace

void SummaryAccumulator::on_event(const Event& e) {
  State& st = *s_;
  ++st.events;
  st.end_ns = std::max(st.end_ns, e.t_ns);
  switch (e.kind) {
    case EventKind::OpSubmit:
      if (st.bounded) st.in_flight.submit(e.op, e.t_ns);
      return;
    case EventKind::OpStart:
      if (e.job != kNoJob && e.job < st.jobs->size() && st.acc[e.job].first_start < 0) {
        st.acc[e.job].first_start = e.t_ns;
      }
      return;
    case EventKind::DeviceNote:
      if (e.device < st.devices.size() && device_note_of(e) == DeviceNoteKind::Timeslice) {
        ++st.devices[e.device].slices;
      }
      return;
    default:
      other_event(st, e);
  }
}

}  // namespace gpumux
