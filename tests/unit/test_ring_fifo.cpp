// RingFifo keeps FIFO order across growth and wrap-around (the engine's hook queue).
#include <catch2/catch.hpp>

#include <deque>
#include <string>

#include "gpumux/ring_fifo.hpp"

TEST_CASE("RingFifo is a FIFO across growth and wrap-around", "[ring_fifo]") {
  gpumux::RingFifo<std::string> q;
  std::deque<std::string> model;
  CHECK(q.empty());
  int next = 0;
  // Bursts of pushes larger than the pops, then drain: the ring grows while wrapped.
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < round % 7 + 3; ++i) {
      q.push_back(std::to_string(next));
      model.push_back(std::to_string(next));
      ++next;
    }
    for (int i = 0; i < round % 5 + 1 && !model.empty(); ++i) {
      REQUIRE(q.front() == model.front());
      q.pop_front();
      model.pop_front();
    }
    REQUIRE(q.size() == model.size());
  }
  while (!model.empty()) {
    REQUIRE(q.front() == model.front());
    q.pop_front();
    model.pop_front();
  }
  CHECK(q.empty());
}
