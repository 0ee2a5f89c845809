// The released FluidBandScheduler's Stage 1 packing (policies/fluid/band_packing.hpp), one
// hand-worked case per branch and per documented quirk.
#include <vector>

#include <catch2/catch.hpp>

#include "fluid/band_packing.hpp"

using namespace gpumux::policies::fluid;

namespace {

std::vector<std::uint32_t> gpus_of(const std::vector<BandSlot>& slots) {
  std::vector<std::uint32_t> g;
  for (const BandSlot& s : slots) g.push_back(s.gpu);
  return g;
}

}  // namespace

TEST_CASE("band stage 1, trials > GPUs: serpentine MPS packing with 0.6 / 0.4", "[fluid]") {
  SECTION("5 trials on 3 GPUs") {
    // Sorted: 9 (#1), 6 (#4), 4 (#2), 2 (#0), 1 (#3); total 22, half 11.
    // Time before each: 0, 9, 15, 19, 21 -> shares .6, .6, .4, .4, .4.
    // GPUs: round 0 -> 0, 1, 2; round 1 mirrored -> 2, 1.
    const BandPacking p = band_stage1_packing(std::vector<double>{2, 9, 4, 1, 6}, 3);
    CHECK(p.branch == BandBranch::mps_packing);
    CHECK(p.order == std::vector<std::size_t>{1, 4, 2, 0, 3});
    const std::vector<std::uint32_t> gpu{2, 0, 2, 1, 1};  // by input index
    const std::vector<double> share{0.4, 0.6, 0.4, 0.4, 0.6};
    for (std::size_t i = 0; i < 5; ++i) {
      REQUIRE(p.slots[i].size() == 1);
      CHECK(p.slots[i][0].gpu == gpu[i]);
      CHECK(p.slots[i][0].share == share[i]);
    }
  }
  SECTION("quirk q2: two 0.6 shares land on one GPU; a third round goes forward again") {
    // 5 equal trials on 2 GPUs, half = 2.5: before = 0, 1, 2 -> .6; 3, 4 -> .4.
    // GPUs 0, 1 | 1, 0 | 0: GPU 1 holds two 0.6 shares (1.2 > 1, Ray makes one wait).
    const BandPacking p = band_stage1_packing(std::vector<double>{1, 1, 1, 1, 1}, 2);
    const std::vector<std::uint32_t> gpu{0, 1, 1, 0, 0};
    const std::vector<double> share{0.6, 0.6, 0.6, 0.4, 0.4};
    for (std::size_t i = 0; i < 5; ++i) {
      CHECK(p.slots[i][0].gpu == gpu[i]);
      CHECK(p.slots[i][0].share == share[i]);
    }
  }
}

TEST_CASE("band stage 1, trials == GPUs: distributed bin packing and the rt[-0] quirk", "[fluid]") {
  // Sorted: 8 (#0), 2 (#2), 1 (#1), 1 (#3); top G//2 = 2 trials.
  const std::vector<double> t{8, 1, 2, 1};
  SECTION("as the code runs: S = rt[0] + rt[-1] = 8 + 1 = 9, int(8/9) = 0 -> 1 GPU each") {
    const BandPacking p = band_stage1_packing(t, 4);
    CHECK(p.branch == BandBranch::distributed_bin_packing);
    CHECK(gpus_of(p.slots[0]) == std::vector<std::uint32_t>{0});
    CHECK(gpus_of(p.slots[2]) == std::vector<std::uint32_t>{1});
    CHECK(gpus_of(p.slots[1]) == std::vector<std::uint32_t>{2});
    CHECK(gpus_of(p.slots[3]) == std::vector<std::uint32_t>{3});
  }
  SECTION("intended reading (ours): S = 1 + 1 = 2, int(8/2) = 4 GPUs, then the hand-out wraps") {
    BandKnobs k;
    k.intended_small_sum = true;
    const BandPacking p = band_stage1_packing(t, 4, k);
    CHECK(gpus_of(p.slots[0]) == std::vector<std::uint32_t>{0, 1, 2, 3});
    CHECK(gpus_of(p.slots[2]) == std::vector<std::uint32_t>{0});  // int(2/2) = 1, wrapped
    CHECK(gpus_of(p.slots[1]) == std::vector<std::uint32_t>{1});
    CHECK(gpus_of(p.slots[3]) == std::vector<std::uint32_t>{2});
    for (const auto& s : p.slots) CHECK(s[0].share == 1.0);
  }
}

TEST_CASE("band stage 1, trials < GPUs: even bin packing", "[fluid]") {
  SECTION("two long trials share the spare GPUs round-robin up to MAX_WORKER") {
    // mean 5: add = {6, 6}; extra = min(2 * 4, 8) - 3 = 5 -> +1 +1 +1 +1 +1 alternating:
    // 4, 3, 1 GPUs, contiguous from GPU 0.
    const BandPacking p = band_stage1_packing(std::vector<double>{6, 6, 3}, 8);
    CHECK(p.branch == BandBranch::even_bin_packing);
    CHECK(gpus_of(p.slots[0]) == std::vector<std::uint32_t>{0, 1, 2, 3});
    CHECK(gpus_of(p.slots[1]) == std::vector<std::uint32_t>{4, 5, 6});
    CHECK(gpus_of(p.slots[2]) == std::vector<std::uint32_t>{7});
  }
  SECTION("quirk q3: extra = min(1 * 4, 8) - 2 = 2, so 4 of 8 GPUs stay idle") {
    const BandPacking p = band_stage1_packing(std::vector<double>{2, 10}, 8);
    CHECK(gpus_of(p.slots[1]) == std::vector<std::uint32_t>{0, 1, 2});
    CHECK(gpus_of(p.slots[0]) == std::vector<std::uint32_t>{3});
  }
  SECTION("equal times: nobody is above the mean, one GPU each") {
    const BandPacking p = band_stage1_packing(std::vector<double>{5, 5}, 4);
    CHECK(gpus_of(p.slots[0]) == std::vector<std::uint32_t>{0});
    CHECK(gpus_of(p.slots[1]) == std::vector<std::uint32_t>{1});
  }
}

TEST_CASE("band stage 1: invalid input", "[fluid]") {
  CHECK_THROWS_AS(band_stage1_packing(std::vector<double>{}, 2), std::invalid_argument);
  CHECK_THROWS_AS(band_stage1_packing(std::vector<double>{1.0}, 0), std::invalid_argument);
  CHECK_THROWS_AS(band_stage1_packing(std::vector<double>{0.0}, 2), std::invalid_argument);
}
