// OpCostMemo returns exactly what CostModel computes (the engine relies on byte-identical
// results), for every shape a run asks for, on first and repeated lookups, and keeps shapes
// that differ only in pass, inference, batch or model apart.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "gpumux/model/op_cost_memo.hpp"

namespace {

const std::filesystem::path kTraces = std::filesystem::path(GPUMUX_SOURCE_DIR) / "traces";

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void require_same(const gpumux::OpKernels& a, const gpumux::OpKernels& b) {
  REQUIRE(a.kernels == b.kernels);
  REQUIRE(a.gpu_ns == b.gpu_ns);
  REQUIRE(a.host_ns == b.host_ns);
  REQUIRE(same_bits(a.full_residual_ns2, b.full_residual_ns2));
  REQUIRE(same_bits(a.full_wave_residual_ns2, b.full_wave_residual_ns2));
}

}  // namespace

TEST_CASE("OpCostMemo equals CostModel on every range of a model", "[cost_model]") {
  const gpumux::ModelCatalog zoo(kTraces / "models");
  const gpumux::DeviceProfile profile =
      gpumux::load_device_profile(kTraces / "devices" / "v100-pcie3x16.json");
  const gpumux::CostModel cost(profile, gpumux::CostOptions{gpumux::Precision::Fp32, 3000});
  gpumux::OpCostMemo memo(cost);
  const gpumux::Model& incep = zoo.at("inception_v3");  // aux layers: inference differs
  const gpumux::Model& resnet = zoo.at("resnet50");
  for (int round = 0; round < 2; ++round) {  // the second round is answered from the memo
    for (const gpumux::Model* m : {&incep, &resnet}) {
      const std::uint32_t n = m->layer_count();
      for (std::uint32_t first = 0; first < n; first += 7) {
        for (std::uint32_t last = first + 1; last <= n; last += 5) {
          const gpumux::LayerRange r{first, last};
          for (std::uint32_t batch : {1u, 8u}) {
            for (auto pass : {gpumux::Pass::Forward, gpumux::Pass::Backward}) {
              for (bool inference : {false, true}) {
                require_same(memo.op_kernels(*m, r, batch, pass, inference),
                             cost.op_kernels(*m, r, batch, pass, inference));
              }
              REQUIRE(same_bits(memo.op_demand(*m, r, batch, pass),
                                cost.op_demand(*m, r, batch, pass)));
            }
          }
        }
      }
      for (auto opt : {gpumux::Optimizer::Sgd, gpumux::Optimizer::Adam}) {
        require_same(memo.update_kernels(*m, opt), cost.update_kernels(*m, opt));
      }
    }
  }
  const std::size_t shapes = memo.size();
  (void)memo.op_kernels(resnet, {0, 1}, 1, gpumux::Pass::Forward, false);
  CHECK(memo.size() == shapes);  // a repeated shape adds nothing
}

TEST_CASE("OpCostMemo does not memoise errors", "[cost_model]") {
  const gpumux::ModelCatalog zoo(kTraces / "models");
  const gpumux::DeviceProfile profile =
      gpumux::load_device_profile(kTraces / "devices" / "v100-pcie3x16.json");
  const gpumux::CostModel cost(profile, gpumux::CostOptions{});
  gpumux::OpCostMemo memo(cost);
  const gpumux::Model& m = zoo.at("resnet50");
  const gpumux::LayerRange bad{0, m.layer_count() + 1};
  for (int i = 0; i < 2; ++i) {
    CHECK_THROWS_AS(memo.op_kernels(m, bad, 1, gpumux::Pass::Forward, false), std::out_of_range);
  }
  CHECK(memo.size() == 0);
}
