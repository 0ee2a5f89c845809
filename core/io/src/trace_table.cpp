// Reading a request trace's rows (trace_rows.hpp): CSV and TSV through the one CSV reader,
// JSONL line by line in two passes, a JSON array whole.
#include <algorithm>
#include <cctype>
#include <new>
#include <set>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/csv_reader.hpp"
#include "gpumux/io/input_file.hpp"
#include "gpumux/io/json_reader.hpp"
#include "trace_rows.hpp"
#include "trace_text.hpp"

namespace gpumux::trace_import {
namespace {

using ReaderFactory = std::function<std::unique_ptr<CsvReader>()>;

std::string line_of(std::size_t n) {
  return "line " + std::to_string(n);
}

// "[i]", a JSON array's element i (built in steps: GCC 12 warns, -Wrestrict, on "[" + string).
std::string element_of(std::size_t i) {
  std::string out(1, '[');
  out += std::to_string(i);
  out += ']';
  return out;
}

std::string_view strip_bom(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  return text;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

void assign(std::optional<std::string>& cell, std::string_view text) {
  if (cell) {
    cell->assign(text);
  } else {
    cell.emplace(text);
  }
}

std::optional<std::string> cell_text(const nlohmann::json& v) {
  if (v.is_null()) return std::nullopt;
  if (v.is_string()) return v.get<std::string>();
  return v.dump();  // numbers exactly as nlohmann prints them (shortest round trip)
}

// CSV or TSV: the first record is the header; every row has its number of fields.
class DelimitedRows final : public RowSource {
 public:
  explicit DelimitedRows(std::unique_ptr<CsvReader> reader) : reader_(std::move(reader)) {
    if (!reader_->next(fields_)) {
      throw TraceError(reader_->file(), "line 1", "empty file (expected a header)");
    }
    columns_ = fields_;
    check_header(columns_, reader_->file(), line_of(reader_->line()));
  }

  void read(const RowFn& fn) override {
    Table::Row row;
    row.cells.resize(columns_.size());
    while (reader_->next(fields_)) {
      if (fields_.size() != columns_.size()) {
        throw TraceError(reader_->file(), line_of(reader_->line()),
                         std::to_string(fields_.size()) + " fields, the header has " +
                             std::to_string(columns_.size()));
      }
      row.line = reader_->line();
      for (std::size_t c = 0; c < fields_.size(); ++c) assign(row.cells[c], fields_[c]);
      fn(row);
    }
  }

 private:
  std::unique_ptr<CsvReader> reader_;
  std::vector<std::string> fields_;
};

// JSONL: one object per line. The first pass collects the union of the keys (the columns,
// sorted by name), the second hands out the rows.
class JsonlRows final : public RowSource {
 public:
  JsonlRows(ReaderFactory open, std::string file) : open_(std::move(open)), file_(std::move(file)) {
    std::set<std::string> keys;
    std::size_t name_bytes = 0;
    for_each_object([&](const nlohmann::json& j, std::size_t line) {
      for (const auto& item : j.items()) {
        if (keys.count(item.key()) > 0) continue;
        name_bytes += item.key().size();
        if (keys.size() == kMaxColumns) {
          throw TraceError(file_, line_of(line),
                           "more than " + std::to_string(kMaxColumns) +
                               " distinct keys (columns); a request trace has a fixed set of "
                               "fields");
        }
        if (name_bytes > kMaxColumnNameBytes) {
          throw TraceError(file_, line_of(line), "the keys' names are longer than 1 MiB in all");
        }
        keys.insert(item.key());
      }
    });
    columns_.assign(keys.begin(), keys.end());
  }

  void read(const RowFn& fn) override {
    Table::Row row;
    row.cells.resize(columns_.size());
    for_each_object([&](const nlohmann::json& j, std::size_t line) {
      for (auto& cell : row.cells) cell.reset();
      for (const auto& item : j.items()) {
        const auto it = std::lower_bound(columns_.begin(), columns_.end(), item.key());
        row.cells[static_cast<std::size_t>(it - columns_.begin())] = cell_text(item.value());
      }
      row.line = line;
      fn(row);
    });
  }

 private:
  template <class F>
  void for_each_object(F&& f) {
    const std::unique_ptr<CsvReader> reader = open_();
    std::vector<std::string> fields;
    while (reader->next(fields)) {
      const std::size_t line = reader->line();
      nlohmann::json j;
      try {
        j = parse_json_text(fields.front(), file_, line_of(line), InputKind::Trace);
      } catch (const std::bad_alloc&) {
        throw Error(file_ + ": out of memory parsing line " + std::to_string(line) + " (" +
                    std::to_string(fields.front().size()) + " bytes of JSON)");
      }
      if (!j.is_object()) {
        throw TraceError(file_, line_of(line),
                         std::string("expected one JSON object per line, got ") + j.type_name());
      }
      f(j, line);
    }
  }

  ReaderFactory open_;
  std::string file_;
};

// A JSON array, parsed whole: objects become rows as JSONL lines do (columns: the union of
// keys, sorted); scalars become one column `value`. Messages name an element by its index.
class JsonArrayRows final : public RowSource {
 public:
  JsonArrayRows(std::string_view text, const std::string& file) : file_(file) {
    try {
      doc_ = parse_json_text(strip_bom(text), file, "", InputKind::Trace);
    } catch (const std::bad_alloc&) {
      throw Error(file + ": out of memory parsing a JSON array of " + std::to_string(text.size()) +
                  " bytes");
    }
    if (!doc_.is_array()) {
      throw TraceError(file, "line 1",
                       std::string("expected a JSON array, got ") + doc_.type_name());
    }
    json_elements_ = true;
    objects_ = !doc_.empty() && doc_.front().is_object();
    if (!objects_) {
      columns_.emplace_back("value");
      return;
    }
    std::set<std::string> keys;
    for (std::size_t i = 0; i < doc_.size(); ++i) {
      if (!doc_[i].is_object())
        throw TraceError(file, element_of(i), "expected an object like [0]");
      for (const auto& item : doc_[i].items()) keys.insert(item.key());
    }
    columns_.assign(keys.begin(), keys.end());
    check_header(columns_, file, "line 1");
  }

  void read(const RowFn& fn) override {
    Table::Row row;
    row.cells.resize(columns_.size());
    for (std::size_t i = 0; i < doc_.size(); ++i) {
      for (auto& cell : row.cells) cell.reset();
      row.line = i + 1;
      if (objects_) {
        for (const auto& item : doc_[i].items()) {
          const auto it = std::lower_bound(columns_.begin(), columns_.end(), item.key());
          row.cells[static_cast<std::size_t>(it - columns_.begin())] = cell_text(item.value());
        }
      } else if (doc_[i].is_structured()) {
        throw TraceError(file_, element_of(i), "expected a number or string like [0]");
      } else {
        row.cells[0] = cell_text(doc_[i]);
      }
      fn(row);
    }
  }

 private:
  std::string file_;
  nlohmann::json doc_;
  bool objects_ = false;
};

class TableRows final : public RowSource {
 public:
  explicit TableRows(const Table& table) : table_(table) {
    columns_ = table.columns;
    json_elements_ = table.json_elements;
  }
  void read(const RowFn& fn) override {
    for (const Table::Row& row : table_.rows) fn(row);
  }

 private:
  const Table& table_;
};

}  // namespace

void check_header(const std::vector<std::string>& columns, const std::string& file,
                  const std::string& where) {
  std::set<std::string> seen;
  std::size_t name_bytes = 0;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].empty()) {
      throw TraceError(file, where, "header column " + std::to_string(i + 1) + " has no name");
    }
    if (!seen.insert(columns[i]).second) {
      throw TraceError(file, where, "header names column '" + printable(columns[i]) + "' twice");
    }
    name_bytes += columns[i].size();
  }
  if (columns.size() > kMaxColumns) {
    throw TraceError(file, where, "more than " + std::to_string(kMaxColumns) + " columns");
  }
  if (name_bytes > kMaxColumnNameBytes) {
    throw TraceError(file, where, "the column names are longer than 1 MiB in all");
  }
}

