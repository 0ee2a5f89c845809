// The simulator's pending-event set, the virtual-time runtime and the fluid-share solver.
#include <catch2/catch.hpp>

#include <cstdint>
#include <iterator>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "gpumux/sim/event_queue.hpp"
#include "gpumux/sim/fluid_share.hpp"
#include "gpumux/sim/sim_runtime.hpp"

using namespace gpumux;

namespace {

// Pops everything, returning the tags the callbacks append to `out`.
std::vector<std::pair<TimeNs, int>> drain(EventQueue& q, std::vector<int>& out) {
  std::vector<std::pair<TimeNs, int>> seen;
  EventQueue::Callback cb;
  while (!q.empty()) {
    const TimeNs t = q.pop(cb);
    cb();
    seen.emplace_back(t, out.back());
  }
  return seen;
}

}  // namespace

TEST_CASE("EventQueue pops in (time, insertion) order", "[sim][event_queue]") {
  // Events pushed at times 5, 1, 5, 3, 1 must come out as 1 (2nd push), 1 (5th), 3, 5 (1st),
  // 5 (3rd): by time, then by the order they were scheduled.
  EventQueue q;
  std::vector<int> out;
  const std::vector<std::pair<TimeNs, int>> pushes{{5, 0}, {1, 1}, {5, 2}, {3, 3}, {1, 4}};
  for (const auto& [t, tag] : pushes) q.push(t, [&out, tag = tag] { out.push_back(tag); });
  REQUIRE(q.size() == 5);
  REQUIRE(q.next_time() == 1);
  const auto seen = drain(q, out);
  CHECK(seen == std::vector<std::pair<TimeNs, int>>{{1, 1}, {1, 4}, {3, 3}, {5, 0}, {5, 2}});
  CHECK(q.next_time() == kTimeNever);
}

TEST_CASE("EventQueue keeps insertion order among many equal times", "[sim][event_queue]") {
  // 1000 events at t = 7: they must pop as 0, 1, ..., 999.
  EventQueue q;
  std::vector<int> out;
  for (int i = 0; i < 1000; ++i) q.push(7, [&out, i] { out.push_back(i); });
  drain(q, out);
  REQUIRE(out.size() == 1000);
  for (int i = 0; i < 1000; ++i) REQUIRE(out[static_cast<std::size_t>(i)] == i);
}

TEST_CASE("EventQueue cancel is O(1) tombstoning and ids are never reused", "[sim][event_queue]") {
  // Push a@1, b@2, c@3; cancel b. Pops: a, c. Cancelling b twice, or a after it ran, is false.
  EventQueue q;
  std::vector<int> out;
  const TimerId a = q.push(1, [&] { out.push_back(1); });
  const TimerId b = q.push(2, [&] { out.push_back(2); });
  q.push(3, [&] { out.push_back(3); });
  CHECK(raw(a) != 0);
  CHECK(q.cancel(b));
  CHECK_FALSE(q.cancel(b));
  CHECK(q.size() == 2);
  drain(q, out);
  CHECK(out == std::vector<int>{1, 3});
  CHECK_FALSE(q.cancel(a));
  CHECK_FALSE(q.cancel(TimerId{0}));
  // The slot of `a` is reused by the next push, under a new generation: the old id stays dead.
  const TimerId d = q.push(4, [&] { out.push_back(4); });
  CHECK(raw(d) != raw(a));
  CHECK_FALSE(q.cancel(a));
  CHECK(q.cancel(d));
  CHECK(q.empty());
  CHECK(q.next_time() == kTimeNever);
}

TEST_CASE("EventQueue matches a reference ordered map under pushes, pops and cancels",
          "[sim][event_queue]") {
  // Random (fixed seed) mix; the reference is a std::map keyed by (time, push index). Many
  // cancels trigger the tombstone compaction (more than 1024 tombstones).
  EventQueue q;
  std::map<std::pair<TimeNs, int>, TimerId> ref;
  std::vector<int> out;
  std::mt19937_64 rng(42);
  int next_tag = 0;
  TimeNs now = 0;
  for (int step = 0; step < 200000; ++step) {
    const auto r = rng() % 10;
    if (r < 5 || ref.empty()) {
      const TimeNs t = now + static_cast<TimeNs>(rng() % 1000);
      const int tag = next_tag++;
      ref.emplace(std::make_pair(t, tag), q.push(t, [&out, tag] { out.push_back(tag); }));
    } else if (r < 8) {
      EventQueue::Callback cb;
      const TimeNs t = q.pop(cb);
      cb();
      const auto first = ref.begin();
      REQUIRE(t == first->first.first);
      REQUIRE(out.back() == first->first.second);
      now = t;
      ref.erase(first);
    } else {
      auto it = ref.begin();
      std::advance(it, static_cast<long>(rng() % ref.size()));
      REQUIRE(q.cancel(it->second));
      ref.erase(it);
    }
    REQUIRE(q.size() == ref.size());
  }
}

