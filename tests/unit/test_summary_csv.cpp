// summary.csv's cell rules (summary_csv.hpp): RFC 4180 quoting, fixed numbers, empty cells for
// values that do not exist, and the run-wide row in its own table.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "gpumux/io/summary_csv.hpp"

using namespace gpumux;

namespace {

// A minimal RFC 4180 reader (quoted fields, doubled quotes, LF-ended records): what the tests
// expect any CSV reader to recover.
std::vector<std::vector<std::string>> read_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    std::string& cell = rows.back().back();
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\n') {
      rows.emplace_back(1);
    } else {
      cell += c;
    }
  }
  if (rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();
  return rows;
}

}  // namespace

TEST_CASE("csv_field quotes only what RFC 4180 requires", "[summary][csv]") {
  CHECK(csv_field("plain") == "plain");
  CHECK(csv_field("") == "");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(csv_field("cr\r") == "\"cr\r\"");
}

TEST_CASE("csv_number prints 9 fixed decimals without trailing zeros", "[summary][csv]") {
  CHECK(csv_number(30.000000000000004) == "30");  // the example
  CHECK(csv_number(0.1 + 0.2) == "0.3");
  CHECK(csv_number(0.5) == "0.5");
  CHECK(csv_number(1.123456789) == "1.123456789");  // a time in s at ns resolution
  CHECK(csv_number(1.0000000004) == "1");           // below 1 ns: rounded away
  CHECK(csv_number(-0.0) == "0");
  CHECK(csv_number(-2.25) == "-2.25");
  CHECK(csv_number(1e12) == "1000000000000");
  CHECK(csv_number(std::numeric_limits<double>::quiet_NaN()).empty());
}

TEST_CASE("csv_cell: null is empty, integers stay integers", "[summary][csv]") {
  CHECK(csv_cell(nullptr).empty());
  CHECK(csv_cell(nlohmann::json(std::uint64_t{18446744073709551615ULL})) == "18446744073709551615");
  CHECK(csv_cell(nlohmann::json(-3)) == "-3");
  CHECK(csv_cell(nlohmann::json(2.0)) == "2");
  CHECK(csv_cell(nlohmann::json("x,y")) == "\"x,y\"");
  CHECK(csv_cell(nlohmann::json(true)) == "true");
}

TEST_CASE("summary.csv: one row per job, quoted names round-trip, no ALL row", "[summary][csv]") {
  const nlohmann::json summary = {{"jobs",
                                   {{{"name", "train, \"big\""},
                                     {"kind", "training"},
                                     {"model", "resnet50"},
                                     {"batch", 16},
                                     {"tenant", "t"},
                                     {"status", "finished"},
                                     {"outcome", "finished"},
                                     {"jct_s", 30.000000000000004},
                                     {"iterations", 3}},
                                    {{"name", "svc"},
                                     {"kind", "inference"},
                                     {"model", "resnet50"},
                                     {"batch", 1},
                                     {"tenant", "t"},
                                     {"status", "horizon"},
                                     {"outcome", "unfinished"},
                                     {"requests", 0},
                                     {"latency", nullptr}}}},
                                  {"run", {{"end_s", 40.5}}},
                                  {"jobs_overall", {{"jobs", 2}, {"mean_jct_s", nullptr}}},
                                  {"training", {{"samples_per_s_over_run", 1.2}}},
                                  {"inference", {{"count", 0}}}};
  const CsvColumns lead = {{"policy", "mps"}, {"seed", "7"}};
  std::ostringstream jobs, run;
  write_summary_csv(summary, lead, jobs);
  write_summary_run_csv(summary, lead, run);

  const auto rows = read_csv(jobs.str());
  REQUIRE(rows.size() == 3);  // header + 2 jobs
  const auto& header = rows[0];
  REQUIRE(header.size() == 2 + summary_csv_columns().size());
  auto col = [&](const std::string& name) {
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return i;
    }
    FAIL("no column " << name);
    return std::size_t{0};
  };
  for (const auto& r : rows) CHECK(r.size() == header.size());
  CHECK(rows[1][col("policy")] == "mps");
  CHECK(rows[1][col("name")] == "train, \"big\"");
  CHECK(rows[1][col("jct_s")] == "30");
  CHECK(rows[1][col("iterations")] == "3");
  CHECK(rows[1][col("latency_p99_ms")].empty());  // a training job has no latency
  CHECK(rows[2][col("requests")] == "0");
  CHECK(rows[2][col("latency_p50_ms")].empty());  // none served: empty, never 0
  for (const auto& r : rows) CHECK(r[col("name")] != "ALL");

  const auto run_rows = read_csv(run.str());
  REQUIRE(run_rows.size() == 2);
  REQUIRE(run_rows[1].size() == 2 + summary_run_csv_columns().size());
  CHECK(run_rows[0][2] == "end_s");
  CHECK(run_rows[1][2] == "40.5");
  CHECK(run_rows[1][1] == "7");
}
