// Model files: the strict loader and the catalog (model_files.hpp).
#include "gpumux/io/model_files.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <system_error>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/input_file.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

namespace {

// JsonReader reports ConfigError("<file>: <path>: <problem>"); model files are traces, so the
// same message is re-thrown as a TraceError.
// `max` above int64's largest means "any non-negative integer".
std::uint64_t read_count(JsonReader& r, const std::string& key, std::uint64_t max) {
  constexpr auto kTop = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  return r.integer_in<std::uint64_t>(key, 0, static_cast<std::int64_t>(std::min(max, kTop)));
}

LayerKind parse_kind(JsonReader& r) {
  return r.required_choice("kind", kLayerKindNames);
}

// Physical limits of one layer (traces/formats.md). Real layers stay below 1e10 FLOPs and
// 1 GiB per sample; the limits are generous yet keep every derived quantity finite: a model
// file of at most 64 MiB holds under 2^19 layers, so byte sums stay below 2^59.
constexpr std::uint64_t kMaxLayerCount = std::uint64_t{1} << 40;  // params, bytes: 1 Ti
constexpr double kMaxLayerFlops = 1e18;                           // an exaFLOP per sample

double flops(JsonReader& r, const std::string& key) {
  const double v = r.non_negative(key, r.required_number(key));
  if (v > kMaxLayerFlops) r.fail(key, "out of range (more than 1e18 FLOPs per sample)");
  return v;
}

Layer parse_layer(const nlohmann::json& j, const std::string& file, const std::string& path) {
  JsonReader r(j, file, path);
  constexpr auto kMax = kMaxLayerCount;
  Layer l;
  l.name = r.required_string("name");
  l.kind = parse_kind(r);
  l.params = read_count(r, "params", kMax);
  l.buffers = read_count(r, "buffers", kMax);
  l.tensors = r.integer_in<std::uint32_t>("tensors", 0, 1 << 20);
  l.weight_bytes = read_count(r, "weight_bytes", kMax);
  l.input_bytes = read_count(r, "input_bytes", kMax);
  l.output_bytes = read_count(r, "output_bytes", kMax);
  l.fwd_flops = flops(r, "fwd_flops");
  l.bwd_flops = flops(r, "bwd_flops");
  const auto& gemms = r.required("gemms");
  if (!gemms.is_array())
    r.fail("gemms", std::string("expected an array, got ") + gemms.type_name());
  for (std::size_t i = 0; i < gemms.size(); ++i) {
    JsonReader g(gemms[i], file, r.path_of("gemms") + "[" + std::to_string(i) + "]");
    GemmShape s;
    constexpr std::int64_t kMaxDim = std::int64_t{1} << 40;
    s.m = g.integer_in<std::uint64_t>("m", 1, kMaxDim);
    s.n = g.integer_in<std::uint64_t>("n", 1, kMaxDim);
    s.k = g.integer_in<std::uint64_t>("k", 1, kMaxDim);
    s.count = g.integer_in<std::uint64_t>("count", 1, kMaxDim);
    g.finish();
    l.gemms.push_back(s);
  }
  l.aux = r.bool_or("aux", false);
  r.finish();
  return l;
}

Model parse_model(const nlohmann::json& doc, const std::string& file) {
  JsonReader r(doc, file, "");
  const std::string name = r.required_string("name");
  const std::string display_name = r.string_or("display_name", name);
  (void)r.string_or("source", "");
  (void)r.string_or("domain", "");
  if (const auto* shape = r.optional("input_shape")) {
    if (!shape->is_array()) r.fail("input_shape", "expected an array");
    for (const auto& d : *shape) {
      if (!d.is_number_integer() || d.get<std::int64_t>() < 1) {
        r.fail("input_shape", "expected positive integers");
      }
    }
  }
  const auto seq = r.integer_in_or<std::uint32_t>("sequence_length", 0, 0, 1 << 30);
  (void)r.integer_in<int>("dtype_bytes", 1, 8);  // read for the schema; the layers carry bytes

  const auto& layers_json = r.required("layers");
  if (!layers_json.is_array()) r.fail("layers", "expected an array");
  if (layers_json.empty()) r.fail("layers", "a model needs at least one layer");
  std::vector<Layer> layers;
  layers.reserve(layers_json.size());
  for (std::size_t i = 0; i < layers_json.size(); ++i) {
    layers.push_back(parse_layer(layers_json[i], file, "layers[" + std::to_string(i) + "]"));
  }
  const auto n = static_cast<std::uint32_t>(layers.size());

  // Totals are redundant with the layers; a mismatch means a hand edit or a generator bug.
  JsonReader totals = r.object("totals");
  std::uint64_t params = 0, buffers = 0, weight_bytes = 0;
  for (const Layer& l : layers) {
    params += l.params;
    buffers += l.buffers;
    weight_bytes += l.weight_bytes;
  }
  auto check_total = [&](const char* key, std::uint64_t actual) {
    const std::uint64_t declared = read_count(totals, key, ~0ull);
    if (declared != actual) {
      totals.fail(key, "declares " + std::to_string(declared) + " but the layers sum to " +
                           std::to_string(actual));
    }
  };
  check_total("params", params);
  check_total("buffers", buffers);
  check_total("weight_bytes", weight_bytes);
  check_total("layers", n);
  const double macs =
      totals.non_negative("fwd_macs_per_sample", totals.required_number("fwd_macs_per_sample"));
  totals.finish();

  std::map<std::string, Grouping, std::less<>> groupings;
  if (const auto* gj = r.optional("groupings")) {
    JsonReader g(*gj, file, "groupings");
    for (const auto& [gname, starts] : gj->items()) {
      const auto& arr = g.required(gname);
      const std::string path = g.path_of(gname);
      if (gname == "per_layer" || gname == "whole") {
        g.fail(gname, "reserved grouping name (it is implicit)");
      }
      if (!arr.is_array() || arr.empty())
        g.fail(gname, "expected a non-empty array of layer indices");
      Grouping grouping{gname, {}};
      for (std::size_t i = 0; i < arr.size(); ++i) {
        const auto& v = arr[i];
        const std::string where = path + "[" + std::to_string(i) + "]";
        if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
            v.get<std::int64_t>() >= static_cast<std::int64_t>(n)) {
          throw TraceError(file, where, "expected a layer index below " + std::to_string(n));
        }
        const auto s = static_cast<std::uint32_t>(v.get<std::int64_t>());
        if (i == 0 && s != 0) throw TraceError(file, where, "a grouping must start at layer 0");
        if (i > 0 && s <= grouping.starts.back()) {
          throw TraceError(file, where, "group starts must strictly increase");
        }
        grouping.starts.push_back(s);
      }
      groupings.emplace(gname, std::move(grouping));
    }
    g.finish();
  }
  r.finish();

