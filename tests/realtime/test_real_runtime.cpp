// RealRuntime: the wall-clock loop of the real backends. Timers fire in order and never early,
// post() is the only thread-safe entry and runs everything on the runtime thread, lateness is
// recorded, and run() waits for device work announced with add_pending().
#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "gpumux/backend/real_runtime.hpp"

using namespace gpumux;

namespace {
constexpr TimeNs kMs = 1'000'000;
}  // namespace

TEST_CASE("RealRuntime timers fire in time then scheduling order and never early", "[realtime]") {
  RealRuntime rt;
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<TimeNs> when(0, 30 * kMs);
  struct Fired {
    TimeNs due, at;
    int seq;
  };
  std::vector<Fired> fired;
  std::vector<TimeNs> due(60);
  for (int i = 0; i < 60; ++i) {
    // Some ties on purpose: they must run in scheduling order.
    due[i] = i % 10 == 0 && i > 0 ? due[i - 1] : when(rng);
    rt.schedule_at(due[i], [&, i] { fired.push_back({due[i], rt.now(), i}); });
  }
  rt.run();
  REQUIRE(fired.size() == 60);
  for (std::size_t k = 0; k < fired.size(); ++k) {
    CHECK(fired[k].at >= fired[k].due);  // never early
    if (k > 0) {
      CHECK(fired[k - 1].due <= fired[k].due);
      if (fired[k - 1].due == fired[k].due) CHECK(fired[k - 1].seq < fired[k].seq);
    }
  }
  CHECK(rt.events_executed() == 60);
}

TEST_CASE("RealRuntime: a timer scheduled in the past runs as soon as possible", "[realtime]") {
  RealRuntime rt;
  std::vector<int> order;
  rt.schedule_at(2 * kMs, [&] {
    order.push_back(1);
    rt.schedule_at(0, [&] { order.push_back(3); });  // in the past: clamped to now
  });
  rt.schedule_at(2 * kMs, [&] { order.push_back(2); });
  rt.run();
  CHECK(order == std::vector<int>{1, 2, 3});
}

TEST_CASE("RealRuntime post from many threads runs every callback once on the runtime thread",
          "[realtime]") {
  RealRuntime rt;
  constexpr int kThreads = 8;
  constexpr int kPosts = 1000;
  std::vector<std::vector<int>> seen(kThreads);  // touched on the runtime thread only
  std::atomic<int> wrong_thread{0};
  const std::thread::id loop_id = std::this_thread::get_id();  // the thread that calls run()
  // Announce the producers' work so run() waits for their posts.
  for (int t = 0; t < kThreads; ++t) rt.add_pending();
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < kPosts; ++i) {
        rt.post([&, t, i] {
          if (std::this_thread::get_id() != loop_id) wrong_thread.fetch_add(1);
          seen[t].push_back(i);
        });
        if (i % 97 == 0) std::this_thread::yield();
      }
      rt.post([&rt] { rt.done_pending(); });
    });
  }
  rt.run();
  for (auto& p : producers) p.join();
  CHECK(wrong_thread.load() == 0);
  CHECK(rt.pending() == 0);
  for (int t = 0; t < kThreads; ++t) {
    REQUIRE(seen[t].size() == kPosts);
    bool in_order = true;
    for (int i = 0; i < kPosts; ++i) in_order = in_order && seen[t][i] == i;
    CHECK(in_order);  // posts of one thread run in the order they were posted, exactly once
  }
}

TEST_CASE("RealRuntime records the lateness of every timer", "[realtime]") {
  RealRuntime rt;
  for (int i = 1; i <= 20; ++i) rt.schedule_at(i * kMs / 2, [] {});
  rt.run();
  const LatenessStats s = rt.lateness();
  CHECK(s.count == 20);
  CHECK(s.mean_ns >= 0.0);
  CHECK(s.max_ns >= 0);
  CHECK(s.p99_ns <= s.max_ns);
  CHECK(s.mean_ns <= static_cast<double>(s.max_ns));
  CHECK(s.max_ns < 200 * kMs);  // sanity: a loaded CI machine is late by far less
}

