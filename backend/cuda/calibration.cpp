// `gpumux calibrate`: measures GPU 0 and writes a device profile the simulator reads.
//
// What is measured, and how (all times are medians of repetitions after warm-up):
//   - context start-up: cudaFree(0) (driver initialisation + primary context creation + lazy
//     module loading) in a fresh child process forked before this process touches CUDA; the
//     process start of a framework (Python, imports) is not measurable here and keeps its base
//     value;
//   - H2D and D2H copies, pinned and pageable, 4 KiB .. 1 GiB (256 MiB with --quick): one
//     cudaMemcpyAsync between two timing events; t = latency + bytes / bandwidth fitted by
//     least squares (Eigen) with relative residuals, so small copies weigh as much as large;
//     pageable_factor = pageable / pinned bandwidth (mean of both directions);
//   - kernel launch: host time per launch of an empty kernel, batches of 2000;
//   - event: host time of cudaEventRecord + cudaEventSynchronize on an idle stream;
//   - stream creation: cudaStreamCreateWithPriority;
//   - cudaMalloc against size (1 MiB .. 1 GiB), fitted as base + per GiB; cudaFree (median);
//     page-locking per GiB (cudaHostAlloc of 256 MiB);
//   - platform cuda's host round trip between two ops of one stream when the second waits in
//     the host queue (round_trip_calibration.hpp): runtime.host_round_trip_ns;
//   - per-layer forward and backward times of every zoo model (or --models) at batch 1, 8, 32
//     through the CudaLayerExecutor in fp32: events between consecutive layers of one pass,
//     the pass repeated, the median per layer.
// The profile keeps the base (datasheet) profile's schema and numbers, replaces the measured
// ones (naming the measurement in "sources"), adds "provenance", the "calibrated" per-layer
// section and a "calibration" object with the raw fits, and is checked by loading it back.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration_measure.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/backend/calibration.hpp"
#include "gpumux/backend/cuda/cuda_check.hpp"
#include "gpumux/backend/cuda/cuda_layer_executor.hpp"
#include "gpumux/backend/cuda/cuda_platform.hpp"
#include "gpumux/backend/cuda/round_trip_calibration.hpp"
#include "gpumux/backend/cuda_module.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

