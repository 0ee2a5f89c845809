// CudaDevice, launcher side: what a launcher thread does with an op handed to it (host set-up,
// pinning, the CUDA calls that enqueue it, registration with the completion poller). The
// runtime side is cuda_device.cpp; cuda_device.hpp states the design and the thread rules.
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpumux/api/errors.hpp"
#include "gpumux/backend/cuda/cuda_check.hpp"
#include "gpumux/backend/cuda/cuda_device.hpp"
#include "gpumux/backend/layer_plan.hpp"
#include "gpumux/model/model.hpp"
#include "kernels.h"

namespace gpumux {

namespace {

using Clock = std::chrono::steady_clock;

/// Host sleeps (set-up, Host ops) poll the clock for their last 100 us instead of blocking: a
/// blocked thread wakes late by its wake-up latency (the runtime's timers, which block: mean
/// 8.5 us, p99 36 us late on the H100 machine, 2026-11-25), as long as a 7 us set-up itself.
constexpr std::chrono::nanoseconds kSpin{100'000};

}  // namespace

void CudaDevice::naive_allocations(const Launch& l) {
  // The naive framework path: one cudaMalloc per parameter/buffer tensor of the range, paid for
  // real; freed right away (gpumux keeps the data in the arena), and cudaFree synchronises.
  const Model& m = *l.spec.model;
  std::vector<void*> ptrs;
  try {
    for (std::uint32_t i = l.spec.layers.first; i < l.spec.layers.last; ++i) {
      const Layer& layer = m.layer(i);
      if (layer.tensors == 0) continue;
      const std::size_t bytes = std::max<std::size_t>(layer.weight_bytes / layer.tensors, 256);
      for (std::uint32_t t = 0; t < layer.tensors; ++t) {
        void* p = nullptr;
        GPUMUX_CUDA_ALLOC_TRY(cudaMalloc(&p, bytes), bytes);
        ptrs.push_back(p);
      }
    }
  } catch (...) {
    for (void* p : ptrs) (void)cudaFree(p);
    throw;
  }
  for (void* p : ptrs) GPUMUX_CUDA_TRY(cudaFree(p));
}

CudaDevice::HostSide CudaDevice::stage_host_memory(const Launch& l) {
  // Creating or growing a pinned buffer page-locks it (about 1 s per GiB, the profiles'
  // pin_per_gib_ns: 4 x 128 MiB of cudaHostAlloc took 503 ms in kekzl/imp#1653):
  // done here, before the op's start event, so a copy's measured time is the transfer alone.
  const OpSpec& op = l.spec;
  HostSide host;
  if (op.bytes == 0) return host;
  if (op.kind == OpKind::CopyH2D && op.purpose == OpPurpose::LoadWeights) {
    const std::uint64_t first = op.model->weight_bytes(LayerRange{0, op.layers.first});
    const std::span<const std::byte> w = op.pageable ? store_.pageable(*op.model, first + op.bytes)
                                                     : store_.pinned(*op.model, first + op.bytes);
    host.src = w.data() + first;
  } else if (op.kind == OpKind::CopyH2D) {
    host.src = state_.get(op.bytes).data();
  } else if (op.kind == OpKind::CopyD2H) {
    host.dst = state_.get(op.bytes).data();
  }
  return host;
}

void CudaDevice::enqueue_copy(const Launch& l, HostSide host) {
  const OpSpec& op = l.spec;
  std::uint64_t bytes = op.bytes;
  if (bytes == 0) return;
  const std::uint64_t dst_offset =
      !l.layer_offsets.empty() ? l.layer_offsets.front() : op.weight_offset;
  switch (op.kind) {
    case OpKind::CopyH2D: {
      const std::byte* src = host.src;
      std::byte* dst = arena_.address(
          op.purpose == OpPurpose::LoadWeights ? op.weight_offset : dst_offset, &bytes);
      GPUMUX_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, l.cuda));
      break;
    }
    case OpKind::CopyD2H: {
      const std::byte* src = arena_.address(op.source_offset, &bytes);
      GPUMUX_CUDA_TRY(cudaMemcpyAsync(host.dst, src, bytes, cudaMemcpyDeviceToHost, l.cuda));
      break;
    }
    case OpKind::CopyD2D: {
      const std::byte* src = arena_.address(op.source_offset, &bytes);
      const std::uint64_t off = std::min(dst_offset, l.peer_capacity);
      bytes = std::min(bytes, l.peer_capacity - off);
      std::byte* dst = l.peer_base + off;
      if (l.peer_ordinal != options_.ordinal) {
        GPUMUX_CUDA_TRY(
            cudaMemcpyPeerAsync(dst, l.peer_ordinal, src, options_.ordinal, bytes, l.cuda));
      } else {
        GPUMUX_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, l.cuda));
      }
      break;
    }
    default:
      break;
  }
}

