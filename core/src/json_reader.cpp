// Strict, typed reading of JSON objects for configs and trace files.
#include "gpumux/json_reader.hpp"

#include <fstream>

#include <charconv>
#include <cmath>
#include <limits>
#include <string>

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

void JsonReader::fail(const std::string& key, const std::string& problem) const {
  throw ConfigError(file_, path_of(key), problem);
}

void JsonReader::finish() const {
  // nlohmann::json objects iterate in sorted key order, so the first unknown key is stable.
  for (const auto& [key, value] : object_.items()) {
    if (read_.count(key) == 0) fail(key, "unknown key");
  }
}

nlohmann::json read_json_file(const std::filesystem::path& file) {
  const std::string name = file.string();
  std::ifstream in(file);
  if (!in) throw TraceError(name, "(top level)", "cannot open file");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw TraceError(name, "byte " + std::to_string(e.byte),
                     std::string("invalid JSON: ") + e.what());
  }
}

void rethrow_as_trace(const ConfigError& e, const std::string& file) {
  std::string msg = e.what();
  const std::string prefix = file + ": ";
  if (msg.rfind(prefix, 0) == 0) msg.erase(0, prefix.size());
  const auto sep = msg.find(": ");
  if (sep == std::string::npos) throw TraceError(file, "(top level)", msg);
  throw TraceError(file, msg.substr(0, sep), msg.substr(sep + 2));
}

}  // namespace gpumux
