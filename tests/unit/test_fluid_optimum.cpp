// StaticFluid against optima (Fluid, MLSys'21, Theorem 1, App. A): the toy's optimum 10, and a
// seeded property test on small random instances of the ideal model (alpha = beta = 1).
//
// Two yardsticks, because the true OPT of strip packing is not computable here:
//   BF  brute force: every width vector over {1/c, ..., 1/2, 1, 2, ..., min(d, n)} and every
//       list order, each list-scheduled by list_schedule (greedy, see list_schedule.hpp); the
//       best makespan. BF is the makespan of a feasible schedule, so BF >= OPT: "SF <= 2 BF" is
//       implied by Theorem 1 but weaker than it. (It misses schedules that idle on purpose or
//       place trials off the list rules.)
//   LB  a true lower bound on OPT: max(max_i min_w h_{i,w}, sum_i min_w (w h_{i,w}) / n), each
//       min over the same widths (a trial cannot finish faster than at its best width, and no
//       schedule packs more than n GPU-seconds per second). With alpha = 1 packing is free:
//       min area = h1 / c. "SF <= 2 LB" implies Theorem 1 and is stronger than it.
//   LB1 the brief's bound max(sum h1 / n, max h1 / d): a lower bound only when nothing packs;
//       with free packing a schedule can beat it (two 4-s trials on one GPU, c = 2: 4 < 8).
// Outcome (details at the property test): SF <= 2 LB1 on every instance; SF <= 2 BF fails on
// a few, so Theorem 1 holds against the no-packing optimum, not against one that packs for free.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "fluid/list_schedule.hpp"
#include "fluid/trial_model.hpp"
#include "fluid/water_filling.hpp"

using namespace gpumux::policies::fluid;

namespace {

std::vector<double> candidate_widths(std::uint32_t n, FluidKnobs k) {
  std::vector<double> w;
  for (std::uint32_t q = k.c; q >= 2; --q) w.push_back(1.0 / static_cast<double>(q));
  for (std::uint32_t g = 1; g <= std::min(k.d, n); ++g) w.push_back(static_cast<double>(g));
  return w;
}

double true_lower_bound(const std::vector<TrialModel>& t, std::uint32_t n, FluidKnobs k) {
  const std::vector<double> ws = candidate_widths(n, k);
  double tallest = 0.0;
  double area = 0.0;
  for (const TrialModel& m : t) {
    double h = height_s(m, ws.front());
    double a = area_gpu_s(m, ws.front());
    for (const double w : ws) {
      h = std::min(h, height_s(m, w));
      a = std::min(a, area_gpu_s(m, w));
    }
    tallest = std::max(tallest, h);
    area += a;
  }
  return std::max(tallest, area / n);
}

/// Best list schedule over all widths and orders. Width vectors whose own lower bound cannot
/// beat the best so far skip the order search (that prunes no better schedule).
double brute_force(const std::vector<TrialModel>& t, std::uint32_t n, FluidKnobs k) {
  const std::vector<double> ws = candidate_widths(n, k);
  const std::size_t m = t.size();
  std::vector<std::size_t> pick(m, 0);
  std::vector<double> widths(m);
  double best = fifo_schedule(t, n).makespan_s;  // widths all 1: one candidate among the rest
  while (true) {
    double tallest = 0.0;
    double area = 0.0;
    for (std::size_t i = 0; i < m; ++i) {
      widths[i] = ws[pick[i]];
      tallest = std::max(tallest, height_s(t[i], widths[i]));
      area += area_gpu_s(t[i], widths[i]);
    }
    if (std::max(tallest, area / n) < best) {
      std::vector<std::size_t> order(m);
      std::iota(order.begin(), order.end(), std::size_t{0});
      do {
        best = std::min(best, list_schedule(t, widths, order, n).makespan_s);
      } while (std::next_permutation(order.begin(), order.end()));
    }
    std::size_t i = 0;  // odometer over width picks
    while (i < m && ++pick[i] == ws.size()) pick[i++] = 0;
    if (i == m) break;
  }
  return best;
}

}  // namespace

