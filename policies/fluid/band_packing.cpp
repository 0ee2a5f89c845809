// The band scheduler's Stage 1 packing, as the released code runs it; see band_packing.hpp.
#include "fluid/band_packing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>

namespace gpumux::policies::fluid {

namespace {

/// _mps_packing: serpentine GPUs, 0.6 share until the predecessors' time passes 50 %.
void mps_packing(const std::vector<double>& rt, std::uint32_t g, const BandKnobs& knobs,
                 std::vector<std::vector<BandSlot>>& sorted_slots) {
  const double total = std::accumulate(rt.begin(), rt.end(), 0.0);
  const double threshold = knobs.long_fraction * total;
  double before = 0.0;
  for (std::size_t k = 0; k < rt.size(); ++k) {
    const double share = before > threshold ? knobs.short_share : knobs.long_share;
    const bool odd = (k / g) % 2 == 1;
    const auto col = static_cast<std::uint32_t>(k % g);
    sorted_slots[k].push_back({odd ? g - 1 - col : col, share});
    before += rt[k];
  }
}

/// _dist_bin_packing: the top G//2 trials get int(t / S) GPUs, round-robin with wrap.
void dist_bin_packing(const std::vector<double>& rt, std::uint32_t g, const BandKnobs& knobs,
                      std::vector<std::vector<BandSlot>>& sorted_slots) {
  const std::size_t top = g / 2;
  const std::size_t smalls = g - top;
  double small_sum = 0.0;
  for (std::size_t i = 0; i < smalls; ++i) {
    if (knobs.intended_small_sum) {
      small_sum += rt[g - 1 - i];  // the `smalls` shortest (our reading of the intent)
    } else {
      small_sum += rt[i == 0 ? 0 : g - i];  // Python rt[-i]: rt[-0] is rt[0] (quirk q1)
    }
  }
  const auto cap = static_cast<std::int64_t>(std::min(knobs.max_worker, g));
  std::uint32_t next_gpu = 0;
  for (std::size_t k = 0; k < rt.size(); ++k) {
    std::int64_t res = 1;
    if (k < top) {
      res = static_cast<std::int64_t>(std::trunc(rt[k] / small_sum));  // Python int()
      res = std::max<std::int64_t>(std::min(cap, res), 1);
    }
    for (std::int64_t j = 0; j < res; ++j) {
      sorted_slots[k].push_back({next_gpu % g, 1.0});
      ++next_gpu;
    }
  }
}

/// _even_bin_packing: longer-than-mean trials get extra whole GPUs, contiguous from GPU 0.
void even_bin_packing(const std::vector<double>& rt, std::uint32_t g, const BandKnobs& knobs,
                      std::vector<std::vector<BandSlot>>& sorted_slots) {
  const auto n = static_cast<std::int64_t>(rt.size());
  const double mean = std::accumulate(rt.begin(), rt.end(), 0.0) / static_cast<double>(n);
  std::vector<bool> in_add(rt.size(), false);
  std::int64_t add_count = 0;
  for (std::size_t k = 0; k < rt.size(); ++k) {
    if (rt[k] > mean) {
      in_add[k] = true;
      ++add_count;
    }
  }
  const auto max_worker = static_cast<std::int64_t>(knobs.max_worker);
  // Quirk q3 (scheduler.py): subtracts the trial count, not the GPUs already handed out.
  std::int64_t extra = std::min(add_count * max_worker, static_cast<std::int64_t>(g)) - n;
  std::vector<std::int64_t> res(rt.size(), 1);
  // Terminates: extra <= |add| * MAX_WORKER - n <= |add| * (MAX_WORKER - 1), the room left in
  // the add trials below the cap (|add| <= n).
  for (std::size_t job = 0; extra > 0; ++job) {
    const std::size_t k = job % rt.size();
    if (in_add[k] && res[k] < max_worker) {
      ++res[k];
      --extra;
    }
  }
  std::uint32_t next_gpu = 0;
  for (std::size_t k = 0; k < rt.size(); ++k) {
    for (std::int64_t j = 0; j < res[k]; ++j) sorted_slots[k].push_back({next_gpu++, 1.0});
  }
}

}  // namespace

BandPacking band_stage1_packing(std::span<const double> iter_s, std::uint32_t n_gpus,
                                BandKnobs knobs) {
  if (iter_s.empty()) throw std::invalid_argument("band_stage1_packing: no trials");
  if (n_gpus == 0) throw std::invalid_argument("band_stage1_packing: no GPUs");
  if (knobs.max_worker == 0) throw std::invalid_argument("band_stage1_packing: MAX_WORKER 0");
  for (const double t : iter_s) {
    if (!(t > 0.0) || !std::isfinite(t)) {
      throw std::invalid_argument("band_stage1_packing: iteration times must be finite and > 0");
    }
  }
  BandPacking out;
  out.order.resize(iter_s.size());
  std::iota(out.order.begin(), out.order.end(), std::size_t{0});
  std::stable_sort(out.order.begin(), out.order.end(),
                   [&](std::size_t a, std::size_t b) { return iter_s[a] > iter_s[b]; });
  std::vector<double> rt;
  rt.reserve(iter_s.size());
  for (const std::size_t i : out.order) rt.push_back(iter_s[i]);

  std::vector<std::vector<BandSlot>> sorted_slots(rt.size());
  if (rt.size() > n_gpus) {
    out.branch = BandBranch::mps_packing;
    mps_packing(rt, n_gpus, knobs, sorted_slots);
  } else if (rt.size() == n_gpus) {
    out.branch = BandBranch::distributed_bin_packing;
    dist_bin_packing(rt, n_gpus, knobs, sorted_slots);
  } else {
    out.branch = BandBranch::even_bin_packing;
    even_bin_packing(rt, n_gpus, knobs, sorted_slots);
  }
  out.slots.resize(rt.size());
  for (std::size_t k = 0; k < rt.size(); ++k) out.slots[out.order[k]] = std::move(sorted_slots[k]);
  return out;
}

}  // namespace gpumux::policies::fluid
