// at_sequence_length (gpumux/model/model.hpp, D38): BERT-base re-shaped from its own 128 tokens to
// 251 must equal the zoo's bert_base_seq251.json, which traces/models/generate_zoo.py writes
// from the architecture at that length; the engine costs input-length requests with it.
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>

#include "gpumux/io/model_files.hpp"
#include "gpumux/model/model.hpp"
#include "test_support.hpp"

using namespace gpumux;

namespace {

bool close_rel(double a, double b, double rel) {
  return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b));
}

}  // namespace

TEST_CASE("at_sequence_length(bert_base, 251) equals the zoo's bert_base_seq251", "[model]") {
  const ModelCatalog zoo(test::source_dir() / "traces/models");
  const Model& base = zoo.at("bert_base");
  const Model& want = zoo.at("bert_base_seq251");
  REQUIRE(base.sequence_length() == 128);
  const Model got = at_sequence_length(base, 251);
  CHECK(got.name() == "bert_base@seq251");
  CHECK(got.sequence_length() == 251);
  REQUIRE(got.layer_count() == want.layer_count());
  REQUIRE(got.layer_count() == base.layer_count());
  for (std::uint32_t i = 0; i < got.layer_count(); ++i) {
    const Layer& g = got.layer(i);
    const Layer& w = want.layer(i);
    INFO("layer " << i << " " << w.name);
    CHECK(g.name == w.name);
    CHECK(g.kind == w.kind);
    REQUIRE(g.gemms.size() == w.gemms.size());
    for (std::size_t k = 0; k < g.gemms.size(); ++k) {
      CHECK(g.gemms[k].m == w.gemms[k].m);
      CHECK(g.gemms[k].n == w.gemms[k].n);
      CHECK(g.gemms[k].k == w.gemms[k].k);
      CHECK(g.gemms[k].count == w.gemms[k].count);
    }
    CHECK(close_rel(g.fwd_flops, w.fwd_flops, 1e-9));
    CHECK(close_rel(g.bwd_flops, w.bwd_flops, 1e-9));
    CHECK(g.input_bytes == w.input_bytes);
    CHECK(g.output_bytes == w.output_bytes);
    // Weights do not depend on the input length.
    CHECK(g.params == base.layer(i).params);
    CHECK(g.weight_bytes == base.layer(i).weight_bytes);
    CHECK(g.weight_bytes == w.weight_bytes);
  }
  CHECK(got.weight_bytes() == base.weight_bytes());
}

TEST_CASE("at_sequence_length keeps the model at its own length and scales attention", "[model]") {
  const ModelCatalog zoo(test::source_dir() / "traces/models");
  const Model& base = zoo.at("bert_base");
  const Model same = at_sequence_length(base, 128);
  CHECK(same.name() == "bert_base@seq128");
  for (std::uint32_t i = 0; i < base.layer_count(); ++i) {
    INFO("layer " << base.layer(i).name);
    CHECK(close_rel(same.layer(i).fwd_flops, base.layer(i).fwd_flops, 1e-12));
    CHECK(same.layer(i).input_bytes == base.layer(i).input_bytes);
  }
  // Twice the tokens: a per-token layer's activations double, whatever its kind.
  const Model twice = at_sequence_length(base, 256);
  for (std::uint32_t i = 0; i < base.layer_count(); ++i) {
    if (base.layer(i).name.rfind("pooler", 0) == 0) break;  // per sequence from here on
    INFO("layer " << base.layer(i).name);
    CHECK(twice.layer(i).output_bytes == 2 * base.layer(i).output_bytes);
  }
}

TEST_CASE("at_sequence_length refuses a model without a sequence length", "[model]") {
  const ModelCatalog zoo(test::source_dir() / "traces/models");
  const Model& resnet = zoo.at("resnet50");
  REQUIRE(resnet.sequence_length() == 0);
  CHECK_THROWS_AS(at_sequence_length(resnet, 64), std::invalid_argument);
  CHECK_THROWS_WITH(
      at_sequence_length(resnet, 64),
      Catch::Matchers::Contains("resnet50") && Catch::Matchers::Contains("no sequence length"));
  CHECK_THROWS_AS(at_sequence_length(zoo.at("bert_base"), 0), std::invalid_argument);
}
