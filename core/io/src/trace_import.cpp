// Converting a request trace's rows to an arrival CSV (trace_import.hpp), one row at a time:
// the time in integer nanoseconds, the order check or the sort (arrival_sorter.hpp), origin,
// rounding and the kept columns.
#include "gpumux/io/trace_import.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <new>

#include "arrival_sorter.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/io/byte_sink.hpp"
#include "gpumux/io/input_file.hpp"
#include "tail_store.hpp"
#include "trace_rows.hpp"
#include "trace_text.hpp"

namespace gpumux::trace_import {
namespace {

// The replay reader's limit on arrival_s (workload.cpp kMaxSeconds): about 31 years.
constexpr std::int64_t kMaxOutputNs = 1'000'000'000LL * 1'000'000'000LL;

const char* unit_name(TimeUnit u) {
  switch (u) {
    case TimeUnit::S:
      return "seconds";
    case TimeUnit::Ms:
      return "milliseconds";
    case TimeUnit::Us:
      return "microseconds";
    case TimeUnit::Ns:
      return "nanoseconds";
    case TimeUnit::Datetime:
      break;
  }
  return "a date and time (YYYY-MM-DD hh:mm:ss[.fffffffff])";
}

std::size_t column_index(const std::vector<std::string>& columns, const std::string& name,
                         const std::string& what, const std::string& file) {
  const auto it = std::find(columns.begin(), columns.end(), name);
  if (it == columns.end()) {
    throw TraceError(
        file, "line 1",
        what + ": no column '" + printable(name) + "'; the columns are " + join_names(columns));
  }
  return static_cast<std::size_t>(it - columns.begin());
}

// RFC 4180 quoting of one cell, appended (quotes only when it holds a comma, quote or break).
void append_csv_cell(std::string& out, std::string_view value) {
  if (value.find_first_of(",\"\r\n") == std::string_view::npos) {
    out.append(value);
    return;
  }
  out += '"';
  for (const char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

class StringSink final : public ByteSink {
 public:
  explicit StringSink(std::string& out) : out_(out) {}
  void write(const char* data, std::size_t n) override { out_.append(data, n); }

 private:
  std::string& out_;
};

// The time, order and columns of each row, written at once (rows in order) or after the sort.
class Converter {
 public:
  Converter(const std::vector<std::string>& columns, bool json_elements, const Options& o,
            const std::string& file, ByteSink& out, const SortSpace& space);
  void accept(const Table::Row& row);
  Result finish(const std::string& no_rows);

 private:
  std::int64_t row_time(const Table::Row& row);
  void write_row(std::int64_t ns, std::string_view tail, std::size_t line);
  const std::string& tail_of(const Table::Row& row);
  std::uint64_t tail_ref(const Table::Row& row);
  [[noreturn]] void beyond(std::int64_t ns, std::size_t line) const;
  [[noreturn]] void negative(std::int64_t ns, std::size_t line) const;

  const Options& o_;
  const std::string& file_;
  bool json_elements_;
  std::size_t time_col_ = 0;
  std::vector<std::size_t> kept_;
  OutBuf out_;
  std::optional<ArrivalSorter> sorter_;
  std::optional<TailStore> tails_;
  Result res_;
  std::int64_t gap_sum_ = 0;   // with o.gaps: the arrival so far
  bool any_ = false;           // a row was taken
  std::int64_t previous_ = 0;  // the last row's time, and its text
  std::string previous_text_;
  std::int64_t base_ = 0;
  struct Extreme {
    std::int64_t ns = 0;
    std::size_t line = 0;
  } min_, max_;
  std::string tail_, line_;
  std::vector<std::optional<std::string>> last_kept_;  // the cells of the last tail stored
  std::uint64_t last_ref_ = 0;
  bool have_ref_ = false;
};

Converter::Converter(const std::vector<std::string>& columns, bool json_elements, const Options& o,
                     const std::string& file, ByteSink& out, const SortSpace& space)
    : o_(o), file_(file), json_elements_(json_elements), out_(out) {
  if (o.decimals < 0 || o.decimals > 9) {
    throw UsageError("--decimals: must be in [0, 9], got " + std::to_string(o.decimals));
  }
  if (o.time_column.empty()) {
    throw UsageError(file + ": name the time column (--time-column); the columns are " +
                     join_names(columns));
  }
  time_col_ = column_index(columns, o.time_column, "--time-column", file);
  if (o.keep) {
    for (const auto& name : *o.keep) kept_.push_back(column_index(columns, name, "--keep", file));
  } else {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (i != time_col_) kept_.push_back(i);
    }
  }
  std::map<std::string, std::string> rename;
  for (const auto& [from, to] : o.rename) {
    (void)column_index(columns, from, "--rename", file);
    if (to.empty()) throw UsageError("--rename " + from + "=: the new name is empty");
    rename[from] = to;
  }
  std::string header = "arrival_s";
  for (const std::size_t c : kept_) {
    const auto it = rename.find(columns[c]);
    const std::string& name = it == rename.end() ? columns[c] : it->second;
    if (name == "arrival_s") {
      throw UsageError(file + ": kept column '" + columns[c] +
                       "' would be named arrival_s like the time; --rename it or leave it out");
    }
    header += ',';
    append_csv_cell(header, name);
  }
  out_.put(header);
  out_.put('\n');
  if (o.sort) {
    sorter_.emplace(space, file);
    tails_.emplace(space, file);
  }
}

std::int64_t Converter::row_time(const Table::Row& row) {
  const auto& cell = row.cells[time_col_];
  auto column = [&] { return "'" + printable(o_.time_column) + "'"; };
  if (!cell || trim(*cell).empty()) {
    throw TraceError(file_, place_of(json_elements_, row.line), column() + " is empty");
  }
  auto ns = parse_time_ns(*cell, o_.unit);
  if (!ns) {
    DateProblem problem = DateProblem::None;
    if (o_.unit == TimeUnit::Datetime) (void)parse_datetime_ns(trim(*cell), &problem);
    if (problem == DateProblem::OutOfRange) {
      throw TraceError(file_, place_of(json_elements_, row.line),
                       column() + ": '" + printable(*cell) + "' is outside the supported range, " +
                           std::string(kDatetimeRange) +
                           " (times are held as int64 nanoseconds since 1970-01-01)");
    }
    throw TraceError(file_, place_of(json_elements_, row.line),
                     column() + ": expected " + unit_name(o_.unit) + ", got '" + printable(*cell) +
                         "'" +
                         (problem == DateProblem::NoSuchInstant ? " (no such date or time)" : ""));
  }
  if (o_.gaps) {
    // Inter-arrival gaps: the arrival is the running sum, exact in integer ns.
    if (*ns < 0 || __builtin_add_overflow(gap_sum_, *ns, &gap_sum_)) {
      throw TraceError(
          file_, place_of(json_elements_, row.line),
          column() + ": a gap must be >= 0 and the sum finite, got '" + printable(*cell) + "'");
    }
    ns = gap_sum_;
  }
  if (any_ && *ns < previous_) {
    ++res_.out_of_order;
    if (!o_.sort) {
      throw TraceError(file_, place_of(json_elements_, row.line),
                       column() + " goes backwards (" + printable(*cell) + " after " +
                           printable(previous_text_) + "); pass --sort to sort the rows");
    }
  }
  previous_ = *ns;
  previous_text_.assign(*cell);
  return *ns;
}

const std::string& Converter::tail_of(const Table::Row& row) {
  tail_.clear();
  for (const std::size_t c : kept_) {
    tail_ += ',';
    if (row.cells[c]) append_csv_cell(tail_, *row.cells[c]);
  }
  return tail_;
}

std::uint64_t Converter::tail_ref(const Table::Row& row) {
  if (kept_.empty()) return 0;
  // Consecutive rows with the same kept cells (one function's invocations) share one tail.
  bool same = have_ref_;
  for (std::size_t k = 0; same && k < kept_.size(); ++k)
    same = last_kept_[k] == row.cells[kept_[k]];
  if (same) return last_ref_;
  last_kept_.resize(kept_.size());
  for (std::size_t k = 0; k < kept_.size(); ++k) last_kept_[k] = row.cells[kept_[k]];
  last_ref_ = tails_->add(tail_of(row));
  have_ref_ = true;
  return last_ref_;
}

void Converter::beyond(std::int64_t ns, std::size_t line) const {
  throw TraceError(
      file_, place_of(json_elements_, line),
      "arrival at " + ns_text(ns) + " s is beyond the replay limit of 1e9 s" +
          (o_.origin == Origin::Keep ? "; for absolute (epoch) times use --time-origin first"
                                     : ""));
}

void Converter::negative(std::int64_t ns, std::size_t line) const {
  throw TraceError(file_, place_of(json_elements_, line),
                   "arrival at " + ns_text(ns) +
                       " s is negative; use --time-origin first to start at the first row");
}

void Converter::write_row(std::int64_t ns, std::string_view tail, std::size_t line) {
  std::int64_t rel = 0;
  if (__builtin_sub_overflow(ns, base_, &rel) || rel > kMaxOutputNs) beyond(ns, line);
  if (rel < 0) negative(ns, line);
  line_.clear();
  append_seconds(line_, rel, o_.decimals);
  line_.append(tail);
  line_ += '\n';
  out_.put(line_);
  ++res_.rows_written;
}

void Converter::accept(const Table::Row& row) {
  const std::int64_t ns = row_time(row);
  if (!any_ || ns < min_.ns) min_ = {ns, row.line};
  if (!any_ || ns > max_.ns) max_ = {ns, row.line};
  if (!any_) base_ = o_.origin == Origin::First ? ns : 0;
  any_ = true;
  if (!sorter_) {
    write_row(ns, tail_of(row), row.line);  // in order: the first row is the earliest
    return;
  }
  sorter_->add({ns, tail_ref(row)});
}

Result Converter::finish(const std::string& no_rows) {
  if (!any_) throw TraceError(file_, "line 1", no_rows);
  res_.first_ns = min_.ns;
  if (sorter_) {
    base_ = o_.origin == Origin::First ? min_.ns : 0;
    // Checked before anything is written: the earliest and the latest arrival.
    if (min_.ns < base_) negative(min_.ns, min_.line);
    std::int64_t rel = 0;
    if (__builtin_sub_overflow(max_.ns, base_, &rel) || rel > kMaxOutputNs) {
      beyond(max_.ns, max_.line);
    }
    sorter_->drain([&](const SortEntry& e) {
      write_row(e.ns, kept_.empty() ? std::string_view() : tails_->get(e.ref), 0);
    });
  }
  // Both within the replay limit of the base (checked above, or row by row): no overflow.
  res_.span_ns = max_.ns - min_.ns;
  out_.flush();
  return res_;
}

// Runs `rows` through --where, the expansion of per-minute counts (when asked) and a
// Converter into `out`.
Result run_import(RowSource& rows, const Options& o, const std::optional<MinuteCounts>& minutes,
                  const std::string& file, ByteSink& out, const SortSpace& space) {
  std::vector<std::pair<std::size_t, std::string>> where;
  for (const auto& [col, value] : o.where) {
    where.emplace_back(column_index(rows.columns(), col, "--where", file), value);
  }
  auto selected = [&](const Table::Row& row) {
    return std::all_of(where.begin(), where.end(), [&](const auto& w) {
      return row.cells[w.first] && *row.cells[w.first] == w.second;
    });
  };
  std::optional<MinuteExpander> expander;
  if (minutes) expander.emplace(rows.columns(), rows.json_elements(), *minutes, file);
  Converter convert(expander ? expander->columns() : rows.columns(), rows.json_elements(), o, file,
                    out, space);
  std::size_t read = 0;
  const RowFn to_convert = [&](const Table::Row& row) { convert.accept(row); };
  rows.read([&](const Table::Row& row) {
    ++read;
    if (!selected(row)) return;
    if (expander) {
      expander->expand(row, to_convert);
    } else {
      convert.accept(row);
    }
  });
  Result r = convert.finish(where.empty() ? "no rows" : "no rows match --where");
  r.rows_read = read;
  return r;
}

}  // namespace

void append_seconds(std::string& out, std::int64_t ns, int decimals) {
  const std::int64_t q = pow10(9 - decimals);
  const std::int64_t v = ns / q + (ns % q >= (q + 1) / 2 && q > 1 ? 1 : 0);
  const std::int64_t one = pow10(decimals);
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v / one);
  out.append(buf, r.ptr);
  if (decimals > 0) {
    r = std::to_chars(buf, buf + sizeof buf, v % one);
    out += '.';
    out.append(static_cast<std::size_t>(decimals) - static_cast<std::size_t>(r.ptr - buf), '0');
    out.append(buf, r.ptr);
  }
}

std::string ns_text(std::int64_t ns) {
  std::string out = ns < 0 ? "-" : "";
  append_seconds(out, ns < 0 ? -ns : ns, 9);
  return out;
}

Result convert(const Table& table, const Options& o, const std::string& file) {
  const std::unique_ptr<RowSource> rows = table_rows(table);
  std::string text;
  StringSink sink(text);
  Result r = run_import(*rows, o, std::nullopt, file, sink, SortSpace{});
  r.csv = std::move(text);
  return r;
}

Result import_file(InputStream& in, const std::filesystem::path& path, const FileImport& spec,
                   ByteSink& out, const SortSpace& space) {
  try {
    const std::unique_ptr<RowSource> rows = file_rows(in, path, spec.format);
    return run_import(*rows, spec.options, spec.minute_counts, in.name(), out, space);
  } catch (const std::bad_alloc&) {
    throw Error(in.name() + ": out of memory importing it (" + std::to_string(in.bytes_seen()) +
                " bytes read)");
  }
}

}  // namespace gpumux::trace_import
