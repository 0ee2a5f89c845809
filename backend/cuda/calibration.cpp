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
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/backend/calibration.hpp"
#include "gpumux/backend/cuda/cuda_arena.hpp"
#include "gpumux/backend/cuda/cuda_check.hpp"
#include "gpumux/backend/cuda/cuda_layer_executor.hpp"
#include "gpumux/backend/cuda/cuda_platform.hpp"
#include "gpumux/backend/cuda/pinned_weight_store.hpp"
#include "gpumux/backend/cuda/round_trip_calibration.hpp"
#include "gpumux/backend/cuda/training_layout.hpp"
#include "gpumux/backend/cuda_module.hpp"
#include "gpumux/backend/layer_plan.hpp"
#include "gpumux/backend/weight_fill.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "kernels.h"

namespace gpumux {

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::int64_t host_ns(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

template <class T>
T median(std::vector<T> v) {
  if (v.empty()) return T{};
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

struct LineFit {
  double intercept = 0;  // ns
  double slope = 0;      // ns per unit
  double max_rel_error = 0;
};

// Least squares t = a + b x with relative residuals ((t - fit) / t).
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& t, bool relative) {
  const auto n = static_cast<Eigen::Index>(x.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double w = relative ? 1.0 / std::max(t[i], 1.0) : 1.0;
    a(i, 0) = w;
    a(i, 1) = x[i] * w;
    y(i) = t[i] * w;
  }
  const Eigen::Vector2d c = a.colPivHouseholderQr().solve(y);
  LineFit f{std::max(0.0, c(0)), std::max(c(1), 1e-12), 0};
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double fit = f.intercept + f.slope * x[i];
    f.max_rel_error = std::max(f.max_rel_error, std::abs(fit - t[i]) / std::max(t[i], 1.0));
  }
  return f;
}

// cudaFree(0) in a fresh process: fork before the parent initialises CUDA.
std::vector<std::int64_t> measure_context_startup(int runs) {
  std::vector<std::int64_t> out;
  for (int i = 0; i < runs; ++i) {
    int fds[2];
    if (pipe(fds) != 0) break;
    const pid_t pid = fork();
    if (pid < 0) {
      close(fds[0]);
      close(fds[1]);
      break;
    }
    if (pid == 0) {  // child: first CUDA call of this process
      close(fds[0]);
      const auto t0 = Clock::now();
      const cudaError_t st = cudaFree(nullptr);
      const std::int64_t ns = st == cudaSuccess ? host_ns(t0, Clock::now()) : -1;
      (void)!write(fds[1], &ns, sizeof ns);
      close(fds[1]);
      _exit(0);
    }
    close(fds[1]);
    std::int64_t ns = -1;
    if (read(fds[0], &ns, sizeof ns) != static_cast<ssize_t>(sizeof ns)) ns = -1;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (ns > 0) out.push_back(ns);
  }
  return out;
}

class Timer {  // two events on one stream
 public:
  explicit Timer(cudaStream_t s) : s_(s) {
    GPUMUX_CUDA_TRY(cudaEventCreate(&a_));
    GPUMUX_CUDA_TRY(cudaEventCreate(&b_));
  }
  ~Timer() {
    (void)cudaEventDestroy(a_);
    (void)cudaEventDestroy(b_);
  }
  void start() { GPUMUX_CUDA_TRY(cudaEventRecord(a_, s_)); }
  double stop_ns() {
    GPUMUX_CUDA_TRY(cudaEventRecord(b_, s_));
    GPUMUX_CUDA_TRY(cudaEventSynchronize(b_));
    float ms = 0;
    GPUMUX_CUDA_TRY(cudaEventElapsedTime(&ms, a_, b_));
    return static_cast<double>(ms) * 1e6;
  }

 private:
  cudaStream_t s_;
  cudaEvent_t a_ = nullptr, b_ = nullptr;
};

struct CopyFit {
  LineFit fit;
  std::vector<double> sizes, times;
  [[nodiscard]] double gbps() const { return 1.0 / fit.slope; }  // bytes per ns
  [[nodiscard]] json to_json() const {
    return {{"latency_ns", fit.intercept},
            {"gbps", gbps()},
            {"max_rel_error", fit.max_rel_error},
            {"bytes", sizes},
            {"median_ns", times}};
  }
};

CopyFit measure_copy(cudaStream_t s, void* dst, const void* src, cudaMemcpyKind kind,
                     const std::vector<std::size_t>& sizes, int reps) {
  Timer timer(s);
  CopyFit out;
  for (const std::size_t bytes : sizes) {
    std::vector<double> t;
    for (int r = 0; r < reps + 2; ++r) {
      timer.start();
      GPUMUX_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kind, s));
      const double ns = timer.stop_ns();
      if (r >= 2) t.push_back(ns);  // two warm-ups
    }
    out.sizes.push_back(static_cast<double>(bytes));
    out.times.push_back(median(t));
  }
  out.fit = fit_line(out.sizes, out.times, true);
  return out;
}

