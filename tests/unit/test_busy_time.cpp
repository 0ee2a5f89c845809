// The summary's incremental busy time (core/io/src/busy_time.hpp): BusyUnion gives the length of
// the union of every interval added, whatever the order, and InFlightOps the earliest
// submission still in flight, as a plain recomputation over everything would.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "../../core/io/src/busy_time.hpp"

using namespace gpumux;

namespace {

/// Union length by sorting every interval (what the summary did over a whole log).
TimeNs union_length(std::vector<std::pair<TimeNs, TimeNs>> v) {
  std::sort(v.begin(), v.end());
  TimeNs total = 0, cur_s = 0, cur_e = 0;
  bool open = false;
  for (const auto& [s, e] : v) {
    if (e <= s) continue;
    if (open && s <= cur_e) {
      cur_e = std::max(cur_e, e);
    } else {
      if (open) total += cur_e - cur_s;
      cur_s = s;
      cur_e = e;
      open = true;
    }
  }
  return open ? total + cur_e - cur_s : total;
}

}  // namespace

TEST_CASE("BusyUnion: intervals ending in order, settled as they go, give the full union") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    BusyUnion u;
    std::vector<std::pair<TimeNs, TimeNs>> all;
    TimeNs now = 0;
    for (int i = 0; i < 400; ++i) {
      now += static_cast<TimeNs>(rng() % 50);
      const TimeNs len = static_cast<TimeNs>(rng() % 120);
      const TimeNs s = std::max<TimeNs>(0, now - len);
      all.emplace_back(s, now);
      u.add(s, now);
      // Nothing later starts before now - 200 here (len < 120).
      if (i % 7 == 0) u.settle(now - 200);
    }
    CHECK(u.late() == 0);
    CHECK(u.total() == union_length(all));
    CHECK(u.open_pieces() < 400);
  }
}

TEST_CASE("BusyUnion: intervals in any order give the full union") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 50; ++round) {
    BusyUnion u;
    std::vector<std::pair<TimeNs, TimeNs>> all;
    for (int i = 0; i < 300; ++i) {
      const auto s = static_cast<TimeNs>(rng() % 10'000);
      const auto e = s + static_cast<TimeNs>(rng() % 200) - 20;  // some empty
      all.emplace_back(s, e);
      u.add(s, e);
    }
    CHECK(u.total() == union_length(all));
  }
}

TEST_CASE("BusyUnion: an interval starting before the settled point is clipped and counted") {
  BusyUnion u;
  u.add(0, 10);
  u.settle(20);
  u.add(15, 30);  // late: counted from 20
  u.add(5, 18);   // late and wholly before the settled point
  CHECK(u.late() == 2);
  CHECK(u.total() == 10 + 10);
  CHECK(u.open_pieces() == 1);
}

TEST_CASE("InFlightOps: the earliest submission in flight, in order, with gaps, out of order") {
  std::mt19937_64 rng(3);
  for (int mode = 0; mode < 3; ++mode) {
    InFlightOps ops;
    std::map<std::uint64_t, TimeNs> live;  // reference
    std::uint64_t next = 0;
    TimeNs t = 0;
    for (int i = 0; i < 2000; ++i) {
      if (rng() % 3 != 0 || live.empty()) {
        t += static_cast<TimeNs>(rng() % 5);
        std::uint64_t id = next++;
        if (mode == 1 && rng() % 10 == 0) next += rng() % 20;  // a filtered log: ids skipped
        TimeNs when = t;
        if (mode == 2 && rng() % 50 == 0) when = t - 100;  // out of time order
        ops.submit(id, when);
        live[id] = when;
      } else {
        auto it = live.begin();
        std::advance(it, static_cast<long>(rng() % live.size()));
        ops.end(it->first);
        live.erase(it);
        ops.end(next + 5);  // an op never submitted: ignored
      }
      TimeNs m = kTimeNever;
      for (const auto& [id, when] : live) m = std::min(m, when);
      REQUIRE(ops.earliest() == m);
      REQUIRE(ops.size() == live.size());
    }
  }
}
