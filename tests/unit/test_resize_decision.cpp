// DynamicFluid's resize test (policies/fluid/water_filling.hpp resize_decision, paper
// Algorithm 2) in the regime the engine runs today, d capped at 1: a trial moves
// between packed (width 1/c) and whole (width 1). Every number is worked out in the comments
// from the trial model h(1/c) = h1 * alpha^(c - 1), h(1) = h1.
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include "fluid/trial_model.hpp"
#include "fluid/water_filling.hpp"

using namespace gpumux::policies::fluid;

TEST_CASE("resize: packed -> whole pays when the interference saved exceeds eps", "[fluid][unit]") {
  // 10 s left alone; packed two per GPU with alpha 1.5: h(1/2) = 10 * 1.5 = 15 s, h(1) = 10 s.
  // Scale up iff 10 + eps < 15, i.e. eps < 5 s.
  const RunningTrial t{{10.0, 1.5, 1.0}, 0.5};
  const DynamicDecision up = resize_decision(t, 1.0, 4.0);
  CHECK(up.action == Resize::scale_up);
  CHECK(up.width == 1.0);
  CHECK(resize_decision(t, 1.0, 5.0).action == Resize::keep);  // 15 < 15 is false
  const DynamicDecision keep = resize_decision(t, 1.0, 5.5);
  CHECK(keep.action == Resize::keep);
  CHECK(keep.width == 0.5);  // keeps its current width
}

TEST_CASE("resize: with the ideal model (alpha = 1) packing is free, so no scale-up pays",
          "[fluid][unit]") {
  // h(1/2) = h(1) = 10 s: 10 + 0 < 10 is false even with a free resize.
  const RunningTrial t{{10.0, 1.0, 1.0}, 0.5};
  CHECK(resize_decision(t, 1.0, 0.0).action == Resize::keep);
}

TEST_CASE("resize: whole -> packed pays when the area shrinks by more than eps", "[fluid][unit]") {
  // Whole: area 1 * 10 = 10 GPU-s. Packed at 1/2 with alpha 1.5: 0.5 * (15 + eps) < 10 iff
  // eps < 5 s. Ideal alpha 1: 0.5 * (10 + eps) < 10 iff eps < 10 s.
  const RunningTrial t{{10.0, 1.5, 1.0}, 1.0};
  const DynamicDecision down = resize_decision(t, 0.5, 4.0);
  CHECK(down.action == Resize::scale_down);
  CHECK(down.width == 0.5);
  CHECK(resize_decision(t, 0.5, 5.0).action == Resize::keep);
  const RunningTrial ideal{{10.0, 1.0, 1.0}, 1.0};
  CHECK(resize_decision(ideal, 0.5, 9.9).action == Resize::scale_down);
  CHECK(resize_decision(ideal, 0.5, 10.0).action == Resize::keep);
}

TEST_CASE("resize: c = 3, alpha 1.2: h(1/3) = 14.4 s, scale up iff eps < 4.4 s", "[fluid][unit]") {
  const RunningTrial t{{10.0, 1.2, 1.0}, 1.0 / 3.0};
  CHECK(resize_decision(t, 1.0, 4.3).action == Resize::scale_up);
  CHECK(resize_decision(t, 1.0, 4.5).action == Resize::keep);
  CHECK(resize_decision(t, 1.0 / 3.0, 0.0).action == Resize::keep);  // same width
}

TEST_CASE("resize_decisions: one decision per running trial, in input order", "[fluid][unit]") {
  const std::vector<RunningTrial> running{{{10.0, 1.5, 1.0}, 0.5},  // up (eps 1 < 5)
                                          {{10.0, 1.5, 1.0}, 1.0},  // down (eps 1 < 5)
                                          {{0.5, 1.5, 1.0}, 0.5}};  // 0.5 + 1 < 0.75? keep
  const std::vector<double> widths{1.0, 0.5, 1.0};
  const auto d = resize_decisions(running, widths, 1.0);
  REQUIRE(d.size() == 3);
  CHECK(d[0].action == Resize::scale_up);
  CHECK(d[1].action == Resize::scale_down);
  CHECK(d[2].action == Resize::keep);  // a nearly done trial is not worth a restart
  CHECK_THROWS_AS(resize_decisions(running, std::vector<double>{1.0}, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(resize_decision(running[0], 1.0, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(resize_decision({{10.0, 1.0, 1.0}, 0.0}, 1.0, 0.0), std::invalid_argument);
}
