// Memory pools: best-fit choice, coalescing, alignment, out-of-memory, statistics, misuse.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "gpumux/api/errors.hpp"
#include "gpumux/model/memory.hpp"

using gpumux::Allocation;
using gpumux::BestFitPool;
using gpumux::FixedBlockPool;

TEST_CASE("BestFitPool picks the smallest hole that fits", "[memory]") {
  BestFitPool pool(4096);
  const Allocation a = pool.allocate(1024, "test");  // [0, 1024)
  const Allocation b = pool.allocate(512, "test");   // [1024, 1536)
  const Allocation c = pool.allocate(256, "test");   // [1536, 1792)
  const Allocation d = pool.allocate(512, "test");   // [1792, 2304)
  const Allocation e = pool.allocate(256, "test");   // [2304, 2560); tail [2560, 4096) free
  CHECK(a.offset == 0);
  CHECK(b.offset == 1024);
  CHECK(c.offset == 1536);
  CHECK(d.offset == 1792);
  CHECK(e.offset == 2304);
  pool.deallocate(a);  // hole of 1024 at 0
  pool.deallocate(d);  // hole of 512 at 1792
  CHECK(pool.free_blocks() == 3);

  // Holes: 1024 @0, 512 @1792, 1536 @2560. 512 fits exactly in the 512 hole.
  const Allocation f = pool.allocate(512, "test");
  CHECK(f.offset == 1792);
  // 768 (rounded from 700): the 1024 hole is the smallest that fits; 256 remain at 768.
  const Allocation g = pool.allocate(700, "test");
  CHECK(g.offset == 0);
  CHECK(g.bytes == 768);
  const Allocation h = pool.allocate(256, "test");
  CHECK(h.offset == 768);  // the 256 remainder beats the 1536 tail
  CHECK(pool.stats().largest_free_bytes == 1536);
  (void)b, (void)c, (void)e;
}

TEST_CASE("BestFitPool coalesces with both neighbours", "[memory]") {
  BestFitPool pool(768);
  const Allocation x = pool.allocate(256, "t");
  const Allocation y = pool.allocate(256, "t");
  const Allocation z = pool.allocate(256, "t");
  CHECK(pool.free_blocks() == 0);
  CHECK(pool.stats().largest_free_bytes == 0);
  pool.deallocate(x);
  pool.deallocate(z);
  CHECK(pool.free_blocks() == 2);
  CHECK(pool.stats().largest_free_bytes == 256);
  pool.deallocate(y);  // merges with x on the left and z on the right
  CHECK(pool.free_blocks() == 1);
  CHECK(pool.stats().largest_free_bytes == 768);
  CHECK(pool.allocate(768, "t").offset == 0);
}

TEST_CASE("BestFitPool merges left-only and right-only", "[memory]") {
  BestFitPool pool(1024);
  const Allocation a = pool.allocate(256, "t");
  const Allocation b = pool.allocate(256, "t");
  const Allocation c = pool.allocate(256, "t");  // tail [768, 1024) stays free
  pool.deallocate(c);                            // merges right with the tail
  CHECK(pool.free_blocks() == 1);
  CHECK(pool.stats().largest_free_bytes == 512);
  pool.deallocate(a);
  CHECK(pool.free_blocks() == 2);
  pool.deallocate(b);  // joins everything
  CHECK(pool.free_blocks() == 1);
  CHECK(pool.stats().largest_free_bytes == 1024);
}

TEST_CASE("Allocations are rounded and aligned, padding stays usable", "[memory]") {
  BestFitPool pool(8192);
  const Allocation a = pool.allocate(100, "t");  // default alignment 256
  CHECK(a.offset == 0);
  CHECK(a.bytes == 256);
  const Allocation big = pool.allocate(1, "t", 4096);  // 1 B rounded to 4096, at 4096
  CHECK(big.offset == 4096);
  CHECK(big.bytes == 4096);
  CHECK(pool.free_blocks() == 1);  // the padding [256, 4096)
  CHECK(pool.stats().largest_free_bytes == 3840);
  const Allocation small = pool.allocate(64, "t", 64);
  CHECK(small.offset == 256);
  CHECK(small.bytes == 64);

  CHECK_THROWS_AS(pool.try_allocate(64, 3), std::invalid_argument);
  CHECK_THROWS_AS(pool.try_allocate(64, 0), std::invalid_argument);

  BestFitPool based(1024, 1 << 20);  // offsets are absolute within the arena
  CHECK(based.allocate(256, "t").offset == (1u << 20));
}

