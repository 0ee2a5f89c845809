// Strict, typed reading of JSON objects for configs and trace files.
#include "gpumux/io/json_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gpumux/io/input_file.hpp"

namespace gpumux {
namespace {

// Shortest text that round-trips, so messages show "1.5", not "1.500000".
std::string number_text(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc()) return std::to_string(v);
  return std::string(buf, end);
}

std::string describe(const nlohmann::json& v) {
  if (v.is_number_float()) {
    std::string text = number_text(v.get<double>());
    if (text.find_first_of(".en") == std::string::npos) text += ".0";  // show it was a float
    return "number " + text;
  }
  if (v.is_number()) return "number " + number_text(v.get<double>());
  return v.type_name();
}

// An article for "expected a/an <type>".
std::string expected(const std::string& what, const nlohmann::json& got) {
  return "expected " + what + ", got " + std::string(got.type_name());
}

}  // namespace

JsonReader::JsonReader(const nlohmann::json& object, std::string file, std::string path)
    : object_(object), file_(std::move(file)), path_(std::move(path)) {
  if (!object_.is_object()) throw ConfigError(file_, path_, expected("an object", object_));
}

bool JsonReader::has(const std::string& key) const {
  return object_.contains(key);
}

std::string JsonReader::path_of(const std::string& key) const {
  if (key.empty()) return path_;
  if (path_.empty()) return key;
  return path_ + "." + key;
}

const nlohmann::json& JsonReader::required(const std::string& key) {
  auto it = object_.find(key);
  if (it == object_.end()) fail(key, "missing required key");
  read_.insert(key);
  return *it;
}

const nlohmann::json* JsonReader::optional(const std::string& key) {
  auto it = object_.find(key);
  if (it == object_.end()) return nullptr;
  read_.insert(key);
  return &*it;
}

std::string JsonReader::required_string(const std::string& key) {
  const auto& v = required(key);
  if (!v.is_string()) fail(key, expected("a string", v));
  return v.get<std::string>();
}

std::string JsonReader::string_or(const std::string& key, const std::string& fallback) {
  if (!has(key)) return fallback;
  return required_string(key);
}

double JsonReader::required_number(const std::string& key) {
  const auto& v = required(key);
  if (!v.is_number()) fail(key, expected("a number", v));
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(key, "expected a finite number");
  return d;
}

double JsonReader::number_or(const std::string& key, double fallback) {
  if (!has(key)) return fallback;
  return required_number(key);
}

std::int64_t JsonReader::required_int(const std::string& key) {
  const auto& v = required(key);
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() &&
        v.get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail(key, "integer out of range");
    }
    return v.get<std::int64_t>();
  }
  if (v.is_number_float()) {
    // Integers are written without a fraction or exponent (traces/formats.md): "8", not "8.0".
    fail(key, "expected an integer, got " + describe(v));
  }
  fail(key, expected("an integer", v));
}

std::string integer_range_problem(std::int64_t min, std::int64_t max, const std::string& got) {
  if (max == std::numeric_limits<std::int64_t>::max()) {
    return "must be an integer >= " + std::to_string(min) + ", got " + got;
  }
  return "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
         got;
}

std::int64_t JsonReader::required_int_in(const std::string& key, std::int64_t min,
                                         std::int64_t max) {
  const auto& v = required(key);
  // Above int64 (up to 2^64 - 1) the value is still named, with the range, not "out of range".
  if (v.is_number_unsigned() &&
      v.get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    fail(key, integer_range_problem(min, max, std::to_string(v.get<std::uint64_t>())));
  }
  const std::int64_t x = required_int(key);
  if (x < min || x > max) fail(key, integer_range_problem(min, max, std::to_string(x)));
  return x;
}

std::int64_t JsonReader::int_or(const std::string& key, std::int64_t fallback) {
  if (!has(key)) return fallback;
  return required_int(key);
}