void CudaDevice::enqueue_compute(const Launch& l) {
  const OpSpec& op = l.spec;
  const Model& m = *op.model;
  std::uint64_t act_bytes = (op.inference ? m.inference_activation_bytes_per_sample()
                                          : m.training_activation_bytes_per_sample()) *
                            op.batch;
  std::byte* act = nullptr;
  if (!l.layer_offsets.empty()) act = arena_.address(op.activation_offset, &act_bytes);
  auto memory_of = [&](std::uint32_t i) {
    LayerMemory mem;
    mem.activations = act;
    mem.activation_bytes = act != nullptr ? act_bytes : 0;
    if (l.layer_offsets.empty()) return mem;
    const std::uint64_t wb = m.layer(i).weight_bytes;
    std::uint64_t span = wb * l.state_factor;
    std::byte* base = arena_.address(l.layer_offsets[i - op.layers.first], &span);
    mem.weights = base;
    mem.weight_bytes = std::min(wb, span);
    if (l.state_factor >= 2 && span >= 2 * wb) mem.grads = base + wb;
    if (l.state_factor >= 3 && span >= 3 * wb) mem.slots = base + 2 * wb;
    return mem;
  };
  const CancelToken& cancel = *l.cancel;
  auto visit = [&](std::uint32_t i) {
    const Layer& layer = m.layer(i);
    if (!layer_runs(layer, op.inference)) return;
    const LayerMemory mem = memory_of(i);
    switch (op.pass) {
      case Pass::Forward:
        executor_.forward(m, i, op.batch, mem, l.cuda);
        break;
      case Pass::Backward:
        executor_.backward(m, i, op.batch, mem, l.cuda);
        break;
      case Pass::Update:
        executor_.update(mem, l.cuda);
        break;
    }
  };
  const LayerRange r{op.layers.first, std::min(op.layers.last, m.layer_count())};
  if (op.pass == Pass::Backward) {
    for (std::uint32_t i = r.last; i-- > r.first && !cancel.cancelled();) visit(i);
  } else {
    for (std::uint32_t i = r.first; i < r.last && !cancel.cancelled(); ++i) visit(i);
  }
}

void CudaDevice::enqueue_work(const Launch& l, HostSide host) {
  if (l.spec.kind == OpKind::Compute) {
    enqueue_compute(l);
  } else if (is_copy(l.spec.kind)) {
    enqueue_copy(l, host);
  }
}

