// Fluid's water-filling (policies/fluid): the paper's toy example (Fig. 5),
// list-scheduling rules, DynamicFluid's scale rules and the packing limit c, all on numbers
// worked out by hand in the comments.
#include <vector>

#include <catch2/catch.hpp>

#include "fluid/list_schedule.hpp"
#include "fluid/trial_model.hpp"
#include "fluid/water_filling.hpp"

using namespace gpumux::policies::fluid;

namespace {

/// The toy TrialGroup: budgets 4, 4, 12, 30 s on one GPU, ideal model (alpha = beta = 1).
std::vector<TrialModel> toy_trials() {
  return {{4.0}, {4.0}, {12.0}, {30.0}};
}
constexpr std::uint32_t kToyGpus = 5;
constexpr FluidKnobs kToyKnobs{2, 4};  // c = 2 as in the paper's figure; d = the code's 4

}  // namespace

TEST_CASE("trial model: packed and distributed heights", "[fluid]") {
  const TrialModel t{12.0, 1.5, 1.1};
  CHECK(height_s(t, 1.0) == Approx(12.0));
  CHECK(height_s(t, 0.5) == Approx(18.0));        // 12 * 1.5^(2-1)
  CHECK(height_s(t, 1.0 / 3.0) == Approx(27.0));  // 12 * 1.5^(3-1)
  CHECK(height_s(t, 2.0) == Approx(6.6));         // 12/2 * 1.1
  CHECK(height_s(t, 4.0) == Approx(3.993));       // 12/4 * 1.1^3 = 3 * 1.331
  CHECK(area_gpu_s(t, 4.0) == Approx(15.972));
  const TrialModel ideal{12.0};
  CHECK(height_s(ideal, 0.5) == 12.0);  // ideal packing is free
  CHECK(height_s(ideal, 3.0) == 4.0);   // ideal scaling is linear
  CHECK_THROWS_AS(height_s(ideal, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(check_trial(TrialModel{1.0, 0.9, 1.0}), std::invalid_argument);
}

TEST_CASE("toy example: FIFO 30, StaticFluid widths 3,1,1/2,1/2 and makespan 12", "[fluid]") {
  const std::vector<TrialModel> trials = toy_trials();
  // FIFO: one trial per GPU, 4 trials on 5 GPUs, so all start at 0; the 30-s trial ends last.
  const Schedule fifo = fifo_schedule(trials, kToyGpus);
  CHECK(fifo.makespan_s == 30.0);
  CHECK(fifo.trials[3].gpus == std::vector<std::uint32_t>{3});

  // shares = h * 5 / 50 = 0.4, 0.4, 1.2, 3.0 -> w = 1/2, 1/2, 1, 3.
  const FluidPlan plan = static_fluid(trials, kToyGpus, kToyKnobs);
  CHECK(plan.widths == std::vector<double>{0.5, 0.5, 1.0, 3.0});
  CHECK(plan.order == std::vector<std::size_t>{3, 2, 0, 1});
  const Schedule& s = plan.schedule;
  CHECK(s.trials[3].gpus == std::vector<std::uint32_t>{0, 1, 2});  // 30 s / 3 GPUs = [0, 10]
  CHECK(s.trials[3].end_s == 10.0);
  CHECK(s.trials[2].gpus == std::vector<std::uint32_t>{3});  // [0, 12]
  CHECK(s.trials[2].end_s == 12.0);
  CHECK(s.trials[0].gpus == std::vector<std::uint32_t>{4});  // both 4-s trials packed on GPU 4
  CHECK(s.trials[1].gpus == std::vector<std::uint32_t>{4});
  CHECK(s.trials[0].end_s == 4.0);
  CHECK(s.trials[1].end_s == 4.0);
  CHECK(s.makespan_s == 12.0);
  // The fluid lower bound: 50 GPU-seconds at width 1 over 5 GPUs = 10 (the paper's optimum;
  // test_fluid_optimum.cpp finds a schedule reaching it).
  CHECK(fifo.makespan_s / s.makespan_s == Approx(2.5));
}

TEST_CASE("toy example under overheads: alpha slows the packed pair, beta the 3-GPU trial",
          "[fluid]") {
  std::vector<TrialModel> trials = toy_trials();
  trials[0].alpha = 1.5;  // packed at 1/2: 4 * 1.5 = 6 s, still inside 12
  trials[3].beta = 1.1;   // 3 GPUs: 10 * 1.1^2 = 12.1 s, now the longest
  const FluidPlan plan = static_fluid(trials, kToyGpus, kToyKnobs);
  CHECK(plan.widths == std::vector<double>{0.5, 0.5, 1.0, 3.0});  // widths ignore alpha, beta
  CHECK(plan.schedule.trials[0].end_s == Approx(6.0));
  CHECK(plan.schedule.trials[1].end_s == Approx(4.0));
  CHECK(plan.schedule.makespan_s == Approx(12.1));
}

TEST_CASE("StaticFluid widths: d caps, c = 1 disables packing, zero work", "[fluid]") {
  const std::vector<TrialModel> trials = toy_trials();
  // d = 2: the 30-s trial's share 3 is capped at 2.
  CHECK(static_fluid_widths(trials, 5, {2, 2}) == std::vector<double>{0.5, 0.5, 1.0, 2.0});
  // c = 1 (packing off, Fig. 13b): small trials get a whole GPU.
  CHECK(static_fluid_widths(trials, 5, {1, 4}) == std::vector<double>{1.0, 1.0, 1.0, 3.0});
  // c = 3: 1/3 each.
  const std::vector<double> w3 = static_fluid_widths(trials, 5, {3, 4});
  CHECK(w3[0] == 1.0 / 3.0);
  // Shares 7 * 3 / 21 = 1 exactly: no rounding loses the GPU.
  CHECK(static_fluid_widths(std::vector<TrialModel>{{7.0}, {7.0}, {7.0}}, 3, {2, 4}) ==
        std::vector<double>{1.0, 1.0, 1.0});
  CHECK(static_fluid_widths(std::vector<TrialModel>{{0.0}, {0.0}}, 2, {2, 4}) ==
        std::vector<double>{0.5, 0.5});
  CHECK_THROWS_AS(static_fluid_widths(trials, 0, {2, 4}), std::invalid_argument);
  CHECK_THROWS_AS(static_fluid_widths(trials, 5, {0, 4}), std::invalid_argument);
}

TEST_CASE("list schedule: next-fit packing, slot refill, whole GPUs wait for empty ones",
          "[fluid]") {
  SECTION("three 1/3 trials share one GPU; 1/2 + 1/2 + 1/3 needs two") {
    const std::vector<TrialModel> t{{3.0}, {3.0}, {3.0}};
    const std::vector<std::size_t> order{0, 1, 2};
    const Schedule a = list_schedule(t, std::vector<double>{1.0 / 3, 1.0 / 3, 1.0 / 3}, order, 2);
    for (const Placement& p : a.trials) CHECK(p.gpus == std::vector<std::uint32_t>{0});
    const Schedule b = list_schedule(t, std::vector<double>{0.5, 0.5, 1.0 / 3}, order, 2);
    CHECK(b.trials[1].gpus == std::vector<std::uint32_t>{0});
    CHECK(b.trials[2].gpus == std::vector<std::uint32_t>{1});
    CHECK(b.makespan_s == 3.0);
  }
  SECTION("a freed packed slot is refilled at once") {
    // One GPU, c = 2: trials 2 s and 6 s start at 0; the 3-s trial takes the slot at 2, ends 5.
    const std::vector<TrialModel> t{{6.0}, {2.0}, {3.0}};
    const Schedule s =
        list_schedule(t, std::vector<double>{0.5, 0.5, 0.5}, std::vector<std::size_t>{0, 1, 2}, 1);
    CHECK(s.trials[2].start_s == 2.0);
    CHECK(s.trials[2].end_s == 5.0);
    CHECK(s.makespan_s == 6.0);
  }
  SECTION("a whole-GPU trial waits until its GPU holds no packed trial") {
    const std::vector<TrialModel> t{{4.0}, {1.0}};
    const Schedule s =
        list_schedule(t, std::vector<double>{0.5, 1.0}, std::vector<std::size_t>{0, 1}, 1);
    CHECK(s.trials[1].start_s == 4.0);
    CHECK(s.makespan_s == 5.0);
  }
  SECTION("greedy list: a trial that does not fit does not block later ones") {
    // 2 GPUs, list A(w1, 4 s), B(w2, 2 s -> 1 s), C(w1, 1 s): C starts at 0 beside A,
    // B waits for both GPUs: [4, 5].
    const std::vector<TrialModel> t{{4.0}, {2.0}, {1.0}};
    const Schedule s =
        list_schedule(t, std::vector<double>{1.0, 2.0, 1.0}, std::vector<std::size_t>{0, 1, 2}, 2);
    CHECK(s.trials[2].start_s == 0.0);
    CHECK(s.trials[2].gpus == std::vector<std::uint32_t>{1});
    CHECK(s.trials[1].start_s == 4.0);
    CHECK(s.trials[1].gpus == std::vector<std::uint32_t>{0, 1});
    CHECK(s.makespan_s == 5.0);
  }
  SECTION("invalid input") {
    const std::vector<TrialModel> t{{1.0}};
    const std::vector<std::size_t> o{0};
    CHECK_THROWS_AS(list_schedule(t, std::vector<double>{3.0}, o, 2), std::invalid_argument);
    CHECK_THROWS_AS(list_schedule(t, std::vector<double>{1.5}, o, 2), std::invalid_argument);
    CHECK_THROWS_AS(list_schedule(t, std::vector<double>{1.0}, std::vector<std::size_t>{1}, 2),
                    std::invalid_argument);
    CHECK_THROWS_AS(list_schedule(t, std::vector<double>{1.0}, o, 0), std::invalid_argument);
  }
}

TEST_CASE("DynamicFluid: scale up when GPUs free, keep when eps exceeds the gain", "[fluid]") {
  SECTION("two 10-s trials on 1 GPU each, 4 GPUs in all") {
    // share = 10 * 4 / 20 = 2 -> w' = 2, h = 5: up iff 5 + eps < 10.
    const std::vector<RunningTrial> r{{{10.0}, 1.0}, {{10.0}, 1.0}};
    const auto up = dynamic_fluid(r, 4, {2, 4}, 0.5);
    CHECK(up[0].action == Resize::scale_up);
    CHECK(up[0].width == 2.0);
    CHECK(up[1].action == Resize::scale_up);
    for (const double eps : {5.0, 6.0}) {
      const auto keep = dynamic_fluid(r, 4, {2, 4}, eps);
      CHECK(keep[0].action == Resize::keep);
      CHECK(keep[0].width == 1.0);
    }
  }
  SECTION("toy continued: at t = 4 the freed GPU does not move the water level") {
    // The 30-s trial ran 4 s on 3 GPUs: 18 s left at width 1; the 12-s trial: 8 s left.
    // shares 18 * 5 / 26 = 3.46 -> 3 and 8 * 5 / 26 = 1.54 -> 1: both keep.
    const std::vector<RunningTrial> r{{{18.0}, 3.0}, {{8.0}, 1.0}};
    const auto d = dynamic_fluid(r, 5, {2, 4}, 0.0);
    CHECK(d[0].action == Resize::keep);
    CHECK(d[1].action == Resize::keep);
  }
  SECTION("toy continued: at t = 10 the 12-s trial has 2 s left and 5 GPUs are there") {
    // share 5 -> min(5, d = 4) = 4, h = 0.5: up iff 0.5 + eps < 2 -> 10 + 1 + 0.5 = 11.5 < 12.
    const std::vector<RunningTrial> r{{{2.0}, 1.0}};
    CHECK(dynamic_fluid(r, 5, {2, 4}, 1.0)[0].action == Resize::scale_up);
    CHECK(dynamic_fluid(r, 5, {2, 4}, 1.0)[0].width == 4.0);
    CHECK(dynamic_fluid(r, 5, {2, 4}, 1.5)[0].action == Resize::keep);  // 2 < 2 is false
  }
  SECTION("scale down pays off only when beta makes wide trials costly") {
    // A: 8 s left on 4 GPUs, beta 1.1: h_4 = 2 * 1.1^3 = 2.662, area 10.648. B: 8 s on 1 GPU.
    // shares 8 * 4 / 16 = 2 each. A down iff 2 * (4.4 + eps) < 10.648 (eps < 0.924);
    // B up iff 4.4 + eps < 8.
    const std::vector<RunningTrial> r{{{8.0, 1.0, 1.1}, 4.0}, {{8.0, 1.0, 1.1}, 1.0}};
    const auto a = dynamic_fluid(r, 4, {2, 4}, 0.5);
    CHECK(a[0].action == Resize::scale_down);
    CHECK(a[0].width == 2.0);
    CHECK(a[1].action == Resize::scale_up);
    const auto b = dynamic_fluid(r, 4, {2, 4}, 1.0);  // 2 * 5.4 = 10.8 > 10.648
    CHECK(b[0].action == Resize::keep);
    CHECK(b[0].width == 4.0);
    CHECK(b[1].action == Resize::scale_up);
    // Ideal model: area is h1 at every whole width, so a scale-down never pays, even at eps 0.
    const std::vector<RunningTrial> ideal{{{8.0}, 4.0}, {{8.0}, 1.0}};
    CHECK(dynamic_fluid(ideal, 4, {2, 4}, 0.0)[0].action == Resize::keep);
  }
  SECTION("invalid input") {
    const std::vector<RunningTrial> r{{{8.0}, 0.0}};
    CHECK_THROWS_AS(dynamic_fluid(r, 4, {2, 4}, 0.0), std::invalid_argument);
    const std::vector<RunningTrial> ok{{{8.0}, 1.0}};
    CHECK_THROWS_AS(dynamic_fluid(ok, 4, {2, 4}, -1.0), std::invalid_argument);
  }
}

TEST_CASE("packing limit c from the marginal benefit O_p", "[fluid]") {
  // T_1 = 1, T_2 = 1.2, T_3 = 1.8, T_4 = 2.7 s per iteration:
  // O_2 = 1 - 1/2 * 1.2 = 0.4; O_3 = 1 - 2/3 * 1.5 = 0; O_4 = 1 - 3/4 * 1.5 = -0.125.
  const std::vector<double> t{1.0, 1.2, 1.8, 2.7};
  CHECK(packing_limit_c(t, 0.1) == 2);
  CHECK(packing_limit_c(t, 0.5) == 1);   // even a pair is not worth it
  CHECK(packing_limit_c(t, -0.2) == 4);  // every step passes
  // No slowdown at all: O_p = 1/p > 0.3 for p = 2, 3 (0.5, 0.333), fails at 4 (0.25).
  CHECK(packing_limit_c(std::vector<double>{1.0, 1.0, 1.0, 1.0}, 0.3) == 3);
  CHECK_THROWS_AS(packing_limit_c(std::vector<double>{}, 0.1), std::invalid_argument);
}
