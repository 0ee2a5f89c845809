// The engine's serving side (D38): what a batch of a dynamic service runs, the estimates and
// windows policies query, and dropping a request. Declared in engine_impl.hpp.
#include <algorithm>
#include <string>

#include "command_helpers.hpp"
#include "engine_impl.hpp"
#include "gpumux/model/model.hpp"
#include "gpumux/model/request_variability.hpp"

namespace gpumux {

void EngineImpl::plan_pieces(JobState& s, LayerRange range, std::uint32_t members,
                             std::vector<OpPiece>& out) {
  out.clear();
  const std::uint32_t samples = s.spec->batch * members;
  const RequestVariability* v = s.inference() ? s.spec->dynamic.get() : nullptr;
  if (v == nullptr) {
    out.push_back({s.model, range, s.training() ? s.spec->batch : samples});
    return;
  }
  // The unit's members: the requests from the dispatch cursor on (their work was drawn at
  // arrival), the same for every op of the unit.
  const std::size_t first = s.dispatched.unit - s.requests_done;
  std::vector<std::uint32_t>& work = work_scratch_;
  work.clear();
  for (std::uint32_t i = 0; i < members; ++i) {
    work.push_back(sources_.work_of(s.pending_requests[first + i]));
  }
  std::sort(work.begin(), work.end());
  if (v->kind == VariabilityKind::InputLength) {
    // Lock-step: every member is padded to the longest input; the layers are the model's.
    out.push_back({&serving_.at_length(*s.model, work.back()), range, samples});
    return;
  }
  // Early exit: the batch leaves the network after its deepest member's exit; the pass's
  // layers past it run nothing.
  const std::uint32_t end = std::min(range.last, work.back());
  if (!v->compacts || end <= range.first) {
    out.push_back({s.model, LayerRange{range.first, std::max(end, range.first)}, samples});
    return;
  }
  // Compacting: between consecutive exits only the members still in the batch run.
  std::uint32_t start = range.first;
  for (std::size_t i = 0; i < work.size() && start < end; ++i) {
    if (work[i] <= start) continue;
    const auto active = static_cast<std::uint32_t>(work.size() - i);
    const std::uint32_t stop = std::min(work[i], end);
    out.push_back({s.model, LayerRange{start, stop}, s.spec->batch * active});
    start = stop;
  }
}

DurationNs EngineImpl::request_solo_ns(const JobState& s, std::uint32_t work, DeviceId device) {
  OpCostMemo& costs = cost_memos_[index_of(device)];
  const RequestVariability* v = s.spec->dynamic.get();
  const Model* m = s.model;
  LayerRange r{0, s.model->layer_count()};
  if (v != nullptr && v->kind == VariabilityKind::EarlyExit) r.last = work;
  if (v != nullptr && v->kind == VariabilityKind::InputLength) {
    m = &serving_.at_length(*s.model, work);
    r.last = m->layer_count();
  }
  return costs.op_kernels(*m, r, s.spec->batch, Pass::Forward, true).solo_ns();
}

DurationNs EngineImpl::estimate_batch_ns(JobId job, DeviceId device, std::uint32_t requests) const {
  check_job(job, "estimate_batch_ns");
  check_device(device, "estimate_batch_ns");
  const JobState& s = states_[index_of(job)];
  if (!s.inference()) fail("estimate_batch_ns", "job " + job_label(*s.spec) + " is not a service");
  if (requests == 0) fail("estimate_batch_ns", "a batch of 0 requests");
  return cost_memos_[index_of(device)]
      .op_kernels(*s.model, LayerRange{0, s.model->layer_count()}, s.spec->batch * requests,
                  Pass::Forward, true)
      .solo_ns();
}

void EngineImpl::drop_request(RequestId r, std::string_view reason) {
  if (!sources_.known(r)) fail("drop_request", "unknown request " + std::to_string(raw(r)));
  JobState& s = states_[index_of(sources_.job_of(r))];
  if (s.done()) fail("drop_request", "job " + job_label(*s.spec) + " has ended");
  const std::size_t waiting = s.requests_waiting();
  const auto begin = s.pending_requests.end() - static_cast<std::ptrdiff_t>(waiting);
  if (std::find(begin, s.pending_requests.end(), r) == s.pending_requests.end()) {
    const bool pending = std::find(s.pending_requests.begin(), s.pending_requests.end(), r) !=
                         s.pending_requests.end();
    fail("drop_request", "request " + std::to_string(raw(r)) + " of job " + job_label(*s.spec) +
                             (pending ? " is dispatched" : " was served or dropped already"));
  }
  if (!sources_.drop_request(s, r, reason)) finish_job(s, EndReason::Finished);
}

}  // namespace gpumux
