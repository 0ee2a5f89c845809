#include "reference_inputs.hpp"

#include <stdexcept>
#include <string>

#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux::bench {

namespace {

[[noreturn]] void unsupported(const std::string& what) {
  throw std::invalid_argument("reference simulation: unsupported config: " + what);
}

}  // namespace

RefInputs resolve_reference_inputs(const ExperimentConfig& config,
                                   const std::filesystem::path& repo_root) {
  if (config.platform != "sim") unsupported("platform " + config.platform);
  if (config.policy != "time_slicing") unsupported("policy " + config.policy);
  if (config.devices.size() != 1) unsupported("more than one device");
  RefInputs in;
  for (const auto& [key, value] : config.policy_params.items()) {
    if (key != "depth") unsupported("policy.params." + key);
    if (!value.is_number_integer() || value.get<std::int64_t>() < 1) unsupported("depth");
    in.depth = value.get<std::uint32_t>();
  }

  DeviceProfile profile =
      find_device_profile(repo_root / "traces" / "devices", config.devices[0].profile);
  if (config.devices[0].memory_bytes) profile.memory_bytes = *config.devices[0].memory_bytes;
  if (profile.kind != DeviceKind::Gpu) unsupported("a CPU device");
  in.horizon_ns = config.horizon_ns;
  in.timeslice_ns = profile.timeslice_ns;
  in.context_switch_ns = profile.context_switch_ns;
  in.h2d_latency_ns = profile.h2d_latency_ns;
  in.h2d_bytes_per_ns = profile.h2d_gbps * 1.0;  // SimDevice's cap: rate x pinned factor 1.0

  // The op durations gpumux's Engine computes at every dispatch, computed once.
  const ModelCatalog models(repo_root / "traces" / "models");
  const CostModel cost(profile, config.cost);
  for (const JobSpec& spec : config.jobs) {
    if (spec.closed_loop.enabled) unsupported("closed-loop service '" + spec.name + "'");
    const Model& model = models.at(spec.model);
    const LayerRange all{0, model.layer_count()};
    RefJob job;
    job.training = spec.kind == JobKind::Training;
    job.arrival_ns = spec.arrival_ns;
    job.iterations = spec.iterations;
    job.forward_ns =
        cost.op_kernels(model, all, spec.batch, Pass::Forward, !job.training).solo_ns();
    if (job.training) {
      job.backward_ns = cost.op_kernels(model, all, spec.batch, Pass::Backward, false).solo_ns();
      job.update_ns = cost.update_kernels(model, spec.optimizer).solo_ns();
    }
    const std::uint64_t w = model.weight_bytes(all);
    job.load_bytes = job.training ? w * (1 + optimizer_slots(spec.optimizer)) : w;
    job.requests_ns = spec.requests_ns;
    in.jobs.push_back(std::move(job));
  }
  return in;
}

}  // namespace gpumux::bench