std::unique_ptr<RowSource> text_rows(std::string_view text, Format format,
                                     const std::string& file) {
  if (format == Format::Auto) format = detect_format({}, text);
  if (format == Format::Json) return std::make_unique<JsonArrayRows>(text, file);
  const CsvDialect dialect = format == Format::Tsv     ? CsvDialect::Tsv
                             : format == Format::Jsonl ? CsvDialect::Lines
                                                       : CsvDialect::Csv;
  const ReaderFactory open = [text, file, dialect] {
    return std::make_unique<CsvReader>(text, file, dialect);
  };
  if (format == Format::Jsonl) return std::make_unique<JsonlRows>(open, file);
  return std::make_unique<DelimitedRows>(open());
}

std::unique_ptr<RowSource> file_rows(InputStream& in, const std::filesystem::path& path,
                                     Format format) {
  if (format == Format::Auto) {
    std::string head(std::size_t{64} << 10, '\0');
    head.resize(in.read(head.data(), head.size()));
    format = detect_format(path, head);
    in.rewind();
  }
  if (format == Format::Json) {
    std::string text;
    char buffer[1 << 16];
    while (const std::size_t got = in.read(buffer, sizeof buffer)) {
      if (text.size() + got > kMaxJsonArrayBytes) {
        throw TraceError(in.name(), "",
                         "a JSON array larger than 64 MiB; write it as JSONL (one object per "
                         "line), which is read as it streams");
      }
      text.append(buffer, got);
    }
    return std::make_unique<JsonArrayRows>(text, in.name());
  }
  const CsvDialect dialect = format == Format::Tsv     ? CsvDialect::Tsv
                             : format == Format::Jsonl ? CsvDialect::Lines
                                                       : CsvDialect::Csv;
  InputStream* stream = &in;
  const ReaderFactory open = [stream, dialect] {
    stream->rewind();
    return std::make_unique<CsvReader>(*stream, dialect);
  };
  if (format == Format::Jsonl) return std::make_unique<JsonlRows>(open, in.name());
  return std::make_unique<DelimitedRows>(open());
}