namespace {

using calibration::AllocationCosts;
using calibration::Clock;
using calibration::CopyFits;
using calibration::host_ns;
using calibration::HostCosts;
using calibration::json;
using calibration::median;

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

/// The base (datasheet) profile as JSON, after checking that it loads as a profile itself.
json read_base_profile(const std::filesystem::path& base_profile) {
  std::ifstream in(base_profile);
  if (!in) {
    throw UsageError(base_profile.string() + ": cannot open the base profile (give --base)");
  }
  json profile = json::parse(in);
  (void)load_device_profile(base_profile);  // the base must be valid itself
  return profile;
}

/// Per-layer times of `models` at each batch size of the options, through the
/// CudaLayerExecutor in fp32: {model: {batch: layer_times}}.
json measure_zoo(const ModelCatalog& catalog, const std::vector<std::string>& models,
                 const CalibrationOptions& options, cudaStream_t s, int reps) {
  json calibrated = json::object();
  CudaExecutorOptions eo;
  eo.precision = Precision::Fp32;
  CudaLayerExecutor exec(0, eo);
  for (const std::string& name : models) {
    const Model& m = catalog.at(name);
    for (const unsigned batch : options.batches) {
      std::cerr << "  " << name << " batch " << batch << '\n';
      calibrated[name][std::to_string(batch)] =
          calibration::layer_times(exec, m, batch, s, options.quick ? 1 : 2, reps);
    }
  }
  return calibrated;
}

/// What the run measured, for the profile's fields.
struct Measured {
  const std::vector<std::int64_t>& ctx;  ///< context start-up, ns (empty: not measured)
  const CopyFits& copies;
  const HostCosts& host;
  const AllocationCosts& alloc;
  const json& round_trip;
};

/// Replaces the base profile's measured numbers, each with its source in "sources", and
/// renames it after the output file.
void set_measured_fields(json& profile, const CalibrationOptions& options,
                         const cudaDeviceProp& prop, const std::string& when, const Measured& m) {
  const std::string stem = options.out_file.stem().string();  // "<name>.calibrated"
  const std::string how =
      "calibration: gpumux calibrate on " + std::string(prop.name) + ", " + when;
  auto set = [&](const std::string& section, const std::string& key, const json& value,
                 const std::string& what) {
    if (section.empty()) {
      profile[key] = value;
    } else {
      profile[section][key] = value;
    }
    profile["sources"][section.empty() ? key : section + "." + key] = how + ": " + what;
  };
  auto ns = [](double v) { return static_cast<std::int64_t>(std::llround(std::max(v, 0.0))); };
  const CopyFits& c = m.copies;
  profile["name"] = stem;
  profile["display_name"] = profile.value("display_name", std::string()) + " [calibrated on " +
                            std::string(prop.name) + "]";
  set("", "memory_bytes", static_cast<std::uint64_t>(prop.totalGlobalMem),
      "cudaGetDeviceProperties");
  set("", "sm_count", prop.multiProcessorCount, "cudaGetDeviceProperties");
  set("link", "h2d_gbps", c.h2d.gbps(), "least-squares fit, pinned, events around cudaMemcpyAsync");
  set("link", "d2h_gbps", c.d2h.gbps(), "least-squares fit, pinned");
  set("link", "h2d_latency_ns", ns(c.h2d.fit.intercept), "intercept of the pinned H2D fit");
  set("link", "d2h_latency_ns", ns(c.d2h.fit.intercept), "intercept of the pinned D2H fit");
  set("link", "pageable_factor", c.pageable_factor(),
      "pageable / pinned fitted bandwidth, mean of directions");
  set("kernels", "launch_ns", ns(median(m.host.launch)), "host time per empty-kernel launch");
  if (!m.ctx.empty()) {
    set("runtime", "context_create_ns", ns(static_cast<double>(median(m.ctx))),
        "cudaFree(0) in a fresh child process (driver init + context + lazy module load)");
  }
  set("runtime", "stream_create_ns", ns(median(m.host.stream_create)),
      "cudaStreamCreateWithPriority");
  set("runtime", "malloc_base_ns", ns(m.alloc.malloc_fit.intercept),
      "cudaMalloc fit, 1 MiB .. max size");
  set("runtime", "malloc_per_gib_ns", ns(m.alloc.malloc_fit.slope), "cudaMalloc fit slope");
  set("runtime", "free_ns", ns(median(m.alloc.free_ns)), "cudaFree, median over sizes");
  set("runtime", "event_ns", ns(median(m.host.event)), "cudaEventRecord + cudaEventSynchronize");
  set("runtime", "pin_per_gib_ns", ns(m.alloc.pin_per_gib), "cudaHostAlloc of 256 MiB");
  set("runtime", "host_round_trip_ns", ns(m.round_trip["median_ns"].get<double>()),
      "platform cuda: median gap between 4 KiB copies queued on one stream with one op in "
      "flight (round_trip_calibration.hpp)");
}

// Written to a name of gpumux's own beside the target (never a user's "x.json.tmp"),
// exclusively and without following links, synced, checked, and only then renamed over the
// target, which is looked at again first: the run takes minutes.
void write_profile(const CalibrationOptions& options, const json& profile) {
  namespace fs = std::filesystem;
  const fs::path parent =
      options.out_file.parent_path().empty() ? fs::path(".") : options.out_file.parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw Error("--out: " + parent.string() + ": cannot create the folder: " + ec.message());
  const fs::path tmp = options.out_file.string() + ".gpumux-tmp." + std::to_string(::getpid());
  {
    const std::string text = profile.dump(1) + "\n";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) throw Error("--out: cannot write " + tmp.string() + ": " + std::strerror(errno));
    std::size_t done = 0;
    int err = 0;
    while (done < text.size() && err == 0) {
      const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno != EINTR) err = errno;
      if (n > 0) done += static_cast<std::size_t>(n);
    }
    if (err == 0 && ::fsync(fd) != 0) err = errno;
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) {
      fs::remove(tmp, ec);
      throw Error("--out: cannot write " + tmp.string() + ": " + std::strerror(err));
    }
  }
  (void)load_device_profile(
      tmp);  // the simulator must be able to read it, before it replaces anything
  if (!options.replace && fs::exists(fs::symlink_status(options.out_file, ec))) {
    throw Error("--out: " + options.out_file.string() +
                ": a file appeared there during calibration; it was kept, and the new profile is "
                "in " +
                tmp.string());
  }
  fs::rename(tmp, options.out_file, ec);
  if (ec) {
    throw Error("--out: cannot move " + tmp.string() + " to " + options.out_file.string() + ": " +
                ec.message());
  }
}

}  // namespace