  Model model(name, display_name, std::move(layers), std::move(groupings), seq);
  const double tolerance = 1e-6 * std::max(1.0, macs);
  if (std::fabs(model.fwd_macs_per_sample() - macs) > tolerance) {
    throw TraceError(file, "totals.fwd_macs_per_sample",
                     "declares " + std::to_string(macs) + " but the layers' GEMMs sum to " +
                         std::to_string(model.fwd_macs_per_sample()));
  }
  return model;
}

}  // namespace

Model parse_model_text(std::string_view text, const std::string& file) {
  return parse_data_document(text, file, parse_model);
}

Model load_model(const std::filesystem::path& file) {
  return parse_model_text(read_data_document(file), file.string());
}

ModelCatalog::ModelCatalog(std::filesystem::path directory) : directory_(std::move(directory)) {}

std::vector<std::string> ModelCatalog::names() const {
  return json_file_stems(directory_);
}

bool ModelCatalog::contains(std::string_view name) const {
  if (cache_.find(name) != cache_.end()) return true;
  const auto all = names();
  return std::binary_search(all.begin(), all.end(), std::string(name));
}

std::string ModelCatalog::origin(std::string_view name) const {
  return (directory_ / (std::string(name) + ".json")).string();
}

const Model& ModelCatalog::at(std::string_view name) const {
  if (auto it = cache_.find(name); it != cache_.end()) return it->second;
  const auto all = names();
  if (!std::binary_search(all.begin(), all.end(), std::string(name))) {
    std::string valid;
    for (const auto& n : all) valid += (valid.empty() ? "" : ", ") + n;
    throw TraceError(directory_.string(), "model",
                     "unknown model '" + std::string(name) + "'; valid names: " + valid);
  }
  const auto file = directory_ / (std::string(name) + ".json");
  Model model = load_model(file);
  if (model.name() != name) {
    throw TraceError(file.string(), "name",
                     "model name '" + model.name() + "' does not match the file name");
  }
  return cache_.emplace(std::string(name), std::move(model)).first->second;
}

}  // namespace gpumux
