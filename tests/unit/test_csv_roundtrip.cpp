// Property: what `gpumux trace import` writes, the replay reader reads back. Random tables
// (seeded, so a failure reproduces) with hostile cells and column names (commas, quotes,
// CR, LF, CRLF, a byte-order mark, NUL, spaces, cells that look like numbers or like the
// header) go through import's writer; the replay reader returns exactly the arrival times,
// one per row.
#include <catch2/catch.hpp>

#include <charconv>
#include <random>

#include "gpumux/io/trace_import.hpp"
#include "gpumux/io/workload.hpp"

using namespace gpumux;
namespace ti = gpumux::trace_import;

namespace {

const std::vector<std::string> kPieces = {",",
                                          "\"",
                                          "\"\"",
                                          "\r",
                                          "\n",
                                          "\r\n",
                                          "\n\r",
                                          " ",
                                          "\t",
                                          "\xEF\xBB\xBF",
                                          std::string(1, '\0'),
                                          "a",
                                          "1",
                                          "0.5",
                                          "-",
                                          "arrival_s",
                                          "x,y",
                                          "\"q\"",
                                          "\xC3\xA9",
                                          "#",
                                          "{\"a\": 1}",
                                          ""};

std::string random_cell(std::mt19937_64& rng) {
  std::string out;
  const int pieces = static_cast<int>(rng() % 5);
  for (int i = 0; i < pieces; ++i) out += kPieces[rng() % kPieces.size()];
  return out;
}

struct RandomTable {
  ti::Table table;
  std::vector<std::int64_t> ms;  ///< each row's time in ms, non-decreasing
};

RandomTable random_table(std::mt19937_64& rng) {
  RandomTable r;
  r.table.columns.emplace_back("t");
  const int extra = static_cast<int>(rng() % 5);
  for (int c = 0; c < extra; ++c) {
    // Unique, non-empty, never arrival_s: a prefix keeps them apart.
    std::string name = std::to_string(c);
    name.insert(0, 1, 'c');
    name += random_cell(rng);
    r.table.columns.push_back(std::move(name));
  }
  const int rows = 1 + static_cast<int>(rng() % 20);
  std::int64_t t = static_cast<std::int64_t>(rng() % 1000);
  for (int i = 0; i < rows; ++i) {
    t += static_cast<std::int64_t>(rng() % 3 == 0 ? 0 : rng() % 100000);
    ti::Table::Row row{static_cast<std::size_t>(i + 2), {std::to_string(t)}};
    for (int c = 0; c < extra; ++c) row.cells.emplace_back(random_cell(rng));
    r.table.rows.push_back(std::move(row));
    r.ms.push_back(t);
  }
  return r;
}

double seconds_of_ms(std::int64_t ms) {
  // The text import writes with 3 decimals, parsed as the replay reader parses it.
  std::string text = std::to_string(ms / 1000) + ".";
  const std::string frac = std::to_string(ms % 1000);
  text += std::string(3 - frac.size(), '0') + frac;
  double v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

}  // namespace

TEST_CASE("import's output, hostile cells and all, replays to the same arrival times",
          "[trace_import][csv]") {
  std::mt19937_64 rng(20261129);
  ti::Options o;
  o.time_column = "t";
  o.unit = ti::TimeUnit::Ms;
  o.origin = ti::Origin::Keep;
  o.decimals = 3;
  for (int trial = 0; trial < 300; ++trial) {
    const RandomTable r = random_table(rng);
    const std::string csv = ti::convert(r.table, o, "in").csv;
    INFO("trial " << trial << ": " << csv);
    std::vector<double> expected;
    for (const std::int64_t ms : r.ms) expected.push_back(seconds_of_ms(ms));
    std::vector<double> got;
    REQUIRE_NOTHROW(got = parse_arrivals_csv_text(csv, "out.csv"));
    CHECK(got == expected);
  }
}
