// A data-parallel job's resize: its parts by hand from the fixture profile and model, and a
// job's finish time under planned resizes, each resize paying its downtime once
// (resize_cost.hpp).
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "gpumux/model/resize_cost.hpp"
#include "unit_fixtures.hpp"

namespace fx = gpumux::fixtures;
using gpumux::DurationNs;
using gpumux::Optimizer;
using gpumux::PlannedResize;
using gpumux::Precision;

namespace {

constexpr DurationNs kMs = 1'000'000;
constexpr DurationNs kS = 1'000'000'000;

}  // namespace

TEST_CASE("A resize's parts, by hand", "[resize]") {
  // Fixture profile: reap 300 ms; interpreter 50 ms + import 1,000 ms + library init 950 ms
  // = process start 2,000 ms; context 80 ms; construct 100 ms + 15 ms per 10^6 params; weights
  // read at 2 GB/s; H2D 10 GB/s with 2,000 ns latency. Fixture model: 1,522 params, 6,152
  // weight bytes.
  const auto profile = gpumux::parse_device_profile_text(fx::profile_json("p").dump(), "p.json");
  const auto model = gpumux::parse_model_text(fx::model_json("small").dump(), "small.json");
  REQUIRE(profile.process_start_ns == 2'000 * kMs);

  // 250 iterations done, 100 per epoch, 40 ms each at the old width.
  const gpumux::ResizeProgress progress{250, 100, 40 * kMs};
  const auto cost = gpumux::resize_cost(profile, model, Optimizer::Adam, Precision::Fp32, progress);
  CHECK(cost.stop_ns == 300 * kMs);
  // model_build = 100,000,000 + 15,000,000 x 1,522 / 10^6 (= 22,830) + 6,152 / 2 (= 3,076)
  // = 100,025,906 ns; restart = 2,000,000,000 + 80,000,000 + 100,025,906 = 2,180,025,906 ns.
  CHECK(cost.restart_ns == 2'180'025'906);
  // Adam checkpoint: weights + 2 slots = 3 x 6,152 = 18,456 bytes; / 10 bytes/ns = 1,845.6
  // -> 1,846 ns (rounded up); + 2,000 ns latency = 3,846 ns.
  CHECK(gpumux::checkpoint_bytes(model, Optimizer::Adam, Precision::Fp32) == 18'456);
  CHECK(cost.reload_ns == 3'846);
  // 250 % 100 = 50 iterations since the last epoch boundary, 50 x 40 ms = 2 s lost.
  CHECK(cost.rollback_iterations == 50);
  CHECK(cost.lost_work_ns == 2 * kS);
  // Downtime 300,000,000 + 2,180,025,906 + 3,846 = 2,480,029,752; total + 2 s.
  CHECK(cost.downtime_ns() == 2'480'029'752);
  CHECK(cost.total_ns() == 4'480'029'752);
}

TEST_CASE("The checkpoint follows the optimizer and the precision", "[resize]") {
  const auto profile = gpumux::parse_device_profile_text(fx::profile_json("p").dump(), "p.json");
  const auto model = gpumux::parse_model_text(fx::model_json("small").dump(), "small.json");
  CHECK(gpumux::checkpoint_bytes(model, Optimizer::Sgd, Precision::Fp32) == 6'152);
  CHECK(gpumux::checkpoint_bytes(model, Optimizer::Momentum, Precision::Fp32) == 12'304);
  // fp16 momentum: 2 x 3,076 = 6,152 bytes; 615.2 ns, rounded up as every copy (host_link.hpp)
  // -> 616 ns + 2,000 = 2,616 ns.
  const gpumux::ResizeProgress at_boundary{300, 100, 40 * kMs};
  const auto cost =
      gpumux::resize_cost(profile, model, Optimizer::Momentum, Precision::Fp16, at_boundary);
  CHECK(cost.reload_ns == 2'616);
  // Resized exactly at an epoch boundary: nothing is lost.
  CHECK(cost.rollback_iterations == 0);
  CHECK(cost.lost_work_ns == 0);
  CHECK(cost.total_ns() == cost.downtime_ns());
}

TEST_CASE("A resize pays its downtime once and rolls back to its epoch", "[resize]") {
  // 300 iterations, 100 per epoch; 40 ms per iteration on 2 GPUs, 25 ms on 4; downtime 2 s.
  const DurationNs downtime = 2 * kS;
  // Without a resize: 300 x 40 ms = 12 s.
  CHECK(gpumux::finish_with_resizes_ns(300, 100, 40 * kMs, {}, downtime) == 12 * kS);

  SECTION("grow at 6 s") {
    // At 6 s, 150 iterations are done; back to 100. 6 s + 2 s downtime, then 200 x 25 ms = 5 s:
    // 13 s. The downtime appears once: 13 - 2 = 6 + 5.
    const std::vector<PlannedResize> plan{{6 * kS, 25 * kMs}};
    CHECK(gpumux::finish_with_resizes_ns(300, 100, 40 * kMs, plan, downtime) == 13 * kS);
    // Charged once, not per iteration or per epoch: a longer job pays the same 2 s.
    // 600 iterations: 6 + 2 + (600 - 100) x 25 ms = 20.5 s.
    CHECK(gpumux::finish_with_resizes_ns(600, 100, 40 * kMs, plan, downtime) == 20'500 * kMs);
  }
  SECTION("grow exactly at an epoch boundary loses nothing") {
    // At 4 s: 100 done, kept. 4 + 2 + 200 x 25 ms = 11 s.
    const std::vector<PlannedResize> plan{{4 * kS, 25 * kMs}};
    CHECK(gpumux::finish_with_resizes_ns(300, 100, 40 * kMs, plan, downtime) == 11 * kS);
  }
  SECTION("two resizes pay twice") {
    // Grow at 6 s (restart at 8 s with 100 done), shrink at 9 s: 1 s / 25 ms = 40 more done,
    // 140 -> back to 100; restart at 11 s; 200 x 40 ms = 8 s: 19 s.
    const std::vector<PlannedResize> plan{{6 * kS, 25 * kMs}, {9 * kS, 40 * kMs}};
    CHECK(gpumux::finish_with_resizes_ns(300, 100, 40 * kMs, plan, downtime) == 19 * kS);
  }
  SECTION("a resize asked for during a downtime waits for its end") {
    // Second resize at 7 s, inside the 6-8 s downtime: it happens at 8 s with nothing run, so
    // 100 done; restart at 10 s; 200 x 25 ms = 5 s: 15 s.
    const std::vector<PlannedResize> plan{{6 * kS, 40 * kMs}, {7 * kS, 25 * kMs}};
    CHECK(gpumux::finish_with_resizes_ns(300, 100, 40 * kMs, plan, downtime) == 15 * kS);
  }
  SECTION("a resize at or after the finish is not applied") {
    const std::vector<PlannedResize> plan{{12 * kS, 25 * kMs}, {20 * kS, 25 * kMs}};
    CHECK(gpumux::finish_with_resizes_ns(300, 100, 40 * kMs, plan, downtime) == 12 * kS);
  }
}

TEST_CASE("Planned resizes are checked", "[resize]") {
  const std::vector<PlannedResize> backwards{{6 * kS, 25 * kMs}, {5 * kS, 25 * kMs}};
  CHECK_THROWS_AS(gpumux::finish_with_resizes_ns(300, 100, 40 * kMs, backwards, 0),
                  std::invalid_argument);
  CHECK_THROWS_AS(gpumux::finish_with_resizes_ns(300, 0, 40 * kMs, {}, 0), std::invalid_argument);
  const std::vector<PlannedResize> zero{{6 * kS, 0}};
  CHECK_THROWS_AS(gpumux::finish_with_resizes_ns(300, 100, 40 * kMs, zero, 0),
                  std::invalid_argument);
}