TEST_CASE("toy example: brute-force optimum 10 = total work / GPUs", "[fluid]") {
  const std::vector<TrialModel> toy{{4.0}, {4.0}, {12.0}, {30.0}};
  // d = 4 (the code's): e.g. 30 s on 3 GPUs [0, 10], 12 s on 2 GPUs [0, 6], then the two
  // 4-s trials packed on one of those GPUs [6, 10]. Nothing beats 10 in this space.
  CHECK(brute_force(toy, 5, {2, 4}) == Approx(10.0));
  // d = 5 escapes the paper's 10: 30 s on 4 GPUs [0, 7.5], the 4-s pair packed on the 5th
  // [0, 4], then 12 s on all 5 [7.5, 9.9].
  CHECK(brute_force(toy, 5, {2, 5}) == Approx(9.9));
  // The true bound is weak here: tallest 30/5 = 6; least areas 2 + 2 + 6 + 15 (all packed at
  // 1/2, free under alpha = 1) over 5 GPUs = 5.
  CHECK(true_lower_bound(toy, 5, {2, 5}) == Approx(6.0));
}

TEST_CASE("Theorem 1 property: StaticFluid against BF, LB and LB1 on random ideal instances",
          "[fluid]") {
  // Seeded; mt19937_64's output is fixed by the standard and the draws use only `%`, so the
  // instances are the same on every platform.
  std::mt19937_64 rng(14);
  constexpr int kInstances = 2000;
  int within_bf = 0;
  int within_lb = 0;
  int within_lb1 = 0;
  int lb1_beaten = 0;  // instances where BF < LB1: LB1 is not a lower bound there
  double worst_bf_ratio = 0.0;
  double worst_lb_ratio = 0.0;
  for (int inst = 0; inst < kInstances; ++inst) {
    const auto trials = static_cast<std::size_t>(2 + rng() % 4);    // 2..5
    const auto n = static_cast<std::uint32_t>(1 + rng() % 4);       // 1..4 GPUs
    const FluidKnobs k{static_cast<std::uint32_t>(2 + rng() % 2),   // c in {2, 3}
                       static_cast<std::uint32_t>(1 + rng() % 4)};  // d in 1..4
    std::vector<TrialModel> t(trials);
    double sum = 0.0;
    double tallest = 0.0;
    for (TrialModel& m : t) {
      m.h1_s = static_cast<double>(1 + rng() % 20);  // 1..20 s
      sum += m.h1_s;
      tallest = std::max(tallest, m.h1_s);
    }
    const double sf = static_fluid(t, n, k).schedule.makespan_s;
    const double bf = brute_force(t, n, k);
    const double lb = true_lower_bound(t, n, k);
    const double lb1 = std::max(sum / n, tallest / k.d);
    INFO("instance " << inst << ": " << trials << " trials, n " << n << ", c " << k.c << ", d "
                     << k.d << ": SF " << sf << " BF " << bf << " LB " << lb);
    REQUIRE(lb <= bf + 1e-9);  // the bound is sound against every schedule found
    REQUIRE(bf <= sf + 1e-9);  // StaticFluid's own schedule is in BF's space
    within_bf += sf <= 2.0 * bf + 1e-9 ? 1 : 0;
    within_lb += sf <= 2.0 * lb + 1e-9 ? 1 : 0;
    within_lb1 += sf <= 2.0 * lb1 + 1e-9 ? 1 : 0;
    lb1_beaten += bf < lb1 - 1e-9 ? 1 : 0;
    worst_bf_ratio = std::max(worst_bf_ratio, sf / bf);
    worst_lb_ratio = std::max(worst_lb_ratio, sf / lb);
  }
  // Measured on these 2000 instances (D40; the numbers are pinned so a
  // change to the list rules or the water-filling shows up here):
  //   SF <= 2 LB1 on all 2000, our reading of the bound behind Theorem 1 (floor(x) >= x/2 for
  //     x >= 1 puts every whole-GPU trial within 2 sum h1 / n) holds everywhere;
  //   SF <= 2 BF on 1995 only (worst SF/BF = 19/8 = 2.375): BF packs small trials for free
  //     (alpha = 1 gives a packed trial area h1/c), so OPT can sit below sum h1 / n (BF < LB1 on
  //     1120 instances) and StaticFluid's floor() then misses 2 OPT; see the counterexample below.
  //     so here Theorem 1 holds against the optimum without packing (OPT' >= LB1), not OPT;
  //   SF <= 2 LB on 1639 (worst SF/LB = 4): LB counts packed areas at h1/c and is far below OPT.
  // The test keeps what holds on every instance: SF <= 2 LB1 (hence SF <= 2 OPT').
  CHECK(within_lb1 == kInstances);
  CHECK(within_bf == 1995);
  CHECK(worst_bf_ratio == Approx(2.375));
  CHECK(lb1_beaten == 1120);
  CHECK(within_lb == 1639);
  CHECK(worst_lb_ratio == Approx(4.0));
}

