// ExecTimeWindow (gpumux/api/exec_time_window.hpp, D38): nearest-rank percentiles, the empirical
// CDF and the mean of the last N samples, worked by hand. Nearest rank: the q-th percentile of
// n sorted values is the ceil(q/100 x n)-th smallest (the 1st for q = 0).
#include <catch2/catch.hpp>

#include <vector>

#include "gpumux/api/exec_time_window.hpp"

using gpumux::DurationNs;
using gpumux::ExecTimeWindow;

TEST_CASE("An empty window answers 0", "[exec_time_window]") {
  const ExecTimeWindow w(10);
  CHECK(w.empty());
  CHECK(w.count() == 0);
  CHECK(w.percentile(99) == 0);
  CHECK(w.cdf(5) == 0.0);
  CHECK(w.mean() == 0.0);
  CHECK(ExecTimeWindow(0).capacity() == 1);  // at least one sample is kept
}

TEST_CASE("Nearest-rank percentiles of ten values, by hand", "[exec_time_window]") {
  ExecTimeWindow w(100);
  // Added out of order: the answers depend on the sorted values 10, 20, ..., 100.
  for (DurationNs v : {50, 10, 100, 30, 70, 20, 90, 40, 80, 60}) w.add(v);
  CHECK(w.count() == 10);
  CHECK(w.percentile(0) == 10);     // rank 1
  CHECK(w.percentile(10) == 10);    // ceil(1.0) = 1
  CHECK(w.percentile(11) == 20);    // ceil(1.1) = 2
  CHECK(w.percentile(50) == 50);    // ceil(5.0) = 5
  CHECK(w.percentile(51) == 60);    // ceil(5.1) = 6
  CHECK(w.percentile(90) == 90);    // ceil(9.0) = 9
  CHECK(w.percentile(99) == 100);   // ceil(9.9) = 10
  CHECK(w.percentile(100) == 100);  // rank 10
  CHECK(w.percentile(250) == 100);  // q is clamped to [0, 100]
  CHECK(w.percentile(-5) == 10);
}

TEST_CASE("Percentile of the last k samples: q99 of the last 10 of 1..20 is 20",
          "[exec_time_window]") {
  ExecTimeWindow w(1000);
  for (DurationNs v = 1; v <= 20; ++v) w.add(v);
  CHECK(w.percentile(99, 10) == 20);  // of 11..20: the 10th
  CHECK(w.percentile(50, 10) == 15);  // of 11..20: ceil(5) = 5th = 15
  CHECK(w.percentile(0, 10) == 11);
  CHECK(w.percentile(50, 4) == 18);   // of 17..20: ceil(2) = 2nd = 18
  CHECK(w.percentile(50) == 10);      // of 1..20: ceil(10) = 10th
  CHECK(w.percentile(50, 0) == 10);   // 0 = all held
  CHECK(w.percentile(50, 50) == 10);  // more than held = all held
  // The newest samples decide, not the largest: 5 added after 1..20.
  w.add(5);
  CHECK(w.percentile(0, 1) == 5);
  CHECK(w.percentile(100, 2) == 20);
}

TEST_CASE("Nearest rank is exact where q/100 x n is a whole number", "[exec_time_window]") {
  // 1..100: the q-th percentile is q itself for every whole q in [1, 100]. In floating point
  // 0.07 x 100 = 7.000000000000001 and 0.55 x 100 = 55.00000000000001, whose ceilings (8, 56)
  // are one rank too high; the rank must come from q x n / 100.
  ExecTimeWindow w(100);
  for (DurationNs v = 1; v <= 100; ++v) w.add(v);
  for (int q = 1; q <= 100; ++q) {
    INFO("q = " << q);
    CHECK(w.percentile(q) == q);
    CHECK(w.percentile(q, 100) == q);
  }
  // 25 samples: q = 28 gives 7 exactly (0.28 x 25 = 7.000000000000001 in floating point).
  ExecTimeWindow v(25);
  for (DurationNs s = 1; s <= 25; ++s) v.add(s);
  CHECK(v.percentile(28) == 7);
  CHECK(v.percentile(56) == 14);
}

TEST_CASE("The empirical CDF and the mean", "[exec_time_window]") {
  ExecTimeWindow w(10);
  for (DurationNs v : {40, 10, 30, 20}) w.add(v);
  CHECK(w.cdf(9) == 0.0);
  CHECK(w.cdf(10) == 0.25);  // <= x counts
  CHECK(w.cdf(25) == 0.5);
  CHECK(w.cdf(40) == 1.0);
  CHECK(w.cdf(1000) == 1.0);
  CHECK(w.mean() == 25.0);  // (10 + 20 + 30 + 40) / 4
  w.add(20);
  CHECK(w.cdf(20) == 0.6);  // 10, 20, 20 of five
  CHECK(w.mean() == 24.0);  // 120 / 5
}

TEST_CASE("The ring keeps the last N samples and evicts the oldest", "[exec_time_window]") {
  ExecTimeWindow w(3);
  w.add(1);
  w.add(2);
  CHECK(w.samples() == std::vector<DurationNs>{1, 2});
  w.add(3);
  w.add(100);  // evicts 1
  CHECK(w.count() == 3);
  CHECK(w.total_added() == 4);
  CHECK(w.samples() == std::vector<DurationNs>{2, 3, 100});
  CHECK(w.mean() == 35.0);  // (2 + 3 + 100) / 3
  CHECK(w.percentile(0) == 2);
  CHECK(w.cdf(1) == 0.0);  // the evicted sample no longer counts
  w.add(4);                // evicts 2
  w.add(5);                // evicts 3
  CHECK(w.samples() == std::vector<DurationNs>{100, 4, 5});
  CHECK(w.mean() == 109.0 / 3.0);
  CHECK(w.percentile(50) == 5);      // of 4, 5, 100: ceil(1.5) = 2nd
  CHECK(w.percentile(100, 2) == 5);  // of the last two, 4 and 5
  CHECK(w.cdf(5) == Approx(2.0 / 3.0));
}
