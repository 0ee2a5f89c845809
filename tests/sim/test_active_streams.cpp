// ActiveStreams: the busy streams of a device, always ascending (the order a full scan had),
// each at most once.
#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <vector>

#include "gpumux/sim/active_streams.hpp"

TEST_CASE("ActiveStreams keeps its members ascending and unique", "[sim]") {
  gpumux::ActiveStreams active;
  std::set<std::uint32_t> model;
  const auto same = [&] {
    const auto items = active.items();
    REQUIRE(std::vector<std::uint32_t>(items.begin(), items.end()) ==
            std::vector<std::uint32_t>(model.begin(), model.end()));
  };
  for (std::uint32_t i : {5u, 1u, 9u, 1u, 0u, 5u, 12u}) {
    active.add(i);
    model.insert(i);
    same();
  }
  active.retain([](std::uint32_t i) { return i % 2 == 1; });  // drops 0 and 12
  model = {1, 5, 9};
  same();
  active.add(12);  // a dropped member can come back
  active.add(3);
  model.insert(12);
  model.insert(3);
  same();
}