TEST_CASE("SimRuntime clamps past times and runs same-time events in scheduling order",
          "[sim][runtime]") {
  // At t = 10 a callback schedules x at t = 5 (clamped to 10) and y at 10 and posts z: all run
  // at 10, in the order x, y, z, after w which was already scheduled at 10.
  SimRuntime rt;
  std::vector<std::pair<char, TimeNs>> ran;
  auto log = [&](char c) { ran.emplace_back(c, rt.now()); };
  rt.schedule_at(10, [&] {
    log('a');
    rt.schedule_at(5, [&] { log('x'); });
    rt.schedule_at(10, [&] { log('y'); });
    rt.post([&] { log('z'); });
  });
  rt.schedule_at(10, [&] { log('w'); });
  rt.run();
  CHECK(ran == std::vector<std::pair<char, TimeNs>>{
                   {'a', 10}, {'w', 10}, {'x', 10}, {'y', 10}, {'z', 10}});
  CHECK(rt.events_executed() == 5);
  CHECK(rt.now() == 10);
}

TEST_CASE("SimRuntime horizon, stop and cancel", "[sim][runtime]") {
  // Events at 10, 20, 30. run(20) runs 10 and 20 (the horizon is inclusive); run(25) runs
  // nothing and moves now to 25; run() runs 30. stop() inside a callback returns after it.
  SimRuntime rt;
  std::vector<TimeNs> ran;
  for (TimeNs t : {10, 20, 30}) rt.schedule_at(t, [&] { ran.push_back(rt.now()); });
  const TimerId never = rt.schedule_after(40, [&] { ran.push_back(-1); });
  CHECK(rt.cancel(never));
  rt.run(20);
  CHECK(ran == std::vector<TimeNs>{10, 20});
  CHECK(rt.now() == 20);
  rt.run(25);
  CHECK(rt.now() == 25);
  CHECK(rt.pending() == 1);
  rt.run();
  CHECK(ran == std::vector<TimeNs>{10, 20, 30});
  CHECK(rt.now() == 30);
  CHECK(rt.events_executed() == 3);

  rt.schedule_after(5, [&] { rt.stop(); });  // at 35
  rt.schedule_after(6, [&] { ran.push_back(rt.now()); });
  rt.run();
  CHECK(rt.now() == 35);
  CHECK(ran.size() == 3);
  rt.run();  // run() again resumes
  CHECK(ran.back() == 36);
  CHECK_THROWS_AS(
      [&] {
        rt.post([&] { rt.run(); });
        rt.run();
      }(),
      std::logic_error);
}

TEST_CASE("water_fill divides capacity max-min fairly", "[sim][fluid]") {
  // Capacity 1 among caps 0.2, 1, 1: 0.2 is fixed, the others split 0.8 -> 0.4 each.
  std::vector<double> caps{0.2, 1.0, 1.0};
  std::vector<double> shares(3);
  CHECK(water_fill(1.0, caps, shares) == 0.0);
  CHECK(shares[0] == Approx(0.2));
  CHECK(shares[1] == Approx(0.4));
  CHECK(shares[2] == Approx(0.4));
  // Caps summing below capacity: everyone gets its cap, 0.3 stays unused.
  caps = {0.3, 0.4};
  shares.resize(2);
  CHECK(water_fill(1.0, caps, shares) == Approx(0.3));
  CHECK(shares[0] == 0.3);
  CHECK(shares[1] == 0.4);
  // Two equal copies on a 12 B/ns link: exactly 6 each.
  caps = {12.0, 12.0};
  water_fill(12.0, caps, shares);
  CHECK(shares[0] == 6.0);
  CHECK(shares[1] == 6.0);
}

TEST_CASE("fill_by_priority serves urgent levels first", "[sim][fluid]") {
  // Priorities 2, 1, 1, 0 with caps 0.7, 0.3, 0.3, 1: level 2 takes 0.7; level 1 splits 0.3
  // (0.15 each); level 0 gets nothing. With caps 0.7 and 0.3 exactly filling the capacity,
  // floating point residue must not leak to the lowest level.
  const std::vector<int> prio{2, 1, 1, 0};
  const std::vector<double> caps{0.7, 0.3, 0.3, 1.0};
  std::vector<double> shares(4);
  fill_by_priority(1.0, prio, caps, shares);
  CHECK(shares[0] == Approx(0.7));
  CHECK(shares[1] == Approx(0.15));
  CHECK(shares[2] == Approx(0.15));
  CHECK(shares[3] == 0.0);
  const std::vector<int> prio2{1, 1, 0};
  const std::vector<double> caps2{0.7, 0.3, 1.0};
  shares.resize(3);
  fill_by_priority(1.0, prio2, caps2, shares);
  CHECK(shares[2] == 0.0);
}
