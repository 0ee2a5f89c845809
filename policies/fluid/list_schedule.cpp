// List scheduling of fixed-width trials on n GPUs; the rules are in list_schedule.hpp.
#include "fluid/list_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace gpumux::policies::fluid {

namespace {

// Packed fractions such as 1/3 are not exact in binary; three of them must still fit one GPU.
// 1e-9 of a GPU is far below any share a policy hands out (our choice).
constexpr double kShareSlack = 1e-9;

struct Gpu {
  double used = 0.0;   // fraction held by packed trials, or 1 when a whole-GPU trial holds it
  bool whole = false;  // held by a whole-GPU (w >= 1) trial
};

/// GPUs for `width` at this instant, or empty if it does not fit now.
std::vector<std::uint32_t> find_room(const std::vector<Gpu>& gpus, double width) {
  std::vector<std::uint32_t> picked;
  const auto n = static_cast<std::uint32_t>(gpus.size());
  if (width >= 1.0) {
    const auto need = static_cast<std::size_t>(width);
    for (std::uint32_t g = 0; g < n && picked.size() < need; ++g) {
      if (!gpus[g].whole && gpus[g].used <= kShareSlack) picked.push_back(g);
    }
    if (picked.size() < need) picked.clear();
    return picked;
  }
  // Next fit: a GPU already shared by packed trials first, then an empty one.
  for (std::uint32_t g = 0; g < n; ++g) {
    if (!gpus[g].whole && gpus[g].used > kShareSlack && gpus[g].used + width <= 1.0 + kShareSlack) {
      return {g};
    }
  }
  for (std::uint32_t g = 0; g < n; ++g) {
    if (!gpus[g].whole && gpus[g].used <= kShareSlack) return {g};
  }
  return picked;
}

void check_inputs(std::span<const TrialModel> trials, std::span<const double> widths,
                  std::span<const std::size_t> order, std::uint32_t n_gpus) {
  if (n_gpus == 0) throw std::invalid_argument("list_schedule: no GPUs");
  if (widths.size() != trials.size() || order.size() != trials.size()) {
    throw std::invalid_argument("list_schedule: trials, widths and order differ in size");
  }
  std::vector<bool> seen(trials.size(), false);
  for (const std::size_t i : order) {
    if (i >= trials.size() || seen[i]) {
      throw std::invalid_argument("list_schedule: order is not a permutation");
    }
    seen[i] = true;
  }
  for (std::size_t i = 0; i < trials.size(); ++i) {
    check_trial(trials[i]);
    if (!placeable_width(widths[i], n_gpus)) {
      throw std::invalid_argument("list_schedule: trial " + std::to_string(i) + " has width " +
                                  std::to_string(widths[i]) + ", not placeable on " +
                                  std::to_string(n_gpus) + " GPUs");
    }
  }
}

}  // namespace

bool placeable_width(double width, std::uint32_t n_gpus) {
  if (!(width > 0.0)) return false;
  if (width < 1.0) return true;
  return width == std::floor(width) && width <= static_cast<double>(n_gpus);
}

Schedule list_schedule(std::span<const TrialModel> trials, std::span<const double> widths,
                       std::span<const std::size_t> order, std::uint32_t n_gpus) {
  check_inputs(trials, widths, order, n_gpus);
  Schedule out;
  out.trials.resize(trials.size());
  std::vector<Gpu> gpus(n_gpus);
  std::vector<std::size_t> pending(order.begin(), order.end());
  std::vector<std::size_t> running;
  double now_s = 0.0;
  while (!pending.empty() || !running.empty()) {
    // Start every listed trial that fits now, in list order.
    for (auto it = pending.begin(); it != pending.end();) {
      const std::size_t i = *it;
      std::vector<std::uint32_t> room = find_room(gpus, widths[i]);
      if (room.empty()) {
        ++it;
        continue;
      }
      for (const std::uint32_t g : room) {
        if (widths[i] >= 1.0) {
          gpus[g].whole = true;
          gpus[g].used = 1.0;
        } else {
          gpus[g].used += widths[i];
        }
      }
      Placement& p = out.trials[i];
      p.gpus = std::move(room);
      p.start_s = now_s;
      p.end_s = now_s + height_s(trials[i], widths[i]);
      running.push_back(i);
      it = pending.erase(it);
    }
    if (running.empty()) break;  // unreachable: every checked width fits an idle cluster
    // Advance to the next completion and release every trial ending then.
    double next_s = std::numeric_limits<double>::infinity();
    for (const std::size_t i : running) next_s = std::min(next_s, out.trials[i].end_s);
    now_s = next_s;
    for (auto it = running.begin(); it != running.end();) {
      const std::size_t i = *it;
      if (out.trials[i].end_s > now_s) {
        ++it;
        continue;
      }
      for (const std::uint32_t g : out.trials[i].gpus) {
        if (widths[i] >= 1.0) {
          gpus[g] = Gpu{};
        } else {
          gpus[g].used = std::max(0.0, gpus[g].used - widths[i]);
        }
      }
      it = running.erase(it);
    }
  }
  for (const Placement& p : out.trials) out.makespan_s = std::max(out.makespan_s, p.end_s);
  return out;
}

}  // namespace gpumux::policies::fluid
