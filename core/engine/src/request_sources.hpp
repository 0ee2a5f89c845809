// Where work comes from: job arrivals, open-loop request arrivals (the trace's times) and
// closed-loop clients (each sends its next request a think time after the last one ends).
// Tuning trial slots (JobSpec::trial) arrive only through arrive_now. Trace arrivals are merged
// into one list in (time, jobs before requests, trace order) order and delivered one runtime event
// per distinct time; closed-loop sends are scheduled as they become due. Each arrival updates the
// job's state, is logged, and queues its hook; runtime callbacks from here drain the hook queue.
//
// Internal to gpumux_engine. Times in ns. Thread rules: runtime thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include "engine_events.hpp"
#include "gpumux/api/ids.hpp"
#include "gpumux/api/job_state.hpp"
#include "gpumux/api/runtime.hpp"
#include "hook_queue.hpp"

namespace gpumux {

class RequestSources {
 public:
  /// `jobs` (indexed by job id) must outlive this and stay in place. `seed` seeds the draws of
  /// dynamic services' per-request work (one generator per service, D38).
  RequestSources(Runtime& runtime, std::span<JobState> jobs, EngineEvents& events, HookQueue& hooks,
                 std::uint64_t seed);

  /// Schedules the first trace arrival (call once, when the run starts).
  void start() { schedule_next_arrival(); }

  /// Job `s` arrives now, outside the trace (a tuning trial the TuningDriver activates).
  void arrive_now(JobState& s) { arrive_job(s); }

  /// Jobs arrived so far, in arrival order.
  [[nodiscard]] std::span<const JobId> arrived() const noexcept { return arrived_; }
  /// Requests arrived so far (ids are dense from 0).
  [[nodiscard]] std::size_t count() const noexcept { return requests_.size(); }
  [[nodiscard]] bool known(RequestId r) const noexcept { return index_of(r) < requests_.size(); }
  [[nodiscard]] TimeNs arrival_ns(RequestId r) const { return requests_[index_of(r)].arrival_ns; }
  [[nodiscard]] JobId job_of(RequestId r) const { return requests_[index_of(r)].job; }
  /// The request's drawn work (RequestVariability::draw); 0 for a static service's request.
  [[nodiscard]] std::uint32_t work_of(RequestId r) const { return requests_[index_of(r)].work; }
  /// Its deadline: arrival plus the service's SLO; kTimeNever without an SLO.
  [[nodiscard]] TimeNs deadline_of(RequestId r) const;

  struct Completed {
    RequestId request;
    bool more;  ///< whether the job has requests still to come or to serve
  };
  /// The job's oldest pending request is done: logs it and, for a closed-loop client,
  /// schedules the next send.
  Completed complete_request(JobState& s);
  /// Drops waiting request `r` of `s` (checked by the caller: waiting, not dispatched): logs
  /// it with `reason` and, like a completion, lets a closed-loop client send its next one.
  /// Returns whether the job has requests still to come or to serve.
  bool drop_request(JobState& s, RequestId r, std::string_view reason);

  /// Finite inputs consumed so far: trace arrivals delivered (jobs and open-loop requests)
  /// plus open-loop requests ended (served or dropped). Closed-loop sends are not counted:
  /// they come from completions, so a cycle may produce them without end (ClockStallGuard).
  [[nodiscard]] std::uint64_t inputs_consumed() const noexcept {
    return next_arrival_ + open_loop_ends_;
  }

 private:
  struct RequestInfo {
    JobId job{};
    TimeNs arrival_ns = 0;
    std::uint32_t work = 0;
  };
  struct Arrival {
    TimeNs t_ns;
    std::uint8_t is_request;  // job arrivals first at equal times
    std::uint64_t seq;
    std::uint32_t job;
    std::uint64_t request_index;  // index into the job's requests_ns
  };

  void schedule_next_arrival();
  void handle_arrival(const Arrival& a);
  void arrive_job(JobState& s);
  void arrive_request(JobId job, TimeNs when_ns);
  /// A closed-loop client's next send, no earlier than `earliest_ns`, if its count and time
  /// window allow one; returns whether one was scheduled.
  bool schedule_client_send(const JobState& s, TimeNs earliest_ns);
  /// After a request of `s` ended (served or dropped): whether more are to come or be served.
  bool more_after_end(const JobState& s);

  Runtime& runtime_;
  std::span<JobState> jobs_;
  EngineEvents& events_;
  HookQueue& hooks_;
  std::vector<Arrival> arrivals_;  // the trace's, merged
  std::size_t next_arrival_ = 0;
  std::uint64_t open_loop_ends_ = 0;  // open-loop requests served or dropped
  std::vector<JobId> arrived_;
  std::vector<RequestInfo> requests_;
  /// Per job: the generator of its requests' work (dynamic services only).
  std::vector<std::unique_ptr<std::mt19937_64>> work_rngs_;
};

}  // namespace gpumux
