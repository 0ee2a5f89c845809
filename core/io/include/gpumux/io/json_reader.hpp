// Strict reading of JSON: parse_json_text() is the one parser of JSON text in core (bounded
// nesting, no duplicate keys, number overflow reported with its key), and JsonReader reads the
// parsed objects: every key read is typed and checked, and finish() rejects keys nobody read.
// Errors name the file and the dotted key path ("policy.params.quantum_us").
//
// Thread rules: the functions share no state; a JsonReader belongs to one thread.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "gpumux/api/enum_names.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/api/time.hpp"

namespace gpumux {

/// The largest duration a reader accepts, in the key's own unit (1e9 s is about 31 years; 1e9
/// of any unit fits int64 ns with room to spare).
inline constexpr double kMaxDurationUnits = 1e9;

/// Whether a duration may be zero.
enum class Sign : std::uint8_t { NonNegative, Positive };

/// Throws std::logic_error unless min <= max and both fit T (an integer_in call whose range
/// would itself wrap when narrowed).
template <std::integral T>
void check_integer_range(std::int64_t min, std::int64_t max) {
  if (min > max || !std::in_range<T>(min) || !std::in_range<T>(max)) {
    throw std::logic_error("integer_in: the range [" + std::to_string(min) + ", " +
                           std::to_string(max) + "] does not fit the target type");
  }
}

/// "must be an integer in [min, max], got <value>": the one wording of a range error ("must be
/// an integer >= min, got <value>" when max is the largest int64).
[[nodiscard]] std::string integer_range_problem(std::int64_t min, std::int64_t max,
                                                const std::string& got);

class JsonReader {
 public:
  /// `path` is the key path of `object` itself ("" for the document root).
  JsonReader(const nlohmann::json& object, std::string file, std::string path);

  [[nodiscard]] bool has(const std::string& key) const;
  [[nodiscard]] std::string path_of(const std::string& key) const;
  [[nodiscard]] const std::string& file() const noexcept { return file_; }

  /// Typed getters; `required_*` throw when the key is missing, the others return the default.
  [[nodiscard]] std::string required_string(const std::string& key);
  [[nodiscard]] std::string string_or(const std::string& key, const std::string& fallback);
  [[nodiscard]] double required_number(const std::string& key);
  [[nodiscard]] double number_or(const std::string& key, double fallback);
  [[nodiscard]] std::int64_t required_int(const std::string& key);
  [[nodiscard]] std::int64_t int_or(const std::string& key, std::int64_t fallback);
  [[nodiscard]] bool bool_or(const std::string& key, bool fallback);

  /// An integer in [min, max] as a T: the value is checked as written (up to 64 bits) before
  /// it is narrowed, so 2^32 is refused rather than read as 0. Error, naming the file and key:
  /// "must be an integer in [1, 1048576], got 4294967296". [min, max] must lie within T (a
  /// programming error otherwise: std::logic_error).
  template <std::integral T>
  [[nodiscard]] T integer_in(const std::string& key, std::int64_t min, std::int64_t max) {
    check_integer_range<T>(min, max);
    return static_cast<T>(required_int_in(key, min, max));
  }
  /// As integer_in; `fallback` when the key is absent.
  template <std::integral T>
  [[nodiscard]] T integer_in_or(const std::string& key, T fallback, std::int64_t min,
                                std::int64_t max) {
    return has(key) ? integer_in<T>(key, min, max) : fallback;
  }
  /// The 64-bit reading behind integer_in: the value in [min, max], else the error above.
  [[nodiscard]] std::int64_t required_int_in(const std::string& key, std::int64_t min,
                                             std::int64_t max);
  /// Raw access to a sub-value (marks it read); throws if missing.
  [[nodiscard]] const nlohmann::json& required(const std::string& key);
  [[nodiscard]] const nlohmann::json* optional(const std::string& key);
  /// A nested object reader.
  [[nodiscard]] JsonReader object(const std::string& key);

  /// A duration written as a number in `unit`: >= 0 (> 0 for Sign::Positive), at most
  /// kMaxDurationUnits, converted by duration_to_ns. Errors name the file and key:
  /// "must be >= 0, got -1.0", "out of range (more than 1e9 us)".
  [[nodiscard]] DurationNs required_duration(const std::string& key, TimeUnit unit,
                                             Sign sign = Sign::NonNegative);
  [[nodiscard]] DurationNs duration_or(const std::string& key, TimeUnit unit,
                                       DurationNs fallback_ns, Sign sign = Sign::NonNegative);

  /// One of the names in `names`; otherwise "unknown value 'x'; valid values: a, b, c".
  template <class E, std::size_t N>
  [[nodiscard]] E required_choice(const std::string& key, const EnumNames<E, N>& names) {
    const std::string text = required_string(key);
    if (const auto v = names.parse(text)) return *v;
    fail(key, "unknown value '" + text + "'; valid values: " + names.list());
  }
  template <class E, std::size_t N>
  [[nodiscard]] E choice_or(const std::string& key, const EnumNames<E, N>& names, E fallback) {
    return has(key) ? required_choice(key, names) : fallback;
  }

  /// Number constraints (throw ConfigError naming the key).
  double positive(const std::string& key, double value) const;
  double non_negative(const std::string& key, double value) const;
  [[noreturn]] void fail(const std::string& key, const std::string& problem) const;

  /// Throws for any key that was never read: "unknown key".
  void finish() const;

 private:
  const nlohmann::json& object_;
  std::string file_;
  std::string path_;
  std::set<std::string> read_;
};

/// Deepest nesting of arrays and objects a JSON text may have. Real documents nest at most 6
/// levels; the limit keeps every recursive walk of a document (copy, compare, dump) far from
/// the end of the stack.
inline constexpr std::size_t kMaxJsonDepth = 64;

/// Parses one JSON text (a whole file, or one JSONL line). Throws the InputError of `kind`:
///   "<file>: line L, column C: <syntax problem>" (ConfigError), "... invalid JSON: ..." (trace);
///   "<file>: <key path>: duplicate key";
///   "<file>: <key path>: nested deeper than 64 levels" (checked while parsing, so a deep
///   document is never built);
///   "<file>: <key path>: number out of range: 1e400 (line L, column C)".
/// A non-empty `where` ("line 7" of a JSONL file) goes before the key path, and then syntax
/// errors read "<file>: line 7: invalid JSON: <problem> (column C)". Bytes outside printable
/// ASCII in quoted input are written as \xNN.
[[nodiscard]] nlohmann::json parse_json_text(std::string_view text, const std::string& file,
                                             const std::string& where,
                                             InputKind kind = InputKind::Config);

/// As parse_json_text, but text that is not JSON syntax gives nullopt instead of an error
/// (a --set value that is a bare string); duplicate keys, depth and overflow still throw.
[[nodiscard]] std::optional<nlohmann::json> parse_json_if_json(std::string_view text,
                                                               const std::string& file,
                                                               const std::string& where,
                                                               InputKind kind);

/// Re-throws a ConfigError raised while reading a data file as a TraceError naming the file.
[[noreturn]] void rethrow_as_trace(const ConfigError& e, const std::string& file);

}  // namespace gpumux
