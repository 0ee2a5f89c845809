// PipeSwitch's grouping search (policies/pipeswitch/grouping.hpp): the cost formula on
// hand-computed cases, optimal == brute force on models small enough to enumerate, and never
// worse than per-layer or whole-model transfer on any zoo model.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "pipeswitch/grouping.hpp"
#include "test_support.hpp"

using namespace gpumux;
using namespace gpumux::policies::pipeswitch;

namespace {

const ModelCatalog& zoo() {
  static const ModelCatalog catalog(test::source_dir() / "traces" / "models");
  return catalog;
}

DeviceProfile profile(const std::string& name) {
  return find_device_profile(test::source_dir() / "traces" / "devices", name);
}

}  // namespace

TEST_CASE("predicted_time follows the pipeline recurrence", "[pipeswitch]") {
  // Three layers; o_c = 10, o_s = 1.
  const std::vector<LayerCost> layers{{100, 50}, {20, 200}, {300, 10}};
  const GroupOverheads o{10, 1};
  // Per layer: S = 110, 140, 450; C = 110+1+50 = 161, max(161,140)+1+200 = 362,
  //            max(362,450)+1+10 = 461.
  CHECK(predicted_time(layers, GroupStarts{0, 1, 2}, o) == 461);
  // Whole: S = 430, C = 430 + 1 + 260 = 691.
  CHECK(predicted_time(layers, GroupStarts{0}, o) == 691);
  // {0,1} {2}: S = 130, C = 130+1+250 = 381; S = 440, C = max(381,440)+1+10 = 451.
  CHECK(predicted_time(layers, GroupStarts{0, 2}, o) == 451);
  // No pipelining: all bytes and calls, then all compute and syncs: 420+30 + 260+3.
  CHECK(predicted_sequential_time(layers, GroupStarts{0, 1, 2}, o) == 713);
  CHECK_THROWS_AS(predicted_time(layers, GroupStarts{1, 2}, o), std::invalid_argument);
  CHECK_THROWS_AS(predicted_time(layers, GroupStarts{0, 3}, o), std::invalid_argument);
  CHECK_THROWS_AS(predicted_time(layers, GroupStarts{0, 2, 1}, o), std::invalid_argument);
}

TEST_CASE("the artifact's per-group host gap delays every later copy", "[pipeswitch]") {
  // Three layers (t, e): o_c = 10, o_s = 5 (the worker's recv), o_h = 30 (Python issue + event
  // sync + pipe message: the copy engine idles that long per group).
  const std::vector<LayerCost> layers{{100, 80}, {50, 300}, {200, 10}};
  const GroupOverheads o{10, 5, 30};
  // Per layer: S = 140, 230, 470 (each copy 10 + 30 + t later than the one before);
  //            C = 140+5+80 = 225, max(225,230)+5+300 = 535, max(535,470)+5+10 = 550.
  CHECK(predicted_time(layers, GroupStarts{0, 1, 2}, o) == 550);
  // The same without the gap: S = 110, 170, 380; C = 195, 500, 515.
  CHECK(predicted_time(layers, GroupStarts{0, 1, 2}, GroupOverheads{10, 5}) == 515);
  // {0} {1,2}: S = 140, C = 225; S = 140+40+250 = 430, C = 430+5+310 = 745.
  CHECK(predicted_time(layers, GroupStarts{0, 1}, o) == 745);
  // {0,1} {2}: S = 190, C = 190+5+380 = 575; S = 430, C = 575+5+10 = 590. Whole: 390+5+390.
  CHECK(predicted_time(layers, GroupStarts{0, 2}, o) == 590);
  CHECK(predicted_time(layers, GroupStarts{0}, o) == 785);
  // No pipelining: 350 + 390 + 3 x (10 + 30 + 5).
  CHECK(predicted_sequential_time(layers, GroupStarts{0, 1, 2}, o) == 875);
  const GroupingResult r = optimal_grouping(layers, o);
  CHECK(r.time_ns == 550);
  CHECK(r.starts == GroupStarts{0, 1, 2});
  CHECK(brute_force_grouping(layers, o).time_ns == 550);
}

