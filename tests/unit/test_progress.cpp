// Progress text for sweeps and long runs (progress.hpp): durations, the sweep ETA from the
// mean point time, the heartbeat, and the every-K-events sink; numbers worked by hand.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "gpumux/io/progress.hpp"

using gpumux::format_wall_duration;
using gpumux::heartbeat_line;
using gpumux::sweep_progress_line;

TEST_CASE("format_wall_duration: seconds, minutes, hours", "[progress]") {
  CHECK(format_wall_duration(0.0) == "0s");
  CHECK(format_wall_duration(42.9) == "42s");      // rounded down
  CHECK(format_wall_duration(187.0) == "3m07s");   // 3*60 + 7
  CHECK(format_wall_duration(7500.0) == "2h05m");  // 2*3600 + 5*60
  CHECK(format_wall_duration(-1.0) == "?");
}

TEST_CASE("sweep_progress_line: ETA from the mean time of the points run", "[progress]") {
  // 2 of 8 run points took 30 s in all: 15 s each, 6 to go -> 90 s = 1m30s.
  CHECK(sweep_progress_line(2, 8, 2, 8, 30.0) == "[2/8] 25% elapsed 30s, ETA 1m30s");
  // Skipped points count as done but not as time: 3 done (1 skipped), 2 of 4 run in 20 s.
  CHECK(sweep_progress_line(3, 5, 2, 4, 20.0) == "[3/5] 60% elapsed 20s, ETA 20s");
  // Only skips so far: no estimate yet; all run: nothing left.
  CHECK(sweep_progress_line(1, 4, 0, 3, 0.5) == "[1/4] 25% elapsed 0s, ETA ?");
  CHECK(sweep_progress_line(4, 4, 3, 3, 65.0) == "[4/4] 100% elapsed 1m05s, ETA 0s");
}

TEST_CASE("heartbeat_line: simulated time against the horizon, events, wall time", "[progress]") {
  CHECK(heartbeat_line(12'500'000'000, 60'000'000'000, 1234567, 63.0) ==
        "simulated 12.500 s of 60.000 s (20.8%), 1234567 events, 1m03s wall");  // 12.5/60
  CHECK(heartbeat_line(2'000'000'000, gpumux::kTimeNever, 10, 11.0) ==
        "simulated 2.000 s, 10 events, 11s wall");
}

TEST_CASE("EveryKEvents ticks on every K-th event with the count so far", "[progress]") {
  std::vector<std::uint64_t> ticks;
  std::vector<gpumux::TimeNs> times;
  gpumux::EveryKEvents sink(3, [&](const gpumux::Event& e, std::uint64_t n) {
    ticks.push_back(n);
    times.push_back(e.t_ns);
  });
  for (gpumux::TimeNs t = 1; t <= 7; ++t) {
    gpumux::Event e;
    e.t_ns = t * 10;
    sink.on_event(e);
  }
  CHECK(ticks == std::vector<std::uint64_t>{3, 6});
  CHECK(times == std::vector<gpumux::TimeNs>{30, 60});
  CHECK(sink.events() == 7);
}