TEST_CASE("Theorem 1 fails against an optimum that packs for free", "[fluid]") {
  // Instance 1509: n = 4, c = 2, d = 4, h1 = 4, 11, 5, 17 (sum 37). Shares x 4 / 37: 0.43,
  // 1.19, 0.54, 1.84 -> 1/2, 1, 1/2, 1. SF: 17 s on GPU 0, 11 s on GPU 1, 5 and 4 packed on
  // GPU 2: makespan 17. A better schedule: 17 s on 3 GPUs [0, 17/3], 5 and 4 packed on the 4th
  // [0, 5], then 11 s on all 4 [17/3, 17/3 + 11/4 = 8.4167]. 17 > 2 x 8.4167 = 16.83, so
  // SF > 2 OPT. Against the no-packing bound: LB1 = 37/4 = 9.25 and 17 <= 18.5.
  const std::vector<TrialModel> t{{4.0}, {11.0}, {5.0}, {17.0}};
  const FluidPlan sf = static_fluid(t, 4, {2, 4});
  CHECK(sf.widths == std::vector<double>{0.5, 1.0, 0.5, 1.0});
  CHECK(sf.schedule.makespan_s == 17.0);
  const std::vector<double> better_w{0.5, 4.0, 0.5, 3.0};
  const std::vector<std::size_t> better_order{3, 2, 0, 1};
  CHECK(list_schedule(t, better_w, better_order, 4).makespan_s == Approx(17.0 / 3 + 2.75));
  CHECK(brute_force(t, 4, {2, 4}) == Approx(17.0 / 3 + 2.75));
  CHECK(sf.schedule.makespan_s > 2.0 * (17.0 / 3 + 2.75));
}

TEST_CASE("floor() leaves a long trial on one GPU: SF = 2 OPT exactly", "[fluid]") {
  // Instance 5 of the property test: n = 3, c = 3, d = 4, h1 = 2, 7, 17, 2 (sum 28).
  // Shares 17 * 3 / 28 = 1.82 -> 1 GPU: SF = 17. The 7- and 2-s trials pack at 1/3 on another
  // GPU. BF: 17 s on 2 GPUs [0, 8.5] and 7, 2, 2 packed on the third [0, 7]: 8.5. Nothing
  // beats 8.5 (no resizing mid-run in strip packing): on 1 or 2 GPUs the 17-s trial takes
  // >= 8.5; on 3 it takes 17/3 = 5.67 with every GPU, and the others then need >= 3 more (the
  // 7-s trial >= 7/3 on all 3 GPUs, then a 2-s trial >= 2/3; or 7/2 on 2 GPUs): >= 8.67.
  // So OPT = 8.5 and SF = 2 OPT exactly.
  const std::vector<TrialModel> t{{2.0}, {7.0}, {17.0}, {2.0}};
  const FluidPlan sf = static_fluid(t, 3, {3, 4});
  CHECK(sf.widths == std::vector<double>{1.0 / 3, 1.0 / 3, 1.0, 1.0 / 3});
  CHECK(sf.schedule.makespan_s == 17.0);
  CHECK(brute_force(t, 3, {3, 4}) == Approx(8.5));
}

TEST_CASE("free packing beats the no-packing bound sum h1 / n", "[fluid]") {
  // Two 4-s trials, 1 GPU, c = 2: packed, both end at 4 < sum h1 / n = 8.
  const std::vector<TrialModel> t{{4.0}, {4.0}};
  CHECK(brute_force(t, 1, {2, 4}) == Approx(4.0));
  CHECK(static_fluid(t, 1, {2, 4}).schedule.makespan_s == 4.0);
  CHECK(true_lower_bound(t, 1, {2, 4}) == Approx(4.0));
}
