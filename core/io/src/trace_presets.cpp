// Presets of `gpumux trace import` for public traces, and the expansion of per-minute
// invocation counts (Azure Functions 2019) into arrival times (trace_import.hpp).
#include <algorithm>
#include <charconv>
#include <random>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/seed.hpp"
#include "gpumux/io/input_file.hpp"
#include "gpumux/io/trace_import.hpp"
#include "trace_rows.hpp"
#include "trace_text.hpp"

namespace gpumux::trace_import {
namespace {

constexpr std::int64_t kMinuteNs = 60'000'000'000LL;
// Minutes of a day: the Azure Functions 2019 files have columns "1".."1440".
constexpr unsigned kMinutesPerDay = 1440;
// At most this many invocations are expanded: "about a hundred million arrival times" is what
// the arrival CSV reader's 1 GiB holds with arrival_s alone (input_file.hpp, kMaxTraceBytes).
constexpr std::uint64_t kMaxInvocations = 100'000'000;

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

MinuteExpander::MinuteExpander(const std::vector<std::string>& columns, bool json_elements,
                               MinuteCounts how, std::string file)
    : json_elements_(json_elements), how_(how), file_(std::move(file)) {
  columns_.emplace_back("arrival_ns");
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (const unsigned m = minute_of(columns[c])) {
      minutes_.emplace_back(c, m);
    } else {
      ids_.push_back(c);
      columns_.push_back(columns[c]);
    }
  }
  if (minutes_.empty()) {
    throw TraceError(file_, "line 1",
                     "no per-minute count columns (\"1\"..\"1440\"): not the Azure Functions 2019 "
                     "invocation format");
  }
  out_.cells.resize(columns_.size());
}

void MinuteExpander::expand(const Table::Row& row, const RowFn& fn) {
  out_.line = row.line;
  for (std::size_t k = 0; k < ids_.size(); ++k) out_.cells[k + 1] = row.cells[ids_[k]];
  std::string& time = out_.cells[0].emplace();
  for (const auto& [c, m] : minutes_) {
    const std::string_view text = row.cells[c] ? std::string_view(*row.cells[c]) : "";
    std::uint64_t count = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
      throw TraceError(
          file_, place_of(json_elements_, row.line),
          "column " + std::to_string(m) + ": expected a count, got '" + printable(text) + "'");
    }
    total_ += count;
    if (total_ > kMaxInvocations) {
      throw TraceError(file_, place_of(json_elements_, row.line),
                       "more than 100 million invocations; select functions with --where "
                       "(e.g. --where HashApp=<hash>)");
    }
    if (count == 0) continue;
    const std::int64_t start = static_cast<std::int64_t>(m - 1) * kMinuteNs;
    // Seeded per (seed, source line, minute): independent of the other rows and of --where.
    std::mt19937_64 rng(splitmix64(splitmix64(how_.seed ^ splitmix64(row.line)) ^ m));
    char buf[24];
    for (std::uint64_t k = 0; k < count; ++k) {
      const std::int64_t t =
          how_.spread == Spread::Even
              ? start + static_cast<std::int64_t>(
                            (2 * k + 1) * static_cast<std::uint64_t>(kMinuteNs) / (2 * count))
              : start + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(kMinuteNs));
      time.assign(buf, std::to_chars(buf, buf + sizeof buf, t).ptr);
      fn(out_);
    }
  }
}

Table expand_minute_counts(const Table& table, std::uint64_t seed, Spread spread,
                           const std::string& file) {
  MinuteExpander expander(table.columns, table.json_elements, MinuteCounts{seed, spread}, file);
  Table out;
  out.json_elements = table.json_elements;
  out.columns = expander.columns();
  for (const Table::Row& row : table.rows) {
    expander.expand(row, [&](const Table::Row& r) { out.rows.push_back(r); });
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
