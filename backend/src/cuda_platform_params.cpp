#include "gpumux/backend/cuda_platform_params.hpp"

#include <cstdint>
#include <limits>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

namespace {
// Sizes are bounded so that their byte counts stay exact in 64 bits: at most 2^50 bytes, the
// largest memory a device profile may have (device_profile.cpp).
constexpr std::int64_t kMaxMib = std::int64_t{1} << 30;
constexpr double kMaxGib = 1048576.0;  // 2^20 GiB
}  // namespace

CudaPlatformParams parse_cuda_platform_params(const PlatformSetup& setup) {
  CudaPlatformParams out;
  out.precision = setup.precision;
  out.preload = setup.workload_models;
  if (setup.params.is_null()) return out;
  JsonReader r(setup.params, setup.config_file, "platform_params");
  if (const auto* g = r.optional("gpus")) {
    if (!g->is_array()) r.fail("gpus", "expected an array of GPU ordinals");
    for (const auto& v : *g) {
      // Checked as written: get<int>() of 2^32 would be GPU 0.
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
          v.get<std::int64_t>() > std::numeric_limits<std::uint16_t>::max()) {
        r.fail("gpus", "expected ordinals in [0, 65535]");
      }
      out.gpus.push_back(static_cast<int>(v.get<std::int64_t>()));
    }
  }
  out.arena_gib = r.number_or("arena_gib", out.arena_gib);
  if (out.arena_gib < 0 || out.arena_gib > kMaxGib) {
    r.fail("arena_gib", "must be in [0, 1048576] (0: the profile's memory)");
  }
  out.margin_gib = r.non_negative("margin_gib", r.number_or("margin_gib", out.margin_gib));
  if (out.margin_gib > kMaxGib) r.fail("margin_gib", "must be in [0, 1048576]");
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
  out.workspace_mib =
      r.integer_in_or<std::int64_t>("workspace_mib", out.workspace_mib, 16, kMaxMib);
  out.cpu_region_mib =
      r.integer_in_or<std::int64_t>("cpu_region_mib", out.cpu_region_mib, 1, kMaxMib);
  r.finish();
  return out;
}

}  // namespace gpumux
