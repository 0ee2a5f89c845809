// A per-kernel, per-block reference model of one GPU context (streams, or MPS clients), used
// only by tests to check the analytic kernel-wait model (kernel_share.hpp).
//
// Rules (the hardware rule of kernel_share.hpp, with its NVIDIA sources): a stream's kernel becomes
// eligible when its predecessor in the stream has completed (plus the stream's launch gap);
// eligible kernels queue by (priority, higher first; then eligibility time; then stream); blocks of
// the kernel at the head of the queue are placed one per free SM, and the next kernel is considered
// only once the head is fully dispatched (so equal-priority work never overtakes); running blocks
// are never preempted. A kernel with B blocks on N SMs runs in ceil(B / N) waves; each block lasts
// duration / waves. Times in ns.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace gpumux::test {

struct RefKernel {
  std::uint32_t blocks = 1;   ///< SMs its grid needs for one full dispatch
  std::int64_t duration = 0;  ///< ns alone
};

struct RefStream {
  std::vector<RefKernel> kernels;
  int priority = 0;
  bool loop = false;            ///< restart at the first kernel after the last (training)
  std::int64_t start = 0;       ///< when its first kernel becomes eligible
  std::int64_t launch_gap = 0;  ///< host time between a kernel's completion and the next launch
};

/// Simulates until `until` or until every non-looping stream is done; returns, per stream,
/// the completion time of each kernel in order (looping streams: of every kernel run).
inline std::vector<std::vector<std::int64_t>> run_block_scheduler(std::vector<RefStream> streams,
                                                                  std::uint32_t sms,
                                                                  std::int64_t until) {
  struct State {
    std::size_t next = 0;           // index of the kernel to launch next
    std::int64_t eligible_at = -1;  // time the current kernel became eligible (-1: none)
    std::uint32_t unplaced = 0;     // blocks of the current kernel not yet placed
    std::uint32_t running = 0;      // blocks of the current kernel running
    std::int64_t block_ns = 0;
    bool done = false;
  };
  const std::size_t n = streams.size();
  std::vector<State> st(n);
  std::vector<std::vector<std::int64_t>> finished(n);
  using Finish = std::pair<std::int64_t, std::size_t>;  // (time, stream)
  std::priority_queue<Finish, std::vector<Finish>, std::greater<>> blocks;
  std::vector<std::int64_t> launches;  // pending eligibility times, for the event loop
  std::uint32_t free_sms = sms;

  const auto make_eligible = [&](std::size_t s, std::int64_t t) {
    State& x = st[s];
    if (x.next >= streams[s].kernels.size()) {
      if (!streams[s].loop) {
        x.done = true;
        return;
      }
      x.next = 0;
    }
    const RefKernel& k = streams[s].kernels[x.next];
    const std::uint32_t waves = (std::max<std::uint32_t>(k.blocks, 1) + sms - 1) / sms;
    x.eligible_at = t;
    x.unplaced = std::max<std::uint32_t>(k.blocks, 1);
    x.running = 0;
    x.block_ns = std::max<std::int64_t>(k.duration / waves, 1);
  };
  for (std::size_t s = 0; s < n; ++s) make_eligible(s, streams[s].start);

  std::int64_t now = 0;
  for (;;) {
    // Place blocks: queue order = priority desc, eligibility time, stream index.
    std::vector<std::size_t> order;
    for (std::size_t s = 0; s < n; ++s) {
      if (!st[s].done && st[s].unplaced > 0 && st[s].eligible_at <= now) order.push_back(s);
    }
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      if (streams[a].priority != streams[b].priority) {
        return streams[a].priority > streams[b].priority;
      }
      if (st[a].eligible_at != st[b].eligible_at) return st[a].eligible_at < st[b].eligible_at;
      return a < b;
    });
    for (std::size_t s : order) {
      State& x = st[s];
      const std::uint32_t place = std::min(x.unplaced, free_sms);
      for (std::uint32_t i = 0; i < place; ++i) blocks.emplace(now + x.block_ns, s);
      x.unplaced -= place;
      x.running += place;
      free_sms -= place;
      if (x.unplaced > 0) break;  // the head is not fully dispatched: nobody passes it
    }
    // Next event: a block finishing or a kernel becoming eligible.
    std::int64_t next = blocks.empty() ? INT64_MAX : blocks.top().first;
    for (std::size_t s = 0; s < n; ++s) {
      if (!st[s].done && st[s].unplaced > 0 && st[s].eligible_at > now) {
        next = std::min(next, st[s].eligible_at);
      }
    }
    if (next == INT64_MAX || next > until) break;
    now = next;
    while (!blocks.empty() && blocks.top().first == now) {
      const std::size_t s = blocks.top().second;
      blocks.pop();
      ++free_sms;
      State& x = st[s];
      --x.running;
      if (x.running == 0 && x.unplaced == 0) {  // kernel complete
        finished[s].push_back(now);
        ++x.next;
        make_eligible(s, now + streams[s].launch_gap);
      }
    }
    bool all_done = true;
    for (std::size_t s = 0; s < n; ++s) all_done = all_done && (st[s].done || streams[s].loop);
    if (all_done) break;
  }
  return finished;
}

}  // namespace gpumux::test
