// Request sources (request_sources.hpp): job and request arrivals, open and closed loop.
#include "request_sources.hpp"

#include <algorithm>

#include "gpumux/api/seed.hpp"
#include "gpumux/model/request_variability.hpp"

namespace gpumux {

RequestSources::RequestSources(Runtime& runtime, std::span<JobState> jobs, EngineEvents& events,
                               HookQueue& hooks, std::uint64_t seed)
    : runtime_(runtime), jobs_(jobs), events_(events), hooks_(hooks) {
  // One generator per dynamic service, its own member of the RequestVariability stream
  // (seed.hpp): a request's work depends on neither the policy nor the other services.
  work_rngs_.resize(jobs_.size());
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    if (!jobs_[j].spec->dynamic) continue;
    work_rngs_[j] =
        std::make_unique<std::mt19937_64>(derive_seed(seed, SeedStream::RequestVariability, j));
  }
  // Every job arrival and open-loop request arrival, merged in (time, kind, order) order.
  std::uint64_t seq = 0;
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    if (jobs_[j].spec->trial) continue;  // arrives when its tuner starts a trial
    arrivals_.push_back({jobs_[j].spec->arrival_ns, 0, seq++, static_cast<std::uint32_t>(j), 0});
  }
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    const auto& times = jobs_[j].spec->requests_ns;
    for (std::size_t r = 0; r < times.size(); ++r) {
      arrivals_.push_back({times[r], 1, seq++, static_cast<std::uint32_t>(j), r});
    }
  }
  std::sort(arrivals_.begin(), arrivals_.end(), [](const Arrival& a, const Arrival& b) {
    if (a.t_ns != b.t_ns) return a.t_ns < b.t_ns;
    if (a.is_request != b.is_request) return a.is_request < b.is_request;
    return a.seq < b.seq;
  });
}

void RequestSources::schedule_next_arrival() {
  if (next_arrival_ >= arrivals_.size()) return;
  const Arrival& a = arrivals_[next_arrival_];
  runtime_.schedule_at(a.t_ns, [this] {
    // Deliver every arrival due now, then schedule the next (keeps the pending set small).
    while (next_arrival_ < arrivals_.size() && arrivals_[next_arrival_].t_ns <= runtime_.now()) {
      handle_arrival(arrivals_[next_arrival_++]);
    }
    schedule_next_arrival();
    hooks_.drain();
  });
}

void RequestSources::handle_arrival(const Arrival& a) {
  JobState& s = jobs_[a.job];
  if (a.is_request == 0) {
    arrive_job(s);
    return;
  }
  if (s.done()) return;  // a rejected service's later requests are not served
  arrive_request(s.id, a.t_ns);
}

void RequestSources::arrive_job(JobState& s) {
  s.phase = JobPhase::Waiting;
  arrived_.push_back(s.id);
  events_.job_arrival(s.id, s.spec->name);
  hooks_.job_arrival(s.id);
  if (s.spec->closed_loop.enabled) schedule_client_send(s, runtime_.now());
}

void RequestSources::arrive_request(JobId job, TimeNs when_ns) {
  JobState& s = jobs_[index_of(job)];
  if (s.done()) return;
  const RequestId id{requests_.size()};
  const auto& rng = work_rngs_[index_of(job)];
  requests_.push_back({job, when_ns, rng ? s.spec->dynamic->draw(*rng) : 0});
  s.pending_requests.push_back(id);
  events_.request_arrival(job, id);
  hooks_.request_arrival(job, id);
}

bool RequestSources::schedule_client_send(const JobState& s, TimeNs earliest_ns) {
  const ClosedLoop& cl = s.spec->closed_loop;
  const std::uint64_t issued = s.requests_done + s.requests_dropped + s.pending_requests.size();
  if (cl.count != 0 && issued >= cl.count) return false;
  const TimeNs next = cl.next_send_time(earliest_ns);
  if (next == kTimeNever) return false;
  runtime_.schedule_at(next, [this, id = s.id] {
    arrive_request(id, runtime_.now());
    hooks_.drain();
  });
  return true;
}

RequestSources::Completed RequestSources::complete_request(JobState& s) {
  const RequestId req = s.pending_requests.front();
  s.pending_requests.pop_front();
  ++s.requests_done;
  if (!s.spec->closed_loop.enabled) ++open_loop_ends_;
  events_.request_end(s.id, req, runtime_.now() - requests_[index_of(req)].arrival_ns);
  return {req, more_after_end(s)};
}

bool RequestSources::drop_request(JobState& s, RequestId r, std::string_view reason) {
  const auto it = std::find(s.pending_requests.begin(), s.pending_requests.end(), r);
  s.pending_requests.erase(it);
  ++s.requests_dropped;
  if (!s.spec->closed_loop.enabled) ++open_loop_ends_;
  events_.request_drop(s.id, r, runtime_.now() - requests_[index_of(r)].arrival_ns, reason);
  return more_after_end(s);
}

bool RequestSources::more_after_end(const JobState& s) {
  if (s.spec->closed_loop.enabled) {
    const ClosedLoop& cl = s.spec->closed_loop;
    return schedule_client_send(s, runtime_.now() + cl.think_ns) || !s.pending_requests.empty();
  }
  return s.requests_done + s.requests_dropped < s.spec->requests_ns.size();
}

TimeNs RequestSources::deadline_of(RequestId r) const {
  const RequestInfo& info = requests_[index_of(r)];
  const DurationNs slo = jobs_[index_of(info.job)].spec->slo_ns;
  return slo > 0 ? info.arrival_ns + slo : kTimeNever;
}

}  // namespace gpumux
