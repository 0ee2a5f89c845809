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

CudaPlatform::CudaPlatform(const PlatformSetup& setup) {
  // Parameters first: a bad config is a ConfigError (exit 2) even on a machine without a GPU.
  const CudaPlatformParams params = parse_cuda_platform_params(setup);
  if (setup.profiles.size() > kMaxDevices) {
    throw std::invalid_argument("platform cuda: too many devices");
  }

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

  store_ = std::make_unique<PinnedWeightStore>();
  if (setup.models != nullptr) {
    for (const auto& n : params.preload) {
      // At the largest size a load of the workload copies (a training load also copies the
      // gradients and optimizer slots): growing the buffer later would page-lock at run time.
      const Model& m = setup.models->at(n);
      std::uint64_t bytes = m.weight_bytes();
      for (const ModelUse& u : setup.workload_uses) {
        if (u.model == n) bytes = std::max(bytes, m.weight_bytes() * u.state_factor);
      }
      (void)store_->pinned(m, bytes);
    }
  }

  // The physical GPU of each GPU profile, and how many profiles share each GPU.
  std::vector<int> ordinal_of(setup.profiles.size(), -1);
  std::map<int, std::uint64_t> sharing;
  for (std::size_t i = 0, gpu_index = 0; i < setup.profiles.size(); ++i) {
    if (setup.profiles[i].kind == DeviceKind::Cpu) continue;
    ordinal_of[i] = gpu_index < params.gpus.size() ? params.gpus[gpu_index]
                                                   : static_cast<int>(gpu_index) % count;
    ++gpu_index;
    ++sharing[ordinal_of[i]];
  }
  const auto margin = static_cast<std::uint64_t>(std::llround(params.margin_gib * kGiB));
  // Default arenas of profiles sharing one GPU split its free memory evenly, keeping a margin
  // for each one's executor (the first would otherwise take it all and leave the others none).
  std::map<int, std::uint64_t> shared_cap;
  for (const auto& [ordinal, n] : sharing) {
    if (n > 1) {
      const std::uint64_t usable = CudaArena::fit(ordinal, ~std::uint64_t{0}, margin * n);
      shared_cap[ordinal] = usable / n & ~((std::uint64_t{1} << 20) - 1);
    }
  }

  std::set<int> ordinals;
  gpus_.assign(setup.profiles.size(), nullptr);
  for (std::size_t i = 0; i < setup.profiles.size(); ++i) {
    const DeviceId id{static_cast<std::uint16_t>(i)};
    const DeviceProfile& p = setup.profiles[i];
    if (p.kind == DeviceKind::Cpu) {
      EmulatedDeviceOptions o;
      o.cpu_region_bytes = static_cast<std::size_t>(params.cpu_region_mib) * kMiB;
      devices_.push_back(std::make_unique<EmulatedDevice>(id, p, runtime_, *store_, o));
      continue;
    }
    CudaDeviceOptions o;
    o.ordinal = ordinal_of[i];
    o.arena_bytes = static_cast<std::uint64_t>(std::llround(params.arena_gib * kGiB));
    if (o.arena_bytes == 0 && shared_cap.count(o.ordinal) > 0) {
      o.arena_bytes = std::min(p.memory_bytes, shared_cap[o.ordinal]);
    }
    o.margin_bytes = margin;
    o.executor.precision = params.precision;
    o.executor.workspace_bytes = static_cast<std::size_t>(params.workspace_mib) * kMiB;
    o.fault_at_op = params.fault_at_op;
    auto dev = std::make_unique<CudaDevice>(id, p, runtime_, *store_, o);
    gpus_[i] = dev.get();
    ordinals.insert(o.ordinal);
    devices_.push_back(std::move(dev));
  }
  // Peer access between distinct GPUs, where the hardware allows it (else copies are staged).
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

  description_ = "cuda (";
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    if (i > 0) description_ += "; ";
    if (gpus_[i] != nullptr) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "arena %.2f GiB",
                    static_cast<double>(gpus_[i]->arena().capacity()) / kGiB);
      description_ += "GPU " + std::to_string(gpus_[i]->ordinal()) + ": " +
                      describe_gpu(gpus_[i]->ordinal()) + ", " + buf;
    } else {
      description_ += "CPU: " + devices_[i]->profile().name + " (Eigen)";
    }
  }
  description_ += "; precision " + std::string(to_string(params.precision)) + ")";

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
