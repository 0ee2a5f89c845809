// fakecuda: the CUDA runtime entry points backend/cuda/ and tests/gpu use (fakecuda.hpp has
// the model). Every definition matches its declaration in cuda_runtime_api.h.
#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "fake_state.hpp"

using gpumux::fakecuda::FaultKind;
using gpumux::fakecuda::detail::current_device;
using gpumux::fakecuda::detail::Device;
using gpumux::fakecuda::detail::Engine;
using gpumux::fakecuda::detail::fail;
using gpumux::fakecuda::detail::State;
using gpumux::fakecuda::detail::state;
using gpumux::fakecuda::detail::sticky;
using gpumux::fakecuda::detail::Task;
using Lock = std::unique_lock<std::mutex>;

namespace gpumux::fakecuda::detail {

cudaError_t fail(cudaError_t e) {
  thread_local_error() = e;
  return e;
}

cudaError_t& thread_local_error() {
  thread_local cudaError_t last = cudaSuccess;
  return last;
}

CUstream_st* resolve(State& s, cudaStream_t stream) {
  if (stream != nullptr) return stream;
  const auto d = static_cast<std::size_t>(
      std::clamp<int>(current_device(), 0, static_cast<int>(s.devices.size()) - 1));
  return &s.devices[d]->null_stream;
}

cudaError_t enqueue_work(cudaStream_t stream, FaultKind kind, std::function<void()> work,
                         std::uint64_t ns) {
  State& s = state();
  Lock lock(s.mutex);
  CUstream_st* st = resolve(s, stream);
  if (const cudaError_t e = sticky(st->device); e != cudaSuccess) return fail(e);
  Task t;
  t.engine = kind == FaultKind::Copy ? Engine::Copy : Engine::Compute;
  t.fault = s.count_and_check(kind);
  t.work = std::move(work);
  t.ns = ns;
  s.enqueue(lock, st, std::move(t));
  return cudaSuccess;
}

}  // namespace gpumux::fakecuda::detail

using gpumux::fakecuda::detail::enqueue_work;
using gpumux::fakecuda::detail::resolve;

namespace {

void* map_bytes(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

/// Waits until `done` holds (under the lock) or the device faulted; returns the sticky error.
template <class Done>
cudaError_t wait_for(State& s, Lock& lock, int device, Done done) {
  s.changed.wait(lock, [&] { return done() || sticky(device) != cudaSuccess; });
  if (const cudaError_t e = sticky(device); e != cudaSuccess) return fail(e);
  return cudaSuccess;
}

bool idle(const CUstream_st* st) {
  return st->queue.empty() && !st->running;
}

std::uint64_t copy_ns(const State& s, std::size_t bytes) {
  return s.options.copy_gbps > 0
             ? static_cast<std::uint64_t>(static_cast<double>(bytes) / s.options.copy_gbps)
             : 0;
}

cudaError_t copy_async(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  std::uint64_t ns = 0;
  {
    State& s = state();
    const Lock lock(s.mutex);
    ns = copy_ns(s, bytes);
  }
  return enqueue_work(
      stream, FaultKind::Copy,
      [dst, src, bytes] {
        if (bytes > 0) std::memcpy(dst, src, bytes);
      },
      ns);
}

}  // namespace

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  State& s = state();
  const Lock lock(s.mutex);
  *count = static_cast<int>(s.devices.size());
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  State& s = state();
  const Lock lock(s.mutex);
  if (device < 0 || static_cast<std::size_t>(device) >= s.devices.size())
    return fail(cudaErrorInvalidDevice);
  current_device() = device;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  State& s = state();
  const Lock lock(s.mutex);
  if (device < 0 || static_cast<std::size_t>(device) >= s.devices.size())
    return fail(cudaErrorInvalidDevice);
  std::memset(prop, 0, sizeof *prop);
  std::strncpy(prop->name, "fakecuda CPU test double", sizeof prop->name - 1);
  prop->totalGlobalMem = s.options.memory_bytes;
  prop->multiProcessorCount = 132;  // H100 SXM5 (NVIDIA H100 datasheet): only printed
  prop->major = 9;
  prop->minor = 0;
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* version) {
  *version = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = CUDART_VERSION;
  return cudaSuccess;
}

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
      return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevice:
      return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle:
      return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady:
      return "cudaErrorNotReady";
    case cudaErrorIllegalAddress:
      return "cudaErrorIllegalAddress";
    case cudaErrorPeerAccessAlreadyEnabled:
      return "cudaErrorPeerAccessAlreadyEnabled";
    default:
      return "cudaErrorUnknown";
  }
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {  // CUDA's own texts
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInvalidDevice:
      return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle:
      return "invalid resource handle";
    case cudaErrorNotReady:
      return "device not ready";
    case cudaErrorIllegalAddress:
      return "an illegal memory access was encountered";
    case cudaErrorPeerAccessAlreadyEnabled:
      return "peer access is already enabled";
    default:
      return "unknown error";
  }
}