bool JsonReader::bool_or(const std::string& key, bool fallback) {
  if (!has(key)) return fallback;
  const auto& v = required(key);
  if (!v.is_boolean()) fail(key, expected("a boolean", v));
  return v.get<bool>();
}

JsonReader JsonReader::object(const std::string& key) {
  const auto& v = required(key);
  if (!v.is_object()) fail(key, expected("an object", v));
  return JsonReader(v, file_, path_of(key));
}

double JsonReader::positive(const std::string& key, double value) const {
  if (!(value > 0)) fail(key, "must be > 0, got " + number_text(value));
  return value;
}

double JsonReader::non_negative(const std::string& key, double value) const {
  if (!(value >= 0)) fail(key, "must be >= 0, got " + number_text(value));
  return value;
}

DurationNs JsonReader::required_duration(const std::string& key, TimeUnit unit, Sign sign) {
  const double v = required_number(key);
  if (sign == Sign::Positive) {
    positive(key, v);
  } else {
    non_negative(key, v);
  }
  if (v > kMaxDurationUnits) {
    fail(key, "out of range (more than 1e9 " + std::string(kTimeUnitNames.name(unit)) + ")");
  }
  return duration_to_ns(v, unit);
}

DurationNs JsonReader::duration_or(const std::string& key, TimeUnit unit, DurationNs fallback_ns,
                                   Sign sign) {
  return has(key) ? required_duration(key, unit, sign) : fallback_ns;
}

void JsonReader::fail(const std::string& key, const std::string& problem) const {
  throw ConfigError(file_, path_of(key), problem);
}

void JsonReader::finish() const {
  // nlohmann::json objects iterate in sorted key order, so the first unknown key is stable.
  for (const auto& [key, value] : object_.items()) {
    if (read_.count(key) == 0) fail(key, "unknown key");
  }
}

