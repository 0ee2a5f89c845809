// fakecuda's devices, engines and the test-facing control API (fakecuda.hpp).
#include "fake_state.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

namespace gpumux::fakecuda::detail {

namespace {

/// GPUMUX_FAKECUDA_FAULT=launch:N | copy:N | alloc:N (for programs a test starts).
void fault_from_environment(State& s) {
  const char* env = std::getenv("GPUMUX_FAKECUDA_FAULT");
  if (env == nullptr) return;
  const std::string v(env);
  const auto colon = v.find(':');
  if (colon == std::string::npos) return;
  const std::string kind = v.substr(0, colon);
  const std::uint64_t n = std::strtoull(v.c_str() + colon + 1, nullptr, 10);
  if (n == 0) return;
  s.fault = kind == "launch"  ? FaultKind::Launch
            : kind == "copy"  ? FaultKind::Copy
            : kind == "alloc" ? FaultKind::Alloc
                              : FaultKind::None;
  s.fault_countdown = n;
}

}  // namespace

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

State::State() {
  fault_from_environment(*this);
  start_engines(options.devices);
}

State::~State() {
  std::unique_lock<std::mutex> lock(mutex);
  stop_engines(lock);
}

State& state() {
  static State s;
  return s;
}

int& current_device() {
  thread_local int device = 0;
  return device;
}

cudaError_t sticky(int device) {
  State& s = state();
  if (device < 0 || static_cast<std::size_t>(device) >= s.devices.size()) return cudaSuccess;
  return s.devices[static_cast<std::size_t>(device)]->sticky;
}

bool State::count_and_check(FaultKind kind) {
  switch (kind) {
    case FaultKind::Launch:
      ++counts.launches;
      break;
    case FaultKind::Copy:
      ++counts.copies;
      break;
    case FaultKind::Alloc:
      ++counts.allocations;
      break;
    case FaultKind::None:
      return false;
  }
  if (fault != kind || fault_countdown == 0) return false;
  return --fault_countdown == 0;
}

void State::enqueue(std::unique_lock<std::mutex>& lock, CUstream_st* s, Task t) {
  Device& d = *devices[static_cast<std::size_t>(s->device)];
  if (s->blocking) {
    const auto ordered = [&] {
      if (d.sticky != cudaSuccess) return true;
      if (s != &d.null_stream) return d.null_stream.queue.empty();
      return std::all_of(d.streams.begin(), d.streams.end(), [&](const CUstream_st* o) {
        return o == s || !o->blocking || o->queue.empty();
      });
    };
    changed.wait(lock, ordered);
  }
  if (d.sticky != cudaSuccess) return;  // faulted while it waited: never runs
  t.seq = next_seq++;
  s->queue.push_back(std::move(t));
  changed.notify_all();
}

void State::set_sticky(Device& d, cudaError_t e) {
  if (d.sticky == cudaSuccess) d.sticky = e;
  for (CUstream_st* s : d.streams) {
    // A running head is finished by its engine; everything behind it never runs.
    while (s->queue.size() > (s->running ? 1U : 0U)) s->queue.pop_back();
  }
  changed.notify_all();
}

bool State::drained(const CUstream_st* s) const {
  return s->queue.empty() || devices[static_cast<std::size_t>(s->device)]->sticky != cudaSuccess;
}

void State::advance_markers(Device& d) {
  bool any = false;
  bool progress = true;
  while (progress) {
    progress = false;
    for (CUstream_st* s : d.streams) {
      while (!s->running && !s->queue.empty() && s->queue.front().engine == Engine::Marker) {
        Task& t = s->queue.front();
        if (t.record != nullptr) {
          t.record->completed = std::max(t.record->completed, t.gen);
          t.record->when = std::chrono::steady_clock::now();
        } else if (t.wait != nullptr && t.wait->completed < t.gen) {
          break;  // waits for another stream (any device)
        }
        s->queue.pop_front();
        progress = any = true;
      }
    }
  }
  if (any) changed.notify_all();  // only on progress: the engines would wake each other forever
}

void State::engine_loop(int device, Engine engine) {
  std::unique_lock<std::mutex> lock(mutex);
  Device& d = *devices[static_cast<std::size_t>(device)];
  while (!stopping) {
    advance_markers(d);
    CUstream_st* best = nullptr;
    if (!d.held && d.sticky == cudaSuccess) {
      for (CUstream_st* s : d.streams) {
        if (s->running || s->queue.empty() || s->queue.front().engine != engine) continue;
        if (best == nullptr || s->priority < best->priority ||
            (s->priority == best->priority && s->queue.front().seq < best->queue.front().seq)) {
          best = s;
        }
      }
    }
    if (best == nullptr) {
      changed.wait(lock);
      continue;
    }
    best->running = true;
    Task& head = best->queue.front();
    const bool fault = head.fault;
    std::function<void()> work = std::move(head.work);
    const std::uint64_t ns = head.ns;
    lock.unlock();
    const std::uint64_t t0 = now_ns();
    if (!fault && work) work();
    if (!fault && ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
    const std::uint64_t t1 = now_ns();
    lock.lock();
    best->running = false;
    best->queue.pop_front();
    if (fault) {
      set_sticky(d, cudaErrorIllegalAddress);
    } else {
      const char kind = engine == Engine::Compute ? 'k' : engine == Engine::Copy ? 'c' : 'h';
      log.push_back(Executed{device, best->priority, best->number, t0, t1, kind});
    }
    changed.notify_all();
  }
}

void State::start_engines(int count) {
  for (int i = 0; i < count; ++i) {
    auto d = std::make_unique<Device>();
    d->null_stream.device = i;
    d->streams.push_back(&d->null_stream);
    d->peer_enabled.assign(static_cast<std::size_t>(count), false);
    devices.push_back(std::move(d));
  }
  for (int i = 0; i < count; ++i) {
    for (const Engine e : {Engine::Compute, Engine::Copy, Engine::Host}) {
      devices[static_cast<std::size_t>(i)]->engines.emplace_back(
          [this, i, e] { engine_loop(i, e); });
    }
  }
}

void State::stop_engines(std::unique_lock<std::mutex>& lock) {
  stopping = true;
  changed.notify_all();
  std::vector<std::thread> threads;
  for (auto& d : devices) {
    for (auto& t : d->engines) threads.push_back(std::move(t));
  }
  lock.unlock();
  for (auto& t : threads) t.join();
  lock.lock();
  stopping = false;
}

}  // namespace gpumux::fakecuda::detail

namespace gpumux::fakecuda {

using detail::state;

void reset(const Options& options) {
  detail::State& s = state();
  std::unique_lock<std::mutex> lock(s.mutex);
  const bool same_devices = options.devices == s.options.devices;
  if (!same_devices) {
    // Streams of the old devices must be gone (a test resets between platforms).
    s.stop_engines(lock);
    s.devices.clear();
    s.start_engines(std::clamp(options.devices, 1, 8));
  }
  s.options = options;
  s.options.devices = std::clamp(options.devices, 1, 8);
  for (auto& d : s.devices) {
    d->sticky = cudaSuccess;
    d->held = false;
  }
  s.fault = FaultKind::None;
  s.fault_countdown = 0;
  const std::uint64_t in_use = s.counts.device_bytes_in_use;
  s.counts = Counters{};
  s.counts.device_bytes_in_use = in_use;
  s.log.clear();
  s.gemms.clear();
  detail::thread_local_error() = cudaSuccess;  // the caller's; other threads keep theirs
  s.changed.notify_all();
}

void inject_fault(FaultKind kind, std::uint64_t nth) {
  detail::State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.fault = nth == 0 ? FaultKind::None : kind;
  s.fault_countdown = nth;
}

void hold(int device, bool held) {
  detail::State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (device < 0 || static_cast<std::size_t>(device) >= s.devices.size()) return;
  s.devices[static_cast<std::size_t>(device)]->held = held;
  s.changed.notify_all();
}

Counters counters() {
  detail::State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  return s.counts;
}

std::vector<Executed> execution_log() {
  detail::State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  return s.log;
}

std::vector<GemmCall> gemm_calls() {
  detail::State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  return s.gemms;
}

}  // namespace gpumux::fakecuda
