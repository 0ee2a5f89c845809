// Presets of `gpumux trace import` for public traces, and the expansion of per-minute
// invocation counts (Azure Functions 2019) into arrival times (trace_import.hpp).
#include <algorithm>
#include <charconv>
#include <random>

#include "gpumux/errors.hpp"
#include "gpumux/input_file.hpp"
#include "gpumux/trace_import.hpp"

namespace gpumux::trace_import {
namespace {

constexpr std::int64_t kMinuteNs = 60'000'000'000LL;
// Minutes of a day: the Azure Functions 2019 files have columns "1".."1440".
constexpr unsigned kMinutesPerDay = 1440;
// At most this many invocations are expanded: the arrival CSV reader takes files of at most
// 1 GiB, "about a hundred million arrival times" (input_file.hpp, kMaxTraceBytes).
constexpr std::uint64_t kMaxInvocations = 100'000'000;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// The minute (1..1440) a column stands for, or 0.
unsigned minute_of(const std::string& column) {
  unsigned m = 0;
  auto [ptr, ec] = std::from_chars(column.data(), column.data() + column.size(), m);
  if (ec != std::errc() || ptr != column.data() + column.size() || column[0] == '0') return 0;
  return m >= 1 && m <= kMinutesPerDay ? m : 0;
}

std::vector<Preset> make_presets() {
  std::vector<Preset> out;
  {
    Preset p;
    p.name = "azure-llm-2023";
    p.summary =
        "Azure LLM inference trace 2023 (AzureLLMInferenceTrace_{code,conv}.csv): TIMESTAMP, "
        "ContextTokens, GeneratedTokens; as traces/arrivals/azure_llm_2023_*.csv";
    p.licence =
        "CC-BY-4.0 (Azure Public Dataset, github.com/Azure/AzurePublicDataset); cite Patel et "
        "al., Splitwise, ISCA 2024";
    p.format = Format::Csv;
    p.options.time_column = "TIMESTAMP";
    p.options.unit = TimeUnit::Datetime;
    p.options.origin = Origin::First;
    p.options.keep = std::vector<std::string>{"ContextTokens", "GeneratedTokens"};
    p.options.rename = {{"ContextTokens", "context_tokens"},
                        {"GeneratedTokens", "generated_tokens"}};
    out.push_back(std::move(p));
  }
  {
    Preset p;
    p.name = "azure-functions-2019";
    p.summary =
        "Azure Functions 2019 invocation counts (invocations_per_function_md.anon.dNN.csv): one "
        "row per function, counts per minute 1..1440 -> one arrival per invocation";
    p.licence =
        "CC-BY-4.0 (Azure Public Dataset, github.com/Azure/AzurePublicDataset); cite Shahrad et "
        "al., Serverless in the Wild, USENIX ATC 2020";
    p.format = Format::Csv;
    p.options.time_column = "arrival_ns";
    p.options.unit = TimeUnit::Ns;
    p.options.origin = Origin::Keep;  // seconds from the start of the file's day
    p.options.sort = true;            // rows are per function, not in time order
    p.minute_counts = true;
    out.push_back(std::move(p));
  }
  {
    Preset p;
    p.name = "orion-gaps";
    p.summary =
        "Orion's request inter-arrival gaps (artifact_evaluation/fig10/inter_arrival_times.json, "
        "a JSON list of seconds): cumulative sums; as traces/arrivals/orion_inter_arrival.csv";
    p.licence =
        "MIT, Copyright (c) 2023 - present ETH Zurich (github.com/eth-easl/orion, LICENSE); cite "
        "Strati et al., Orion, EuroSys 2024";
    p.format = Format::Json;
    p.options.time_column = "value";
    p.options.unit = TimeUnit::S;
    p.options.gaps = true;
    p.options.origin = Origin::Keep;  // the first arrival is the first gap, not 0
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

void select_rows(Table& table, const std::vector<std::pair<std::string, std::string>>& where,
                 const std::string& file) {
  std::vector<std::pair<std::size_t, std::string>> cols;
  for (const auto& [name, value] : where) {
    const auto it = std::find(table.columns.begin(), table.columns.end(), name);
    if (it == table.columns.end()) {
      throw TraceError(file, "line 1", "--where: no column '" + printable(name) + "'");
    }
    cols.emplace_back(static_cast<std::size_t>(it - table.columns.begin()), value);
  }
  std::erase_if(table.rows, [&](const Table::Row& row) {
    return !std::all_of(cols.begin(), cols.end(), [&](const auto& c) {
      return row.cells[c.first] && *row.cells[c.first] == c.second;
    });
  });
}

Table expand_minute_counts(const Table& table, std::uint64_t seed, Spread spread,
                           const std::string& file) {
  std::vector<std::pair<std::size_t, unsigned>> minutes;  // column, minute
  Table out;
  out.json_elements = table.json_elements;
  out.columns.emplace_back("arrival_ns");
  std::vector<std::size_t> ids;
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    if (const unsigned m = minute_of(table.columns[c])) {
      minutes.emplace_back(c, m);
    } else {
      ids.push_back(c);
      out.columns.push_back(table.columns[c]);
    }
  }
  if (minutes.empty()) {
    throw TraceError(file, "line 1",
                     "no per-minute count columns (\"1\"..\"1440\"): not the Azure Functions 2019 "
                     "invocation format");
  }
  std::uint64_t total = 0;
  for (const Table::Row& row : table.rows) {
    for (const auto& [c, m] : minutes) {
      const std::string text = row.cells[c].value_or("");
      std::uint64_t count = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
      if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
        throw TraceError(
            file, row_place(table, row),
            "column " + table.columns[c] + ": expected a count, got '" + printable(text) + "'");
      }
      total += count;
      if (total > kMaxInvocations) {
        throw TraceError(file, row_place(table, row),
                         "more than 100 million invocations; select functions with --where "
                         "(e.g. --where HashApp=<hash>)");
      }
      if (count == 0) continue;
      const std::int64_t start = static_cast<std::int64_t>(m - 1) * kMinuteNs;
      std::vector<std::int64_t> times(count);
      if (spread == Spread::Even) {
        for (std::uint64_t k = 0; k < count; ++k) {
          times[k] = start + static_cast<std::int64_t>(
                                 (2 * k + 1) * static_cast<std::uint64_t>(kMinuteNs) / (2 * count));
        }
      } else {
        // Seeded per (seed, source line, minute): independent of the other rows and of --where.
        std::mt19937_64 rng(splitmix64(splitmix64(seed ^ splitmix64(row.line)) ^ m));
        for (auto& t : times) {
          t = start + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(kMinuteNs));
        }
        std::sort(times.begin(), times.end());
      }
      for (const std::int64_t t : times) {
        Table::Row r{row.line, {}};
        r.cells.reserve(out.columns.size());
        r.cells.emplace_back(std::to_string(t));
        for (const std::size_t id : ids) r.cells.push_back(row.cells[id]);
        out.rows.push_back(std::move(r));
      }
    }
  }
  return out;
}

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = make_presets();
  return all;
}

const Preset* find_preset(std::string_view name) {
  for (const Preset& p : presets()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace gpumux::trace_import
