// Harness: import's output read back by the replay reader (round trip). The bytes become a
// table whose cells and column names hold anything (split at 0xFF: cells between, 0xFE ends a
// row; the first row names the columns), with row i at i ms; trace_import::convert writes it
// and the replay reader (parse_arrivals_csv_text) and the CSV reader it is built on must read
// back exactly the times and the cells. A mismatch, or the reader refusing import's own
// output, is a finding (abort), not an input error.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "gpumux/io/csv_reader.hpp"
#include "gpumux/io/trace_import.hpp"
#include "gpumux/io/workload.hpp"

namespace {

namespace ti = gpumux::trace_import;

std::vector<std::vector<std::string>> split_rows(std::string_view text) {
  std::vector<std::vector<std::string>> rows(1);
  rows.back().emplace_back();
  for (const char c : text) {
    if (c == '\xFE') {
      rows.emplace_back(1);
    } else if (c == '\xFF') {
      rows.back().emplace_back();
    } else {
      rows.back().back() += c;
    }
  }
  return rows;
}

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto rows = split_rows(gpumux::fuzz::as_text(data, size));
  ti::Table t;
  t.columns.emplace_back("t");
  for (std::size_t c = 0; c < rows.front().size() && c < 8; ++c) {
    std::string name = std::to_string(c);  // unique, never arrival_s
    name.insert(0, 1, 'c');
    t.columns.push_back(name + rows.front()[c]);
  }
  std::vector<double> expected;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    ti::Table::Row row{r + 1, {std::to_string(r)}};
    for (std::size_t c = 1; c < t.columns.size(); ++c) {
      row.cells.emplace_back(c - 1 < rows[r].size() ? rows[r][c - 1] : std::string());
    }
    t.rows.push_back(std::move(row));
    // r ms as the text import writes with 3 decimals, parsed as the replay reader parses it.
    const std::string ms = std::to_string(r % 1000);
    const std::string text = std::to_string(r / 1000) + "." + std::string(3 - ms.size(), '0') + ms;
    double v = 0;
    std::from_chars(text.data(), text.data() + text.size(), v);
    expected.push_back(v);
  }
  if (t.rows.empty()) return 0;
  ti::Options o;
  o.time_column = "t";
  o.unit = ti::TimeUnit::Ms;
  o.origin = ti::Origin::Keep;
  o.decimals = 3;
  const std::string csv = ti::convert(t, o, "in").csv;
  // The replay reader: every time, nothing else, and no error on import's own output.
  check(gpumux::parse_arrivals_csv_text(csv, "out.csv") == expected);
  // The reader under it: the header and every cell as written.
  gpumux::CsvReader reader(csv, "out.csv");
  std::vector<std::string> fields;
  check(reader.next(fields) && fields.size() == t.columns.size() && fields[0] == "arrival_s");
  for (std::size_t c = 1; c < fields.size(); ++c) check(fields[c] == t.columns[c]);
  for (const auto& row : t.rows) {
    check(reader.next(fields) && fields.size() == t.columns.size());
    for (std::size_t c = 1; c < fields.size(); ++c) check(fields[c] == *row.cells[c]);
  }
  check(!reader.next(fields));
  return 0;
}