TEST_CASE("optimal grouping of a hand-made case", "[pipeswitch]") {
  const std::vector<LayerCost> layers{{100, 50}, {20, 200}, {300, 10}};
  const GroupOverheads o{10, 1};
  const GroupingResult r = optimal_grouping(layers, o);
  // The four partitions cost 461, 451, 691 and {0}{1,2}: S=110, C=161; S=440, C=651 -> 451 wins.
  CHECK(r.time_ns == 451);
  CHECK(r.starts == GroupStarts{0, 2});
  CHECK(brute_force_grouping(layers, o).time_ns == 451);
  CHECK(optimal_grouping(std::vector<LayerCost>{}, o).starts.empty());
}

TEST_CASE("optimal grouping equals brute force on random layer lists", "[pipeswitch]") {
  std::mt19937_64 rng(20201104);  // fixed seed
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t n = 1 + rng() % 14;
    std::vector<LayerCost> layers(n);
    // Mix transfer-bound and compute-bound layers, with zero-byte layers (pools) too.
    for (auto& l : layers) {
      l.transfer_ns = (rng() % 4 == 0) ? 0 : static_cast<DurationNs>(rng() % 5000);
      l.compute_ns = static_cast<DurationNs>(rng() % 5000);
    }
    const GroupOverheads o{static_cast<DurationNs>(rng() % 400),
                           static_cast<DurationNs>(rng() % 400),
                           static_cast<DurationNs>(rng() % 2 == 0 ? 0 : rng() % 400)};
    DYNAMIC_SECTION("trial " << trial << " (" << n << " layers)") {
      const GroupingResult best = brute_force_grouping(layers, o);
      for (const bool bound : {false, true}) {
        for (const bool size : {false, true}) {
          for (const bool dominance : {false, true}) {
            const GroupingResult r =
                optimal_grouping(layers, o, SearchOptions{bound, size, dominance});
            CHECK(r.time_ns == best.time_ns);
            CHECK(predicted_time(layers, r.starts, o) == r.time_ns);
          }
        }
      }
    }
  }
}

TEST_CASE("optimal grouping equals brute force on the first layers of zoo models", "[pipeswitch]") {
  for (const char* device : {"v100-pcie3x16", "t4-pcie3x8"}) {
    const DeviceProfile p = profile(device);
    const CostModel cost(p, CostOptions{});
    for (const char* name : {"resnet152", "inception_v3", "bert_base_seq251", "vgg16",
                             "densenet121", "mobilenet_v2"}) {
      const Model& model = zoo().at(name);
      const auto all = inference_layer_costs(model, cost, 8);
      const std::size_t n = std::min<std::size_t>(all.size(), 16);
      const std::vector<LayerCost> layers(all.begin(), all.begin() + static_cast<long>(n));
      const GroupOverheads o = group_overheads(cost, p.event_ns);
      DYNAMIC_SECTION(name << " on " << device) {
        const GroupingResult best = brute_force_grouping(layers, o);
        const GroupingResult r = optimal_grouping(layers, o);
        CHECK(r.time_ns == best.time_ns);
        // Both heuristics actually cut something on these.
        CHECK(r.stats.nodes < best.stats.nodes);
      }
    }
  }
}

TEST_CASE("optimal grouping is never worse than per-layer or whole on any zoo model",
          "[pipeswitch]") {
  for (const char* device : {"v100-pcie3x16", "t4-pcie3x8", "h100-sxm"}) {
    const DeviceProfile p = profile(device);
    const CostModel cost(p, CostOptions{});
    for (const std::string& name : zoo().names()) {
      const Model& model = zoo().at(name);
      for (const std::uint32_t batch : {1u, 8u}) {
        // The CUDA-backend form (event wait) and the artifact's (recv 3 us, gap 35.5 us).
        for (const GroupOverheads o :
             {group_overheads(cost, p.event_ns), group_overheads(cost, 3'000, 35'500)}) {
          DYNAMIC_SECTION(name << " batch " << batch << " on " << device << ", gap "
                               << o.copy_gap_ns) {
            const auto layers = inference_layer_costs(model, cost, batch);
            const GroupingResult r = optimal_grouping(layers, o);
            INFO("groups " << r.starts.size() << ", nodes " << r.stats.nodes);
            CHECK(predicted_time(layers, r.starts, o) == r.time_ns);
            CHECK(r.time_ns <= predicted_time(layers, per_layer_starts(layers.size()), o));
            CHECK(r.time_ns <= predicted_time(layers, whole_model_starts(layers.size()), o));
            if (model.has_grouping("pipeswitch")) {
              CHECK(r.time_ns <= predicted_time(layers, model.grouping("pipeswitch").starts, o));
            }
          }
        }
      }
    }
  }
}