TEST_CASE("LatenessHistogram quantiles are within its 3% resolution", "[realtime]") {
  LatenessHistogram h;
  for (std::int64_t v = 1; v <= 10000; ++v) h.add(v * 1000);  // 1 us .. 10 ms
  const LatenessStats s = h.stats();
  CHECK(s.count == 10000);
  CHECK(s.max_ns == 10'000'000);
  CHECK(s.mean_ns == Approx(5'000'500.0));
  CHECK(s.p99_ns >= 9'900'000);
  CHECK(s.p99_ns <= 9'900'000 * 1.04);
  CHECK(h.quantile(0.5) >= 5'000'000);
  CHECK(h.quantile(0.5) <= 5'000'000 * 1.04);
  LatenessHistogram small;
  for (int v = 0; v < 32; ++v) small.add(v);  // exact below 32 ns
  CHECK(small.quantile(1.0) == 31);
  CHECK(small.quantile(0.5) == 15);
  small.add(-5);  // clamped to 0
  CHECK(small.stats().count == 33);
}

TEST_CASE("RealRuntime cancel", "[realtime]") {
  RealRuntime rt;
  int a = 0, b = 0;
  const TimerId ta = rt.schedule_at(kMs, [&] { ++a; });
  const TimerId tb = rt.schedule_at(2 * kMs, [&] { ++b; });
  CHECK(rt.cancel(tb));
  CHECK_FALSE(rt.cancel(tb));  // already cancelled
  rt.run();
  CHECK(a == 1);
  CHECK(b == 0);
  CHECK_FALSE(rt.cancel(ta));  // already ran
  // A cancelled far-away timer does not keep run() waiting.
  RealRuntime rt2;
  const TimerId far = rt2.schedule_at(60'000 * kMs, [] {});
  rt2.schedule_at(kMs, [&] { rt2.cancel(far); });
  const auto t0 = std::chrono::steady_clock::now();
  rt2.run();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
}

TEST_CASE("RealRuntime::run waits for outstanding device work", "[realtime]") {
  RealRuntime rt;
  bool done = false;
  rt.add_pending();  // e.g. an op handed to a worker thread
  // Read before the worker starts its 30 ms: read after, a descheduled main thread (a loaded
  // CI machine) would see less than 30 ms pass.
  const TimeNs t0 = rt.now();
  std::thread worker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    rt.post([&] {
      done = true;
      rt.done_pending();
    });
  });
  rt.run();  // must not return before the worker's post
  worker.join();
  CHECK(done);
  CHECK(rt.now() - t0 >= 30 * kMs);
}

TEST_CASE("RealRuntime horizon and stop", "[realtime]") {
  SECTION("timers after the horizon do not run") {
    RealRuntime rt;
    bool early = false, late = false;
    rt.schedule_at(kMs, [&] { early = true; });
    rt.schedule_at(500 * kMs, [&] { late = true; });
    rt.run(20 * kMs);
    CHECK(early);
    CHECK_FALSE(late);
    CHECK(rt.now() >= 20 * kMs);
    CHECK(rt.now() < 400 * kMs);
  }
  SECTION("stop from a callback and from another thread") {
    RealRuntime rt;
    int after = 0;
    rt.schedule_at(kMs, [&] { rt.stop(); });
    rt.schedule_at(2 * kMs, [&] { ++after; });
    rt.run();
    CHECK(after == 0);
    rt.run();  // resumable: the remaining timer runs
    CHECK(after == 1);

    RealRuntime rt2;
    rt2.add_pending();  // would wait forever
    std::thread t([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      rt2.stop();
    });
    rt2.run();
    t.join();
    CHECK(rt2.pending() == 1);
  }
  SECTION("an exception from a callback propagates and the runtime stays usable") {
    RealRuntime rt;
    int ran = 0;
    rt.post([] { throw std::runtime_error("boom"); });
    rt.post([&] { ++ran; });
    CHECK_THROWS_AS(rt.run(), std::runtime_error);
    rt.run();
    CHECK(ran == 1);
  }
}
