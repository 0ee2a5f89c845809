// csv_reader.hpp: the one CSV reader. What it accepts (RFC 4180 quoting, CRLF, LF and lone CR
// record ends, a byte-order mark, blank lines), what it refuses (with the line where the record
// starts), its limits, TSV and lines, and the same records whether it reads text in memory or
// a file in 64 KiB chunks (quotes, CRLF and a BOM across chunk boundaries).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/csv_reader.hpp"

using namespace gpumux;
using Records = std::vector<std::vector<std::string>>;

namespace {

Records read_all(CsvReader& r, std::vector<std::size_t>* lines = nullptr) {
  Records out;
  std::vector<std::string> fields;
  while (r.next(fields)) {
    out.push_back(fields);
    if (lines != nullptr) lines->push_back(r.line());
  }
  return out;
}

Records read_text(std::string_view text, CsvDialect d = CsvDialect::Csv,
                  std::vector<std::size_t>* lines = nullptr) {
  CsvReader r(text, "in.csv", d);
  return read_all(r, lines);
}

std::string error_of(std::string_view text, CsvDialect d = CsvDialect::Csv) {
  try {
    (void)read_text(text, d);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("CSV reader: RFC 4180 fields, record ends and blank lines", "[csv]") {
  std::vector<std::size_t> lines;
  CHECK(read_text("\xEF\xBB\xBF"
                  "a,b\r\n\"x, \"\"y\"\"\",\"two\nlines\"\r\n\r\n  \n1,\"\"\rlast,\"\r\"",
                  CsvDialect::Csv, &lines) ==
        Records{{"a", "b"}, {"x, \"y\"", "two\nlines"}, {"1", ""}, {"last", "\r"}});
  // Each record's first line: the quoted LF counts, blank lines are skipped, a lone CR ends a
  // record and a line.
  CHECK(lines == std::vector<std::size_t>{1, 2, 6, 7});
  CHECK(read_text("a,,\n,\n") == Records{{"a", "", ""}, {"", ""}});
  CHECK(read_text("\"\"\n") == Records{{""}});  // a quoted empty field is not a blank line
  CHECK(read_text("").empty());
  CHECK(read_text("\xEF\xBB\xBF").empty());
  CHECK(read_text("x") == Records{{"x"}});
  CHECK(read_text("\"a\"") == Records{{"a"}});
}

TEST_CASE("CSV reader: errors name the line where the record starts", "[csv]") {
  CHECK(error_of("a\n\"x\nyz\" q\n") ==
        "in.csv: line 2: text after a closing quote (write \"\" for a quote)");
  CHECK(error_of("a\nx\"y\n") ==
        "in.csv: line 2: a quote inside an unquoted field (quote the whole field)");
  CHECK(error_of("a\n\"open\n") == "in.csv: line 2: a quoted field is never closed");
  CHECK(error_of("a\n\"x\ny\",\"open\n") ==
        "in.csv: line 2: a quoted field opened on line 3 is never closed");
  CHECK(error_of("h\n" + std::string(kMaxCsvFields, ',')) ==
        "in.csv: line 2: more than 10000 fields");
  CHECK(error_of("h\n\"" + std::string(kMaxCsvRecordBytes + 1, 'x') + "\"") ==
        "in.csv: line 2: a record longer than 16 MiB");
  CHECK(read_text(std::string(kMaxCsvFields - 1, ',')).front().size() == kMaxCsvFields);
}

TEST_CASE("TSV and lines: no quoting, a lone CR is text", "[csv]") {
  CHECK(read_text("a\tb\r\n\"x\t\"y\r z\n", CsvDialect::Tsv) ==
        Records{{"a", "b"}, {"\"x", "\"y\r z"}});
  CHECK(read_text("{\"a\": \"x,y\"}\r\n\n  \n[1,\r2]", CsvDialect::Lines) ==
        Records{{"{\"a\": \"x,y\"}"}, {"[1,\r2]"}});
}

TEST_CASE("CSV reader: a file streamed in chunks reads as the same text in memory", "[csv]") {
  // Records of random hostile fields, ~600 KiB: boundaries of the 64 KiB chunks fall inside
  // quoted fields, between CR and LF and on doubled quotes.
  std::mt19937_64 rng(7);
  const std::vector<std::string> pieces = {"a", "\"\"", ",", "\r\n", "\n", "\r", "xyz", " "};
  std::string text = "\xEF\xBB\xBF";
  for (int r = 0; r < 20000; ++r) {
    const int fields = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < fields; ++f) {
      if (f > 0) text += ',';
      text += '"';
      for (int k = static_cast<int>(rng() % 6); k > 0; --k) text += pieces[rng() % pieces.size()];
      text += '"';
    }
    text += rng() % 2 ? "\r\n" : "\n";
  }
  const auto path = std::filesystem::temp_directory_path() /
                    ("gpumux_csv_chunks_" + std::to_string(std::random_device{}()) + ".csv");
  std::ofstream(path, std::ios::binary) << text;
  std::vector<std::size_t> file_lines, text_lines;
  {
    InputStream in(path, "chunks.csv", std::uint64_t{1} << 30, InputKind::Trace);
    CsvReader from_file(in);
    const Records a = read_all(from_file, &file_lines);
    const Records b = read_text(text, CsvDialect::Csv, &text_lines);
    CHECK(a.size() == 20000);
    CHECK(a == b);
    CHECK(file_lines == text_lines);
  }
  std::filesystem::remove(path);
}
