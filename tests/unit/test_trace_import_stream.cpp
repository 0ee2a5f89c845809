// trace_import.hpp's import_file: a file streamed row by row, sorted in memory or, past a tiny
// SortSpace, in sorted runs merged from temporary files with the kept columns spilled too,
// gives the same bytes as the in-memory convert() of the same text; for CSV, JSONL (two
// passes) and per-minute counts (the Azure Functions 2019 preset).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/byte_sink.hpp"
#include "gpumux/io/input_file.hpp"
#include "gpumux/io/trace_import.hpp"

using namespace gpumux;
using namespace gpumux::trace_import;
namespace fs = std::filesystem;

namespace {

class StringSink final : public ByteSink {
 public:
  void write(const char* data, std::size_t n) override { text.append(data, n); }
  std::string text;
};

fs::path scratch_file(const std::string& name, const std::string& text) {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() /
                       ("gpumux_import_stream_" + std::to_string(std::random_device{}()));
    fs::create_directories(d);
    return d;
  }();
  const fs::path p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

// import_file's output and result for `text` written to a file named `name`.
std::pair<std::string, Result> streamed(const std::string& name, const std::string& text,
                                        const FileImport& spec, const SortSpace& space) {
  const fs::path p = scratch_file(name, text);
  InputStream in(p, name, std::uint64_t{1} << 30, InputKind::Trace);
  StringSink sink;
  const Result r = import_file(in, p, spec, sink, space);
  return {sink.text, r};
}

SortSpace tiny_space() {
  SortSpace s;
  s.memory_bytes = 4096;  // 256 arrivals a run
  s.tail_memory_bytes = 1024;
  return s;
}

}  // namespace

TEST_CASE("a streamed import sorts through spilled runs to the in-memory result",
          "[trace_import]") {
  std::mt19937_64 rng(11);
  std::string csv = "ts,app,note\n";
  for (int k = 0; k < 5000; ++k) {
    // Many equal times, so the order of ties (stable: the rows' order) is checked too.
    csv += std::to_string(rng() % 700) + ",a" + std::to_string(rng() % 3) + ",\"n " +
           std::to_string(k) + (k % 7 == 0 ? ",\"\"q\"\"\n\"" : "\"") + "\n";
  }
  Options o;
  o.time_column = "ts";
  o.unit = trace_import::TimeUnit::Ms;
  o.sort = true;
  const Result memory = convert(parse_table(csv, Format::Csv, "t.csv"), o, "t.csv");
  for (const SortSpace& space : {SortSpace{}, tiny_space()}) {
    const auto [text, r] = streamed("t.csv", csv, FileImport{Format::Auto, o, std::nullopt}, space);
    CHECK(text == memory.csv);
    CHECK(r.rows_written == 5000);
    CHECK(r.out_of_order == memory.out_of_order);
    CHECK(r.span_ns == memory.span_ns);
  }
  o.keep = std::vector<std::string>{};  // no kept columns: nothing to spill but the times
  const auto [bare, r] =
      streamed("t.csv", csv, FileImport{Format::Csv, o, std::nullopt}, tiny_space());
  CHECK(bare == convert(parse_table(csv, Format::Csv, "t.csv"), o, "t.csv").csv);
}

TEST_CASE("a streamed JSONL import reads the keys first, then the rows", "[trace_import]") {
  const std::string jsonl =
      "{\"t\": 3, \"b\": \"x\"}\n\n{\"t\": 1, \"a\": [1, 2], \"c\": null}\r\n{\"t\": 2}\n";
  Options o;
  o.time_column = "t";
  o.sort = true;
  o.decimals = 0;
  const auto [text, r] =
      streamed("r.jsonl", jsonl, FileImport{Format::Auto, o, std::nullopt}, tiny_space());
  CHECK(text == "arrival_s,a,b,c\n0,\"[1,2]\",,\n1,,,\n2,,x,\n");
  CHECK(text == convert(parse_table(jsonl, Format::Jsonl, "r.jsonl"), o, "r.jsonl").csv);
  CHECK(r.rows_read == 3);
}

TEST_CASE("per-minute counts stream into the same sorted arrivals", "[trace_import]") {
  std::string src = "HashOwner,HashApp,HashFunction,Trigger,1,2,3\n";
  for (int f = 0; f < 40; ++f) {
    src += 'o';
    src += std::to_string(f % 3) + ",a" + std::to_string(f) + ",f" + std::to_string(f) + ",http," +
           std::to_string(f % 5) + "," + std::to_string((f * 7) % 11) + ",2\n";
  }
  const Preset& p = *find_preset("azure-functions-2019");
  for (const Spread spread : {Spread::Uniform, Spread::Even}) {
    const Table expanded =
        expand_minute_counts(parse_table(src, Format::Csv, "f.csv"), 3, spread, "f.csv");
    const Result memory = convert(expanded, p.options, "f.csv");
    const auto [text, r] = streamed(
        "f.csv", src, FileImport{Format::Csv, p.options, MinuteCounts{3, spread}}, tiny_space());
    CHECK(text == memory.csv);
    CHECK(r.rows_written == expanded.rows.size());
    CHECK(r.rows_read == 40);
  }
}

TEST_CASE("a streamed import names the file and line of a bad row", "[trace_import]") {
  Options o;
  o.time_column = "t";
  const fs::path p = scratch_file("bad.csv", "t,x\n1,a\n2,\"b\n3,c\n");
  InputStream in(p, "bad.csv", std::uint64_t{1} << 30, InputKind::Trace);
  StringSink sink;
  CHECK_THROWS_WITH(
      import_file(in, p, FileImport{Format::Auto, o, std::nullopt}, sink, SortSpace{}),
      "bad.csv: line 3: a quoted field is never closed");
}