void CudaDevice::launch(const Launch& l) noexcept {
  CudaDevice* dev = l.device;
  RealRuntime& rt = dev->runtime_;
  const std::uint32_t stream = l.stream, slot = l.slot;
  const std::uint64_t token = l.token;
  bool watched = false, enqueue_pending = false;
  try {
    if (l.cancel->cancelled()) {  // aborted before it reached the GPU: skip it
      rt.post([dev, stream, slot, token] { dev->on_enqueued(stream, slot, token, false, 0); });
      return;
    }
    if (l.spec.kind == OpKind::Host) {
      // Set-up first (a cancel during it: never started), then the op's own sleep.
      if (l.spec.setup_ns > 0 &&
          !l.cancel->sleep_until(Clock::now() + std::chrono::nanoseconds(l.spec.setup_ns), kSpin)) {
        const TimeNs t = rt.now();
        rt.post([dev, stream, slot, token, t] { dev->on_host_done(stream, slot, token, t, t); });
        return;
      }
      const Clock::time_point start = Clock::now();
      const TimeNs started = rt.to_ns(start);
      rt.post([dev, stream, slot, token, started] {
        dev->on_host_started(stream, slot, token, started);
      });
      (void)l.cancel->sleep_until(start + std::chrono::nanoseconds(l.spec.solo_ns), kSpin);
      const TimeNs t0 = rt.to_ns(start), t1 = rt.now();
      rt.post(
          [dev, stream, slot, token, t0, t1] { dev->on_host_done(stream, slot, token, t0, t1); });
      return;
    }
    if (l.spec.setup_ns > 0) {  // host-side set-up before the op starts, as in the simulator
      if (is_copy(l.spec.kind)) {
        dev->naive_allocations(l);
      } else if (!l.cancel->sleep_until(Clock::now() + std::chrono::nanoseconds(l.spec.setup_ns),
                                        kSpin)) {
        rt.post([dev, stream, slot, token] { dev->on_enqueued(stream, slot, token, false, 0); });
        return;
      }
    }
    const HostSide host = dev->stage_host_memory(l);  // before the start event
    for (const auto& dep : l.wait_for) GPUMUX_CUDA_TRY(cudaStreamWaitEvent(l.cuda, dep->end, 0));
    const TimeNs launched = rt.now();
    GPUMUX_CUDA_TRY(cudaEventRecord(l.events->start, l.cuda));
    if (dev->options_.fault_at_op >= 0 &&
        raw(l.spec.id) == static_cast<std::uint64_t>(dev->options_.fault_at_op)) {
      GPUMUX_CUDA_TRY(static_cast<cudaError_t>(gpumux_fault(l.cuda)));  // injected (tests)
    }
    dev->enqueue_work(l, host);
    GPUMUX_CUDA_TRY(cudaEventRecord(l.events->end, l.cuda));
    const OpId id = l.spec.id;
    const OpKind kind = l.spec.kind;
    // The on_enqueued post below is work still to come: the poller may see the op done (and
    // retire the hand-off's pending unit) before it is posted, and run() must not end then.
    rt.add_pending();
    enqueue_pending = true;
    // The callback holds the events: an aborted op's slot may be freed (and its events
    // pooled) while the GPU still runs it.
    dev->poller_.watch(stream, l.events->end,
                       [dev, stream, slot, token, id, kind, events = l.events](cudaError_t st) {
                         // Poller thread: no CUDA calls, only a post to the runtime.
                         RealRuntime& r = dev->runtime_;
                         if (st == cudaSuccess) {
                           const TimeNs seen = r.now();
                           r.post([dev, stream, slot, token, seen] {
                             dev->on_gpu_done(stream, slot, token, seen);
                           });
                           return;
                         }
                         r.post([dev, st, id, kind] {
                           dev->runtime_.done_pending();
                           throw CudaError("GPU " + std::to_string(dev->options_.ordinal) +
                                           ": op " + std::to_string(raw(id)) + " (" +
                                           std::string(to_string(kind)) + ") failed on the GPU: " +
                                           cudaGetErrorName(st) + ": " + cudaGetErrorString(st));
                         });
                       });
    watched = true;
    rt.post([dev, stream, slot, token, launched] {
      dev->on_enqueued(stream, slot, token, true, launched);
    });
  } catch (...) {
    // The failure surfaces on the runtime thread: run() throws it. A CUDA failure travels as
    // text, naming the op: the exception object stays on this thread (sharing it made
    // ThreadSanitizer report its message's reference-counted buffer, freed here while the
    // runtime thread read it).
    struct Failure {
      std::exception_ptr other;  ///< anything but a CUDA failure, rethrown as it is
      std::string cuda;          ///< a CudaError or OutOfMemory's message
      OpId id;
      OpKind kind;
      bool watched, enqueue_pending;
    };
    auto failure = std::make_shared<Failure>(
        Failure{nullptr, std::string(), l.spec.id, l.spec.kind, watched, enqueue_pending});
    try {
      throw;
    } catch (const CudaError& e) {
      failure->cuda = e.what();
    } catch (const OutOfMemory& e) {
      // Pinned staging that grew at run time: the run ends like any failed CUDA call (exit
      // 1), naming the op (OutOfMemory's message cannot take a prefix without repeating).
      failure->cuda = e.what();
    } catch (...) {
      failure->other = std::current_exception();
    }
    rt.post([dev, stream, failure] {
      dev->queues_.stream(stream).launching = false;
      if (!failure->watched) dev->runtime_.done_pending();
      if (failure->enqueue_pending) dev->runtime_.done_pending();  // no on_enqueued will come
      if (failure->other) std::rethrow_exception(failure->other);
      throw CudaError("GPU " + std::to_string(dev->options_.ordinal) + ": op " +
                      std::to_string(raw(failure->id)) + " (" +
                      std::string(to_string(failure->kind)) + "): " + failure->cuda);
    });
  }
}

}  // namespace gpumux