json layer_times(CudaLayerExecutor& exec, const Model& m, std::uint32_t batch, cudaStream_t s,
                 int warmup, int reps) {
  const std::uint32_t n = m.layer_count();
  const TrainingLayout layout(m);
  DeviceBuffer weights(layout.weight_region_bytes());
  GPUMUX_CUDA_TRY(static_cast<cudaError_t>(
      gpumux_fill_weights(weights.data(), weights.size() / 4, seed_for(m.name().c_str()), 0, s)));
  const std::uint64_t act_bytes = std::min<std::uint64_t>(
      m.training_activation_bytes_per_sample() * batch, std::uint64_t{1} << 30);
  DeviceBuffer act(std::max<std::size_t>(act_bytes, 256));
  auto mem = [&](std::uint32_t i) {
    return layout.layer(i, static_cast<std::byte*>(weights.data()),
                        static_cast<std::byte*>(act.data()), act.size(), /*training=*/true);
  };
  std::vector<cudaEvent_t> ev(n + 1);
  for (auto& e : ev) GPUMUX_CUDA_TRY(cudaEventCreate(&e));
  std::vector<std::vector<double>> fwd(n), bwd(n);
  for (int r = 0; r < warmup + reps; ++r) {
    GPUMUX_CUDA_TRY(cudaEventRecord(ev[0], s));
    for (std::uint32_t i = 0; i < n; ++i) {
      exec.forward(m, i, batch, mem(i), s);
      GPUMUX_CUDA_TRY(cudaEventRecord(ev[i + 1], s));
    }
    GPUMUX_CUDA_TRY(cudaEventSynchronize(ev[n]));
    for (std::uint32_t i = 0; i < n && r >= warmup; ++i) {
      float ms = 0;
      GPUMUX_CUDA_TRY(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
      fwd[i].push_back(static_cast<double>(ms) * 1e6);
    }
    // Backward runs the layers in reverse; ev[i] ... ev[i+1] still brackets layer i.
    GPUMUX_CUDA_TRY(cudaEventRecord(ev[n], s));
    for (std::uint32_t i = n; i-- > 0;) {
      exec.backward(m, i, batch, mem(i), s);
      GPUMUX_CUDA_TRY(cudaEventRecord(ev[i], s));
    }
    GPUMUX_CUDA_TRY(cudaEventSynchronize(ev[0]));
    for (std::uint32_t i = 0; i < n && r >= warmup; ++i) {
      float ms = 0;
      GPUMUX_CUDA_TRY(cudaEventElapsedTime(&ms, ev[i + 1], ev[i]));
      bwd[i].push_back(static_cast<double>(ms) * 1e6);
    }
  }
  for (auto& e : ev) (void)cudaEventDestroy(e);
  json f = json::array(), b = json::array();
  for (std::uint32_t i = 0; i < n; ++i) {
    f.push_back(static_cast<std::int64_t>(std::llround(median(fwd[i]))));
    b.push_back(static_cast<std::int64_t>(std::llround(median(bwd[i]))));
  }
  return {{"forward_ns", f}, {"backward_ns", b}};
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

int run_calibration_on_gpu(const CalibrationOptions& options) {
  const auto t_begin = Clock::now();
  // Context start-up first, while this process has not touched CUDA (fork safety).
  const std::vector<std::int64_t> ctx = measure_context_startup(options.quick ? 2 : 5);
  if (cuda_device_count() == 0) {
    throw DeviceUnavailable(
        "gpumux calibrate: no usable GPU on this machine (cudaGetDeviceCount "
        "failed or found none); run it on the GPU you want to profile");
  }
  std::ifstream in(options.base_profile);
  if (!in) {
    throw UsageError(options.base_profile.string() +
                     ": cannot open the base profile (give --base)");
  }
  json profile = json::parse(in);
  (void)load_device_profile(options.base_profile);  // the base must be valid itself

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

  // ---- copies ----
  std::vector<std::size_t> sizes;
  const std::size_t max_bytes = quick ? (std::size_t{256} << 20) : (std::size_t{1} << 30);
  for (std::size_t b = 4096; b <= max_bytes; b *= 4) sizes.push_back(b);
  CopyFit h2d, d2h, h2d_pageable, d2h_pageable;
  {
    DeviceBuffer dev(max_bytes);
    PinnedBuffer pinned(max_bytes);
    std::vector<std::byte> pageable(max_bytes);
    std::memset(pageable.data(), 1, pageable.size());  // touch every page
    std::memset(pinned.data(), 1, pinned.size());
    std::cerr << "  copies\n";
    h2d = measure_copy(s, dev.data(), pinned.data(), cudaMemcpyHostToDevice, sizes, reps);
    d2h = measure_copy(s, pinned.data(), dev.data(), cudaMemcpyDeviceToHost, sizes, reps);
    h2d_pageable =
        measure_copy(s, dev.data(), pageable.data(), cudaMemcpyHostToDevice, sizes, reps);
    d2h_pageable =
        measure_copy(s, pageable.data(), dev.data(), cudaMemcpyDeviceToHost, sizes, reps);
  }
  raw["h2d_pinned"] = h2d.to_json();
  raw["d2h_pinned"] = d2h.to_json();
  raw["h2d_pageable"] = h2d_pageable.to_json();
  raw["d2h_pageable"] = d2h_pageable.to_json();
  const double pageable_factor = std::clamp(
      0.5 * (h2d_pageable.gbps() / h2d.gbps() + d2h_pageable.gbps() / d2h.gbps()), 0.01, 1.0);

  // ---- launch, event, stream ----
  std::cerr << "  launch, event, stream, malloc\n";
  std::vector<double> launch;
  for (int b = 0; b < 5; ++b) {
    const int n = 2000;
    GPUMUX_CUDA_TRY(cudaStreamSynchronize(s));
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) {
      GPUMUX_CUDA_TRY(static_cast<cudaError_t>(gpumux_noop(s)));
    }
    launch.push_back(static_cast<double>(host_ns(t0, Clock::now())) / n);
    GPUMUX_CUDA_TRY(cudaStreamSynchronize(s));
  }
  std::vector<double> event;
  {
    cudaEvent_t e = nullptr;
    GPUMUX_CUDA_TRY(cudaEventCreate(&e));
    for (int i = 0; i < 200; ++i) {
      const auto t0 = Clock::now();
      GPUMUX_CUDA_TRY(cudaEventRecord(e, s));
      GPUMUX_CUDA_TRY(cudaEventSynchronize(e));
      event.push_back(static_cast<double>(host_ns(t0, Clock::now())));
    }
    (void)cudaEventDestroy(e);
  }
  std::vector<double> stream_create;
  for (int i = 0; i < 100; ++i) {
    cudaStream_t t = nullptr;
    const auto t0 = Clock::now();
    GPUMUX_CUDA_TRY(cudaStreamCreateWithPriority(&t, cudaStreamNonBlocking, 0));
    stream_create.push_back(static_cast<double>(host_ns(t0, Clock::now())));
    GPUMUX_CUDA_TRY(cudaStreamDestroy(t));
  }
  raw["launch_ns"] = launch;
  raw["event_ns_median"] = median(event);
  raw["stream_create_ns_median"] = median(stream_create);

  // ---- cudaMalloc / cudaFree / pinning ----
  std::vector<double> malloc_gib, malloc_ns, free_ns;
  for (std::size_t b = std::size_t{1} << 20; b <= max_bytes; b *= 4) {
    std::vector<double> m, f;
    for (int r = 0; r < reps; ++r) {
      void* p = nullptr;
      const auto t0 = Clock::now();
      GPUMUX_CUDA_ALLOC_TRY(cudaMalloc(&p, b), b);
      const auto t1 = Clock::now();
      GPUMUX_CUDA_TRY(cudaFree(p));
      const auto t2 = Clock::now();
      m.push_back(static_cast<double>(host_ns(t0, t1)));
      f.push_back(static_cast<double>(host_ns(t1, t2)));
    }
    malloc_gib.push_back(static_cast<double>(b) / kGiB);
    malloc_ns.push_back(median(m));
    free_ns.push_back(median(f));
  }
  const LineFit malloc_fit = fit_line(malloc_gib, malloc_ns, false);
  double pin_per_gib = 0;
  {
    const std::size_t b = std::size_t{256} << 20;
    const auto t0 = Clock::now();
    PinnedBuffer p(b);
    pin_per_gib = static_cast<double>(host_ns(t0, Clock::now())) * kGiB / static_cast<double>(b);
  }
  raw["malloc"] = {{"gib", malloc_gib},
                   {"malloc_ns", malloc_ns},
                   {"free_ns", free_ns},
                   {"base_ns", malloc_fit.intercept},
                   {"per_gib_ns", malloc_fit.slope},
                   {"max_rel_error", malloc_fit.max_rel_error}};
  raw["pin_per_gib_ns"] = pin_per_gib;

  // ---- per-layer times ----
  ModelCatalog catalog(options.models_dir);
  const std::vector<std::string> models = options.models.empty() ? catalog.names() : options.models;
  json calibrated = json::object();
  {
    CudaExecutorOptions eo;
    eo.precision = Precision::Fp32;
    CudaLayerExecutor exec(0, eo);
    for (const std::string& name : models) {
      const Model& m = catalog.at(name);
      for (const unsigned batch : options.batches) {
        std::cerr << "  " << name << " batch " << batch << '\n';
        calibrated[name][std::to_string(batch)] =
            layer_times(exec, m, batch, s, quick ? 1 : 2, reps);
      }
    }
  }
  GPUMUX_CUDA_TRY(cudaStreamDestroy(s));

  // ---- platform cuda's round trip between dependent ops (D33) ----
  std::cerr << "  host round trip\n";
  const json round_trip =
      measure_host_round_trip(load_device_profile(options.base_profile), quick ? 300 : 1000);
  raw["host_round_trip"] = round_trip;

  // ---- the profile ----
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
  profile["name"] = stem;
  profile["display_name"] = profile.value("display_name", std::string()) + " [calibrated on " +
                            std::string(prop.name) + "]";
  set("", "memory_bytes", static_cast<std::uint64_t>(prop.totalGlobalMem),
      "cudaGetDeviceProperties");
  set("", "sm_count", prop.multiProcessorCount, "cudaGetDeviceProperties");
  set("link", "h2d_gbps", h2d.gbps(), "least-squares fit, pinned, events around cudaMemcpyAsync");
  set("link", "d2h_gbps", d2h.gbps(), "least-squares fit, pinned");
  set("link", "h2d_latency_ns", ns(h2d.fit.intercept), "intercept of the pinned H2D fit");
  set("link", "d2h_latency_ns", ns(d2h.fit.intercept), "intercept of the pinned D2H fit");
  set("link", "pageable_factor", pageable_factor,
      "pageable / pinned fitted bandwidth, mean of directions");
  set("kernels", "launch_ns", ns(median(launch)), "host time per empty-kernel launch");
  if (!ctx.empty()) {
    set("runtime", "context_create_ns", ns(static_cast<double>(median(ctx))),
        "cudaFree(0) in a fresh child process (driver init + context + lazy module load)");
  }
  set("runtime", "stream_create_ns", ns(median(stream_create)), "cudaStreamCreateWithPriority");
  set("runtime", "malloc_base_ns", ns(malloc_fit.intercept), "cudaMalloc fit, 1 MiB .. max size");
  set("runtime", "malloc_per_gib_ns", ns(malloc_fit.slope), "cudaMalloc fit slope");
  set("runtime", "free_ns", ns(median(free_ns)), "cudaFree, median over sizes");
  set("runtime", "event_ns", ns(median(event)), "cudaEventRecord + cudaEventSynchronize");
  set("runtime", "pin_per_gib_ns", ns(pin_per_gib), "cudaHostAlloc of 256 MiB");
  set("runtime", "host_round_trip_ns", ns(round_trip["median_ns"].get<double>()),
      "platform cuda: median gap between 4 KiB copies queued on one stream with one op in "
      "flight (round_trip_calibration.hpp)");
  std::string command = "gpumux calibrate --device " + options.device_name;
  if (quick) command += " --quick";
  profile["provenance"] = command + " on " + gpu + ", " + when;
  profile["calibrated"] = calibrated;
  profile["calibrated_precision"] = "fp32";  // the executor options above (D37)
  raw["command"] = command;
  raw["wall_s"] = static_cast<double>(host_ns(t_begin, Clock::now())) * 1e-9;
  profile["calibration"] = raw;

  // Written to a name of gpumux's own beside the target (never a user's "x.json.tmp"),
  // exclusively and without following links, synced, checked, and only then renamed over the
  // target, which is looked at again first: the run takes minutes.
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
  std::cout << "wrote " << options.out_file.string() << " (" << models.size() << " models, "
            << raw["wall_s"].get<double>() << " s)\n";
  return 0;
}

}  // namespace gpumux
