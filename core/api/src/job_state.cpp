// JobState's queries (gpumux/api/job_state.hpp): what a job has left to do and where its layers
// are. Split from engine.cpp, which owns the state; these only read it.
#include "gpumux/api/job_state.hpp"

#include "gpumux/api/enum_names.hpp"

namespace gpumux {

namespace {
constexpr EnumNames<JobPhase, 5> kJobPhaseNames{{{JobPhase::NotArrived, "not_arrived"},
                                                 {JobPhase::Waiting, "waiting"},
                                                 {JobPhase::Running, "running"},
                                                 {JobPhase::Finished, "finished"},
                                                 {JobPhase::Rejected, "rejected"}}};
}  // namespace

std::string_view to_string(JobPhase p) noexcept {
  return kJobPhaseNames.name(p);
}

std::uint64_t JobState::total_units() const noexcept {
  if (training()) return iterations_target;
  if (spec->closed_loop.enabled) return spec->closed_loop.count;  // 0 = unbounded
  return spec->requests_ns.size();
}

std::uint32_t JobState::layers_left_in_pass() const noexcept {
  if (dispatched.pass == Pass::Update) return 1;
  return layer_count - dispatched.layers_done;
}

bool JobState::has_dispatchable_work() const noexcept {
  if (!active()) return false;
  if (training()) return !paused && dispatched.unit < iterations_target;
  return dispatched.unit < requests_done + pending_requests.size();
}

bool JobState::resident(DeviceId device, LayerRange range) const {
  const auto& r = residency.at(index_of(device));
  if (r.absent == 0 && r.loading == 0) return true;
  for (std::uint32_t i = range.first; i < range.last; ++i) {
    if (r.layers[i] != Residency::Resident) return false;
  }
  return true;
}

bool JobState::resident_or_loading(DeviceId device, LayerRange range) const {
  const auto& r = residency.at(index_of(device));
  if (r.absent == 0) return true;
  for (std::uint32_t i = range.first; i < range.last; ++i) {
    if (r.layers[i] == Residency::Absent) return false;
  }
  return true;
}

std::uint64_t JobState::resident_bytes(DeviceId device) const {
  return residency.at(index_of(device)).bytes;
}

}  // namespace gpumux
