// Parsing a "dynamic" value (request_variability_config.hpp).
#include "gpumux/io/request_variability_config.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/input_file.hpp"
#include "gpumux/io/input_path.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

namespace {

std::string index_key(const std::string& key, std::size_t i) {
  return key + "[" + std::to_string(i) + "]";
}

/// The array under `key` (non-empty), else the reader's error.
const nlohmann::json& required_array(JsonReader& r, const std::string& key) {
  const nlohmann::json& a = r.required(key);
  if (!a.is_array()) r.fail(key, std::string("expected an array, got ") + a.type_name());
  if (a.empty()) r.fail(key, "must not be empty");
  if (a.size() > 100000) r.fail(key, "more than 100000 entries");
  return a;
}

double read_weight(JsonReader& e) {
  const double w = e.non_negative("weight", e.required_number("weight"));
  if (!std::isfinite(w)) e.fail("weight", "must be finite");
  return w;
}

RequestVariability parse_object(const nlohmann::json& value, const std::string& file,
                                const std::string& key_path) {
  if (!value.is_object()) {
    throw ConfigError(file, key_path,
                      std::string("expected an object or a file name, got ") + value.type_name());
  }
  JsonReader r(value, file, key_path);
  RequestVariability v;
  v.kind = r.required_choice("kind", kVariabilityKindNames);
  v.model = r.string_or("model", "");
  v.source = r.required_string("source");
  if (v.source.empty()) r.fail("source", "must name where the distribution comes from");
  (void)r.optional("licence");  // documentation only
  (void)r.optional("note");
  std::vector<double> weights;
  if (v.kind == VariabilityKind::EarlyExit) {
    const nlohmann::json& exits = required_array(r, "exits");
    for (std::size_t i = 0; i < exits.size(); ++i) {
      JsonReader e(exits[i], file, r.path_of(index_key("exits", i)));
      RequestVariability::Exit x;
      x.after = e.required_string("after");
      if (x.after.empty()) e.fail("after", "must name a layer");
      x.weight = read_weight(e);
      e.finish();
      weights.push_back(x.weight);
      v.exits.push_back(std::move(x));
    }
    v.compacts = r.bool_or("compacts", false);
    for (const char* key : {"lengths", "bucket", "max_tokens"}) {
      if (r.has(key)) r.fail(key, "not allowed for kind early_exit");
    }
  } else {
    constexpr std::int64_t kMaxTokens = 1000000;
    v.max_tokens = r.integer_in<std::uint32_t>("max_tokens", 1, kMaxTokens);
    // Checked as written, then against max_tokens, whose name the message keeps.
    const auto at_most_max = [&](JsonReader& x, const char* key, std::uint32_t n) {
      if (n > v.max_tokens) {
        x.fail(key, "must be in [1, max_tokens] = [1, " + std::to_string(v.max_tokens) + "], got " +
                        std::to_string(n));
      }
      return n;
    };
    v.bucket = at_most_max(r, "bucket", r.integer_in_or<std::uint32_t>("bucket", 1, 1, kMaxTokens));
    const nlohmann::json& lengths = required_array(r, "lengths");
    std::uint32_t previous = 0;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      JsonReader e(lengths[i], file, r.path_of(index_key("lengths", i)));
      const std::uint32_t tokens =
          at_most_max(e, "tokens", e.integer_in<std::uint32_t>("tokens", 1, kMaxTokens));
      if (tokens <= previous)
        e.fail("tokens", "bins must be in ascending order of their upper edges");
      previous = tokens;
      const double w = read_weight(e);
      e.finish();
      weights.push_back(w);
      v.lengths.push_back({previous, w});
    }
    for (const char* key : {"exits", "compacts"}) {
      if (r.has(key)) r.fail(key, "not allowed for kind input_length");
    }
  }
  r.finish();
  double total = 0;
  for (double w : weights) total += w;
  if (!(total > 0) || !std::isfinite(total)) {
    r.fail(v.kind == VariabilityKind::EarlyExit ? "exits" : "lengths",
           "the weights must sum to a positive finite number");
  }
  double sum = 0;
  for (double w : weights) {
    sum += w;
    v.cumulative.push_back(sum / total);
  }
  v.cumulative.back() = 1.0;
  return v;
}

}  // namespace

std::shared_ptr<RequestVariability> parse_request_variability(
    const nlohmann::json& value, const std::string& file, const std::string& key_path,
    const std::filesystem::path& repo_root) {
  if (!value.is_string()) {
    return std::make_shared<RequestVariability>(parse_object(value, file, key_path));
  }
  const std::filesystem::path rel = value.get<std::string>();
  if (rel.empty()) throw ConfigError(file, key_path, "must not be empty");
  const std::filesystem::path full = resolve_input_path(rel, file, repo_root).path;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(full, ec)) {
    throw ConfigError(file, key_path, "cannot open '" + full.string() + "'");
  }
  const std::string text = read_data_document(full);
  return std::make_shared<RequestVariability>(parse_data_document(
      text, rel.string(), [](const nlohmann::json& doc, const std::string& name) {
        return parse_object(doc, name, "");
      }));
}

}  // namespace gpumux
