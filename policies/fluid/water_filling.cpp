// StaticFluid, DynamicFluid, the FIFO baseline and the packing limit c; see water_filling.hpp.
#include "fluid/water_filling.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace gpumux::policies::fluid {

namespace {

// A share computed as h1 * n / sum can land a rounding step below an integer (3 - 4e-16
// instead of 3); floor would then lose a whole GPU. A relative 1e-12 nudge keeps exact integers
// whole and moves no share that is not within 1e-12 of one (our choice).
constexpr double kShareNudge = 1e-12;

void check_knobs(std::uint32_t n_gpus, FluidKnobs knobs) {
  if (n_gpus == 0) throw std::invalid_argument("fluid: no GPUs");
  if (knobs.c == 0) throw std::invalid_argument("fluid: c (trials per GPU) must be >= 1");
  if (knobs.d == 0) throw std::invalid_argument("fluid: d (GPUs per trial) must be >= 1");
}

}  // namespace

std::vector<std::size_t> fluid_order(std::span<const TrialModel> trials) {
  std::vector<std::size_t> order(trials.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return trials[a].h1_s > trials[b].h1_s; });
  return order;
}

std::vector<double> static_fluid_widths(std::span<const TrialModel> trials, std::uint32_t n_gpus,
                                        FluidKnobs knobs) {
  check_knobs(n_gpus, knobs);
  double sum_s = 0.0;
  for (const TrialModel& t : trials) {
    check_trial(t);
    sum_s += t.h1_s;
  }
  const double packed = 1.0 / static_cast<double>(knobs.c);
  std::vector<double> widths(trials.size(), packed);
  if (sum_s <= 0.0) return widths;
  const auto n = static_cast<double>(n_gpus);
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const double share = trials[i].h1_s * n / sum_s * (1.0 + kShareNudge);
    const double w = share >= 1.0 ? std::floor(share) : packed;
    widths[i] = std::min(w, static_cast<double>(knobs.d));
  }
  return widths;
}

FluidPlan static_fluid(std::span<const TrialModel> trials, std::uint32_t n_gpus, FluidKnobs knobs) {
  FluidPlan plan;
  plan.widths = static_fluid_widths(trials, n_gpus, knobs);
  plan.order = fluid_order(trials);
  plan.schedule = list_schedule(trials, plan.widths, plan.order, n_gpus);
  return plan;
}

Schedule fifo_schedule(std::span<const TrialModel> trials, std::uint32_t n_gpus) {
  const std::vector<double> widths(trials.size(), 1.0);
  std::vector<std::size_t> order(trials.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  return list_schedule(trials, widths, order, n_gpus);
}

DynamicDecision resize_decision(const RunningTrial& t, double new_width, double eps_s) {
  if (!(eps_s >= 0.0)) throw std::invalid_argument("dynamic_fluid: eps must be >= 0 seconds");
  if (!(t.width > 0.0)) {
    throw std::invalid_argument("dynamic_fluid: a running trial has width " +
                                std::to_string(t.width));
  }
  const double w = t.width;
  const double h_now = height_s(t.remaining, w);
  const double h_new = height_s(t.remaining, new_width);
  if (new_width > w && h_new + eps_s < h_now) return {new_width, Resize::scale_up};
  if (new_width < w && new_width * (h_new + eps_s) < w * h_now) {
    return {new_width, Resize::scale_down};
  }
  return {w, Resize::keep};
}

std::vector<DynamicDecision> resize_decisions(std::span<const RunningTrial> trials,
                                              std::span<const double> new_widths, double eps_s) {
  if (trials.size() != new_widths.size()) {
    throw std::invalid_argument("resize_decisions: one new width per running trial");
  }
  std::vector<DynamicDecision> out;
  out.reserve(trials.size());
  for (std::size_t i = 0; i < trials.size(); ++i) {
    out.push_back(resize_decision(trials[i], new_widths[i], eps_s));
  }
  return out;
}

std::vector<DynamicDecision> dynamic_fluid(std::span<const RunningTrial> trials,
                                           std::uint32_t total_gpus, FluidKnobs knobs,
                                           double eps_s) {
  if (!(eps_s >= 0.0)) throw std::invalid_argument("dynamic_fluid: eps must be >= 0 seconds");
  std::vector<TrialModel> remaining;
  remaining.reserve(trials.size());
  for (const RunningTrial& r : trials) {
    if (!(r.width > 0.0)) {
      throw std::invalid_argument("dynamic_fluid: a running trial has width " +
                                  std::to_string(r.width));
    }
    remaining.push_back(r.remaining);
  }
  const std::vector<double> target = static_fluid_widths(remaining, total_gpus, knobs);
  return resize_decisions(trials, target, eps_s);
}

std::uint32_t packing_limit_c(std::span<const double> avg_iter_s, double o_th) {
  if (avg_iter_s.empty()) throw std::invalid_argument("packing_limit_c: no measurements");
  for (const double t : avg_iter_s) {
    if (!(t > 0.0)) throw std::invalid_argument("packing_limit_c: iteration time must be > 0");
  }
  std::uint32_t c = 1;
  for (std::size_t p = 2; p <= avg_iter_s.size(); ++p) {
    const double pd = static_cast<double>(p);
    const double o_p = 1.0 - (pd - 1.0) / pd * avg_iter_s[p - 1] / avg_iter_s[p - 2];
    if (!(o_p > o_th)) break;
    c = static_cast<std::uint32_t>(p);
  }
  return c;
}

}  // namespace gpumux::policies::fluid
