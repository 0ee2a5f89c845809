// Request variability (gpumux/request_variability.hpp): parsing, drawing, and the check
// against the model a service runs.
#include "gpumux/request_variability.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gpumux/errors.hpp"
#include "gpumux/input_file.hpp"
#include "gpumux/input_path.hpp"
#include "gpumux/json_reader.hpp"
#include "gpumux/model.hpp"

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

std::uint32_t RequestVariability::draw(std::mt19937_64& rng) const {
  // 53 random bits as a double in [0, 1): the same value on every platform (the standard
  // distributions are not specified bit for bit).
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
  const auto i = static_cast<std::size_t>(std::min<std::ptrdiff_t>(
      it - cumulative.begin(), static_cast<std::ptrdiff_t>(cumulative.size()) - 1));
  if (kind == VariabilityKind::EarlyExit) return exits[i].layer_end;
  const std::uint32_t t = lengths[i].tokens;
  return std::min(max_tokens, (t + bucket - 1) / bucket * bucket);
}

std::uint32_t RequestVariability::full_work() const noexcept {
  if (kind == VariabilityKind::EarlyExit) return exits.empty() ? 0 : exits.back().layer_end;
  if (lengths.empty()) return 0;
  return std::min(max_tokens, (lengths.back().tokens + bucket - 1) / bucket * bucket);
}

void RequestVariability::resolve(const Model& m) {
  if (!model.empty() && model != m.name()) {
    throw std::invalid_argument("the distribution was written for model '" + model +
                                "', the service runs '" + m.name() + "'");
  }
  if (kind == VariabilityKind::InputLength) {
    if (m.sequence_length() == 0) {
      throw std::invalid_argument("input_length needs a sequence model; '" + m.name() +
                                  "' has no sequence_length");
    }
    return;
  }
  std::uint32_t previous = 0;
  for (std::size_t i = 0; i < exits.size(); ++i) {
    Exit& x = exits[i];
    std::uint32_t found = 0;
    for (std::uint32_t l = 0; l < m.layer_count(); ++l) {
      if (m.layer(l).name == x.after) found = l + 1;
    }
    if (found == 0) {
      throw std::invalid_argument("exits[" + std::to_string(i) + "].after: no layer '" + x.after +
                                  "' in model '" + m.name() + "'");
    }
    if (found <= previous) {
      throw std::invalid_argument("exits[" + std::to_string(i) +
                                  "].after: exits must be in layer order");
    }
    previous = found;
    x.layer_end = found;
  }
  if (previous != m.layer_count()) {
    throw std::invalid_argument("the last exit must be the model's last layer ('" +
                                m.layer(m.layer_count() - 1).name + "')");
  }
}

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
