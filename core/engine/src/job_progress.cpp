// Job progress (job_progress.hpp): the parts not on the per-op path.
#include "job_progress.hpp"

#include "gpumux/api/time.hpp"
#include "gpumux/model/request_variability.hpp"

namespace gpumux::progress {

std::uint64_t ephemeral_bytes(const JobState& s) noexcept {
  return ephemeral_bytes(s, s.open_batch);
}

std::uint64_t ephemeral_bytes(const JobState& s, std::uint32_t requests) noexcept {
  std::uint64_t per_sample = s.training() ? s.model->training_activation_bytes_per_sample()
                                          : s.model->inference_activation_bytes_per_sample();
  // An input-length service's requests may run at up to max_tokens: room for the longest.
  const RequestVariability* v = s.spec->dynamic.get();
  if (v != nullptr && v->kind == VariabilityKind::InputLength && s.model->sequence_length() > 0) {
    const std::uint64_t len = s.model->sequence_length();
    per_sample = (per_sample / len + 1) * v->max_tokens;
  }
  const std::uint64_t batch =
      s.training() ? s.samples_per_gpu()
                   : std::uint64_t{s.spec->batch} * std::max<std::uint32_t>(1, requests);
  if (batch > 0 && per_sample > std::numeric_limits<std::uint64_t>::max() / batch) {
    return std::numeric_limits<std::uint64_t>::max();
  }
  return per_sample * batch;
}

DurationNs estimate_next_ns(const JobState& s, OpCostMemo& costs, std::uint32_t layers) {
  return op_kernels(s, costs, s.dispatched, range_for(s, s.dispatched, layers)).solo_ns();
}

DurationNs estimate_unit_ns(const JobState& s, OpCostMemo& costs) {
  const LayerRange all{0, s.model->layer_count()};
  DurationNs t = op_kernels(s, costs, Cursor{0, Pass::Forward, 0}, all).solo_ns();
  if (s.training()) {
    t = saturating_add(t, op_kernels(s, costs, Cursor{0, Pass::Backward, 0}, all).solo_ns());
    t = saturating_add(t, op_kernels(s, costs, Cursor{0, Pass::Update, 0}, all).solo_ns());
    t = saturating_add(t, s.allreduce_ns);  // 0 on one GPU
  }
  return t;
}

}  // namespace gpumux::progress
