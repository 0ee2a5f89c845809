// The model zoo acceptance test: every traces/models/*.json loads, and the real architectures
// have their published sizes (parameters within 0.5 %, forward MACs within 5 %).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "gpumux/io/model_files.hpp"
#include "gpumux/model/model.hpp"

namespace {

const std::filesystem::path kZoo = std::filesystem::path(GPUMUX_SOURCE_DIR) / "traces" / "models";

bool within(double actual, double expected, double fraction) {
  return std::fabs(actual - expected) <= fraction * expected;
}

}  // namespace

TEST_CASE("Every zoo model loads", "[zoo]") {
  const gpumux::ModelCatalog zoo(kZoo);
  const auto names = zoo.names();
  REQUIRE(names.size() >= 9);
  for (const auto& name : names) {
    INFO("model " << name);
    const gpumux::Model& m = zoo.at(name);
    CHECK(m.name() == name);
    CHECK(m.layer_count() > 0);
    CHECK(m.params() > 0);
    CHECK(m.weight_bytes() >= 4 * m.params());
    CHECK(m.grouping("per_layer").groups() == m.layer_count());
  }
}

TEST_CASE("Zoo parameter counts match the published numbers", "[zoo]") {
  const gpumux::ModelCatalog zoo(kZoo);
  const std::map<std::string, double> published = {
      {"resnet152", 60192808},  {"resnet50", 25557032},     {"vgg16", 138357544},
      {"alexnet", 61100840},    {"googlenet", 6624904},     {"mobilenet_v2", 3504872},
      {"densenet121", 7978856}, {"inception_v3", 27161264}, {"bert_base", 108.3e6}};
  for (const auto& [name, params] : published) {
    INFO("model " << name << ": " << zoo.at(name).params() << " params, published " << params);
    CHECK(within(static_cast<double>(zoo.at(name).params()), params, 0.005));
  }
  CHECK(zoo.at("resnet152").params() == 60192808);  // exact, as the architecture guide says
}

TEST_CASE("Zoo forward MACs match the published numbers", "[zoo]") {
  const gpumux::ModelCatalog zoo(kZoo);
  const std::map<std::string, double> published = {{"resnet152", 11.5e9}, {"resnet50", 4.1e9},
                                                   {"vgg16", 15.5e9},     {"inception_v3", 5.7e9},
                                                   {"googlenet", 1.5e9},  {"alexnet", 0.71e9}};
  for (const auto& [name, macs] : published) {
    INFO("model " << name << ": " << zoo.at(name).fwd_macs_per_sample() << " MACs, published "
                  << macs);
    CHECK(within(zoo.at(name).fwd_macs_per_sample(), macs, 0.05));
  }
}

TEST_CASE("PipeSwitch groupings and layer counts", "[zoo]") {
  const gpumux::ModelCatalog zoo(kZoo);
  CHECK(zoo.at("resnet152").layer_count() == 313);
  CHECK(zoo.at("resnet152").grouping("pipeswitch").groups() == 52);
  CHECK(zoo.at("inception_v3").grouping("pipeswitch").groups() == 18);
  CHECK(zoo.at("bert_base").grouping("pipeswitch").groups() == 39);
  // Every group of every grouping is a non-empty contiguous range covering the model.
  for (const char* name : {"resnet152", "inception_v3", "bert_base"}) {
    const gpumux::Model& m = zoo.at(name);
    const auto& g = m.grouping("pipeswitch");
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < g.groups(); ++i) {
      const auto range = g.group(i, m.layer_count());
      CHECK_FALSE(range.empty());
      bytes += m.weight_bytes(range);
    }
    CHECK(bytes == m.weight_bytes());
  }
}

TEST_CASE("Inception-v3's auxiliary head is marked and skipped at inference", "[zoo]") {
  const gpumux::ModelCatalog zoo(kZoo);
  const gpumux::Model& m = zoo.at("inception_v3");
  int aux = 0;
  for (const auto& l : m.layers()) aux += l.aux ? 1 : 0;
  CHECK(aux > 0);
}

TEST_CASE("Fluid's three workloads have their hand-computed sizes", "[zoo]") {
  const gpumux::ModelCatalog zoo(kZoo);
  // cifar.py CNN at conv_1 64, conv_2 128, dense_1 1024: convs 896 + 18,496 + 73,856 + 147,584
  // + 295,168 + 590,080 = 1,126,080; BN 2 x (32 + 128 + 256) = 832; FC 4,195,328 + 524,800
  // + 5,130 = 4,725,258. MACs: convs 884,736 + 3 x 18,874,368 + 2 x 37,748,736 = 133,005,312
  // plus FC 4,723,712 = 137,729,024.
  const gpumux::Model& cifar = zoo.at("fluid_cifar_alexnet");
  CHECK(cifar.params() == 1126080 + 832 + 4725258);
  CHECK(cifar.fwd_macs_per_sample() == 137729024.0);
  CHECK(cifar.layer_count() == 15);  // 6 conv + 3 BN + 3 pool + 3 FC
  // RNNModel LSTM, 33,278 tokens, emsize 200, nhid 200, 3 layers, bptt 35: embedding 6,655,600
  // + 3 x (4 x 200 x 400 + 8 x 200) + 200 x 33,278 + 33,278. MACs per 35-token window:
  // 3 x 2 x 35 x 800 x 200 (input + recurrent GEMMs) + 35 x 33,278 x 200 = 266,546,000.
  const gpumux::Model& wlm = zoo.at("fluid_wlm_lstm");
  CHECK(wlm.params() == 6655600 + 3 * 321600 + 6688878);
  CHECK(wlm.fwd_macs_per_sample() == 266546000.0);
  CHECK(wlm.sequence_length() == 35);
  // RaySGD DCGAN: G = 16 x (100x128 + 128x64 + 64x32 + 32x1) + BN 2 x 224 = 369,600;
  // D = 16 x (1x32 + 32x64 + 64x128 + 128x1) + BN 2 x 192 = 166,784. MACs: G 4,530,176
  // (GEMM + col2im form) + D 4,327,424.
  const gpumux::Model& gan = zoo.at("fluid_dcgan_mnist");
  CHECK(gan.params() == 369600 + 166784);
  CHECK(gan.fwd_macs_per_sample() == 4530176.0 + 4327424.0);
  CHECK(gan.layer_count() == 13);  // G: 4 ConvT + 3 BN; D: 4 conv + 2 BN
}
