// Memory dry runs (probe, can_allocate) and mirrors (claim, largest_free_after_claim): each
// answers exactly what the real operation on a copy of the pool does.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "gpumux/model/memory.hpp"

using gpumux::Allocation;
using gpumux::BestFitPool;
using gpumux::FixedBlockPool;

TEST_CASE("Dry runs replay best fit on a fragmented arena", "[memory]") {
  // 4096 B: state [0,1024) and [2048,2560), activations [1024,1536) in the live pool; the
  // settled pool mirrors the state only.
  BestFitPool live(4096), settled(4096);
  const Allocation s0 = live.allocate(1024, "test");
  const Allocation act = live.allocate(512, "test");
  const Allocation gap = live.allocate(512, "test");  // [1536,2048), freed below
  const Allocation s1 = live.allocate(512, "test");
  live.deallocate(gap);
  settled.claim(s0);
  settled.claim(s1);
  CHECK(act.offset == 1024);
  CHECK(settled.stats().in_use_bytes == 1536);
  // Free now: [1536,2048) and [2560,4096). A 500 B state goes best fit into [1536,2048);
  // without the activation the holes are then [1024,1536) and [2560,4096): 1536 B.
  const auto small = live.probe(500);
  REQUIRE(small);
  CHECK(*small == Allocation{1536, 512});
  CHECK(settled.largest_free_after_claim(*small) == 1536);
  // A 1024 B state only fits the tail at [2560,3584); the largest hole left is [1024,2048).
  const auto big = live.probe(1024);
  REQUIRE(big);
  CHECK(big->offset == 2560);
  CHECK(settled.largest_free_after_claim(*big) == 1024);
  CHECK_FALSE(live.probe(2048));
  // Two allocations: 512 + 1536 fit (one per hole), 1024 + 1024 do not (bytes would).
  const std::uint64_t fit[] = {512, 1536};
  const std::uint64_t no_fit[] = {1024, 1024};
  CHECK(live.can_allocate(fit));
  CHECK_FALSE(live.can_allocate(no_fit));
  CHECK(live.stats().allocations == 4);  // dry runs count nothing
  CHECK(live.stats().failures == 0);
  // A claim of a range that is not free is refused.
  CHECK_THROWS_AS(settled.claim(Allocation{512, 256}), std::logic_error);
  settled.deallocate(s0);
  CHECK(settled.stats().in_use_bytes == 512);
}

TEST_CASE("Dry runs agree with the real operations on random pools", "[memory]") {
  std::mt19937_64 rng(11);
  std::size_t fits = 0, misses = 0;
  for (int round = 0; round < 200; ++round) {
    const std::uint64_t capacity = 256 * (8 + rng() % 40) + (rng() % 2) * 100;
    BestFitPool pool(capacity);
    std::vector<Allocation> live;
    for (int step = 0; step < 30; ++step) {
      if (!live.empty() && rng() % 3 == 0) {
        const std::size_t i = rng() % live.size();
        pool.deallocate(live[i]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (auto a = pool.try_allocate(1 + rng() % 2000)) {
        live.push_back(*a);
      }
    }
    for (int q = 0; q < 20; ++q) {
      const std::uint64_t sizes[3] = {rng() % 3000, 1 + rng() % 2000, rng() % 1500};
      const std::size_t n = 1 + rng() % 3;
      BestFitPool copy = pool;
      bool all = true;
      for (std::size_t i = 0; i < n && all; ++i) {
        if (sizes[i] > 0) all = copy.try_allocate(sizes[i]).has_value();
      }
      CHECK(pool.can_allocate(std::span<const std::uint64_t>(sizes, n)) == all);
      (all ? fits : misses) += 1;
      BestFitPool one = pool;
      const auto probed = pool.probe(sizes[1]);
      const auto got = one.try_allocate(sizes[1]);
      REQUIRE(probed.has_value() == got.has_value());
      if (!got) continue;
      CHECK(*probed == *got);
      BestFitPool mirror = pool;
      const std::uint64_t predicted = pool.largest_free_after_claim(*got);
      mirror.claim(*got);
      CHECK(predicted == mirror.stats().largest_free_bytes);
    }
  }
  CHECK(fits > 100);  // both answers occur
  CHECK(misses > 100);
}

TEST_CASE("FixedBlockPool dry runs count free blocks", "[memory]") {
  FixedBlockPool pool(256, 2);
  const std::uint64_t two[] = {100, 256};
  const std::uint64_t three[] = {1, 1, 1};
  const std::uint64_t too_big[] = {257};
  CHECK(pool.can_allocate(two));
  CHECK_FALSE(pool.can_allocate(three));
  CHECK_FALSE(pool.can_allocate(too_big));
  const auto p = pool.probe(10);
  REQUIRE(p);
  CHECK(*p == pool.allocate(10, "test"));
  CHECK_THROWS_AS(pool.claim(Allocation{256, 256}), std::logic_error);
}
