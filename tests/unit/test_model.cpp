// Model loading: derived totals, groupings, strict schema errors, the catalog.
#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/model.hpp"
#include "unit_fixtures.hpp"

namespace fx = gpumux::fixtures;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using gpumux::LayerRange;

namespace {

std::string load_error(const nlohmann::json& doc, const std::string& file_name = "m.json") {
  return fx::trace_error(doc, file_name, [](const auto& path) { return gpumux::load_model(path); });
}

}  // namespace

TEST_CASE("A hand-written model loads with derived totals", "[model]") {
  const auto dir = fx::make_temp_dir("model_ok");
  fx::write_file(dir / "tiny.json", fx::model_json("tiny").dump());
  const gpumux::Model m = gpumux::load_model(dir / "tiny.json");

  CHECK(m.name() == "tiny");
  CHECK(m.display_name() == "Tiny net");
  REQUIRE(m.layer_count() == 3);
  CHECK(m.layer(0).kind == gpumux::LayerKind::Conv);
  CHECK(m.layer(1).kind == gpumux::LayerKind::Norm);
  CHECK(m.layer(2).gemms.at(0).k == 128);
  CHECK(m.params() == 1522);        // 216 + 16 + 1290
  CHECK(m.weight_bytes() == 6152);  // 864 + 128 + 5160
  CHECK(m.weight_bytes(LayerRange{1, 3}) == 5288);
  CHECK(m.weight_bytes(LayerRange{0, 1}) == 864);
  CHECK(m.weight_bytes(LayerRange{2, 2}) == 0);
  CHECK(m.tensors(LayerRange{0, 3}) == 7);  // 1 + 4 + 2
  CHECK(m.tensors(LayerRange{1, 2}) == 4);
  CHECK(m.fwd_macs_per_sample() == 4736.0);                  // 16*8*27 + 1*10*128
  CHECK(m.training_activation_bytes_per_sample() == 1064);   // 512 + 512 + 40
  CHECK(m.inference_activation_bytes_per_sample() == 1024);  // bn: 512 in + 512 out
  CHECK(m.sequence_length() == 0);
}

TEST_CASE("Groupings: implicit per_layer and whole plus the file's", "[model]") {
  const auto dir = fx::make_temp_dir("model_groups");
  fx::write_file(dir / "tiny.json", fx::model_json("tiny").dump());
  const gpumux::Model m = gpumux::load_model(dir / "tiny.json");
  CHECK(m.grouping_names() == std::vector<std::string>{"per_layer", "pipeswitch", "whole"});
  const auto& ps = m.grouping("pipeswitch");
  REQUIRE(ps.groups() == 2);
  CHECK(ps.group(0, m.layer_count()) == LayerRange{0, 2});
  CHECK(ps.group(1, m.layer_count()) == LayerRange{2, 3});
  CHECK(m.grouping("per_layer").groups() == 3);
  CHECK(m.grouping("per_layer").group(1, 3) == LayerRange{1, 2});
  CHECK(m.grouping("whole").groups() == 1);
  CHECK(m.grouping("whole").group(0, 3) == LayerRange{0, 3});
  CHECK(m.has_grouping("whole"));
  CHECK_FALSE(m.has_grouping("optimal"));
  CHECK_THROWS_WITH(m.grouping("optimal"),
                    Contains("valid groupings: per_layer, pipeswitch, whole"));
}

TEST_CASE("Aux layers count for training but not for inference work", "[model]") {
  std::vector<gpumux::Layer> layers(2);
  layers[0].kind = gpumux::LayerKind::Linear;
  layers[0].gemms = {{2, 3, 4, 1}};
  layers[0].input_bytes = 10;
  layers[0].output_bytes = 20;
  layers[1].kind = gpumux::LayerKind::Linear;
  layers[1].gemms = {{10, 10, 10, 2}};
  layers[1].input_bytes = 1000;
  layers[1].output_bytes = 1000;
  layers[1].aux = true;
  const gpumux::Model m("aux", "Aux", layers, {}, 0);
  CHECK(m.fwd_macs_per_sample() == 24.0);  // the aux layer's 2000 MACs are excluded
  CHECK(m.training_activation_bytes_per_sample() == 1020);
  CHECK(m.inference_activation_bytes_per_sample() == 30);
}

