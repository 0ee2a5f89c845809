// Point selection, point columns and the parallel-GPU guard (see sweep_select.hpp).
#include "sweep_select.hpp"

#include <algorithm>
#include <charconv>
#include <map>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/config.hpp"
#include "gpumux/io/input_file.hpp"

namespace gpumux::cli {

namespace {

// Decimal digits only: from_chars alone would take no sign but stop at the first non-digit.
bool parse_size(std::string_view s, std::size_t& out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string_view::npos) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}

// "key=value" -> key (apply_override's syntax: the key has no '=').
std::pair<std::string, std::string> split_assignment(const std::string& a) {
  const auto eq = a.find('=');
  if (eq == std::string::npos) return {a, ""};
  return {a.substr(0, eq), a.substr(eq + 1)};
}

}  // namespace

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  Shard s;
  if (slash == std::string::npos || !parse_size(text.substr(0, slash), s.index) ||
      !parse_size(text.substr(slash + 1), s.count) || s.count == 0 || s.index >= s.count) {
    throw UsageError("--shard '" + printable(text) + "': expected I/N with 0 <= I < N, e.g. 0/4");
  }
  return s;
}

std::size_t parse_point(const std::string& text, std::size_t point_count) {
  std::size_t k = 0;
  const std::string range = "the sweep has " + std::to_string(point_count) +
                            " points, numbered 0 to " + std::to_string(point_count - 1) +
                            " (see --list-points)";
  if (!parse_size(text, k)) {
    throw UsageError("--point '" + printable(text) + "': expected a point number; " + range);
  }
  if (k >= point_count) throw UsageError("--point " + text + ": " + range);
  return k;
}

std::vector<std::size_t> select_points(std::size_t point_count,
                                       const std::optional<std::string>& point,
                                       const std::optional<std::string>& shard) {
  if (point) return {parse_point(*point, point_count)};
  std::optional<Shard> part;
  if (shard) part = parse_shard(*shard);
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < point_count; ++k) {
    if (!part || k % part->count == part->index) out.push_back(k);
  }
  return out;
}

std::vector<std::string> point_keys(const SweepFile& sweep) {
  std::vector<std::string> keys;
  for (const SweepPoint& p : sweep.points) {
    for (const std::string& a : p.overrides) {
      const std::string key = split_assignment(a).first;
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
  }
  return keys;
}

CsvColumns point_columns(const SweepFile& sweep, std::size_t index,
                         const std::vector<std::string>& keys) {
  const SweepPoint& p = sweep.points.at(index);
  CsvColumns out{{"point", std::to_string(index)}, {"label", p.label}};
  for (const std::string& key : keys) {
    std::string value;
    for (const std::string& a : p.overrides) {
      auto [k, v] = split_assignment(a);
      if (k == key) value = v;  // the last assignment wins, as in load_experiment
    }
    out.emplace_back("set." + key, value);  // "set.": never the name of a metric column
  }
  return out;
}

void check_parallel_gpus(const std::vector<const ExperimentConfig*>& points,
                         const std::vector<std::string>& labels, unsigned jobs) {
  if (jobs <= 1) return;
  std::map<int, std::string> owner;  // GPU ordinal -> the point using it
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i]->platform != "cuda") continue;
    const nlohmann::json& params = points[i]->platform_params;
    const auto it = params.find("gpus");
    if (it == params.end() || !it->is_array() || it->empty()) {
      throw UsageError("-j " + std::to_string(jobs) + ": point " + labels[i] +
                       " runs on a real GPU (platform cuda) without naming its GPUs; parallel "
                       "points would share one and measure each other. Run with -j 1, or give "
                       "each point distinct platform_params.gpus");
    }
    for (const auto& g : *it) {
      if (!g.is_number_integer()) continue;  // the platform itself reports the bad value
      const auto [at, fresh] = owner.emplace(g.get<int>(), labels[i]);
      if (!fresh && at->second != labels[i]) {
        throw UsageError("-j " + std::to_string(jobs) + ": points " + at->second + " and " +
                         labels[i] + " both use GPU " + std::to_string(at->first) +
                         " (platform cuda); run with -j 1, or give each point distinct "
                         "platform_params.gpus");
      }
    }
  }
}

}  // namespace gpumux::cli
