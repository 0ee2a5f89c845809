// The one reader of delimited text in gpumux: RFC 4180 CSV (arrival CSVs, request traces,
// per-minute counts) and, with quoting off, TSV and the lines of a JSONL file. It streams: a
// file is read in 64 KiB chunks, so memory is one record plus the chunk, never the file.
//
// CSV, as accepted:
//  - a record ends at LF, CRLF or a lone CR (as Python's csv module reads), or at the end of
//    the input (the last record needs no line break);
//  - fields are separated by commas; a field that begins with a double quote is quoted: it ends
//    at the next quote not doubled, and may hold commas, CR, LF and "" (one quote);
//  - a UTF-8 byte-order mark at the very start is skipped;
//  - a record that is empty, or one unquoted field of only spaces and tabs, is a blank line
//    and skipped;
//  - lines are counted at each LF and each lone CR, inside quoted fields too.
// TSV: fields separated by tabs, no quoting (a quote is text); records end at LF or CRLF, a
// lone CR is text. Lines: each record is one field, the line without its LF or CRLF.
//
// Errors are TraceError "<file>: line N: <problem>", N the line where the record starts:
// a quote inside an unquoted field, text after a closing quote, a quoted field never closed,
// more than kMaxCsvFields fields or kMaxCsvRecordBytes bytes in one record. Running out of
// memory inside a record is gpumux::Error "<file>: out of memory reading line N (...)".
//
// Thread rules: a reader belongs to one thread; the stream it reads must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpumux/io/input_file.hpp"

namespace gpumux {

/// Fields in one record: Azure Functions 2019 files have 1,444 columns; 10,000 leaves room
/// and keeps a record's bookkeeping small.
inline constexpr std::size_t kMaxCsvFields = 10'000;
/// Bytes in one record (one JSONL line): 16 MiB, far above any real request's row.
inline constexpr std::size_t kMaxCsvRecordBytes = std::size_t{16} << 20;

enum class CsvDialect : std::uint8_t { Csv, Tsv, Lines };

class CsvReader {
 public:
  /// Reads `text` in place (it must outlive the reader); messages name `file`.
  CsvReader(std::string_view text, std::string file, CsvDialect dialect = CsvDialect::Csv);
  /// Reads `in` in chunks from where it stands; messages name in.name().
  explicit CsvReader(InputStream& in, CsvDialect dialect = CsvDialect::Csv);

  /// The next record's fields, reusing the strings of `fields`; false at the end of input.
  bool next(std::vector<std::string>& fields);
  /// The line (1-based) where the record last returned by next() starts.
  [[nodiscard]] std::size_t line() const noexcept { return record_line_; }
  /// Up to `n` unread bytes (fewer at the end of input), to tell formats apart; n <= 64 KiB.
  [[nodiscard]] std::string_view peek(std::size_t n);
  [[nodiscard]] const std::string& file() const noexcept { return file_; }

 private:
  enum class End : std::uint8_t { Field, Record, Input };

  bool fill();
  int peek_char();
  void skip_bom();
  End line_break(char c);
  End read_plain(std::string& field);
  End read_quoted(std::string& field);
  void append(std::string& field, std::string_view run);
  bool read_record(std::vector<std::string>& fields, bool& quoted);
  [[noreturn]] void fail(const std::string& problem) const;

  InputStream* in_ = nullptr;
  std::string file_;
  CsvDialect dialect_;
  std::string buffer_;     // streaming: the current chunk (and what peek() kept)
  std::string_view data_;  // the bytes being read: the text, or buffer_
  std::size_t pos_ = 0;
  bool bom_checked_ = false;
  std::size_t line_ = 1;
  std::size_t record_line_ = 1;
  std::size_t record_bytes_ = 0;
};

}  // namespace gpumux