namespace {

using Json = nlohmann::json;

std::string join_where(const std::string& prefix, const std::string& inner) {
  if (prefix.empty()) return inner;
  if (inner.empty()) return prefix;
  return prefix + ": " + inner;
}

// "line L, column C" of byte offset `position` (1-based, as nlohmann counts).
std::string line_column(std::string_view text, std::size_t position) {
  position = std::min(position, text.size());
  std::size_t line = 1, column = 0;
  for (std::size_t i = 0; i < position; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 0;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// Builds the document like nlohmann's own DOM parser, and additionally tracks the key path,
// bounds the depth and rejects duplicate keys while parsing. Errors are thrown from the
// callbacks; nlohmann's parser is iterative, so nothing here recurses.
class StrictSax final : public nlohmann::json_sax<Json> {
 public:
  StrictSax(std::string_view text, const std::string& file, const std::string& where,
            InputKind kind, bool syntax_errors_throw)
      : text_(text),
        file_(file),
        where_(where),
        kind_(kind),
        syntax_errors_throw_(syntax_errors_throw) {}

  Json& result() { return root_; }

  bool null() override { return put(Json(nullptr)); }
  bool boolean(bool v) override { return put(Json(v)); }
  bool number_integer(number_integer_t v) override { return put(Json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return put(Json(v)); }
  bool number_float(number_float_t v, const string_t& /*text*/) override { return put(Json(v)); }
  bool string(string_t& v) override { return put(Json(std::move(v))); }
  bool binary(binary_t& v) override { return put(Json::binary(std::move(v))); }
  bool start_object(std::size_t /*elements*/) override { return open(Json::object()); }
  bool start_array(std::size_t /*elements*/) override { return open(Json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& k) override {
    keys_.back() = std::move(k);
    if (stack_.back()->contains(keys_.back())) fail(path(), "duplicate key");
    return true;
  }

  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& ex) override {
    if (ex.id == 406) {  // out_of_range.406: a number that does not fit a double
      const std::string inner = path();
      fail(inner.empty() ? line_column(text_, position) : inner,
           "number out of range: " + printable(token) + " (" + line_column(text_, position) + ")");
    }
    if (!syntax_errors_throw_) return false;
    // "[json.exception.parse_error.101] parse error at line 3, column 11: syntax error ..."
    const std::string msg = ex.what();
    std::string at = line_column(text_, position);
    std::string problem = msg;
    if (const auto p = msg.find("at line "); p != std::string::npos) {
      const auto colon = msg.find(": ", p);
      if (colon != std::string::npos) {
        at = msg.substr(p + 3, colon - p - 3);
        problem = msg.substr(colon + 2);
      }
    } else if (const auto tag = msg.find("] "); tag != std::string::npos) {
      problem = msg.substr(tag + 2);
    }
    problem = printable(problem);
    if (!where_.empty()) {
      // One line of a JSONL file: the file's line is in `where`; keep the column.
      const auto comma = at.find(", ");
      throw_input_error(kind_, file_, where_,
                        "invalid JSON: " + problem +
                            (comma == std::string::npos ? "" : " (" + at.substr(comma + 2) + ")"));
    }
    throw_input_error(kind_, file_, at,
                      (kind_ == InputKind::Trace ? "invalid JSON: " : "") + problem);
  }

 private:
  [[noreturn]] void fail(const std::string& inner, const std::string& problem) const {
    throw_input_error(kind_, file_, join_where(where_, inner), problem);
  }

  // The key path of the value being parsed: "a.b[3].c". An array's open child is its last
  // element; in the innermost container the next value goes at index size().
  std::string path() const {
    std::string out;
    for (std::size_t i = 0; i < stack_.size(); ++i) {
      const Json& c = *stack_[i];
      if (c.is_array()) {
        const std::size_t open_child = i + 1 < stack_.size() ? 1 : 0;
        out += '[';
        out += std::to_string(c.size() - open_child);
        out += ']';
      } else {
        if (!out.empty()) out += ".";
        out += printable(keys_[i]);
      }
    }
    return out;
  }

  Json* place(Json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    Json& slot = top[keys_.back()];
    slot = std::move(v);
    return &slot;
  }

  bool put(Json&& v) {
    place(std::move(v));
    return true;
  }

  bool open(Json&& container) {
    if (stack_.size() >= kMaxJsonDepth) {
      fail(path(), "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    // Pointers stay valid: a container only grows while it is the innermost one.
    stack_.push_back(place(std::move(container)));
    keys_.emplace_back();
    return true;
  }

  bool close() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }

  std::string_view text_;
  const std::string& file_;
  const std::string& where_;
  InputKind kind_;
  bool syntax_errors_throw_;
  Json root_;
  std::vector<Json*> stack_;       // open containers, outermost first
  std::vector<std::string> keys_;  // per open container: the key being read (objects)
};

std::optional<Json> parse_strict(std::string_view text, const std::string& file,
                                 const std::string& where, InputKind kind, bool syntax_throws) {
  StrictSax sax(text, file, where, kind, syntax_throws);
  const char* begin = text.data();
  if (!Json::sax_parse(begin, begin + text.size(), &sax)) return std::nullopt;
  return std::move(sax.result());
}

}  // namespace

Json parse_json_text(std::string_view text, const std::string& file, const std::string& where,
                     InputKind kind) {
  return *parse_strict(text, file, where, kind, true);
}

std::optional<Json> parse_json_if_json(std::string_view text, const std::string& file,
                                       const std::string& where, InputKind kind) {
  return parse_strict(text, file, where, kind, false);
}

void rethrow_as_trace(const ConfigError& e, const std::string& file) {
  if (e.file() == file) throw TraceError(file, e.where(), e.problem());
  std::string msg = e.what();
  const std::string prefix = file + ": ";
  if (msg.rfind(prefix, 0) == 0) msg.erase(0, prefix.size());
  const auto sep = msg.find(": ");
  if (sep == std::string::npos) throw TraceError(file, "", msg);
  throw TraceError(file, msg.substr(0, sep), msg.substr(sep + 2));
}

}  // namespace gpumux
