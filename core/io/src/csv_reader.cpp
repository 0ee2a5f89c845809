// The streaming RFC 4180 reader (csv_reader.hpp).
#include "gpumux/io/csv_reader.hpp"

#include <new>

#include "gpumux/api/errors.hpp"

namespace gpumux {
namespace {

constexpr std::size_t kChunkBytes = std::size_t{64} << 10;
constexpr std::string_view kBom = "\xEF\xBB\xBF";

}  // namespace

CsvReader::CsvReader(std::string_view text, std::string file, CsvDialect dialect)
    : file_(std::move(file)), dialect_(dialect), data_(text) {}

CsvReader::CsvReader(InputStream& in, CsvDialect dialect)
    : in_(&in), file_(in.name()), dialect_(dialect) {}

bool CsvReader::fill() {
  // Only called once every byte of data_ is consumed, so nothing unread is overwritten.
  if (in_ == nullptr) return false;
  if (buffer_.size() < kChunkBytes) buffer_.resize(kChunkBytes);
  const std::size_t got = in_->read(buffer_.data(), buffer_.size());
  data_ = std::string_view(buffer_.data(), got);
  pos_ = 0;
  return got > 0;
}

int CsvReader::peek_char() {
  if (pos_ == data_.size() && !fill()) return -1;
  return static_cast<unsigned char>(data_[pos_]);
}

std::string_view CsvReader::peek(std::size_t n) {
  skip_bom();
  if (in_ != nullptr && data_.size() - pos_ < n) {
    // Keep the unread bytes in front and read behind them until n are there or the input ends.
    std::string more(data_.substr(pos_));
    std::size_t have = more.size();
    more.resize(std::max(n, kChunkBytes));
    while (have < n) {
      const std::size_t got = in_->read(more.data() + have, more.size() - have);
      if (got == 0) break;
      have += got;
    }
    buffer_ = std::move(more);
    data_ = std::string_view(buffer_.data(), have);
    pos_ = 0;
  }
  return data_.substr(pos_, n);
}

void CsvReader::skip_bom() {
  if (bom_checked_) return;
  bom_checked_ = true;
  const std::string_view head = peek(kBom.size());
  if (head == kBom) pos_ += kBom.size();
}

bool CsvReader::next(std::vector<std::string>& fields) {
  skip_bom();
  try {
    for (;;) {
      bool quoted = false;
      if (!read_record(fields, quoted)) return false;
      const bool blank =
          fields.size() == 1 && !quoted && fields[0].find_first_not_of(" \t") == std::string::npos;
      if (!blank) return true;
    }
  } catch (const std::bad_alloc&) {
    throw Error(file_ + ": out of memory reading line " + std::to_string(record_line_) +
                " (a record of " + std::to_string(record_bytes_) + " bytes so far)");
  }
}

bool CsvReader::read_record(std::vector<std::string>& fields, bool& quoted) {
  if (pos_ == data_.size() && !fill()) return false;
  record_line_ = line_;
  record_bytes_ = 0;
  std::size_t n = 0;
  for (;;) {
    if (n == kMaxCsvFields) fail("more than " + std::to_string(kMaxCsvFields) + " fields");
    if (n == fields.size()) fields.emplace_back();
    std::string& field = fields[n++];
    field.clear();
    End end = End::Field;
    if (dialect_ == CsvDialect::Csv && peek_char() == '"') {
      quoted = true;
      end = read_quoted(field);
    } else {
      end = read_plain(field);
    }
    if (end != End::Field) break;
  }
  fields.resize(n);
  return true;
}

CsvReader::End CsvReader::line_break(char c) {
  // `c` (LF or CR) is consumed. LF and CRLF end a record; a lone CR ends one in CSV only.
  if (c == '\n' || peek_char() == '\n') {
    if (c == '\r') ++pos_;
    ++line_;
    return End::Record;
  }
  if (dialect_ == CsvDialect::Csv) {
    ++line_;
    return End::Record;
  }
  return End::Field;  // a lone CR in TSV or a line: text
}

CsvReader::End CsvReader::read_plain(std::string& field) {
  const char separator = dialect_ == CsvDialect::Csv   ? ','
                         : dialect_ == CsvDialect::Tsv ? '\t'
                                                       : '\n';
  const bool quotes = dialect_ == CsvDialect::Csv;
  for (;;) {
    if (pos_ == data_.size() && !fill()) return End::Input;
    const char* const begin = data_.data() + pos_;
    const char* const end = data_.data() + data_.size();
    const char* p = begin;
    while (p < end && *p != separator && *p != '\n' && *p != '\r' && !(quotes && *p == '"')) ++p;
    append(field, std::string_view(begin, static_cast<std::size_t>(p - begin)));
    pos_ += static_cast<std::size_t>(p - begin);
    if (p == end) continue;
    const char c = *p;
    ++pos_;
    if (c == '"') fail("a quote inside an unquoted field (quote the whole field)");
    if (c != '\n' && c != '\r') return End::Field;  // the separator
    if (line_break(c) == End::Record) return End::Record;
    append(field, "\r");
  }
}

CsvReader::End CsvReader::read_quoted(std::string& field) {
  ++pos_;  // the opening quote
  const std::size_t opened = line_;
  for (;;) {
    if (pos_ == data_.size() && !fill()) {
      fail(opened == record_line_
               ? std::string("a quoted field is never closed")
               : "a quoted field opened on line " + std::to_string(opened) + " is never closed");
    }
    const char* const begin = data_.data() + pos_;
    const char* const end = data_.data() + data_.size();
    const char* p = begin;
    while (p < end && *p != '"' && *p != '\n' && *p != '\r') ++p;
    append(field, std::string_view(begin, static_cast<std::size_t>(p - begin)));
    pos_ += static_cast<std::size_t>(p - begin);
    if (p == end) continue;
    const char c = *p;
    ++pos_;
    if (c == '\n') {
      ++line_;
      append(field, "\n");
      continue;
    }
    if (c == '\r') {
      append(field, "\r");
      if (peek_char() == '\n') {
        ++pos_;
        append(field, "\n");
      }
      ++line_;
      continue;
    }
    const int after = peek_char();  // after a quote: a doubled quote, or the field's end
    if (after == '"') {
      ++pos_;
      append(field, "\"");
      continue;
    }
    if (after == -1) return End::Input;
    if (after == ',') {
      ++pos_;
      return End::Field;
    }
    if (after == '\n' || after == '\r') {
      ++pos_;
      return line_break(static_cast<char>(after));
    }
    fail("text after a closing quote (write \"\" for a quote)");
  }
}

void CsvReader::append(std::string& field, std::string_view run) {
  record_bytes_ += run.size();
  if (record_bytes_ > kMaxCsvRecordBytes) {
    fail("a record longer than " + std::to_string(kMaxCsvRecordBytes >> 20) + " MiB");
  }
  field.append(run);
}

void CsvReader::fail(const std::string& problem) const {
  throw TraceError(file_, "line " + std::to_string(record_line_), problem);
}

}  // namespace gpumux
