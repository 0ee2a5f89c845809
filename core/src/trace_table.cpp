// Reading a request trace's rows (trace_import.hpp): CSV, TSV or JSONL into a Table.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "gpumux/errors.hpp"
#include "gpumux/input_file.hpp"
#include "gpumux/json_reader.hpp"
#include "gpumux/trace_import.hpp"

namespace gpumux::trace_import {
namespace {

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

// Checks the header: at least one column, none empty, none twice.
void check_header(const std::vector<std::string>& columns, const std::string& file) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].empty()) {
      throw TraceError(file, "line 1", "header column " + std::to_string(i + 1) + " has no name");
    }
    if (!seen.insert(columns[i]).second) {
      throw TraceError(file, "line 1", "header names column '" + printable(columns[i]) + "' twice");
    }
  }
}

// RFC 4180 records: fields separated by commas, records by \n or \r\n; a field in double
// quotes may hold commas, line breaks and "" (one quote).
class CsvReader {
 public:
  CsvReader(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

  /// The next record's fields and its first line; false at the end. Blank lines are skipped.
  bool next(std::vector<std::string>& fields, std::size_t& line) {
    fields.clear();
    while (pos_ < text_.size() && (text_[pos_] == '\n' || text_[pos_] == '\r')) {
      if (text_[pos_] == '\n') ++line_;
      ++pos_;
    }
    if (pos_ >= text_.size()) return false;
    line = line_;
    std::string field;
    bool quoted_field = false;
    for (;;) {
      if (pos_ >= text_.size()) {
        fields.push_back(std::move(field));
        return true;
      }
      const char c = text_[pos_];
      if (c == '"' && field.empty() && !quoted_field) {
        read_quoted(field);
        quoted_field = true;
        continue;
      }
      if (c == ',') {
        fields.push_back(std::move(field));
        field.clear();
        quoted_field = false;
        ++pos_;
        continue;
      }
      if (c == '\n' || c == '\r') {
        if (c == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') ++pos_;
        ++pos_;
        ++line_;
        fields.push_back(std::move(field));
        return true;
      }
      if (quoted_field) {
        throw TraceError(file_, line_of(line_),
                         "text after a closing quote (write \"\" for a quote)");
      }
      if (c == '"') {
        throw TraceError(file_, line_of(line_),
                         "a quote inside an unquoted field (quote the whole field)");
      }
      field.push_back(c);
      ++pos_;
    }
  }

 private:
  void read_quoted(std::string& field) {
    const std::size_t start_line = line_;
    ++pos_;  // the opening quote
    for (;;) {
      if (pos_ >= text_.size()) {
        throw TraceError(file_, line_of(start_line), "a quoted field is never closed");
      }
      const char c = text_[pos_++];
      if (c == '"') {
        if (pos_ < text_.size() && text_[pos_] == '"') {
          field.push_back('"');
          ++pos_;
          continue;
        }
        return;
      }
      if (c == '\n') ++line_;
      field.push_back(c);
    }
  }

  std::string_view text_;
  std::string file_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
};

Table parse_csv(std::string_view text, const std::string& file) {
  CsvReader reader(text, file);
  Table t;
  std::vector<std::string> fields;
  std::size_t line = 0;
  if (!reader.next(fields, line))
    throw TraceError(file, "line 1", "empty file (expected a header)");
  t.columns = fields;
  check_header(t.columns, file);
  while (reader.next(fields, line)) {
    if (fields.size() != t.columns.size()) {
      throw TraceError(file, line_of(line),
                       std::to_string(fields.size()) + " fields, the header has " +
                           std::to_string(t.columns.size()));
    }
    Table::Row row{line, {}};
    row.cells.reserve(fields.size());
    for (auto& f : fields) row.cells.emplace_back(std::move(f));
    t.rows.push_back(std::move(row));
  }
  return t;
}

// Calls f(line, line_number) for every line without its line break and trailing \r.
template <class F>
void for_each_line(std::string_view text, F&& f) {
  std::size_t n = 0;
  for (std::size_t begin = 0; begin < text.size();) {
    const auto end = std::min(text.find('\n', begin), text.size());
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    ++n;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    f(line, n);
  }
}

std::vector<std::string> split_tabs(std::string_view line) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  for (;;) {
    const auto tab = line.find('\t', begin);
    out.emplace_back(line.substr(begin, tab == std::string_view::npos ? tab : tab - begin));
    if (tab == std::string_view::npos) return out;
    begin = tab + 1;
  }
}

Table parse_tsv(std::string_view text, const std::string& file) {
  Table t;
  bool header = true;
  for_each_line(text, [&](std::string_view line, std::size_t n) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) return;
    auto fields = split_tabs(line);
    if (header) {
      t.columns = std::move(fields);
      check_header(t.columns, file);
      header = false;
      return;
    }
    if (fields.size() != t.columns.size()) {
      throw TraceError(file, line_of(n),
                       std::to_string(fields.size()) + " fields, the header has " +
                           std::to_string(t.columns.size()));
    }
    Table::Row row{n, {}};
    for (auto& f : fields) row.cells.emplace_back(std::move(f));
    t.rows.push_back(std::move(row));
  });
  if (header) throw TraceError(file, "line 1", "empty file (expected a header)");
  return t;
}

