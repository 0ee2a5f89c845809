// Device profile files: the strict loader and lookup by name (device_profile_files.hpp).
#include "gpumux/io/device_profile_files.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/input_file.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/model/device_profile.hpp"

namespace gpumux {

namespace {

constexpr const char* kKindKeys[kLayerKinds] = {"conv",      "linear",    "norm",       "pool",
                                                "embedding", "attention", "elementwise"};

// Physical limits of a profile's numbers (traces/formats.md). Each is generous (real devices
// sit orders of magnitude inside it) and together they keep every cost the model derives
// finite; the cost model still clamps its results at kMaxDurationNs.
constexpr double kMinTflops = 1e-6;                   // 1 MFLOP/s
constexpr double kMaxTflops = 1e6;                    // 1 EFLOP/s
constexpr double kMinGbps = 1e-3;                     // 1 MB/s
constexpr double kMaxGbps = 1e6;                      // 1 PB/s
constexpr double kMinFraction = 1e-3;                 // efficiencies and the pageable factor
constexpr DurationNs kMaxCostNs = 1'000'000'000'000;  // 1000 s for any one runtime cost
constexpr std::uint64_t kMaxMemoryBytes = std::uint64_t{1} << 50;  // 1 PiB
constexpr std::int64_t kMaxSmsOrTile = std::int64_t{1} << 20;      // sm_count, tile_m, tile_n

std::string bound_text(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

// A value in [lo, hi]; `zero_ok` also allows 0 (a path the device does not have).
double ranged(JsonReader& r, const std::string& key, double lo, double hi, bool zero_ok) {
  const double v = r.required_number(key);
  if (zero_ok && v == 0) return 0;
  if (zero_ok) r.non_negative(key, v);
  r.positive(key, v);
  if (!(v >= lo && v <= hi)) {
    r.fail(key, std::string("out of range: must be ") + (zero_ok ? "0 or " : "") + "in [" +
                    bound_text(lo) + ", " + bound_text(hi) + "], got " + bound_text(v));
  }
  return v;
}

double fraction(JsonReader& r, const std::string& key) {
  const double v = r.required_number(key);
  if (!(v > 0 && v <= 1)) r.fail(key, "must be in (0, 1]");
  if (v < kMinFraction) r.fail(key, "out of range (below 0.001)");
  return v;
}

double tflops(JsonReader& r, const std::string& key, bool zero_ok) {
  return ranged(r, key, kMinTflops, kMaxTflops, zero_ok);
}

double gbps(JsonReader& r, const std::string& key, bool zero_ok) {
  return ranged(r, key, kMinGbps, kMaxGbps, zero_ok);
}

DurationNs duration(JsonReader& r, const std::string& key) {
  const std::int64_t v = r.required_int(key);
  if (v < 0) r.fail(key, "must be >= 0, got " + std::to_string(v));
  if (v > kMaxCostNs) r.fail(key, "out of range (more than 1e12 ns)");
  return v;
}

std::vector<DurationNs> read_times(JsonReader& r, const std::string& key, const nlohmann::json& a) {
  if (!a.is_array()) r.fail(key, "expected an array of per-layer times (ns)");
  std::vector<DurationNs> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto& v = a[i];
    if (!v.is_number() || !(v.get<double>() >= 0) || v.get<double>() > 1e12) {
      r.fail(key, "element " + std::to_string(i) + " is not a duration >= 0 ns");
    }
    out.push_back(static_cast<DurationNs>(std::llround(v.get<double>())));
  }
  return out;
}

// ---- parse_profile's steps, one per section of the file, in the order it reads them ----

void read_compute(JsonReader& r, DeviceProfile& p) {
  JsonReader c = r.object("compute");
  p.fp32_tflops = tflops(c, "fp32_tflops", false);
  p.tf32_tflops = tflops(c, "tf32_tflops", true);  // 0: no tensor-core path for this precision
  p.fp16_tflops = tflops(c, "fp16_tflops", true);
  p.bf16_tflops = tflops(c, "bf16_tflops", true);
  p.mem_bandwidth_gbps = gbps(c, "mem_bandwidth_gbps", false);
  JsonReader eff = c.object("efficiency");
  for (int k = 0; k < kLayerKinds; ++k) p.efficiency[k] = fraction(eff, kKindKeys[k]);
  eff.finish();
  p.memory_efficiency = fraction(c, "memory_efficiency");
  // Checked as written, then narrowed: 2^32 is refused, not read as 0 and clamped to 1.
  p.tile_m = c.integer_in<std::uint32_t>("tile_m", 1, kMaxSmsOrTile);
  p.tile_n = c.integer_in<std::uint32_t>("tile_n", 1, kMaxSmsOrTile);
  c.finish();
}

void read_kernels(JsonReader& r, DeviceProfile& p) {
  JsonReader kernels = r.object("kernels");
  p.launch_ns = duration(kernels, "launch_ns");
  JsonReader per_layer = kernels.object("per_layer");
  for (int k = 0; k < kLayerKinds; ++k) {
    p.kernels_per_layer[k] = per_layer.integer_in<std::uint32_t>(kKindKeys[k], 0, 1000);
  }
  per_layer.finish();
  kernels.finish();
}

void read_link(JsonReader& r, DeviceProfile& p, bool gpu) {
  JsonReader link = r.object("link");
  // A CPU device has no host link of its own; a GPU must be able to move bytes.
  p.h2d_gbps = gbps(link, "h2d_gbps", !gpu);
  p.d2h_gbps = gbps(link, "d2h_gbps", !gpu);
  p.h2d_latency_ns = duration(link, "h2d_latency_ns");
  p.d2h_latency_ns = duration(link, "d2h_latency_ns");
  // Pageable copies run at this fraction of the pinned bandwidth: at most 1.
  p.pageable_factor = ranged(link, "pageable_factor", kMinFraction, 1.0, !gpu);
  p.peer_gbps = gbps(link, "peer_gbps", true);
  link.finish();
}

void read_runtime(JsonReader& r, DeviceProfile& p) {
  JsonReader rt = r.object("runtime");
  if (rt.has("process_start_ns")) {
    rt.fail("process_start_ns",
            "replaced by interpreter_start_ns + framework_import_ns + library_init_ns and the "
            "model-dependent construct_base_ns, construct_per_mparam_ns, weight_read_gbps "
            "(traces/formats.md)");
  }
  p.context_create_ns = duration(rt, "context_create_ns");
  p.stream_create_ns = duration(rt, "stream_create_ns");
  p.malloc_base_ns = duration(rt, "malloc_base_ns");
  p.malloc_per_gib_ns = duration(rt, "malloc_per_gib_ns");
  p.free_ns = duration(rt, "free_ns");
  p.event_ns = duration(rt, "event_ns");
  p.pin_per_gib_ns = duration(rt, "pin_per_gib_ns");
  p.interpreter_start_ns = duration(rt, "interpreter_start_ns");
  p.framework_import_ns = duration(rt, "framework_import_ns");
  p.library_init_ns = duration(rt, "library_init_ns");
  p.construct_base_ns = duration(rt, "construct_base_ns");
  p.construct_per_mparam_ns = duration(rt, "construct_per_mparam_ns");
  // 0: building a model reads no weights (random initialisation).
  p.weight_read_gbps = gbps(rt, "weight_read_gbps", true);
  p.process_reap_ns = duration(rt, "process_reap_ns");
  // Optional: 0 (not modelled) unless `gpumux calibrate` measured the cuda backend's own.
  p.host_round_trip_ns = rt.has("host_round_trip_ns") ? duration(rt, "host_round_trip_ns") : 0;
  p.process_start_ns = p.interpreter_start_ns + p.framework_import_ns + p.library_init_ns;
  rt.finish();
}

void read_sharing(JsonReader& r, DeviceProfile& p) {
  JsonReader sharing = r.object("sharing");
  p.timeslice_ns = duration(sharing, "timeslice_ns");
  p.context_switch_ns = duration(sharing, "context_switch_ns");
  p.mps_efficiency = fraction(sharing, "mps_efficiency");
  p.concurrent_efficiency = fraction(sharing, "concurrent_efficiency");
  sharing.finish();
}

/// "sources": each value a string naming where a number came from.
void check_sources(JsonReader& r, const std::string& file) {
  const auto& sources = r.required("sources");
  JsonReader s(sources, file, "sources");
  for (const auto& [key, value] : sources.items()) {
    if (!s.required(key).is_string()) s.fail(key, "expected a string naming the source");
  }
  s.finish();
}

/// "calibrated": per model, per batch size, the measured per-layer times.
void read_calibrated(const nlohmann::json& cal, const std::string& file, DeviceProfile& p) {
  JsonReader models(cal, file, "calibrated");
  for (const auto& [model, batches] : cal.items()) {
    JsonReader br(models.required(model), file, models.path_of(model));
    auto& by_batch = p.calibrated[model];
    for (const auto& [batch_text, times] : batches.items()) {
      std::uint32_t batch = 0;
      const char* first = batch_text.data();
      const char* last = first + batch_text.size();
      auto [ptr, ec] = std::from_chars(first, last, batch);
      if (ec != std::errc() || ptr != last || batch < 1) {
        br.fail(batch_text, "a batch size key must be an integer >= 1");
      }
      JsonReader tr(br.required(batch_text), file, br.path_of(batch_text));
      LayerTimes t;
      t.forward_ns = read_times(tr, "forward_ns", tr.required("forward_ns"));
      if (const auto* bwd = tr.optional("backward_ns")) {
        t.backward_ns = read_times(tr, "backward_ns", *bwd);
      }
      tr.finish();
      by_batch[batch] = std::move(t);
    }
    br.finish();
  }
  models.finish();
}

DeviceProfile parse_profile(const nlohmann::json& doc, const std::string& file) {
  JsonReader r(doc, file, "");
  DeviceProfile p;
  p.name = r.required_string("name");
  p.display_name = r.required_string("display_name");
  p.kind = r.required_choice("kind", kDeviceKindNames);
  const bool gpu = p.kind == DeviceKind::Gpu;
  p.memory_bytes =
      r.integer_in<std::uint64_t>("memory_bytes", 1, static_cast<std::int64_t>(kMaxMemoryBytes));
  p.sm_count = r.integer_in<std::uint32_t>("sm_count", 1, kMaxSmsOrTile);
  read_compute(r, p);
  read_kernels(r, p);
  read_link(r, p, gpu);
  read_runtime(r, p);
  read_sharing(r, p);
  check_sources(r, file);
  p.provenance = r.string_or("provenance", "");
  p.calibrated_precision = r.choice_or("calibrated_precision", kPrecisionNames, Precision::Fp32);
  if (const auto* cal = r.optional("calibrated")) read_calibrated(*cal, file, p);
  if (const auto* fits = r.optional("calibration")) {
    // Free-form record of the measured fits; kept in the file, not interpreted here.
    if (!fits->is_object()) r.fail("calibration", "expected an object");
  }
  r.finish();
  return p;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

DeviceProfile parse_device_profile_text(std::string_view text, const std::string& file) {
  return parse_data_document(text, file, parse_profile);
}

DeviceProfile load_device_profile(const std::filesystem::path& file) {
  return parse_device_profile_text(read_data_document(file), file.string());
}

std::vector<std::string> device_profile_names(const std::filesystem::path& directory) {
  return json_file_stems(directory);
}

DeviceProfile find_device_profile(const std::filesystem::path& directory, const std::string& name) {
  const auto names = device_profile_names(directory);
  if (!std::binary_search(names.begin(), names.end(), name)) {
    throw UsageError("unknown device profile '" + name + "'; valid names: " + join(names));
  }
  DeviceProfile p = load_device_profile(directory / (name + ".json"));
  if (p.name != name) {
    throw TraceError((directory / (name + ".json")).string(), "name",
                     "profile name '" + p.name + "' does not match the file name");
  }
  return p;
}

}  // namespace gpumux
