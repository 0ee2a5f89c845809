// The summary as CSV tables researchers load with any CSV reader (docs/outputs.md):
// summary.csv has one row per job, summary_run.csv one row of run-wide values. Fields follow
// RFC 4180 (a field holding a comma, a quote, CR or LF is quoted, its quotes doubled; lines end
// in LF), a value that does not exist is an empty cell, and numbers have a fixed format
// (csv_number). Each row starts with identity columns (policy, platform, seed, config_sha256;
// in a sweep's tables also the point, its label and its grid keys). Pure functions, any thread.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumux {

/// Leading columns of every row: (column name, raw cell text), quoted when written.
using CsvColumns = std::vector<std::pair<std::string, std::string>>;

/// One RFC 4180 field: as is, or in double quotes (quotes doubled) when it holds a comma, a
/// double quote, CR or LF.
[[nodiscard]] std::string csv_field(std::string_view text);

/// A double with 9 decimals, trailing zeros (and a trailing point) removed: "30", "0.5",
/// "0.000001234". 9 decimals hold every time in seconds exactly at the simulator's ns clock
/// (TimeNs), so rounding error such as 30.000000000000004 is not printed. Non-finite values
/// (never produced by the summary) are an empty cell.
[[nodiscard]] std::string csv_number(double v);

/// A JSON value as a cell: null or missing is empty, integers as integers, other numbers
/// through csv_number, strings through csv_field, booleans as true/false.
[[nodiscard]] std::string csv_cell(const nlohmann::json& v);

/// The identity columns of one run from its run.json: policy, platform, seed, config_sha256.
[[nodiscard]] CsvColumns run_identity_columns(const nlohmann::json& run_info);

/// summary.csv: a header (unless `header` is false), then one row per job of summary.json.
void write_summary_csv(const nlohmann::json& summary, const CsvColumns& lead, std::ostream& out,
                       bool header = true);

/// summary_run.csv: a header (unless `header` is false), then the run-wide row.
void write_summary_run_csv(const nlohmann::json& summary, const CsvColumns& lead, std::ostream& out,
                           bool header = true);

/// The per-job columns after the leading ones, in order (docs/outputs.md lists them).
[[nodiscard]] std::vector<std::string> summary_csv_columns();
/// The run-wide columns after the leading ones, in order.
[[nodiscard]] std::vector<std::string> summary_run_csv_columns();

}  // namespace gpumux