std::optional<std::string> cell_text(const nlohmann::json& v) {
  if (v.is_null()) return std::nullopt;
  if (v.is_string()) return v.get<std::string>();
  return v.dump();  // numbers exactly as nlohmann prints them (shortest round trip)
}

Table parse_jsonl(std::string_view text, const std::string& file) {
  // Cells are taken out of each object as it is parsed (a parsed object costs several times its
  // text); columns are numbered as keys first appear, then put in name order at the end.
  std::map<std::string, std::size_t> id_of;
  Table t;
  for_each_line(text, [&](std::string_view line, std::size_t n) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) return;
    const nlohmann::json j = parse_json_text(line, file, line_of(n), InputKind::Trace);
    if (!j.is_object()) {
      throw TraceError(file, line_of(n),
                       std::string("expected one JSON object per line, got ") + j.type_name());
    }
    Table::Row row{n, std::vector<std::optional<std::string>>(id_of.size())};
    for (const auto& item : j.items()) {
      const auto it = id_of.emplace(item.key(), id_of.size()).first;
      if (it->second >= row.cells.size()) row.cells.resize(it->second + 1);
      row.cells[it->second] = cell_text(item.value());
    }
    t.rows.push_back(std::move(row));
  });
  std::vector<std::size_t> order;  // output column -> id; id_of iterates in name order
  for (const auto& [name, id] : id_of) {
    t.columns.push_back(name);
    order.push_back(id);
  }
  for (Table::Row& row : t.rows) {
    std::vector<std::optional<std::string>> cells(order.size());
    for (std::size_t c = 0; c < order.size(); ++c) {
      if (order[c] < row.cells.size()) cells[c] = std::move(row.cells[order[c]]);
    }
    row.cells = std::move(cells);
  }
  return t;
}

// A JSON array: objects become rows as JSONL lines do (columns: the union of keys, sorted);
// scalars become one column `value`. Messages name an element by its index.
Table parse_json_array(std::string_view text, const std::string& file) {
  const nlohmann::json doc = parse_json_text(text, file, "", InputKind::Trace);
  if (!doc.is_array()) {
    throw TraceError(file, "line 1", std::string("expected a JSON array, got ") + doc.type_name());
  }
  Table t;
  t.json_elements = true;
  const bool objects = !doc.empty() && doc.front().is_object();
  std::map<std::string, std::size_t> index;
  if (objects) {
    for (std::size_t i = 0; i < doc.size(); ++i) {
      if (!doc[i].is_object()) {
        throw TraceError(file, element_of(i), "expected an object like [0]");
      }
      for (const auto& item : doc[i].items()) index.emplace(item.key(), 0);
    }
    for (auto& [name, id] : index) {
      id = t.columns.size();
      t.columns.push_back(name);
    }
  } else {
    t.columns.emplace_back("value");
  }
  t.rows.reserve(doc.size());
  for (std::size_t i = 0; i < doc.size(); ++i) {
    Table::Row row{i + 1, std::vector<std::optional<std::string>>(t.columns.size())};
    if (objects) {
      for (const auto& item : doc[i].items())
        row.cells[index[item.key()]] = cell_text(item.value());
    } else if (doc[i].is_structured()) {
      throw TraceError(file, element_of(i), "expected a number or string like [0]");
    } else {
      row.cells[0] = cell_text(doc[i]);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace

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
  text = strip_bom(text);
  if (format == Format::Auto) format = detect_format({}, text);
  switch (format) {
    case Format::Tsv:
      return parse_tsv(text, file);
    case Format::Jsonl:
      return parse_jsonl(text, file);
    case Format::Json:
      return parse_json_array(text, file);
    case Format::Csv:
    case Format::Auto:
      break;
  }
  return parse_csv(text, file);
}

std::string row_place(const Table& table, const Table::Row& row) {
  if (table.json_elements) return element_of(row.line - 1);
  return line_of(row.line);
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