cudaError_t cudaGetLastError() {
  State& s = state();
  const Lock lock(s.mutex);
  if (const cudaError_t e = sticky(current_device()); e != cudaSuccess) return e;  // never cleared
  const cudaError_t e = gpumux::fakecuda::detail::thread_local_error();
  gpumux::fakecuda::detail::thread_local_error() = cudaSuccess;
  return e;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  *least = 0;  // CUDA 12 on the H100: 0 (least urgent) to -5 (most urgent)
  *greatest = -5;
  return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int* can, int device, int peer) {
  State& s = state();
  const Lock lock(s.mutex);
  const auto n = static_cast<int>(s.devices.size());
  if (device < 0 || peer < 0 || device >= n || peer >= n) return fail(cudaErrorInvalidDevice);
  *can = device != peer ? 1 : 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int /*flags*/) {
  State& s = state();
  const Lock lock(s.mutex);
  if (peer < 0 || static_cast<std::size_t>(peer) >= s.devices.size())
    return fail(cudaErrorInvalidDevice);
  Device& d = *s.devices[static_cast<std::size_t>(current_device())];
  if (d.peer_enabled[static_cast<std::size_t>(peer)])
    return fail(cudaErrorPeerAccessAlreadyEnabled);
  d.peer_enabled[static_cast<std::size_t>(peer)] = true;
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** ptr, size_t bytes) {
  State& s = state();
  const Lock lock(s.mutex);
  *ptr = nullptr;
  const int dev = current_device();
  if (const cudaError_t e = sticky(dev); e != cudaSuccess) return fail(e);
  if (bytes == 0) return cudaSuccess;
  Device& d = *s.devices[static_cast<std::size_t>(dev)];
  if (s.count_and_check(FaultKind::Alloc) || d.used + bytes > s.options.memory_bytes) {
    return fail(cudaErrorMemoryAllocation);
  }
  void* p = map_bytes(bytes);
  if (p == nullptr) return fail(cudaErrorMemoryAllocation);
  d.used += bytes;
  s.counts.device_bytes_in_use += bytes;
  s.device_memory[p] = {bytes, dev};
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  State& s = state();
  const Lock lock(s.mutex);
  if (ptr == nullptr) return cudaSuccess;
  const auto it = s.device_memory.find(ptr);
  if (it == s.device_memory.end()) return fail(cudaErrorInvalidValue);
  const auto [bytes, dev] = it->second;
  munmap(ptr, bytes);  // freed even after a fault: the double must not leak
  s.device_memory.erase(it);
  s.devices[static_cast<std::size_t>(dev)]->used -= bytes;
  s.counts.device_bytes_in_use -= bytes;
  if (const cudaError_t e = sticky(dev); e != cudaSuccess) return fail(e);
  return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** ptr, size_t bytes, unsigned int /*flags*/) {
  State& s = state();
  const Lock lock(s.mutex);
  *ptr = nullptr;
  if (s.count_and_check(FaultKind::Alloc)) return fail(cudaErrorMemoryAllocation);
  void* p = map_bytes(std::max<std::size_t>(bytes, 1));
  if (p == nullptr) return fail(cudaErrorMemoryAllocation);
  s.host_memory[p] = std::max<std::size_t>(bytes, 1);
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void* ptr) {
  State& s = state();
  const Lock lock(s.mutex);
  if (ptr == nullptr) return cudaSuccess;
  const auto it = s.host_memory.find(ptr);
  if (it == s.host_memory.end()) return fail(cudaErrorInvalidValue);
  munmap(ptr, it->second);
  s.host_memory.erase(it);
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
  State& s = state();
  const Lock lock(s.mutex);
  const Device& d = *s.devices[static_cast<std::size_t>(current_device())];
  *total = s.options.memory_bytes;
  *free_bytes = s.options.memory_bytes - d.used;
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority) {
  State& s = state();
  const Lock lock(s.mutex);
  const int dev = current_device();
  if (const cudaError_t e = sticky(dev); e != cudaSuccess) return fail(e);
  auto* st = new CUstream_st;
  st->device = dev;
  st->priority = std::clamp(priority, -5, 0);
  st->blocking = (flags & cudaStreamNonBlocking) == 0;
  st->number = s.next_stream++;
  s.devices[static_cast<std::size_t>(dev)]->streams.push_back(st);
  *stream = st;
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  return cudaStreamCreateWithPriority(stream, flags, 0);
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return cudaStreamCreateWithPriority(stream, 0, 0);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (stream == nullptr) return fail(cudaErrorInvalidResourceHandle);
  State& s = state();
  Lock lock(s.mutex);
  // CUDA returns at once and frees the stream when its work is done; waiting is the same to
  // a caller that never uses the stream again.
  s.changed.wait(lock, [&] {
    return !stream->running && (stream->queue.empty() || sticky(stream->device) != cudaSuccess);
  });
  auto& list = s.devices[static_cast<std::size_t>(stream->device)]->streams;
  list.erase(std::remove(list.begin(), list.end(), stream), list.end());
  const cudaError_t e = sticky(stream->device);
  delete stream;
  return e != cudaSuccess ? fail(e) : cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  State& s = state();
  Lock lock(s.mutex);
  CUstream_st* st = resolve(s, stream);
  return wait_for(s, lock, st->device, [st] { return idle(st); });
}

