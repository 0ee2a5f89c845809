// The rows of a request trace, streamed (trace_import.hpp): a source reads CSV, TSV, JSONL or a
// JSON array and hands each row to a callback; its columns are known before the first row. A
// file is read in chunks (csv_reader.hpp); JSONL twice, first for the union of its keys (at
// most kMaxColumns, kMaxColumnNameBytes); a JSON array whole (at most kMaxJsonArrayBytes).
// Internal to core. Thread rules: one thread.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpumux/io/trace_import.hpp"

namespace gpumux::trace_import {

/// Called with each row; the row is valid only during the call.
using RowFn = std::function<void(const Table::Row&)>;

class RowSource {
 public:
  virtual ~RowSource() = default;
  [[nodiscard]] const std::vector<std::string>& columns() const noexcept { return columns_; }
  /// Rows are a JSON array's elements: messages name "[i]".
  [[nodiscard]] bool json_elements() const noexcept { return json_elements_; }
  /// Reads every row once, in order.
  virtual void read(const RowFn& fn) = 0;

 protected:
  std::vector<std::string> columns_;
  bool json_elements_ = false;
};

/// The rows of `text` in `format` (Auto: detected from the text); `text` must outlive it.
[[nodiscard]] std::unique_ptr<RowSource> text_rows(std::string_view text, Format format,
                                                   const std::string& file);
/// The rows of a file, streamed from `in` (Auto: by `path`'s extension, then content).
[[nodiscard]] std::unique_ptr<RowSource> file_rows(InputStream& in,
                                                   const std::filesystem::path& path,
                                                   Format format);
/// The rows of a table in memory; `table` must outlive it.
[[nodiscard]] std::unique_ptr<RowSource> table_rows(const Table& table);

/// Per-minute invocation counts to one row per invocation (expand_minute_counts), one source
/// row at a time: memory does not grow with the counts.
class MinuteExpander {
 public:
  MinuteExpander(const std::vector<std::string>& columns, bool json_elements, MinuteCounts how,
                 std::string file);
  /// "arrival_ns", then the source's columns that are not minutes.
  [[nodiscard]] const std::vector<std::string>& columns() const noexcept { return columns_; }
  /// Calls `fn` with each invocation of `row`.
  void expand(const Table::Row& row, const RowFn& fn);

 private:
  std::vector<std::string> columns_;
  std::vector<std::pair<std::size_t, unsigned>> minutes_;  // source column, minute
  std::vector<std::size_t> ids_;                           // source columns kept
  bool json_elements_;
  MinuteCounts how_;
  std::string file_;
  std::uint64_t total_ = 0;
  Table::Row out_;
};

/// Checks a header: at least one column, none empty, none twice, within kMaxColumns and
/// kMaxColumnNameBytes. `where` names the header's place ("line 1").
void check_header(const std::vector<std::string>& columns, const std::string& file,
                  const std::string& where);

}  // namespace gpumux::trace_import
