// The dynamic_fluid executor (policies/tuning/dynamic_fluid.cpp) against fluid and
// trial_per_gpu on a random search of 3 equal trials (fluid_cifar_alexnet, batch 4, 64 epochs
// of ceil(8 / 4) = 2 iterations = 128 iterations each) on 2 V100s. The trials arrive at t = 0;
// the Fluid executors re-plan once the instant's events are handled, so the three are one group.
// Hand reasoning (T = one trial's solo run, 128 x 1.55 ms = 198 ms measured as 2T = 396 ms;
// alpha = a packed pair's iteration time over the solo one, about 1.27 on this GPU; eps = the
// reload of the weights, about 4.9 ms):
// - trial_per_gpu: two trials on the two GPUs, the third after them: 2T.
// - fluid: group of 3 on 2 idle GPUs, shares 2/3 -> width 1/2 each: the first alone on GPU 0,
//   the second alone on GPU 1, the third beside it (the plan's last opened packed GPU). GPU 0's
//   trial ends at T; the pair runs at 1/alpha each and ends at alpha T = 1.27 T = 0.63 x 2T.
// - dynamic_fluid: the same placement (nothing runs yet, so no resize at t = 0). At T the pair
//   has T (1 - 1/alpha) = 0.21 T = 42 ms of solo work left each; their shares over the 2 GPUs
//   rise to 1 and a scale-up pays (h + eps < alpha h: 42 + 4.9 < 53 ms): one moves to the free
//   GPU 0 at an iteration boundary, and the one left alone scales up in place. Makespan about
//   T + 0.21 T + eps, a few ms below fluid's.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "gpumux/api/event_fields.hpp"
#include "gpumux/api/events.hpp"
#include "test_support.hpp"
#include "tuning_test_support.hpp"

using namespace gpumux;
using gpumux::test::random_search_config;
using gpumux::test::run_config;
using gpumux::test::tuning_end;

namespace {

struct Sample {
  TimeNs t;
  double value;
};

std::vector<Sample> metric(const ExperimentResult& r, std::string_view name) {
  std::vector<Sample> out;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::PolicyMetric && metric_name_of(e) == name) {
      out.push_back({e.t_ns, metric_sample_of(e)});
    }
  }
  return out;
}

TimeNs first_end(const ExperimentResult& r) {
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::JobEnd) return e.t_ns;
  }
  return -1;
}

}  // namespace

TEST_CASE("dynamic_fluid moves a packed trial to a freed GPU, fluid keeps the pair",
          "[fluid][tuning]") {
  const ExperimentResult dyn = run_config(random_search_config("dynamic_fluid", 2, 3, 64));
  const ExperimentResult st = run_config(random_search_config("fluid", 2, 3, 64));
  const ExperimentResult base = run_config(random_search_config("trial_per_gpu", 2, 3, 64));
  CHECK(dyn.run.jobs_unfinished == 0);
  const TimeNs t_dyn = tuning_end(dyn);
  const TimeNs t_st = tuning_end(st);
  const TimeNs t_base = tuning_end(base);
  REQUIRE(t_base > 0);
  WARN("makespan dynamic_fluid " << t_dyn << " ns, fluid " << t_st << ", trial_per_gpu " << t_base);
  // fluid: alpha T with alpha about 1.27, between T and 0.7 x 2T.
  CHECK(t_st < t_base * 7 / 10);
  CHECK(t_st > t_base / 2);
  // One move, once the lone trial has ended (its GPU is the one freed: GPU 0).
  const auto moves = metric(dyn, "resize_move");
  REQUIRE(moves.size() == 1);
  CHECK(moves[0].value == 0.0);
  CHECK(moves[0].t >= first_end(dyn));
  // No scale-down (nothing ran at t = 0); the trial left alone scales up in place.
  const auto in_place = metric(dyn, "resize_in_place");
  REQUIRE(in_place.size() == 1);
  CHECK(in_place[0].value == 1.0);
  CHECK(in_place[0].t >= moves[0].t);
  // T (2 - 1/alpha) + eps: below fluid's alpha T, above T.
  CHECK(t_dyn < t_st);
  CHECK(t_dyn > t_base / 2);
}

TEST_CASE("dynamic_fluid: no scale-up when the remaining work does not pay for the reload",
          "[fluid][tuning]") {
  // 8 epochs: when the lone trial ends the pair has about 16 x (1 - 1/1.27) = 3.4 iterations
  // left, h1 about 5 ms: (alpha - 1) h1 = 1.4 ms < eps = 4.9 ms, so nobody moves or resizes.
  const ExperimentResult dyn = run_config(random_search_config("dynamic_fluid", 2, 3, 8));
  CHECK(metric(dyn, "resize_move").empty());
  CHECK(metric(dyn, "resize_in_place").empty());
  CHECK(tuning_end(dyn) < tuning_end(run_config(random_search_config("trial_per_gpu", 2, 3, 8))));
}

TEST_CASE("dynamic_fluid: the same seed gives identical events", "[fluid][tuning]") {
  const ExperimentResult a = run_config(random_search_config("dynamic_fluid", 2, 3, 64));
  const ExperimentResult b = run_config(random_search_config("dynamic_fluid", 2, 3, 64));
  CHECK(a.log.events() == b.log.events());
}