std::unique_ptr<RowSource> table_rows(const Table& table) {
  return std::make_unique<TableRows>(table);
}

Format detect_format(const std::filesystem::path& path, std::string_view text) {
  const std::string ext = lower(path.extension().string());
  if (ext == ".csv") return Format::Csv;
  if (ext == ".tsv" || ext == ".tab") return Format::Tsv;
  if (ext == ".jsonl" || ext == ".ndjson") return Format::Jsonl;
  text = strip_bom(text);
  const auto first = text.find_first_not_of(" \t\r\n");
  const char c = first == std::string_view::npos ? '\0' : text[first];
  if (c == '[') return Format::Json;
  if (c == '{' || ext == ".json") return Format::Jsonl;
  const std::string_view line = text.substr(0, text.find('\n'));
  return line.find('\t') != std::string_view::npos ? Format::Tsv : Format::Csv;
}

Table parse_table(std::string_view text, Format format, const std::string& file) {
  const std::unique_ptr<RowSource> rows = text_rows(text, format, file);
  Table t;
  t.columns = rows->columns();
  t.json_elements = rows->json_elements();
  rows->read([&](const Table::Row& row) { t.rows.push_back(row); });
  return t;
}

std::string place_of(bool json_elements, std::size_t line) {
  return json_elements ? element_of(line - 1) : line_of(line);
}

std::string row_place(const Table& table, const Table::Row& row) {
  return place_of(table.json_elements, row.line);
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + printable(n);
  return out;
}

std::string csv_cell(std::string_view value) {
  if (value.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(value);
  std::string out = "\"";
  for (const char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

}  // namespace gpumux::trace_import
