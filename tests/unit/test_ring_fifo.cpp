// RingFifo keeps FIFO order across growth and wrap-around (the engine's hook queue).
#include <catch2/catch.hpp>

#include <deque>
#include <string>

#include "gpumux/api/ring_fifo.hpp"

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

TEST_CASE("RingFifo: a moved-from queue is empty and usable, indexing follows the oldest") {
  gpumux::RingFifo<int> a;
  for (int i = 0; i < 40; ++i) a.push_back(i);
  for (int i = 0; i < 30; ++i) a.pop_front();
  for (int i = 40; i < 60; ++i) a.push_back(i);  // wraps around the buffer
  REQUIRE(a.size() == 30);
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == 30 + static_cast<int>(i));
  gpumux::RingFifo<int> b = std::move(a);
  CHECK(a.empty());  // NOLINT(bugprone-use-after-move): the documented moved-from state
  a.push_back(7);
  CHECK(a.front() == 7);
  CHECK(b.size() == 30);
  CHECK(b.front() == 30);
}
