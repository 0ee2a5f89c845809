// Ring all-reduce over a cluster's links, checked by hand for 2 and 4 GPUs on one node and
// across two nodes; the bottleneck rule; one data-parallel iteration (collective_cost.hpp).
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "gpumux/io/model_files.hpp"
#include "gpumux/model/collective_cost.hpp"
#include "gpumux/model/model.hpp"
#include "unit_fixtures.hpp"

namespace fx = gpumux::fixtures;
using gpumux::DeviceId;
using gpumux::DurationNs;
using gpumux::Link;
using gpumux::Topology;

namespace {

// 2 nodes x 4 GPUs: a PCIe-class link of 100 Gbit/s and 5 us inside a node, 10 GbE with
// 9.6 us between nodes (the config's network default).
Topology two_nodes() {
  Topology t;
  t.nodes = 2;
  t.gpus_per_node = 4;
  t.intra_node = Link{100.0, 5'000};
  t.network = Link{10.0, 9'600};
  return t;
}

std::vector<DeviceId> ids(std::initializer_list<int> list) {
  std::vector<DeviceId> out;
  for (const int i : list) out.push_back(static_cast<DeviceId>(i));
  return out;
}

constexpr std::uint64_t kHundredMb = 100'000'000;  // 8e8 bits

}  // namespace

TEST_CASE("Ring all-reduce on one node, by hand", "[collective]") {
  const Topology t = two_nodes();
  // w = 2: 2 (w-1)/w = 1; 1 x 8e8 bit / 100 bit/ns = 8,000,000 ns; 2 (w-1) = 2 steps x 5,000 ns
  // = 10,000 ns. Total 8,010,000 ns.
  CHECK(gpumux::ring_allreduce_ns(t, ids({0, 1}), kHundredMb) == 8'010'000);
  // w = 4: 2 x 3 / 4 = 1.5; 1.5 x 8,000,000 = 12,000,000 ns; 6 steps x 5,000 = 30,000 ns.
  // Total 12,030,000 ns.
  CHECK(gpumux::ring_allreduce_ns(t, ids({0, 1, 2, 3}), kHundredMb) == 12'030'000);
  // The same on the second node: only which node, not which GPUs, matters.
  CHECK(gpumux::ring_allreduce_ns(t, ids({7, 5}), kHundredMb) == 8'010'000);
}

TEST_CASE("Ring all-reduce across two nodes, by hand", "[collective]") {
  const Topology t = two_nodes();
  // w = 2, one GPU on each node: only the network. 1 x 8e8 / 10 = 80,000,000 ns; 2 steps x
  // 9,600 = 19,200 ns. Total 80,019,200 ns.
  CHECK(gpumux::ring_allreduce_ns(t, ids({0, 4}), kHundredMb) == 80'019'200);
  // w = 4, two GPUs on each node: both links crossed. Steps: intra 5,000 + 2e8 bit / 100 =
  // 2,005,000 ns; network 9,600 + 2e8 / 10 = 20,009,600 ns: the network is the bottleneck.
  // 1.5 x 8e8 / 10 = 120,000,000 ns; 6 steps x 9,600 = 57,600 ns. Total 120,057,600 ns.
  CHECK(gpumux::ring_allreduce_ns(t, ids({0, 1, 4, 5}), kHundredMb) == 120'057'600);
  // Equal to 6 steps of the network step: 6 x 20,009,600.
  CHECK(gpumux::ring_allreduce_ns(t, ids({0, 1, 4, 5}), kHundredMb) == 6 * 20'009'600);
}

TEST_CASE("One GPU, or nothing to send, costs nothing", "[collective]") {
  const Topology t = two_nodes();
  CHECK(gpumux::ring_allreduce_ns(t, ids({3}), kHundredMb) == 0);
  CHECK(gpumux::ring_allreduce_ns(t, ids({}), kHundredMb) == 0);
  CHECK(gpumux::ring_allreduce_ns(kHundredMb, 1, Link{10.0, 9'600}) == 0);
  CHECK(gpumux::ring_allreduce_ns(0, 4, Link{10.0, 9'600}) == 0);
}

TEST_CASE("The ring's bottleneck is the slowest link it crosses", "[collective]") {
  Topology t = two_nodes();
  SECTION("one node: the intra-node link, however slow the network") {
    CHECK(gpumux::ring_bottleneck(t, ids({0, 1, 2}), kHundredMb) == t.intra_node);
    const auto c = gpumux::ring_crossing(t, ids({0, 1, 2}));
    CHECK(c.intra_node);
    CHECK_FALSE(c.network);
  }
  SECTION("one GPU per node: the network only") {
    const auto c = gpumux::ring_crossing(t, ids({1, 6}));
    CHECK_FALSE(c.intra_node);
    CHECK(c.network);
    CHECK(gpumux::ring_bottleneck(t, ids({1, 6}), kHundredMb) == t.network);
  }
  SECTION("a network faster than the intra-node link leaves the intra-node link the bottleneck") {
    t.network = Link{400.0, 1'000};
    CHECK(gpumux::ring_bottleneck(t, ids({0, 1, 4, 5}), kHundredMb) == t.intra_node);
    // = the one-node w = 4 figure: 12,030,000 ns.
    CHECK(gpumux::ring_allreduce_ns(t, ids({0, 1, 4, 5}), kHundredMb) == 12'030'000);
    // But with one GPU per node the fast network is all the ring crosses: 1 x 8e8 / 400 =
    // 2,000,000 ns + 2 x 1,000 ns = 2,002,000 ns.
    CHECK(gpumux::ring_allreduce_ns(t, ids({0, 4}), kHundredMb) == 2'002'000);
  }
  SECTION("a small message: the link with the longer latency") {
    // 1,000 bytes over 4 GPUs: a chunk is 250 bytes = 2,000 bits. Intra: 5,000 + 2,000/100 =
    // 5,020 ns per step; a low-latency slow network: 1,000 + 2,000/10 = 1,200 ns. The
    // intra-node step is longer: 6 x 5,020 = 30,120 ns.
    t.network = Link{10.0, 1'000};
    CHECK(gpumux::ring_bottleneck(t, ids({0, 1, 4, 5}), 1'000) == t.intra_node);
    CHECK(gpumux::ring_allreduce_ns(t, ids({0, 1, 4, 5}), 1'000) == 30'120);
  }
}

TEST_CASE("A ring over devices outside the cluster or repeated is an error", "[collective]") {
  const Topology t = two_nodes();
  CHECK_THROWS_AS(gpumux::ring_crossing(t, ids({0, 8})), std::invalid_argument);
  CHECK_THROWS_AS(gpumux::ring_allreduce_ns(t, ids({2, 2}), kHundredMb), std::invalid_argument);
}

TEST_CASE("Ring all-reduce rounds to the nearest ns", "[collective]") {
  // 3 GPUs, 1 byte over 3 Gbit/s, no latency: 2 x 2/3 x 8 / 3 = 32/9 = 3.56 ns -> 4 ns.
  CHECK(gpumux::ring_allreduce_ns(1, 3, Link{3.0, 0}) == 4);
  // 9 bytes over 4 GPUs at 8 Gbit/s: 1.5 x 72 / 8 = 13.5 ns -> 14 (halves away from zero).
  CHECK(gpumux::ring_allreduce_ns(9, 4, Link{8.0, 0}) == 14);
}

TEST_CASE("Gradient bytes and the per-GPU batch", "[collective]") {
  const auto model = gpumux::parse_model_text(fx::model_json("small").dump(), "small.json");
  // The fixture model holds 6,152 weight bytes (1,522 params + 16 buffers, fp32).
  CHECK(gpumux::gradient_bytes(model, gpumux::Precision::Fp32) == 6'152);
  CHECK(gpumux::gradient_bytes(model, gpumux::Precision::Tf32) == 6'152);
  CHECK(gpumux::gradient_bytes(model, gpumux::Precision::Fp16) == 3'076);
  CHECK(gpumux::gradient_bytes(model, gpumux::Precision::Bf16) == 3'076);
  CHECK(gpumux::per_gpu_batch(64, 4) == 16);
  CHECK(gpumux::per_gpu_batch(65, 4) == 17);  // the most loaded GPU holds ceil(65 / 4)
  CHECK(gpumux::per_gpu_batch(3, 4) == 1);
  CHECK(gpumux::per_gpu_batch(64, 1) == 64);
}

TEST_CASE("A data-parallel iteration: compute, then the all-reduce", "[collective]") {
  // 30 ms of compute at the per-GPU batch and a 12.03 ms all-reduce (w = 4 on one node).
  const DurationNs compute = 30'000'000;
  const DurationNs allreduce = 12'030'000;
  // No overlap (the default assumption): 30 + 12.03 = 42.03 ms.
  CHECK(gpumux::data_parallel_iteration_ns(compute, allreduce) == 42'030'000);
  // Full overlap: max(30, 12.03) = 30 ms; half: 42.03 - 6.015 = 36.015 ms.
  CHECK(gpumux::data_parallel_iteration_ns(compute, allreduce, 1.0) == 30'000'000);
  CHECK(gpumux::data_parallel_iteration_ns(compute, allreduce, 0.5) == 36'015'000);
  // An all-reduce longer than the compute cannot hide more than the compute: max(5, 12.03).
  CHECK(gpumux::data_parallel_iteration_ns(5'000'000, allreduce, 1.0) == allreduce);
  // Out-of-range overlap is clamped.
  CHECK(gpumux::data_parallel_iteration_ns(compute, allreduce, -1.0) == 42'030'000);
  CHECK(gpumux::data_parallel_iteration_ns(compute, allreduce, 7.0) == 30'000'000);
  CHECK(gpumux::data_parallel_iteration_ns(compute, 0) == compute);  // one GPU
}
