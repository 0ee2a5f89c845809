// Importing request traces (`gpumux trace import`, traces/importing.md): a CSV, TSV or JSONL
// file with one request per row becomes an arrival CSV the replay reader accepts
// (traces/formats.md section 2): `arrival_s` first, in seconds, non-decreasing, then the kept
// columns of the source. Times are handled as integer nanoseconds from the text (no binary
// floating point for plain decimals), so an epoch in ms or ns keeps every digit.
//
// import_file() streams: rows are read (csv_reader.hpp) and written one at a time; --sort holds
// 16 bytes per arrival in memory up to SortSpace::memory_bytes and merges sorted runs from an
// unlinked temporary file beyond it, so memory does not grow with the file. The Table
// functions below run the same code on text in memory (tests, fuzzers).
//
// Errors are TraceError "<file>: line N: <problem>" (exit 2); running out of memory or disk is
// gpumux::Error naming the file and what was held (exit 1). Thread rules: free functions
// without shared state; safe to call from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpumux {
class ByteSink;
class InputStream;
}  // namespace gpumux

namespace gpumux::trace_import {

/// Distinct columns (JSONL keys) a trace may have (csv_reader.hpp's kMaxCsvFields), and the
/// bytes of all their names together: a trace whose lines keep adding keys is refused at the
/// line that passes either, rather than growing without bound.
inline constexpr std::size_t kMaxColumns = 10'000;
inline constexpr std::size_t kMaxColumnNameBytes = std::size_t{1} << 20;
/// A JSON array file is parsed whole (JSONL streams): at most 64 MiB.
inline constexpr std::uint64_t kMaxJsonArrayBytes = std::uint64_t{64} << 20;

enum class Format : std::uint8_t { Auto, Csv, Tsv, Jsonl, Json };
/// How the time column is written: a number in one of four units, or a calendar date and time
/// ("2023-11-16 18:17:03.9799600", UTC assumed, fraction up to 9 digits).
enum class TimeUnit : std::uint8_t { S, Ms, Us, Ns, Datetime };
/// `First`: times become offsets from the earliest row (which is at 0), for absolute epochs.
/// `Keep`: the values are already offsets (>= 0) and are kept as they are.
enum class Origin : std::uint8_t { First, Keep };

/// A parsed source file: a header and rows of text cells; a missing cell (a JSONL object
/// without the key) is nullopt.
struct Table {
  std::vector<std::string> columns;
  struct Row {
    /// 1-based line of the row's first character (JSON arrays: element index + 1)
    std::size_t line = 0;
    std::vector<std::optional<std::string>> cells;
  };
  std::vector<Row> rows;
  bool json_elements = false;  ///< rows are elements of one JSON array (messages name "[i]")
};

/// Where `row` is, for messages: "line N", or "[i]" for a JSON array's element.
[[nodiscard]] std::string row_place(const Table& table, const Table::Row& row);

/// The format of `path`: by extension (.csv, .tsv/.tab, .jsonl/.ndjson), else by the first
/// non-blank character of `text` ('[' is JSON, '{' JSONL, a tab in the first line TSV, else
/// CSV); a .json file is JSON when it begins with '[', else JSONL.
[[nodiscard]] Format detect_format(const std::filesystem::path& path, std::string_view text);

/// Parses CSV (csv_reader.hpp: RFC 4180), TSV (tab separated, no quoting) or JSONL (one object
/// per line; the columns are the union of the keys, sorted) or JSON (one array: of objects,
/// read as JSONL lines, or of scalars, one column named `value`; every row's line is 1). A
/// UTF-8 byte-order mark and \r\n line ends are accepted, blank lines skipped.
[[nodiscard]] Table parse_table(std::string_view text, Format format, const std::string& file);

struct Options {
  std::string time_column;  ///< required
  TimeUnit unit = TimeUnit::S;
  Origin origin = Origin::First;
  /// Sort rows by time (stable); otherwise a row earlier than the one before is an error.
  bool sort = false;
  /// The time column holds inter-arrival gaps (>= 0): row i arrives at the sum of the gaps of
  /// rows 0..i, so the first at its own gap (before the origin is applied).
  bool gaps = false;
  /// Columns to keep after arrival_s, in this order; nullopt = every other column, in order.
  std::optional<std::vector<std::string>> keep;
  std::vector<std::pair<std::string, std::string>> rename;  ///< source name -> output name
  std::vector<std::pair<std::string, std::string>> where;   ///< keep rows whose cell equals
  int decimals = 6;  ///< digits after the point in arrival_s (0..9), rounded half up
};

struct Result {
  std::string csv;  ///< the arrival CSV's text (convert(); import_file() writes to its sink)
  std::size_t rows_read = 0;  ///< rows of the source (before --where and any expansion)
  std::size_t rows_written = 0;
  std::int64_t first_ns = 0;     ///< the earliest time, as read (in the source's origin)
  std::int64_t span_ns = 0;      ///< latest minus earliest
  std::size_t out_of_order = 0;  ///< rows that went backwards (sorted when Options::sort)
};

/// Converts a table. Throws TraceError naming `file` and the line of a bad row: an unknown
/// column, an empty or malformed time, a row out of order (without `sort`), a kept value
/// beyond 1e9 s (the replay reader's limit).
[[nodiscard]] Result convert(const Table& table, const Options& options, const std::string& file);

/// Where --sort keeps what it sorts: arrivals in memory up to `memory_bytes` (16 bytes each),
/// beyond that sorted runs in an unlinked temporary file in `dir` (the system's temporary
/// folder when empty), merged at the end. The kept columns of rows waiting to be written go
/// to a second such file past `tail_memory_bytes`.
struct SortSpace {
  std::filesystem::path dir;
  std::size_t memory_bytes = std::size_t{256} << 20;
  std::size_t tail_memory_bytes = std::size_t{16} << 20;
};

/// How per-minute counts are expanded (the azure-functions-2019 preset); see below.
enum class Spread : std::uint8_t { Uniform, Even };
struct MinuteCounts {
  std::uint64_t seed = 1;
  Spread spread = Spread::Uniform;
};

/// What import_file reads and how.
struct FileImport {
  Format format = Format::Auto;  ///< Auto: by extension, then content (detect_format)
  Options options;
  std::optional<MinuteCounts> minute_counts;  ///< expand per-minute counts before converting
};

/// Streams `in` (a trace file; read twice for JSONL, whose columns are the union of all lines'
/// keys) through `spec` and writes the arrival CSV to `out`. Errors as convert(); out of memory
/// or a failed temporary file: gpumux::Error naming the file and what was held.
[[nodiscard]] Result import_file(InputStream& in, const std::filesystem::path& path,
                                 const FileImport& spec, ByteSink& out, const SortSpace& space);

/// Parses one time value as integer nanoseconds (nullopt when it is not one). Plain decimals
/// are exact; an exponent form ("1.7e12") goes through double.
[[nodiscard]] std::optional<std::int64_t> parse_time_ns(std::string_view text, TimeUnit unit);

/// RFC 4180 quoting of one output cell (only when it holds a comma, quote or line break).
[[nodiscard]] std::string csv_cell(std::string_view value);

/// Keeps the rows whose cell in each named column equals the value (all must hold).
void select_rows(Table& table, const std::vector<std::pair<std::string, std::string>>& where,
                 const std::string& file);

/// The Azure Functions 2019 invocation format (invocations_per_function_md.anon.dNN.csv:
/// HashOwner, HashApp, HashFunction, Trigger, then columns "1".."1440" holding invocation
/// counts per minute of the day) expanded to one row per invocation: column `arrival_ns`
/// (ns from the start of the day) and the four id columns. A count c in minute m gives c
/// times in [60(m-1), 60m) s: `uniform` draws each as (mt19937_64 output mod 60e9) ns with the
/// generator seeded by `seed` and reset per (row, minute) by splitmix64 of (seed, row, minute),
/// so a row's arrivals do not depend on the rows before it, in the order drawn (the import
/// sorts them); `even` places them at 60(m-1) + 60 (k + 1/2) / c s, k = 0..c-1. At most 100
/// million invocations in all.
[[nodiscard]] Table expand_minute_counts(const Table& table, std::uint64_t seed, Spread spread,
                                         const std::string& file);

/// A named set of defaults for a public trace (traces/importing.md).
struct Preset {
  std::string name;
  std::string summary;
  std::string licence;  ///< the source's licence, the sidecar's default
  Format format = Format::Csv;
  Options options;
  bool minute_counts = false;  ///< expand_minute_counts before convert
};
[[nodiscard]] const std::vector<Preset>& presets();
/// The preset named `name`, or nullptr.
[[nodiscard]] const Preset* find_preset(std::string_view name);

}  // namespace gpumux::trace_import
