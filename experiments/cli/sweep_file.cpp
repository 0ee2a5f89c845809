// Sweep files: parsing and expansion into labelled points (see sweep_file.hpp).
#include "sweep_file.hpp"

#include <map>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/result_dir.hpp"

namespace gpumux::cli {
namespace {

// A grid value as part of a folder name: "v100-pcie3x16", "0.5", "true".
std::string label_part(const nlohmann::json& v) {
  const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  std::string out;
  for (char c : text) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
    out += keep ? c : '_';
  }
  return out;
}

// A name that becomes a folder: one safe path component (result_dir.hpp).
void require_safe_name(const JsonReader& reader, const std::string& key, const std::string& name,
                       const std::string& names_what) {
  if (!is_safe_result_name(name)) {
    reader.fail(key, "'" + name + "' must be " + std::string(kSafeResultNameRule) + " (it names " +
                         names_what + ")");
  }
}

// "key=value" as --set reads it back (apply_override): a value that parses as JSON is taken
// as that JSON, anything else as a string. So a string is written bare only when it does not
// parse ("mps", "v100-pcie3x16"); a string that would ("null", "42", "true", "[1]") keeps its
// JSON quotes, so it stays a string. Only the JSON null removes the key.
std::string assignment(const std::string& key, const nlohmann::json& v) {
  if (!v.is_string()) return key + "=" + v.dump();
  const std::string& text = v.get_ref<const std::string&>();
  bool reads_as_json = true;
  try {
    reads_as_json = parse_json_if_json(text, "", "", InputKind::Config).has_value();
  } catch (const InputError&) {
    // JSON syntax that --set would refuse (a number out of range, "1e400"): quote it too.
  }
  return key + "=" + (reads_as_json ? v.dump() : text);
}

void add_sets(const nlohmann::json& set, const std::string& file, const std::string& where,
              std::vector<std::string>& out) {
  if (!set.is_object()) throw ConfigError(file, where, "expected an object");
  for (const auto& [k, v] : set.items()) out.push_back(assignment(k, v));
}

std::vector<SweepPoint> expand_grid(const nlohmann::json& grid, const std::string& file) {
  if (!grid.is_object() || grid.empty())
    throw ConfigError(file, "grid", "expected a non-empty object");
  std::vector<SweepPoint> points{{"", {}}};
  for (const auto& [key, values] : grid.items()) {
    if (!values.is_array() || values.empty()) {
      throw ConfigError(file, "grid." + key, "expected a non-empty array of values");
    }
    std::vector<SweepPoint> next;
    for (const auto& p : points) {
      for (const auto& v : values) {
        SweepPoint q = p;
        // Two appends, not `"_" + label_part(v)`: GCC 12 reports a false -Wrestrict on
        // operator+(const char*, string&&) (GCC bug 105329), an error under GPUMUX_WERROR.
        if (!q.label.empty()) q.label += '_';
        q.label += label_part(v);
        q.overrides.push_back(assignment(key, v));
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  return points;
}

std::vector<SweepPoint> read_runs(const nlohmann::json& runs, const std::string& file) {
  if (!runs.is_array() || runs.empty())
    throw ConfigError(file, "runs", "expected a non-empty array");
  std::vector<SweepPoint> points;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string where = "runs[" + std::to_string(i) + "]";
    JsonReader reader(runs[i], file, where);
    SweepPoint p;
    p.label = reader.required_string("label");
    require_safe_name(reader, "label", p.label, "the point's results folder");
    if (const auto* set = reader.optional("set")) add_sets(*set, file, where + ".set", p.overrides);
    reader.finish();
    points.push_back(std::move(p));
  }
  return points;
}

}  // namespace

SweepFile parse_sweep_text(const std::string& text, const std::string& file, bool quick) {
  nlohmann::json doc = parse_json_text(text, file, "", InputKind::Config);
  JsonReader reader(doc, file, "");
  SweepFile sweep;
  sweep.name = reader.required_string("name");
  require_safe_name(reader, "name", sweep.name, "the sweep's results folder");
  sweep.base = reader.required_string("base");
  if (sweep.base.empty()) reader.fail("base", "must not be empty");
  sweep.out_dir_given = reader.has("out_dir");
  sweep.out_dir = reader.string_or("out_dir", "results/" + sweep.name);
  if (sweep.out_dir.empty()) reader.fail("out_dir", "must not be empty");
  if (const auto* set = reader.optional("set")) add_sets(*set, file, "set", sweep.common);
  nlohmann::json grid = reader.has("grid") ? reader.required("grid") : nlohmann::json();
  nlohmann::json runs = reader.has("runs") ? reader.required("runs") : nlohmann::json();
  (void)reader.optional("description");
  const nlohmann::json* quick_section = reader.optional("quick");
  reader.finish();
  if (!grid.is_null() && !runs.is_null()) {
    throw ConfigError(file, "runs", "use either grid or runs, not both");
  }
  if (quick_section != nullptr) {
    // Checked whether or not --quick is given, so a typo there is found on every run.
    JsonReader q(*quick_section, file, "quick");
    std::vector<std::string> quick_sets;
    if (const auto* set = q.optional("set")) add_sets(*set, file, "quick.set", quick_sets);
    if (const auto* g = q.optional("grid")) {
      if (!g->is_object()) throw ConfigError(file, "quick.grid", "expected an object");
      for (const auto& [k, v] : g->items()) {
        if (!grid.is_object() || !grid.contains(k)) {
          throw ConfigError(file, "quick.grid." + k, "not a key of grid");
        }
        if (quick) grid[k] = v;  // same code, smaller traces: replaces the file's values
      }
    }
    if (const auto* r = q.optional("runs")) {
      if (quick) runs = *r;
    }
    q.finish();
    if (quick) sweep.common.insert(sweep.common.end(), quick_sets.begin(), quick_sets.end());
  }
  if (!grid.is_null()) {
    sweep.points = expand_grid(grid, file);
  } else if (!runs.is_null()) {
    sweep.points = read_runs(runs, file);
  } else {
    sweep.points = {{"run", {}}};
  }
  // Each point's folder: a safe name, and no two points in one folder (the second would
  // otherwise be skipped as "complete").
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < sweep.points.size(); ++i) {
    const std::string& label = sweep.points[i].label;
    const std::string key = grid.is_null() ? "runs[" + std::to_string(i) + "].label" : "grid";
    if (!is_safe_result_name(label)) {
      throw ConfigError(file, key, "point label '" + label + "' is not a usable folder name");
    }
    if (auto [it, fresh] = seen.emplace(label, i); !fresh) {
      throw ConfigError(file, key,
                        "points " + std::to_string(it->second + 1) + " and " +
                            std::to_string(i + 1) + " both have the results folder '" + label +
                            "'; give them distinct labels");
    }
  }
  return sweep;
}

}  // namespace gpumux::cli