TEST_CASE("Model files are strict: errors name the key path", "[model]") {
  auto doc = fx::model_json("m");
  SECTION("unknown top-level key") {
    doc["extra"] = 1;
    CHECK_THAT(load_error(doc), Equals("extra: unknown key"));
  }
  SECTION("unknown layer key") {
    doc["layers"][1]["color"] = "red";
    CHECK_THAT(load_error(doc), Equals("layers[1].color: unknown key"));
  }
  SECTION("unknown gemm key") {
    doc["layers"][0]["gemms"][0]["batch"] = 1;
    CHECK_THAT(load_error(doc), Equals("layers[0].gemms[0].batch: unknown key"));
  }
  SECTION("wrong type") {
    doc["layers"][2]["params"] = "1290";
    CHECK_THAT(load_error(doc), Equals("layers[2].params: expected an integer, got string"));
  }
  SECTION("bad kind") {
    doc["layers"][0]["kind"] = "lstm";
    CHECK_THAT(
        load_error(doc),
        Contains("layers[0].kind: unknown value 'lstm'; valid values: conv, linear, norm, pool, "
                 "embedding, attention, elementwise"));
  }
  SECTION("totals disagree with the layers") {
    doc["totals"]["params"] = 1523;
    CHECK_THAT(load_error(doc), Equals("totals.params: declares 1523 but the layers sum to 1522"));
  }
  SECTION("layer count disagrees") {
    doc["totals"]["layers"] = 4;
    CHECK_THAT(load_error(doc), Contains("totals.layers: declares 4"));
  }
  SECTION("MACs disagree") {
    doc["totals"]["fwd_macs_per_sample"] = 5000;
    CHECK_THAT(load_error(doc), Contains("totals.fwd_macs_per_sample: declares"));
  }
  SECTION("grouping must start at 0") {
    doc["groupings"]["pipeswitch"] = {1, 2};
    CHECK_THAT(load_error(doc),
               Contains("groupings.pipeswitch[0]: a grouping must start at layer 0"));
  }
  SECTION("grouping must increase") {
    doc["groupings"]["pipeswitch"] = {0, 2, 2};
    CHECK_THAT(load_error(doc), Contains("groupings.pipeswitch[2]: group starts must strictly"));
  }
  SECTION("grouping index beyond the layers") {
    doc["groupings"]["pipeswitch"] = {0, 3};
    CHECK_THAT(load_error(doc),
               Contains("groupings.pipeswitch[1]: expected a layer index below 3"));
  }
  SECTION("implicit grouping names are reserved") {
    doc["groupings"]["whole"] = {0};
    CHECK_THAT(load_error(doc), Contains("groupings.whole: reserved"));
  }
  SECTION("missing key") {
    doc["layers"][0].erase("gemms");
    CHECK_THAT(load_error(doc), Equals("layers[0].gemms: missing required key"));
  }
  SECTION("no layers") {
    doc["layers"] = nlohmann::json::array();
    CHECK_THAT(load_error(doc), Contains("layers: a model needs at least one layer"));
  }
}

TEST_CASE("Model files: unreadable and malformed", "[model]") {
  const auto dir = fx::make_temp_dir("model_bad");
  CHECK_THROWS_WITH(gpumux::load_model(dir / "nope.json"),
                    Contains("nope.json: no such file (cannot open it)"));
  fx::write_file(dir / "broken.json", "{\"name\": ");
  CHECK_THROWS_AS(gpumux::load_model(dir / "broken.json"), gpumux::TraceError);
  CHECK_THROWS_WITH(gpumux::load_model(dir / "broken.json"), Contains("invalid JSON"));
}

TEST_CASE("ModelCatalog lists, loads lazily, caches and names valid models", "[model]") {
  const auto dir = fx::make_temp_dir("catalog");
  fx::write_file(dir / "zeta.json", fx::model_json("zeta").dump());
  fx::write_file(dir / "alpha.json", fx::model_json("alpha").dump());
  fx::write_file(dir / "wrong.json", fx::model_json("other").dump());
  fx::write_file(dir / "README.md", "not a model");
  const gpumux::ModelCatalog catalog(dir);
  CHECK(catalog.names() == std::vector<std::string>{"alpha", "wrong", "zeta"});
  CHECK(catalog.contains("alpha"));
  CHECK_FALSE(catalog.contains("README"));
  const gpumux::Model& a = catalog.at("alpha");
  CHECK(&catalog.at("alpha") == &a);  // cached
  CHECK(a.params() == 1522);
  CHECK_THROWS_WITH(
      catalog.at("resnet"),
      Equals(dir.string() + ": model: unknown model 'resnet'; valid names: alpha, wrong, zeta"));
  CHECK_THROWS_WITH(catalog.at("wrong"), Contains("name: model name 'other' does not match"));
}
