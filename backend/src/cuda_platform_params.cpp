#include "gpumux/backend/cuda_platform_params.hpp"

#include "gpumux/errors.hpp"
#include "gpumux/json_reader.hpp"
#include "gpumux/model.hpp"

namespace gpumux {

CudaPlatformParams parse_cuda_platform_params(const PlatformSetup& setup) {
  CudaPlatformParams out;
  out.precision = setup.precision;
  out.preload = setup.workload_models;
  if (setup.params.is_null()) return out;
  JsonReader r(setup.params, setup.config_file, "platform_params");
  if (const auto* g = r.optional("gpus")) {
    if (!g->is_array()) r.fail("gpus", "expected an array of GPU ordinals");
    for (const auto& v : *g) {
      if (!v.is_number_integer() || v.get<int>() < 0) r.fail("gpus", "expected ordinals >= 0");
      out.gpus.push_back(v.get<int>());
    }
  }
  out.arena_gib = r.number_or("arena_gib", out.arena_gib);
  if (out.arena_gib < 0) r.fail("arena_gib", "must be >= 0 (0: the profile's memory)");
  out.margin_gib = r.non_negative("margin_gib", r.number_or("margin_gib", out.margin_gib));
  out.precision = r.choice_or("precision", kPrecisionNames, out.precision);
  if (const auto* pl = r.optional("preload")) {
    const char* expected = "expected \"workload\", \"all\", \"none\" or an array of model names";
    if (pl->is_string()) {
      const auto mode = pl->get<std::string>();
      if (mode == "all") {
        out.preload = setup.models != nullptr ? setup.models->names() : std::vector<std::string>{};
      } else if (mode == "none") {
        out.preload.clear();
      } else if (mode != "workload") {
        r.fail("preload", expected);
      }
    } else if (pl->is_array()) {
      out.preload.clear();
      for (const auto& v : *pl) {
        if (!v.is_string()) r.fail("preload", expected);
        auto name = v.get<std::string>();
        if (setup.models != nullptr && !setup.models->contains(name)) {
          r.fail("preload", "unknown model '" + name + "'");
        }
        out.preload.push_back(std::move(name));
      }
    } else {
      r.fail("preload", expected);
    }
  }
  out.warmup = r.bool_or("warmup", out.warmup);
  out.fault_at_op = r.int_or("fault_at_op", out.fault_at_op);
  if (out.fault_at_op < -1) r.fail("fault_at_op", "must be an op id >= 0 (or -1: none)");
  out.workspace_mib = r.int_or("workspace_mib", out.workspace_mib);
  if (out.workspace_mib < 16) r.fail("workspace_mib", "must be an integer >= 16");
  out.cpu_region_mib = r.int_or("cpu_region_mib", out.cpu_region_mib);
  if (out.cpu_region_mib < 1) r.fail("cpu_region_mib", "must be an integer >= 1");
  r.finish();
  return out;
}

}  // namespace gpumux
