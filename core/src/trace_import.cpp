// Converting a request trace's rows to an arrival CSV (trace_import.hpp): time parsing in
// integer nanoseconds, order check or sort, origin, rounding and the kept columns.
#include "gpumux/trace_import.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <numeric>

#include "gpumux/errors.hpp"
#include "gpumux/input_file.hpp"

namespace gpumux::trace_import {
namespace {

// The replay reader's limit on arrival_s (workload.cpp kMaxSeconds): about 31 years.
constexpr std::int64_t kMaxOutputNs = 1'000'000'000LL * 1'000'000'000LL;

int unit_digits(TimeUnit u) {
  switch (u) {
    case TimeUnit::S:
      return 9;
    case TimeUnit::Ms:
      return 6;
    case TimeUnit::Us:
      return 3;
    case TimeUnit::Ns:
    case TimeUnit::Datetime:
      break;
  }
  return 0;
}

std::int64_t pow10(int k) {
  std::int64_t p = 1;
  for (int i = 0; i < k; ++i) p *= 10;
  return p;
}

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

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// `digits` (0-9 only) as a fraction scaled to 10^k, rounded half up on the next digit.
std::int64_t fraction_scaled(std::string_view digits, int k) {
  std::int64_t v = 0;
  for (int i = 0; i < k; ++i) {
    v = v * 10 + (static_cast<std::size_t>(i) < digits.size() ? digits[i] - '0' : 0);
  }
  if (digits.size() > static_cast<std::size_t>(k) && digits[k] >= '5') ++v;
  return v;
}

std::optional<std::int64_t> parse_number_ns(std::string_view s, TimeUnit unit) {
  const int k = unit_digits(unit);
  if (s.find_first_of("eE") != std::string_view::npos) {
    double v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
    const double ns = v * static_cast<double>(pow10(k));
    if (!(std::fabs(ns) < 9.2e18)) return std::nullopt;
    return static_cast<std::int64_t>(std::llround(ns));
  }
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  const auto dot = s.find('.');
  const std::string_view whole = s.substr(0, dot);
  const std::string_view frac =
      dot == std::string_view::npos ? std::string_view{} : s.substr(dot + 1);
  if (whole.empty() && frac.empty()) return std::nullopt;
  if (!whole.empty() && !all_digits(whole)) return std::nullopt;
  if (dot != std::string_view::npos && !frac.empty() && !all_digits(frac)) return std::nullopt;
  std::int64_t w = 0;
  if (!whole.empty()) {
    auto [ptr, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), w);
    if (ec != std::errc()) return std::nullopt;
  }
  std::int64_t ns = 0;
  if (__builtin_mul_overflow(w, pow10(k), &ns)) return std::nullopt;
  if (__builtin_add_overflow(ns, fraction_scaled(frac, k), &ns)) return std::nullopt;
  return negative ? -ns : ns;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "chrono-Compatible
// Low-Level Date Algorithms", days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// Days in month `m` (1-12) of Gregorian year `y`.
unsigned days_in_month(unsigned y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

// "YYYY-MM-DD[T ]hh:mm:ss[.f{1,9}][Z]" as ns since the Unix epoch, UTC. Each field is checked
// in its own range, with no timegm-style normalisation (2023-02-30 is not 2 March); when the
// fields are well formed but name no instant, `*impossible` is set.
std::optional<std::int64_t> parse_datetime_ns(std::string_view s, bool* impossible) {
  if (!s.empty() && (s.back() == 'Z' || s.back() == 'z')) s.remove_suffix(1);
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
      s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  auto num = [&](std::size_t at, std::size_t n) -> std::optional<unsigned> {
    const std::string_view d = s.substr(at, n);
    if (!all_digits(d)) return std::nullopt;
    unsigned v = 0;
    std::from_chars(d.data(), d.data() + d.size(), v);
    return v;
  };
  const auto y = num(0, 4), mo = num(5, 2), d = num(8, 2);
  const auto h = num(11, 2), mi = num(14, 2), sec = num(17, 2);
  if (!y || !mo || !d || !h || !mi || !sec) return std::nullopt;
  std::int64_t frac = 0;
  if (s.size() > 19) {
    const std::string_view f = s.substr(20);
    if (s[19] != '.' || f.empty() || f.size() > 9 || !all_digits(f)) return std::nullopt;
    frac = fraction_scaled(f, 9);
  }
  // No 24:00:00 and no leap second (23:59:60): Unix time, the count these become, has no
  // place for a leap second.
  if (*y < 1 || *mo < 1 || *mo > 12 || *d < 1 || *d > days_in_month(*y, *mo) || *h > 23 ||
      *mi > 59 || *sec > 59) {
    if (impossible != nullptr) *impossible = true;
    return std::nullopt;
  }
  const std::int64_t days = days_from_civil(*y, *mo, *d);
  const std::int64_t secs = days * 86400 + *h * 3600LL + *mi * 60LL + *sec;
  if (secs > 9'000'000'000LL || secs < -9'000'000'000LL) return std::nullopt;  // int64 ns
  return secs * 1'000'000'000LL + frac;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + printable(n);
  return out;
}

std::size_t column_index(const Table& t, const std::string& name, const std::string& what,
                         const std::string& file) {
  const auto it = std::find(t.columns.begin(), t.columns.end(), name);
  if (it == t.columns.end()) {
    throw TraceError(
        file, "line 1",
        what + ": no column '" + printable(name) + "'; the columns are " + join(t.columns));
  }
  return static_cast<std::size_t>(it - t.columns.begin());
}

// Seconds with `decimals` digits after the point from a non-negative ns count, half up.
std::string seconds_text(std::int64_t ns, int decimals) {
  const std::int64_t q = pow10(9 - decimals);
  const std::int64_t v = ns / q + (ns % q >= (q + 1) / 2 && q > 1 ? 1 : 0);
  const std::int64_t one = pow10(decimals);
  std::string out = std::to_string(v / one);
  if (decimals > 0) {
    std::string frac = std::to_string(v % one);
    out += '.' + std::string(static_cast<std::size_t>(decimals) - frac.size(), '0') + frac;
  }
  return out;
}

std::string ns_text(std::int64_t ns) {
  return (ns < 0 ? "-" : "") + seconds_text(ns < 0 ? -ns : ns, 9);
}

}  // namespace

std::optional<std::int64_t> parse_time_ns(std::string_view text, TimeUnit unit) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  if (unit == TimeUnit::Datetime) return parse_datetime_ns(text, nullptr);
  return parse_number_ns(text, unit);
}

Result convert(const Table& table, const Options& o, const std::string& file) {
  if (o.decimals < 0 || o.decimals > 9) {
    throw UsageError("--decimals: must be in [0, 9], got " + std::to_string(o.decimals));
  }
  if (o.time_column.empty()) {
    throw UsageError(file + ": name the time column (--time-column); the columns are " +
                     join(table.columns));
  }
  const std::size_t time_col = column_index(table, o.time_column, "--time-column", file);
  std::vector<std::size_t> kept;
  if (o.keep) {
    for (const auto& name : *o.keep) kept.push_back(column_index(table, name, "--keep", file));
  } else {
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      if (i != time_col) kept.push_back(i);
    }
  }
  std::map<std::string, std::string> rename;
  for (const auto& [from, to] : o.rename) {
    (void)column_index(table, from, "--rename", file);
    if (to.empty()) throw UsageError("--rename " + from + "=: the new name is empty");
    rename[from] = to;
  }
  std::vector<std::string> header{"arrival_s"};
  for (const std::size_t c : kept) {
    const auto it = rename.find(table.columns[c]);
    header.push_back(it == rename.end() ? table.columns[c] : it->second);
    if (header.back() == "arrival_s") {
      throw UsageError(file + ": kept column '" + table.columns[c] +
                       "' would be named arrival_s like the time; --rename it or leave it out");
    }
  }
  std::vector<std::pair<std::size_t, std::string>> where;
  for (const auto& [col, value] : o.where) {
    where.emplace_back(column_index(table, col, "--where", file), value);
  }

