// trace_import.hpp: parsing request traces (CSV, TSV, JSONL), exact time conversion, order,
// origin, rounding, kept columns, and the expansion of per-minute invocation counts.
#include <catch2/catch.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/trace_import.hpp"

using namespace gpumux;
using namespace gpumux::trace_import;

namespace {

std::string convert_text(std::string_view text, Format f, const Options& o) {
  return convert(parse_table(text, f, "in"), o, "in").csv;
}

std::string error_of(std::string_view text, Format f, const Options& o) {
  try {
    (void)convert_text(text, f, o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

Options time_in(const std::string& column, TimeUnit unit) {
  Options o;
  o.time_column = column;
  o.unit = unit;
  return o;
}

}  // namespace

TEST_CASE("times parse exactly in every unit", "[trace_import]") {
  CHECK(parse_time_ns("1.5", TimeUnit::S) == 1'500'000'000);
  CHECK(parse_time_ns("1700000000123", TimeUnit::Ms) == 1'700'000'000'123'000'000);
  CHECK(parse_time_ns("  42 ", TimeUnit::Us) == 42'000);
  CHECK(parse_time_ns("7", TimeUnit::Ns) == 7);
  CHECK(parse_time_ns("0.0000000015", TimeUnit::S) == 2);  // rounded half up at ns
  CHECK(parse_time_ns("-2.25", TimeUnit::Ms) == -2'250'000);
  CHECK(parse_time_ns("1.7e3", TimeUnit::Ms) == 1'700'000'000);
  CHECK(parse_time_ns(".5", TimeUnit::S) == 500'000'000);
  // 1970-01-02 00:00:01.5 UTC = 86401.5 s; 2023-11-16 18:17:03.97996 (the Azure trace's first).
  CHECK(parse_time_ns("1970-01-02 00:00:01.5", TimeUnit::Datetime) == 86'401'500'000'000);
  CHECK(parse_time_ns("2023-11-16T18:17:03.9799600Z", TimeUnit::Datetime) ==
        1'700'158'623'979'960'000);
  for (const char* bad : {"", "abc", "1.2.3", "1,5", "nan", "inf", "9999999999999999999"}) {
    INFO(bad);
    CHECK_FALSE(parse_time_ns(bad, TimeUnit::S));
  }
  CHECK_FALSE(parse_time_ns("2023-13-01 00:00:00", TimeUnit::Datetime));
  CHECK_FALSE(parse_time_ns("2023-11-16 18:17:03.1234567890", TimeUnit::Datetime));
}

TEST_CASE("CSV follows RFC 4180, TSV and JSONL read into the same table", "[trace_import]") {
  const Table csv = parse_table(
      "\xEF\xBB\xBFt,app,note\r\n1,a,\"x, \"\"quoted\"\"\"\r\n\r\n2,b,\"two\nlines\"\n3,c,\n",
      Format::Csv, "in.csv");
  REQUIRE(csv.columns == std::vector<std::string>{"t", "app", "note"});
  REQUIRE(csv.rows.size() == 3);
  CHECK(*csv.rows[0].cells[2] == "x, \"quoted\"");
  CHECK(*csv.rows[1].cells[2] == "two\nlines");
  CHECK(csv.rows[1].line == 4);  // after the BOM line, a row and a blank line
  CHECK(csv.rows[2].line == 6);  // the quoted line break counts
  const Table tsv = parse_table("t\tapp\n1\ta\n", Format::Tsv, "in.tsv");
  CHECK(tsv.columns == std::vector<std::string>{"t", "app"});
  const Table jl = parse_table("{\"t\": 1, \"b\": \"x\"}\n\n{\"t\": 2, \"a\": null, \"c\": [1]}\n",
                               Format::Jsonl, "in.jsonl");
  CHECK(jl.columns == std::vector<std::string>{"a", "b", "c", "t"});  // union, sorted
  CHECK(jl.rows[1].line == 3);
  CHECK_FALSE(jl.rows[0].cells[0]);  // missing
  CHECK_FALSE(jl.rows[1].cells[0]);  // null
  CHECK(*jl.rows[1].cells[2] == "[1]");
  CHECK(detect_format("x.ndjson", "") == Format::Jsonl);
  CHECK(detect_format("x.txt", "  {\"a\":1}") == Format::Jsonl);
  CHECK(detect_format("x.txt", "a\tb\n") == Format::Tsv);
  CHECK(detect_format("x", "a,b\n") == Format::Csv);
}

TEST_CASE("malformed input names the file and the line", "[trace_import]") {
  auto parse_error = [](std::string_view text, Format f) {
    try {
      (void)parse_table(text, f, "in");
    } catch (const TraceError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(parse_error("a,b\n1,2\n3\n", Format::Csv) == "in: line 3: 1 fields, the header has 2");
  CHECK(parse_error("a,b\n1,\"2\n", Format::Csv) == "in: line 2: a quoted field is never closed");
  CHECK(parse_error("a,a\n", Format::Csv) == "in: line 1: header names column 'a' twice");
  CHECK(parse_error("{\"a\":1}\n[1]\n", Format::Jsonl) ==
        "in: line 2: expected one JSON object per line, got array");
  CHECK(parse_error("", Format::Csv) == "in: line 1: empty file (expected a header)");
}

TEST_CASE("epoch milliseconds start at 0 and keep their extra columns", "[trace_import]") {
  const std::string jsonl =
      "{\"timestamp\": 1700000000000, \"input_tokens\": 10, \"model\": \"llama, 7b\"}\n"
      "{\"timestamp\": 1700000000250, \"input_tokens\": 20, \"model\": \"m\"}\n"
      "{\"timestamp\": 1700000001001, \"input_tokens\": 30}\n";
  const std::string out = convert_text(jsonl, Format::Jsonl, time_in("timestamp", TimeUnit::Ms));
  CHECK(out ==
        "arrival_s,input_tokens,model\n"
        "0.000000,10,\"llama, 7b\"\n"
        "0.250000,20,m\n"
        "1.001000,30,\n");
}

TEST_CASE("order: refused with the line, or sorted stably", "[trace_import]") {
  const std::string csv = "t,id\n5,a\n3,b\n5,c\n4,d\n";
  CHECK(error_of(csv, Format::Csv, time_in("t", TimeUnit::S)) ==
        "in: line 3: 't' goes backwards (3 after 5); pass --sort to sort the rows");
  Options o = time_in("t", TimeUnit::S);
  o.sort = true;
  o.decimals = 0;
  const Result r = convert(parse_table(csv, Format::Csv, "in"), o, "in");
  CHECK(r.csv == "arrival_s,id\n0,b\n1,d\n2,a\n2,c\n");
  CHECK(r.out_of_order == 2);
  CHECK(r.span_ns == 2'000'000'000);
}

TEST_CASE("origin keep, decimals, keep/rename/where and limits", "[trace_import]") {
  const std::string csv = "t,app,tok\n0.0000004,x,1\n0.0000015,y,2\n2.5,x,3\n";
  Options o = time_in("t", TimeUnit::S);
  o.origin = Origin::Keep;
  o.decimals = 6;  // 0.4 us rounds down, 1.5 us rounds half up
  CHECK(convert_text(csv, Format::Csv, o) ==
        "arrival_s,app,tok\n0.000000,x,1\n0.000002,y,2\n2.500000,x,3\n");
  o.keep = std::vector<std::string>{"tok"};
  o.rename = {{"tok", "tokens"}};
  o.where = {{"app", "x"}};
  o.decimals = 1;
  CHECK(convert_text(csv, Format::Csv, o) == "arrival_s,tokens\n0.0,1\n2.5,3\n");
  // An absolute epoch in seconds kept as it is exceeds the reader's 1e9 s.
  Options keep_epoch = time_in("t", TimeUnit::S);
  keep_epoch.origin = Origin::Keep;
  CHECK(error_of("t\n1700000000\n", Format::Csv, keep_epoch) ==
        "in: line 2: arrival at 1700000000.000000000 s is beyond the replay limit of 1e9 s; for "
        "absolute (epoch) times use --time-origin first");
  CHECK(error_of("t\n-1\n", Format::Csv, keep_epoch).find("line 2: arrival at -1.0") !=
        std::string::npos);
  CHECK(error_of("t,u\n1,2\n", Format::Csv, time_in("x", TimeUnit::S)) ==
        "in: line 1: --time-column: no column 'x'; the columns are t, u");
  CHECK(error_of("t\n1\nabc\n", Format::Csv, time_in("t", TimeUnit::Ms)) ==
        "in: line 3: 't': expected milliseconds, got 'abc'");
  CHECK(error_of("{\"t\":1}\n{\"u\":2}\n", Format::Jsonl, time_in("t", TimeUnit::S)) ==
        "in: line 2: 't' is empty");
}

TEST_CASE("per-minute counts become arrival times", "[trace_import]") {
  const std::string csv = "HashApp,1,2,3\nA,2,0,1\nB,0,3,0\n";
  const Table t = parse_table(csv, Format::Csv, "in");
  SECTION("even: at the middle of equal parts of the minute") {
    const Table e = expand_minute_counts(t, 1, Spread::Even, "in");
    REQUIRE(e.rows.size() == 6);
    CHECK(e.columns == std::vector<std::string>{"arrival_ns", "HashApp"});
    // A minute 1, 2 calls: 15 s and 45 s; minute 3, 1 call: 150 s. B minute 2: 70, 90, 110 s.
    std::vector<std::string> got;
    for (const auto& r : e.rows) got.push_back(*r.cells[0] + "/" + *r.cells[1]);
    CHECK(got == std::vector<std::string>{"15000000000/A", "45000000000/A", "150000000000/A",
                                          "70000000000/B", "90000000000/B", "110000000000/B"});
  }
  SECTION("uniform: in the minute, seeded, independent of the other rows") {
    const Table u1 = expand_minute_counts(t, 7, Spread::Uniform, "in");
    const Table u2 = expand_minute_counts(t, 7, Spread::Uniform, "in");
    const Table u3 = expand_minute_counts(t, 8, Spread::Uniform, "in");
    REQUIRE(u1.rows.size() == 6);
    bool differs = false;
    for (std::size_t i = 0; i < u1.rows.size(); ++i) {
      CHECK(*u1.rows[i].cells[0] == *u2.rows[i].cells[0]);
      differs = differs || *u1.rows[i].cells[0] != *u3.rows[i].cells[0];
    }
    CHECK(differs);
    const long long b0 = std::stoll(*u1.rows[3].cells[0]);
    CHECK(b0 >= 60'000'000'000LL);
    CHECK(b0 < 120'000'000'000LL);
    Table only_b = t;
    select_rows(only_b, {{"HashApp", "B"}}, "in");
    const Table ub = expand_minute_counts(only_b, 7, Spread::Uniform, "in");
    REQUIRE(ub.rows.size() == 3);
    CHECK(*ub.rows[0].cells[0] == *u1.rows[3].cells[0]);
  }
  CHECK_THROWS_WITH(
      expand_minute_counts(parse_table("a,1\nx,-1\n", Format::Csv, "in"), 1, Spread::Even, "in"),
      "in: line 2: column 1: expected a count, got '-1'");
  CHECK_THROWS_WITH(
      expand_minute_counts(parse_table("a,b\nx,1\n", Format::Csv, "in"), 1, Spread::Even, "in"),
      Catch::Contains("not the Azure Functions 2019 invocation format"));
}

TEST_CASE("presets name their licence and time column", "[trace_import]") {
  REQUIRE(find_preset("azure-llm-2023") != nullptr);
  CHECK(find_preset("azure-llm-2023")->options.unit == TimeUnit::Datetime);
  CHECK(find_preset("azure-functions-2019")->minute_counts);
  CHECK(find_preset("nope") == nullptr);
  for (const Preset& p : presets()) CHECK_FALSE(p.licence.empty());
  // The Azure LLM 2023 preset on three rows in its source's format (100 ns resolution).
  const Preset& p = *find_preset("azure-llm-2023");
  const std::string src =
      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
      "2023-11-16 18:17:03.9799600,4808,10\n"
      "2023-11-16 18:17:04.0319658,3180,8\n"
      "2023-11-16 18:17:04.0319660,110,27\n";
  CHECK(convert(parse_table(src, p.format, "in"), p.options, "in").csv ==
        "arrival_s,context_tokens,generated_tokens\n0.000000,4808,10\n0.052006,3180,8\n"
        "0.052006,110,27\n");
}

TEST_CASE("a JSON array of gaps becomes cumulative arrivals (the Orion preset)", "[trace_import]") {
  const Preset& p = *find_preset("orion-gaps");
  // The first four gaps of Orion's inter_arrival_times.json: arrivals at their running sums.
  const std::string src = "[0.031, 0.012, 0.073, 0.013]";
  CHECK(detect_format("inter_arrival_times.json", src) == Format::Json);
  const Table t = parse_table(src, p.format, "in");
  CHECK(t.columns == std::vector<std::string>{"value"});
  CHECK(convert(t, p.options, "in").csv == "arrival_s\n0.031000\n0.043000\n0.116000\n0.129000\n");
  CHECK_THROWS_WITH(convert(parse_table("[0.5, -0.1]", Format::Json, "in"), p.options, "in"),
                    "in: [1]: 'value': a gap must be >= 0 and the sum finite, got '-0.1'");
  const Table objects = parse_table("[{\"t\": 2, \"a\": \"x\"}, {\"t\": 3}]", Format::Json, "in");
  CHECK(objects.columns == std::vector<std::string>{"a", "t"});
  CHECK_FALSE(objects.rows[1].cells[0]);
  CHECK_THROWS_WITH(parse_table("[1, [2]]", Format::Json, "in"),
                    "in: [1]: expected a number or string like [0]");
  CHECK_THROWS_WITH(parse_table("{\"a\": 1}", Format::Json, "in"),
                    "in: line 1: expected a JSON array, got object");
}

TEST_CASE("impossible dates and times are refused, not normalised", "[trace_import]") {
  // timegm-style normalisation would read 2023-02-30 as 2 March.
  for (const char* bad : {"2023-02-30 00:00:00", "2023-02-29 00:00:00", "1900-02-29 00:00:00",
                          "2023-04-31 12:00:00", "2023-13-01 00:00:00", "2023-00-10 00:00:00",
                          "2023-01-00 00:00:00", "2023-01-01 24:00:00", "2023-01-01 23:60:00",
                          "2023-01-01 23:59:61", "2023-01-01 12:00:60", "2016-12-31 23:59:60"}) {
    INFO(bad);
    CHECK_FALSE(parse_time_ns(bad, TimeUnit::Datetime));
  }
  // Leap days of leap years, and the last second of a day.
  CHECK(parse_time_ns("2024-02-29 00:00:00", TimeUnit::Datetime) == 1'709'164'800'000'000'000);
  CHECK(parse_time_ns("2000-02-29 00:00:00", TimeUnit::Datetime) == 951'782'400'000'000'000);
  CHECK(parse_time_ns("2023-12-31 23:59:59", TimeUnit::Datetime) == 1'704'067'199'000'000'000);
  CHECK(error_of("TIMESTAMP\n2023-02-28 23:59:59\n2023-02-30 00:00:00\n", Format::Csv,
                 time_in("TIMESTAMP", TimeUnit::Datetime)) ==
        "in: line 3: 'TIMESTAMP': expected a date and time (YYYY-MM-DD hh:mm:ss[.fffffffff]), "
        "got '2023-02-30 00:00:00' (no such date or time)");
}

TEST_CASE("JSONL whose lines keep adding keys is refused at a bounded column count",
          "[trace_import]") {
  // Each line a new key: before, every row held a cell per key seen so far (quadratic).
  std::string text;
  for (int k = 0; k <= 10000; ++k) {
    text += "{\"t\": " + std::to_string(k) + ", \"k" + std::to_string(k) + "\": 1}\n";
  }
  CHECK(error_of(text, Format::Jsonl, time_in("t", TimeUnit::S)) ==
        "in: line 10000: more than 10000 distinct keys (columns); a request trace has a fixed "
        "set of fields");
}

TEST_CASE("dates beyond what int64 nanoseconds hold are refused with the range", "[trace_import]") {
  // int64 ns since 1970 reach from 1677-09-21 00:12:43.145224192 to 2262-04-11
  // 23:47:16.854775807; the whole seconds inside: -9,223,372,036 s to 9,223,372,035 s.
  CHECK(parse_time_ns("2262-04-11 23:47:15.999999999", TimeUnit::Datetime) ==
        9'223'372'035'999'999'999);
  CHECK(parse_time_ns("1677-09-21 00:12:44", TimeUnit::Datetime) == -9'223'372'036'000'000'000);
  for (const char* far : {"2262-04-11 23:47:16", "1677-09-21 00:12:43.999999999",
                          "9999-12-31 23:59:59", "0001-01-01 00:00:00"}) {
    INFO(far);
    CHECK_FALSE(parse_time_ns(far, TimeUnit::Datetime));
  }
  CHECK(error_of("TIMESTAMP\n2023-02-28 23:59:59\n9999-12-31 23:59:59\n", Format::Csv,
                 time_in("TIMESTAMP", TimeUnit::Datetime)) ==
        "in: line 3: 'TIMESTAMP': '9999-12-31 23:59:59' is outside the supported range, "
        "1677-09-21 00:12:44 to 2262-04-11 23:47:15.999999999 UTC (times are held as int64 "
        "nanoseconds since 1970-01-01)");
  // The earliest and the latest date held, sorted: 584 years apart, beyond the replay limit
  // (their difference does not fit in int64 either).
  Options o = time_in("TIMESTAMP", TimeUnit::Datetime);
  o.sort = true;
  CHECK(error_of("TIMESTAMP\n2262-04-11 23:47:15\n1677-09-21 00:12:44\n", Format::Csv, o) ==
        "in: line 2: arrival at 9223372035.000000000 s is beyond the replay limit of 1e9 s");
}
