// Small text helpers shared by the parts of `gpumux trace import` (trace_import.hpp): trimming,
// powers of ten, seconds written from integer nanoseconds, and the row places of messages.
// Internal to core. Thread rules: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpumux::trace_import {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

inline std::int64_t pow10(int k) {
  std::int64_t p = 1;
  for (int i = 0; i < k; ++i) p *= 10;
  return p;
}

/// Seconds with `decimals` digits after the point from a non-negative ns count, half up,
/// appended to `out`.
void append_seconds(std::string& out, std::int64_t ns, int decimals);
/// A signed ns count as seconds with 9 decimals ("-1.000000000").
[[nodiscard]] std::string ns_text(std::int64_t ns);

/// "line N", or "[i]" (N = i + 1) for a JSON array's element.
[[nodiscard]] std::string place_of(bool json_elements, std::size_t line);

/// The names, printable and comma-separated (for messages).
[[nodiscard]] std::string join_names(const std::vector<std::string>& names);

/// Why a date and time whose fields are well formed was refused.
enum class DateProblem : std::uint8_t {
  None,
  NoSuchInstant,  // 2023-02-30, 24:00:00, a leap second
  OutOfRange,     // beyond kDatetimeRange
};

/// The dates and times held: int64 ns since 1970-01-01 reach from 1677-09-21 00:12:43.145224192
/// to 2262-04-11 23:47:16.854775807; the whole seconds inside that, -9,223,372,036 s to
/// 9,223,372,035 s, with any fraction (so an arrival can be negated without overflow).
inline constexpr std::string_view kDatetimeRange =
    "1677-09-21 00:12:44 to 2262-04-11 23:47:15.999999999 UTC";

/// A date and time as ns since the Unix epoch (trace_time.cpp); nullopt when it is not one,
/// and then `*problem` (when given) says why, if the fields were well formed.
[[nodiscard]] std::optional<std::int64_t> parse_datetime_ns(std::string_view s,
                                                            DateProblem* problem);

}  // namespace gpumux::trace_import