cudaError_t cudaDeviceSynchronize() {
  State& s = state();
  Lock lock(s.mutex);
  const int dev = current_device();
  const Device& d = *s.devices[static_cast<std::size_t>(dev)];
  return wait_for(s, lock, dev,
                  [&d] { return std::all_of(d.streams.begin(), d.streams.end(), idle); });
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  State& s = state();
  const Lock lock(s.mutex);
  if (const cudaError_t e = sticky(current_device()); e != cudaSuccess) return fail(e);
  *event = new CUevent_st;
  (*event)->device = current_device();
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (event == nullptr) return fail(cudaErrorInvalidResourceHandle);
  State& s = state();
  Lock lock(s.mutex);
  // A marker may still refer to it: wait until none does (the backend destroys idle events).
  const auto referenced = [&] {
    for (const auto& d : s.devices) {
      for (const CUstream_st* st : d->streams) {
        for (const Task& t : st->queue) {
          if (t.record == event || t.wait == event) return true;
        }
      }
    }
    return false;
  };
  s.changed.wait(lock, [&] { return !referenced(); });
  delete event;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  State& s = state();
  Lock lock(s.mutex);
  CUstream_st* st = resolve(s, stream);
  if (const cudaError_t e = sticky(st->device); e != cudaSuccess) return fail(e);
  Task t;
  t.record = event;
  t.gen = ++event->recorded;
  s.enqueue(lock, st, std::move(t));
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int /*flags*/) {
  State& s = state();
  Lock lock(s.mutex);
  CUstream_st* st = resolve(s, stream);
  if (const cudaError_t e = sticky(st->device); e != cudaSuccess) return fail(e);
  if (event->recorded == 0) return cudaSuccess;  // never recorded: nothing to wait for
  Task t;
  t.wait = event;
  t.gen = event->recorded;  // the work recorded so far, not later records
  s.enqueue(lock, st, std::move(t));
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  State& s = state();
  const Lock lock(s.mutex);
  if (const cudaError_t e = sticky(event->device); e != cudaSuccess) return fail(e);
  return event->completed >= event->recorded ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  State& s = state();
  Lock lock(s.mutex);
  return wait_for(s, lock, event->device, [event] { return event->completed >= event->recorded; });
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  State& s = state();
  const Lock lock(s.mutex);
  if (const cudaError_t e = sticky(end->device); e != cudaSuccess) return fail(e);
  if (start->recorded == 0 || end->recorded == 0) return fail(cudaErrorInvalidResourceHandle);
  if (start->completed < start->recorded || end->completed < end->recorded) {
    return fail(cudaErrorNotReady);
  }
  *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind /*kind*/,
                            cudaStream_t stream) {
  return copy_async(dst, src, bytes, stream);
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int /*dst_device*/, const void* src, int /*src_device*/,
                                size_t bytes, cudaStream_t stream) {
  return copy_async(dst, src, bytes, stream);
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (const cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, nullptr); e != cudaSuccess)
    return e;
  return cudaStreamSynchronize(nullptr);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user_data) {
  State& s = state();
  Lock lock(s.mutex);
  CUstream_st* st = resolve(s, stream);
  if (const cudaError_t e = sticky(st->device); e != cudaSuccess) return fail(e);
  Task t;
  t.engine = Engine::Host;
  t.work = [fn, user_data, &s] {
    {
      const Lock inner(s.mutex);
      ++s.counts.host_functions;
    }
    fn(user_data);
  };
  s.enqueue(lock, st, std::move(t));
  return cudaSuccess;
}

}  // extern "C"