int run_calibration_on_gpu(const CalibrationOptions& options) {
  const auto t_begin = Clock::now();
  // Context start-up first, while this process has not touched CUDA (fork safety).
  const std::vector<std::int64_t> ctx = calibration::measure_context_startup(options.quick ? 2 : 5);
  if (cuda_device_count() == 0) {
    throw DeviceUnavailable(
        "gpumux calibrate: no usable GPU on this machine (cudaGetDeviceCount "
        "failed or found none); run it on the GPU you want to profile");
  }
  json profile = read_base_profile(options.base_profile);

  const bool quick = options.quick;
  const int reps = quick ? 3 : 7;
  GPUMUX_CUDA_TRY(cudaSetDevice(0));
  GPUMUX_CUDA_TRY(cudaFree(nullptr));
  cudaDeviceProp prop{};
  GPUMUX_CUDA_TRY(cudaGetDeviceProperties(&prop, 0));
  const std::string gpu = describe_gpu(0);
  const std::string when = utc_now();
  std::cerr << "calibrating " << gpu << '\n';
  cudaStream_t s = nullptr;
  GPUMUX_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  json raw;
  raw["gpu"] = gpu;
  raw["date"] = when;
  raw["context_create_ns"] = ctx;

  const std::size_t max_bytes = quick ? (std::size_t{256} << 20) : (std::size_t{1} << 30);
  const CopyFits copies = calibration::measure_copies(s, max_bytes, reps);
  raw["h2d_pinned"] = copies.h2d.to_json();
  raw["d2h_pinned"] = copies.d2h.to_json();
  raw["h2d_pageable"] = copies.h2d_pageable.to_json();
  raw["d2h_pageable"] = copies.d2h_pageable.to_json();

  std::cerr << "  launch, event, stream, malloc\n";
  const HostCosts host = calibration::measure_host_costs(s);
  raw["launch_ns"] = host.launch;
  raw["event_ns_median"] = median(host.event);
  raw["stream_create_ns_median"] = median(host.stream_create);

  const AllocationCosts alloc = calibration::measure_allocation(max_bytes, reps);
  raw["malloc"] = {{"gib", alloc.gib},
                   {"malloc_ns", alloc.malloc_ns},
                   {"free_ns", alloc.free_ns},
                   {"base_ns", alloc.malloc_fit.intercept},
                   {"per_gib_ns", alloc.malloc_fit.slope},
                   {"max_rel_error", alloc.malloc_fit.max_rel_error}};
  raw["pin_per_gib_ns"] = alloc.pin_per_gib;

  ModelCatalog catalog(options.models_dir);
  const std::vector<std::string> models = options.models.empty() ? catalog.names() : options.models;
  const json calibrated = measure_zoo(catalog, models, options, s, reps);
  GPUMUX_CUDA_TRY(cudaStreamDestroy(s));

  // ---- platform cuda's round trip between dependent ops (D33) ----
  std::cerr << "  host round trip\n";
  const json round_trip =
      measure_host_round_trip(load_device_profile(options.base_profile), quick ? 300 : 1000);
  raw["host_round_trip"] = round_trip;

  set_measured_fields(profile, options, prop, when, Measured{ctx, copies, host, alloc, round_trip});
  std::string command = "gpumux calibrate --device " + options.device_name;
  if (quick) command += " --quick";
  profile["provenance"] = command + " on " + gpu + ", " + when;
  profile["calibrated"] = calibrated;
  profile["calibrated_precision"] = "fp32";  // the executor options of measure_zoo (D37)
  raw["command"] = command;
  raw["wall_s"] = static_cast<double>(host_ns(t_begin, Clock::now())) * 1e-9;
  profile["calibration"] = raw;
  write_profile(options, profile);
  std::cout << "wrote " << options.out_file.string() << " (" << models.size() << " models, "
            << raw["wall_s"].get<double>() << " s)\n";
  return 0;
}

}  // namespace gpumux