TEST_CASE("Out of memory: nullopt from try_allocate, OutOfMemory from allocate", "[memory]") {
  BestFitPool pool(1024);
  const Allocation a = pool.allocate(512, "t");
  (void)pool.allocate(256, "t");
  pool.deallocate(a);  // free: 512 @0 and 256 @768
  CHECK_FALSE(pool.try_allocate(600).has_value());
  try {
    (void)pool.allocate(600, "device 0 arena");
    FAIL("expected OutOfMemory");
  } catch (const gpumux::OutOfMemory& e) {
    CHECK(e.requested_bytes() == 768);
    CHECK_THAT(e.what(), Catch::Matchers::Equals(
                             "device 0 arena: out of memory: requested 768 B, largest free "
                             "block 512 B"));
  }
  const auto s = pool.stats();
  CHECK(s.failures == 2);
  CHECK(s.allocations == 2);
  CHECK(s.capacity_bytes == 1024);
  CHECK(s.in_use_bytes == 256);
}

TEST_CASE("Statistics track in-use bytes and the peak", "[memory]") {
  BestFitPool pool(4096);
  const Allocation a = pool.allocate(512, "t");
  const Allocation b = pool.allocate(256, "t");
  pool.deallocate(a);
  const Allocation c = pool.allocate(128, "t");  // rounds to 256
  const auto s = pool.stats();
  CHECK(s.in_use_bytes == 512);
  CHECK(s.peak_bytes == 768);
  CHECK(s.allocations == 3);
  CHECK(s.failures == 0);
  pool.deallocate(b);
  pool.deallocate(c);
  CHECK(pool.stats().in_use_bytes == 0);
  CHECK(pool.stats().peak_bytes == 768);
  CHECK(pool.stats().largest_free_bytes == 4096);
}

TEST_CASE("Zero-byte allocations are empty, misuse is a logic_error", "[memory]") {
  BestFitPool pool(1024);
  const auto empty = pool.try_allocate(0);
  REQUIRE(empty.has_value());
  CHECK_FALSE(empty->valid());
  CHECK(pool.stats().allocations == 0);
  CHECK_NOTHROW(pool.deallocate(*empty));

  const Allocation a = pool.allocate(256, "t");
  pool.deallocate(a);
  CHECK_THROWS_AS(pool.deallocate(a), std::logic_error);                     // double free
  CHECK_THROWS_AS(pool.deallocate(Allocation{512, 256}), std::logic_error);  // never allocated
  const Allocation b = pool.allocate(512, "t");
  CHECK_THROWS_AS(pool.deallocate(Allocation{b.offset, 256}), std::logic_error);  // wrong size
  CHECK(pool.stats().in_use_bytes == 512);
}

TEST_CASE("FixedBlockPool hands out equal blocks", "[memory]") {
  FixedBlockPool pool(1024, 4, 8192);
  CHECK(pool.block_bytes() == 1024);
  CHECK(pool.stats().capacity_bytes == 4096);
  const Allocation a = pool.allocate(1000, "t");
  const Allocation b = pool.allocate(10, "t");
  CHECK(a.offset == 8192);
  CHECK(a.bytes == 1024);  // a whole block is in use, whatever was asked
  CHECK(b.offset == 8192 + 1024);
  (void)pool.allocate(1024, "t");
  (void)pool.allocate(1024, "t");
  CHECK_FALSE(pool.try_allocate(1).has_value());
  CHECK(pool.stats().largest_free_bytes == 0);
  pool.deallocate(a);
  CHECK(pool.stats().largest_free_bytes == 1024);
  CHECK_FALSE(pool.try_allocate(2048).has_value());  // larger than a block
  CHECK(pool.allocate(512, "t").offset == 8192);     // the freed block comes back
  CHECK_THROWS_AS(pool.deallocate(Allocation{8192 + 100, 1024}), std::logic_error);
  const auto s = pool.stats();
  CHECK(s.in_use_bytes == 4096);
  CHECK(s.peak_bytes == 4096);
  CHECK(s.failures == 2);
  CHECK_THROWS_AS(pool.allocate(1, "slots"), gpumux::OutOfMemory);
}

TEST_CASE("FixedBlockPool rejects double frees", "[memory]") {
  FixedBlockPool pool(256, 2);
  const Allocation a = pool.allocate(256, "t");
  pool.deallocate(a);
  CHECK_THROWS_AS(pool.deallocate(a), std::logic_error);
  CHECK(pool.stats().in_use_bytes == 0);
}
