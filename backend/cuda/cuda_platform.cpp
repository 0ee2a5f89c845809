#include "gpumux/backend/cuda/cuda_platform.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/ids.hpp"
#include "gpumux/backend/cuda/cuda_check.hpp"
#include "gpumux/backend/cuda/warm_up.hpp"
#include "gpumux/backend/cuda_platform_params.hpp"
#include "gpumux/backend/emulated_device.hpp"
#include "gpumux/backend/emulated_platform.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

std::string driver_release() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return "unknown";
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  ..." or, for the open
  // modules, "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  ...": the
  // first word made of digits and at least one dot.
  std::istringstream words(line);
  std::string w;
  while (words >> w) {
    const bool digits_and_dots = w.find_first_not_of("0123456789.") == std::string::npos;
    if (digits_and_dots && w.find('.') != std::string::npos && std::isdigit(w.front()) != 0) {
      return w;
    }
  }
  return "unknown";
}

}  // namespace

int cuda_device_count() noexcept {
  int count = 0;
  const cudaError_t st = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  return st == cudaSuccess ? count : 0;
}

std::string describe_gpu(int ordinal) {
  cudaDeviceProp prop{};
  GPUMUX_CUDA_TRY(cudaGetDeviceProperties(&prop, ordinal));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(prop.totalGlobalMem) / kGiB);
  return std::string(prop.name) + " (" + std::to_string(prop.multiProcessorCount) + " SMs, " + buf +
         ", cc " + std::to_string(prop.major) + "." + std::to_string(prop.minor) + "), driver " +
         driver_release() + ", " + cuda_versions();
}

namespace {

// ---- the constructor's steps ----

/// The number of GPUs of this machine. Throws DeviceUnavailable when there is none, and
/// ConfigError for a GPU of platform_params.gpus that does not exist.
int usable_gpu_count(const PlatformSetup& setup, const CudaPlatformParams& params) {
  int count = 0;
  const cudaError_t st = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  if (st != cudaSuccess || count == 0) {
    const std::string why = st != cudaSuccess
                                ? std::string(cudaGetErrorName(st)) + ": " + cudaGetErrorString(st)
                                : std::string("0 devices");
    throw DeviceUnavailable(
        "platform 'cuda': no usable GPU on this machine (cudaGetDeviceCount: " + why +
        "); run on a machine with an NVIDIA GPU and driver, or use platform 'emulated' or 'sim'");
  }
  for (const int g : params.gpus) {
    if (g >= count) {
      throw ConfigError(setup.config_file, "platform_params.gpus",
                        "GPU " + std::to_string(g) + " does not exist (this machine has " +
                            std::to_string(count) + ")");
    }
  }
  return count;
}

/// Pins the weight stores of the models of platform_params.preload.
void preload_weights(PinnedWeightStore& store, const PlatformSetup& setup,
                     const CudaPlatformParams& params) {
  if (setup.models == nullptr) return;
  for (const auto& n : params.preload) {
    // At the largest size a load of the workload copies (a training load also copies the
    // gradients and optimizer slots): growing the buffer later would page-lock at run time.
    const Model& m = setup.models->at(n);
    std::uint64_t bytes = m.weight_bytes();
    for (const ModelUse& u : setup.workload_uses) {
      if (u.model == n) bytes = std::max(bytes, m.weight_bytes() * u.state_factor);
    }
    (void)store.pinned(m, bytes);
  }
}

/// Where the GPU profiles run, and the default arena size of GPUs that several of them share.
struct GpuAssignment {
  std::vector<int> ordinal_of;              ///< physical GPU of each setup profile (-1: a CPU)
  std::map<int, std::uint64_t> shared_cap;  ///< by ordinal, for GPUs shared by 2+ profiles
  std::uint64_t margin = 0;                 ///< device memory left outside each arena
};

GpuAssignment assign_gpus(const PlatformSetup& setup, const CudaPlatformParams& params, int count) {
  GpuAssignment out;
  // The physical GPU of each GPU profile, and how many profiles share each GPU.
  out.ordinal_of.assign(setup.profiles.size(), -1);
  std::map<int, std::uint64_t> sharing;
  for (std::size_t i = 0, gpu_index = 0; i < setup.profiles.size(); ++i) {
    if (setup.profiles[i].kind == DeviceKind::Cpu) continue;
    out.ordinal_of[i] = gpu_index < params.gpus.size() ? params.gpus[gpu_index]
                                                       : static_cast<int>(gpu_index) % count;
    ++gpu_index;
    ++sharing[out.ordinal_of[i]];
  }
  out.margin = static_cast<std::uint64_t>(std::llround(params.margin_gib * kGiB));
  // Default arenas of profiles sharing one GPU split its free memory evenly, keeping a margin
  // for each one's executor (the first would otherwise take it all and leave the others none).
  for (const auto& [ordinal, n] : sharing) {
    if (n > 1) {
      const std::uint64_t usable = CudaArena::fit(ordinal, ~std::uint64_t{0}, out.margin * n);
      out.shared_cap[ordinal] = usable / n & ~((std::uint64_t{1} << 20) - 1);
    }
  }
  return out;
}

/// Creates one device per setup profile, in order: an EmulatedDevice for a CPU, a CudaDevice
/// (also in `gpus`, by setup index) for a GPU. Returns the physical GPUs used.
std::set<int> create_devices(const PlatformSetup& setup, const CudaPlatformParams& params,
                             const GpuAssignment& assigned, RealRuntime& runtime,
                             PinnedWeightStore& store,
                             std::vector<std::unique_ptr<Device>>& devices,
                             std::vector<CudaDevice*>& gpus) {
  std::set<int> ordinals;
  for (std::size_t i = 0; i < setup.profiles.size(); ++i) {
    const DeviceId id{static_cast<std::uint16_t>(i)};
    const DeviceProfile& p = setup.profiles[i];
    if (p.kind == DeviceKind::Cpu) {
      EmulatedDeviceOptions o;
      o.cpu_region_bytes = static_cast<std::size_t>(params.cpu_region_mib) * kMiB;
      devices.push_back(std::make_unique<EmulatedDevice>(id, p, runtime, store, o));
      continue;
    }
    CudaDeviceOptions o;
    o.ordinal = assigned.ordinal_of[i];
    o.arena_bytes = static_cast<std::uint64_t>(std::llround(params.arena_gib * kGiB));
    if (o.arena_bytes == 0 && assigned.shared_cap.count(o.ordinal) > 0) {
      o.arena_bytes = std::min(p.memory_bytes, assigned.shared_cap.at(o.ordinal));
    }
    o.margin_bytes = assigned.margin;
    o.executor.precision = params.precision;
    o.executor.workspace_bytes = static_cast<std::size_t>(params.workspace_mib) * kMiB;
    o.fault_at_op = params.fault_at_op;
    auto dev = std::make_unique<CudaDevice>(id, p, runtime, store, o);
    gpus[i] = dev.get();
    ordinals.insert(o.ordinal);
    devices.push_back(std::move(dev));
  }
  return ordinals;
}

/// Peer access between distinct GPUs, where the hardware allows it (else copies are staged).
void enable_peer_access(const std::set<int>& ordinals) {
  for (const int a : ordinals) {
    for (const int b : ordinals) {
      if (a == b) continue;
      int can = 0;
      GPUMUX_CUDA_TRY(cudaDeviceCanAccessPeer(&can, a, b));
      if (can == 0) continue;
      GPUMUX_CUDA_TRY(cudaSetDevice(a));
      const cudaError_t pe = cudaDeviceEnablePeerAccess(b, 0);
      if (pe != cudaSuccess && pe != cudaErrorPeerAccessAlreadyEnabled) GPUMUX_CUDA_TRY(pe);
      (void)cudaGetLastError();
    }
  }
}

/// "cuda (GPU 0: <describe_gpu>, arena 70.00 GiB; CPU: <profile> (Eigen); precision fp32)".
std::string platform_description(const std::vector<std::unique_ptr<Device>>& devices,
                                 const std::vector<CudaDevice*>& gpus, Precision precision) {
  std::string out = "cuda (";
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (i > 0) out += "; ";
    if (gpus[i] != nullptr) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "arena %.2f GiB",
                    static_cast<double>(gpus[i]->arena().capacity()) / kGiB);
      out += "GPU " + std::to_string(gpus[i]->ordinal()) + ": " + describe_gpu(gpus[i]->ordinal()) +
             ", " + buf;
    } else {
      out += "CPU: " + devices[i]->profile().name + " (Eigen)";
    }
  }
  out += "; precision " + std::string(to_string(precision)) + ")";
  return out;
}

}  // namespace

