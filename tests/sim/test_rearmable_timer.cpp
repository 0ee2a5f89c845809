// SimRuntime's re-armable timers: arming must behave exactly as cancelling the pending event and
// scheduling a fresh one (same place among equal times, same clamping, same count of executed
// events), since SimDevice relies on that for byte-identical results.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "gpumux/sim/sim_runtime.hpp"

using namespace gpumux;

namespace {

// Timers of one kind or the other, driven by the same random script: each firing (and each
// plain event) may move any timer, disarm it, or schedule a plain event.
class Script {
 public:
  Script(bool rearmable, std::uint32_t timers, std::uint64_t seed)
      : rearmable_(rearmable), rng_(seed), armed_at_(timers, kTimeNever), ids_(timers) {
    for (std::uint32_t i = 0; i < timers; ++i) {
      if (rearmable_) handles_.push_back(rt_.add_timer([this, i] { fire(i); }));
    }
  }

  std::vector<std::pair<TimeNs, int>> run(TimeNs horizon) {
    for (std::uint32_t i = 0; i < armed_at_.size(); ++i) arm(i, 10 * i);
    rt_.schedule_at(5, [this] { plain(1000); });
    rt_.run(horizon);
    trace_.emplace_back(rt_.now(), static_cast<int>(rt_.events_executed()));
    return trace_;
  }

 private:
  void arm(std::uint32_t i, TimeNs when) {
    armed_at_[i] = when;
    if (rearmable_) {
      rt_.arm_timer(handles_[i], when);
    } else {
      rt_.cancel(ids_[i]);
      ids_[i] = rt_.schedule_at(when, [this, i] { fire(i); });
    }
  }
  void disarm(std::uint32_t i) {
    armed_at_[i] = kTimeNever;
    if (rearmable_) {
      rt_.disarm_timer(handles_[i]);
    } else {
      rt_.cancel(ids_[i]);
    }
  }
  void act() {
    std::uniform_int_distribution<int> what(0, 9);
    std::uniform_int_distribution<std::uint32_t> which(
        0, static_cast<std::uint32_t>(armed_at_.size() - 1));
    std::uniform_int_distribution<TimeNs> delay(-3, 20);  // negative: clamped to now
    const int w = what(rng_);
    const std::uint32_t i = which(rng_);
    if (w < 6) {
      arm(i, rt_.now() + delay(rng_));
    } else if (w < 8) {
      disarm(i);
    } else {
      const int tag = 1000 + static_cast<int>(++plain_events_);
      rt_.schedule_at(rt_.now() + delay(rng_), [this, tag] { plain(tag); });
    }
  }
  void fire(std::uint32_t i) {
    armed_at_[i] = kTimeNever;
    trace_.emplace_back(rt_.now(), static_cast<int>(i));
    act();
    act();
  }
  void plain(int tag) {
    trace_.emplace_back(rt_.now(), tag);
    act();
    if (tag == 1000) {  // the chain that keeps the script going until the horizon
      std::uniform_int_distribution<TimeNs> gap(0, 15);
      rt_.schedule_at(rt_.now() + gap(rng_), [this] { plain(1000); });
    }
  }

  bool rearmable_;
  SimRuntime rt_;
  std::mt19937_64 rng_;
  std::vector<TimeNs> armed_at_;
  std::vector<TimerId> ids_;
  std::vector<std::uint32_t> handles_;
  std::uint64_t plain_events_ = 0;
  std::vector<std::pair<TimeNs, int>> trace_;
};

}  // namespace

TEST_CASE("SimRuntime re-armable timers run as cancel-and-reschedule would", "[sim][runtime]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    for (const std::uint32_t timers : {1u, 3u}) {
      const auto expected = Script(false, timers, seed).run(2000);
      const auto got = Script(true, timers, seed).run(2000);
      REQUIRE(expected.size() > 200);
      REQUIRE(got == expected);
    }
  }
}

TEST_CASE("SimRuntime re-armable timer: clamping, disarm, pending and removal", "[sim][runtime]") {
  SimRuntime rt;
  std::vector<int> order;
  const std::uint32_t t = rt.add_timer([&] { order.push_back(0); });
  CHECK_THROWS_AS(rt.add_timer({}), std::invalid_argument);
  rt.schedule_at(10, [&] {
    order.push_back(1);
    rt.arm_timer(t, 3);  // in the past: clamped to 10, after the event below
  });
  rt.schedule_at(10, [&] { order.push_back(2); });
  rt.arm_timer(t, 50);
  CHECK(rt.pending() == 3);
  rt.run();
  CHECK(order == std::vector<int>{1, 2, 0});
  CHECK(rt.now() == 10);
  CHECK(rt.events_executed() == 3);
  CHECK(rt.pending() == 0);

  rt.arm_timer(t, 20);
  rt.disarm_timer(t);
  rt.disarm_timer(t);  // no effect
  CHECK(rt.pending() == 0);
  rt.arm_timer(t, 30);
  rt.run(25);  // past the horizon: not run
  CHECK(rt.now() == 25);
  CHECK(order.size() == 3);
  rt.remove_timer(t);
  CHECK(rt.pending() == 0);
  rt.run();
  CHECK(order.size() == 3);
  CHECK(rt.events_executed() == 3);
}