  Result res;
  res.rows_read = table.rows.size();
  struct Timed {
    std::int64_t ns;
    std::size_t row;
  };
  std::vector<Timed> timed;
  timed.reserve(table.rows.size());
  const std::string* previous = nullptr;  // the last selected row's time text
  std::int64_t gap_sum = 0;               // with o.gaps: the arrival so far
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const Table::Row& row = table.rows[r];
    const bool selected = std::all_of(where.begin(), where.end(), [&](const auto& w) {
      return row.cells[w.first] && *row.cells[w.first] == w.second;
    });
    if (!selected) continue;
    const std::string where_at = row_place(table, row);
    const auto& cell = row.cells[time_col];
    if (!cell || trim(*cell).empty()) {
      throw TraceError(file, where_at, "'" + printable(o.time_column) + "' is empty");
    }
    auto ns = parse_time_ns(*cell, o.unit);
    if (!ns) {
      bool impossible = false;
      if (o.unit == TimeUnit::Datetime) (void)parse_datetime_ns(trim(*cell), &impossible);
      throw TraceError(file, where_at,
                       "'" + printable(o.time_column) + "': expected " + unit_name(o.unit) +
                           ", got '" + printable(*cell) + "'" +
                           (impossible ? " (no such date or time)" : ""));
    }
    if (o.gaps) {
      // Inter-arrival gaps: the arrival is the running sum, exact in integer ns.
      if (*ns < 0 || __builtin_add_overflow(gap_sum, *ns, &gap_sum)) {
        throw TraceError(file, where_at,
                         "'" + printable(o.time_column) +
                             "': a gap must be >= 0 and the sum "
                             "finite, got '" +
                             printable(*cell) + "'");
      }
      ns = gap_sum;
    }
    if (!timed.empty() && *ns < timed.back().ns) {
      ++res.out_of_order;
      if (!o.sort) {
        throw TraceError(file, where_at,
                         "'" + printable(o.time_column) + "' goes backwards (" + printable(*cell) +
                             " after " + printable(*previous) + "); pass --sort to sort the rows");
      }
    }
    timed.push_back({*ns, r});
    previous = &*cell;
  }
  if (timed.empty()) {
    throw TraceError(file, "line 1", where.empty() ? "no rows" : "no rows match --where");
  }
  if (o.sort) {
    std::stable_sort(timed.begin(), timed.end(),
                     [](const Timed& a, const Timed& b) { return a.ns < b.ns; });
  }
  const std::int64_t base = o.origin == Origin::First ? timed.front().ns : 0;
  res.first_ns = timed.front().ns;
  res.span_ns = 0;
  std::string out;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_cell(header[i]);
  }
  out += '\n';
  for (const Timed& t : timed) {
    const Table::Row& row = table.rows[t.row];
    std::int64_t rel = 0;
    if (__builtin_sub_overflow(t.ns, base, &rel) || rel > kMaxOutputNs) {
      throw TraceError(
          file, row_place(table, row),
          "arrival at " + ns_text(t.ns) + " s is beyond the replay limit of 1e9 s" +
              (o.origin == Origin::Keep ? "; for absolute (epoch) times use --time-origin first"
                                        : ""));
    }
    if (rel < 0) {
      throw TraceError(file, row_place(table, row),
                       "arrival at " + ns_text(t.ns) +
                           " s is negative; use --time-origin first to start at the first row");
    }
    res.span_ns = t.ns - timed.front().ns;
    out += seconds_text(rel, o.decimals);
    for (const std::size_t c : kept) {
      out += ',';
      if (row.cells[c]) out += csv_cell(*row.cells[c]);
    }
    out += '\n';
  }
  res.rows_written = timed.size();
  res.csv = std::move(out);
  return res;
}

}  // namespace gpumux::trace_import
