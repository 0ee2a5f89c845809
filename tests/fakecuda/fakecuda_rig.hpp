// What the fakecuda tests of the CUDA backend share: a bounded wait (a hang fails the test
// instead of stalling the suite) and the ops they submit.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <thread>

#include "gpumux/api/op.hpp"
#include "gpumux/model/model.hpp"

namespace fakecuda_test {

/// Runs `f` on another thread; rethrows what it throws; ends the process with a message if it
/// takes longer than `limit` (it cannot be stopped, and waiting for it would hang the suite).
template <class F>
void within(std::chrono::seconds limit, F f) {
  auto task = std::make_shared<std::packaged_task<void()>>(std::move(f));
  std::future<void> done = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (done.wait_for(limit) != std::future_status::ready) {
    std::fprintf(stderr, "fakecuda test: still running after %lld s: a hang\n",
                 static_cast<long long>(limit.count()));
    std::_Exit(3);
  }
  done.get();
}

inline gpumux::OpSpec op(std::uint64_t id, std::uint32_t stream, gpumux::OpKind kind) {
  gpumux::OpSpec o;
  o.id = gpumux::OpId{id};
  o.job = gpumux::JobId{1};
  o.device = gpumux::DeviceId{0};
  o.stream = gpumux::StreamId{stream};
  o.kind = kind;
  return o;
}

/// A weight load of `layers` of `m` to `offset`.
inline gpumux::OpSpec load(std::uint64_t id, std::uint32_t stream, const gpumux::Model& m,
                           gpumux::LayerRange layers, std::uint64_t offset) {
  gpumux::OpSpec o = op(id, stream, gpumux::OpKind::CopyH2D);
  o.purpose = gpumux::OpPurpose::LoadWeights;
  o.model = &m;
  o.layers = layers;
  o.bytes = m.weight_bytes(layers);
  o.weight_offset = offset;
  return o;
}

/// An inference forward pass over `layers` of `m` at batch 1.
inline gpumux::OpSpec forward(std::uint64_t id, std::uint32_t stream, const gpumux::Model& m,
                              gpumux::LayerRange layers) {
  gpumux::OpSpec o = op(id, stream, gpumux::OpKind::Compute);
  o.purpose = gpumux::OpPurpose::Forward;
  o.model = &m;
  o.layers = layers;
  o.batch = 1;
  o.inference = true;
  return o;
}

}  // namespace fakecuda_test
