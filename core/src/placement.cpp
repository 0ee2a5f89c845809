// Placement (placement.hpp): allocation, release and layer offsets of jobs' device state.
#include "placement.hpp"

#include <string>

#include "job_progress.hpp"

namespace gpumux {

namespace {

std::uint64_t aligned(std::uint64_t bytes) {
  return round_to_allocation(bytes);
}

}  // namespace

Placement::Placement(const std::vector<Device*>& devices, Runtime& runtime, EngineEvents& events)
    : devices_(devices), runtime_(runtime), events_(events) {
  for (const Device* d : devices_) {
    memory_.push_back(std::make_unique<BestFitPool>(d->profile().memory_bytes));
    gpu_.push_back(d->profile().kind == DeviceKind::Gpu);
  }
}

bool Placement::fits(const JobState& s, DeviceId device) const {
  if (!is_gpu(device)) return true;
  const auto& res = s.residency[index_of(device)];
  std::uint64_t need = 0;
  if (res.absent > 0) {
    const std::uint64_t factor = progress::state_factor(s);
    for (std::uint32_t i = 0; i < res.layers.size(); ++i) {
      if (res.layers[i] == Residency::Absent) need += s.model->layer(i).weight_bytes * factor;
    }
    need = aligned(need);
  }
  if (!res.activations.valid()) {
    const std::uint64_t act = progress::ephemeral_bytes(s);
    if (act > stats(device).capacity_bytes) return false;
    need += aligned(act);
  }
  return need == 0 || need <= stats(device).largest_free_bytes;
}

std::size_t Placement::place_weights(JobState& s, DeviceId device, LayerRange range) {
  auto& res = s.residency[index_of(device)];
  const Allocation a =
      allocate(s, device, s.model->weight_bytes(range) * progress::state_factor(s), "weights");
  res.allocations.push_back(a);
  res.bytes += a.bytes;
  place_layers(s, res, range, a.offset);
  return res.allocations.size() - 1;
}

void Placement::place_state(JobState& s, DeviceId device) {
  release_weights(s, device);  // stale partial copies
  auto& res = s.residency[index_of(device)];
  const Allocation a = allocate(s, device, progress::persistent_bytes(s), "state");
  res.allocations.push_back(a);
  res.bytes += a.bytes;
  place_layers(s, res, LayerRange{0, s.model->layer_count()}, a.offset);
}

void Placement::release_load(JobState& s, DeviceId device, std::size_t allocation) {
  auto& res = s.residency[index_of(device)];
  if (allocation >= res.allocations.size()) return;
  const Allocation a = res.allocations[allocation];
  if (!a.valid()) return;
  res.allocations[allocation] = Allocation{};
  release(s.id, device, a, "weights");
  res.bytes -= a.bytes;
}

void Placement::allocate_activations(JobState& s, DeviceId device) {
  auto& res = s.residency[index_of(device)];
  res.activations = allocate(s, device, progress::ephemeral_bytes(s), "activations");
}

void Placement::free_activations(JobState& s, DeviceId device) {
  auto& res = s.residency[index_of(device)];
  release(s.id, device, res.activations, "activations");
  res.activations = Allocation{};
}

void Placement::release_weights(JobState& s, DeviceId device) {
  auto& res = s.residency[index_of(device)];
  if (!is_gpu(device)) return;
  for (const Allocation& a : res.allocations) release(s.id, device, a, "weights");
  res.allocations.clear();
  res.bytes = 0;
  res.reset(res.layers.size(), Residency::Absent);
}

void Placement::abandon(JobState& s, DeviceId device, DurationNs reap_ns) {
  if (reap_ns == 0) {
    release_activations(s, device);
    release_weights(s, device);
    return;
  }
  auto& res = s.residency[index_of(device)];
  std::vector<Allocation> held;
  for (const Allocation& a : res.allocations) {
    if (a.valid()) held.push_back(a);
  }
  if (res.activations.valid()) held.push_back(res.activations);
  res.activations = Allocation{};
  res.allocations.clear();
  res.bytes = 0;
  res.reset(res.layers.size(), Residency::Absent);
  if (held.empty()) return;
  runtime_.schedule_after(reap_ns, [this, job = s.id, device, held = std::move(held)] {
    for (const Allocation& a : held) release(job, device, a, "reaped");
  });
}

Allocation Placement::allocate(const JobState& s, DeviceId device, std::uint64_t bytes,
                               std::string_view what) {
  if (!is_gpu(device) || bytes == 0) return Allocation{};
  const std::string where = "device " + std::to_string(raw(device)) + " (" +
                            devices_[index_of(device)]->profile().name + "), " + std::string(what) +
                            " of job '" + s.spec->name + "'";
  Allocation a = memory_[index_of(device)]->allocate(bytes, where, kAlign);
  events_.alloc(s.id, device, a, what);
  return a;
}

void Placement::release(JobId job, DeviceId device, const Allocation& a, std::string_view what) {
  if (!a.valid()) return;
  memory_[index_of(device)]->deallocate(a);
  events_.free(job, device, a, what);
}

void Placement::place_layers(const JobState& s, DeviceResidency& res, LayerRange range,
                             std::uint64_t offset) {
  const std::uint64_t factor = progress::state_factor(s);
  for (std::uint32_t i = range.first; i < range.last; ++i) {
    res.offsets[i] = offset;
    offset += s.model->layer(i).weight_bytes * factor;
  }
}

}  // namespace gpumux