CudaPlatform::CudaPlatform(const PlatformSetup& setup) {
  // Parameters first: a bad config is a ConfigError (exit 2) even on a machine without a GPU.
  const CudaPlatformParams params = parse_cuda_platform_params(setup);
  if (setup.profiles.size() > kMaxDevices) {
    throw std::invalid_argument("platform cuda: too many devices");
  }
  const int count = usable_gpu_count(setup, params);
  store_ = std::make_unique<PinnedWeightStore>();
  preload_weights(*store_, setup, params);
  const GpuAssignment assigned = assign_gpus(setup, params, count);
  gpus_.assign(setup.profiles.size(), nullptr);
  const std::set<int> ordinals =
      create_devices(setup, params, assigned, runtime_, *store_, devices_, gpus_);
  enable_peer_access(ordinals);
  for (CudaDevice* g : gpus_) {
    if (g != nullptr) g->set_peers(gpus_);
  }

  if (params.warmup && setup.models != nullptr) {
    for (CudaDevice* g : gpus_) {
      if (g != nullptr) {
        warm_up(g->executor(), g->ordinal(), *setup.models, setup.workload_uses, g->arena_base(),
                g->arena().capacity());
      }
    }
  }
  description_ = platform_description(devices_, gpus_, params.precision);

  runtime_.reset_origin();  // time 0 is now, after the slow set-up
  for (CudaDevice* g : gpus_) {
    if (g != nullptr) g->sync_clock();
  }
}

CudaPlatform::~CudaPlatform() {
  for (auto& d : devices_) {
    if (auto* e = dynamic_cast<EmulatedDevice*>(d.get())) e->shutdown();
  }
  devices_.clear();  // GPUs synchronise and release before the pinned store goes
}

std::vector<Device*> CudaPlatform::devices() noexcept {
  return device_pointers(devices_);
}

CudaDevice* CudaPlatform::gpu(std::size_t i) noexcept {
  return i < gpus_.size() ? gpus_[i] : nullptr;
}

std::string CudaPlatform::describe() const {
  const LatenessStats s = runtime_.lateness();
  return s.count > 0 ? description_ + "; " + describe_lateness(s) : description_;
}

// Registered as "cuda" by the loader (backend/loader/cuda_module_loader.cpp), which creates
// it through cuda_module_api.cpp.

}  // namespace gpumux
