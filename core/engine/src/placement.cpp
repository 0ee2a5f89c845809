// Placement (placement.hpp): allocation, release and layer offsets of jobs' device state.
#include "placement.hpp"

#include <string>

#include "gpumux/model/memory.hpp"
#include "job_progress.hpp"

namespace gpumux {

Placement::Placement(const std::vector<Device*>& devices, Runtime& runtime, EngineEvents& events)
    : devices_(devices), runtime_(runtime), events_(events) {
  for (const Device* d : devices_) {
    memory_.push_back(std::make_unique<BestFitPool>(d->profile().memory_bytes));
    settled_.push_back(std::make_unique<BestFitPool>(d->profile().memory_bytes));
    gpu_.push_back(d->profile().kind == DeviceKind::Gpu);
  }
}

std::uint64_t Placement::missing_state_bytes(const JobState& s, DeviceId device) const {
  const auto& res = s.residency[index_of(device)];
  if (res.absent == 0) return 0;
  const std::uint64_t factor = progress::state_factor(s);
  std::uint64_t need = 0;
  for (std::uint32_t i = 0; i < res.layers.size(); ++i) {
    if (res.layers[i] == Residency::Absent) need += s.model->layer(i).weight_bytes * factor;
  }
  return need;
}

bool Placement::fits(const JobState& s, DeviceId device) const {
  if (!is_gpu(device)) return true;
  const std::uint64_t sizes[2] = {
      missing_state_bytes(s, device),
      s.residency[index_of(device)].activations.valid() ? 0 : progress::ephemeral_bytes(s)};
  return memory_[index_of(device)]->can_allocate(sizes, kAlign);
}

bool Placement::fits_after(const JobState& s, DeviceId device, std::uint64_t reserve_bytes) const {
  if (!is_gpu(device)) return true;
  const std::size_t d = index_of(device);
  Allocation state{};
  if (const std::uint64_t missing = missing_state_bytes(s, device); missing > 0) {
    const auto at = memory_[d]->probe(missing, kAlign);
    if (!at) return false;
    state = *at;
  }
  return reserve_bytes == 0 ||
         settled_[d]->largest_free_after_claim(state) >= round_to_allocation(reserve_bytes);
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
  res.activations =
      allocate(s, device, progress::ephemeral_bytes(s), "activations", /*settled=*/false);
}

void Placement::free_activations(JobState& s, DeviceId device) {
  auto& res = s.residency[index_of(device)];
  release(s.id, device, res.activations, "activations", /*settled=*/false);
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

void Placement::abandon(JobState& s, DeviceId device, DurationNs reap_ns, std::uint32_t running) {
  if (reap_ns == 0 && running == 0) {
    release_activations(s, device);
    release_weights(s, device);
    return;
  }
  auto& res = s.residency[index_of(device)];
  std::vector<Allocation> held;
  for (const Allocation& a : res.allocations) {
    if (a.valid()) held.push_back(a);
  }
  const bool activations = res.activations.valid();  // last in `held`
  if (activations) held.push_back(res.activations);
  res.activations = Allocation{};
  res.allocations.clear();
  res.bytes = 0;
  res.reset(res.layers.size(), Residency::Absent);
  if (held.empty()) return;
  if (running > 0) {
    parked_.push_back(
        {s.id, device, running, runtime_.now() + reap_ns, std::move(held), activations});
    return;
  }
  runtime_.schedule_after(reap_ns, [this, job = s.id, device, held = std::move(held), activations] {
    reap(job, device, held, activations);
  });
}

void Placement::unpark(JobId job, DeviceId device) {
  for (auto it = parked_.begin(); it != parked_.end(); ++it) {
    if (it->job != job || it->device != device || --it->ops > 0) continue;
    std::vector<Allocation> held = std::move(it->held);
    const bool activations = it->activations;
    const TimeNs due = it->due_ns;
    parked_.erase(it);
    if (due > runtime_.now()) {
      runtime_.schedule_at(due, [this, job, device, held = std::move(held), activations] {
        reap(job, device, held, activations);
      });
    } else {
      reap(job, device, held, activations);
    }
    return;
  }
}

void Placement::reap(JobId job, DeviceId device, const std::vector<Allocation>& held,
                     bool activations) {
  for (std::size_t i = 0; i < held.size(); ++i) {
    release(job, device, held[i], "reaped", !activations || i + 1 < held.size());
  }
}

Allocation Placement::allocate(const JobState& s, DeviceId device, std::uint64_t bytes,
                               std::string_view what, bool settled) {
  if (!is_gpu(device) || bytes == 0) return Allocation{};
  const std::string where = "device " + std::to_string(raw(device)) + " (" +
                            devices_[index_of(device)]->profile().name + "), " + std::string(what) +
                            " of job '" + s.spec->name + "'";
  Allocation a = memory_[index_of(device)]->allocate(bytes, where, kAlign);
  if (settled) settled_[index_of(device)]->claim(a);
  events_.alloc(s.id, device, a, what);
  return a;
}

void Placement::release(JobId job, DeviceId device, const Allocation& a, std::string_view what,
                        bool settled) {
  if (!a.valid()) return;
  memory_[index_of(device)]->deallocate(a);
  if (settled) settled_[index_of(device)]->deallocate(a);
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

void Placement::init_residency(JobState& s, const std::vector<Device*>& devices) {
  const std::uint32_t layers = s.layer_count;
  s.residency.resize(devices.size());
  for (std::size_t d = 0; d < devices.size(); ++d) {
    auto& r = s.residency[d];
    const bool cpu = devices[d]->profile().kind == DeviceKind::Cpu;
    r.reset(layers, cpu ? Residency::Resident : Residency::Absent);
    r.loading_op.assign(layers, OpId{});
    r.offsets.assign(layers, 0);
  }
}

}  // namespace gpumux
