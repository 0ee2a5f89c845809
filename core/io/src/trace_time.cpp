// Time values of `gpumux trace import` as integer nanoseconds (trace_import.hpp): plain
// decimals digit by digit, exponent forms through double, and calendar dates checked field by
// field (no timegm-style normalisation: 2023-02-30 is an error, not 2 March).
#include <algorithm>
#include <charconv>
#include <cmath>

#include "gpumux/io/trace_import.hpp"
#include "trace_text.hpp"

namespace gpumux::trace_import {
namespace {

int unit_digits(TimeUnit u) {
  switch (u) {
    case TimeUnit::S:
      return 9;
    case TimeUnit::Ms:
      return 6;
    case TimeUnit::Us:
      return 3;
    case TimeUnit::Ns:
    case TimeUnit::Datetime:
      break;
  }
  return 0;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// `digits` (0-9 only) as a fraction scaled to 10^k, rounded half up on the next digit.
std::int64_t fraction_scaled(std::string_view digits, int k) {
  std::int64_t v = 0;
  for (int i = 0; i < k; ++i) {
    v = v * 10 + (static_cast<std::size_t>(i) < digits.size() ? digits[i] - '0' : 0);
  }
  if (digits.size() > static_cast<std::size_t>(k) && digits[k] >= '5') ++v;
  return v;
}

std::optional<std::int64_t> parse_number_ns(std::string_view s, TimeUnit unit) {
  const int k = unit_digits(unit);
  if (s.find_first_of("eE") != std::string_view::npos) {
    double v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
    const double ns = v * static_cast<double>(pow10(k));
    if (!(std::fabs(ns) < 9.2e18)) return std::nullopt;
    return static_cast<std::int64_t>(std::llround(ns));
  }
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  const auto dot = s.find('.');
  const std::string_view whole = s.substr(0, dot);
  const std::string_view frac =
      dot == std::string_view::npos ? std::string_view{} : s.substr(dot + 1);
  if (whole.empty() && frac.empty()) return std::nullopt;
  if (!whole.empty() && !all_digits(whole)) return std::nullopt;
  if (dot != std::string_view::npos && !frac.empty() && !all_digits(frac)) return std::nullopt;
  std::int64_t w = 0;
  if (!whole.empty()) {
    auto [ptr, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), w);
    if (ec != std::errc()) return std::nullopt;
  }
  std::int64_t ns = 0;
  if (__builtin_mul_overflow(w, pow10(k), &ns)) return std::nullopt;
  if (__builtin_add_overflow(ns, fraction_scaled(frac, k), &ns)) return std::nullopt;
  return negative ? -ns : ns;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "chrono-Compatible
// Low-Level Date Algorithms", days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// kDatetimeRange in whole seconds since 1970-01-01.
constexpr std::int64_t kMinDatetimeSeconds = -9'223'372'036LL;
constexpr std::int64_t kMaxDatetimeSeconds = 9'223'372'035LL;

// Days in month `m` (1-12) of Gregorian year `y`.
unsigned days_in_month(unsigned y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

}  // namespace

std::optional<std::int64_t> parse_datetime_ns(std::string_view s, DateProblem* problem) {
  if (!s.empty() && (s.back() == 'Z' || s.back() == 'z')) s.remove_suffix(1);
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
      s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  auto num = [&](std::size_t at, std::size_t n) -> std::optional<unsigned> {
    const std::string_view d = s.substr(at, n);
    if (!all_digits(d)) return std::nullopt;
    unsigned v = 0;
    std::from_chars(d.data(), d.data() + d.size(), v);
    return v;
  };
  const auto y = num(0, 4), mo = num(5, 2), d = num(8, 2);
  const auto h = num(11, 2), mi = num(14, 2), sec = num(17, 2);
  if (!y || !mo || !d || !h || !mi || !sec) return std::nullopt;
  std::int64_t frac = 0;
  if (s.size() > 19) {
    const std::string_view f = s.substr(20);
    if (s[19] != '.' || f.empty() || f.size() > 9 || !all_digits(f)) return std::nullopt;
    frac = fraction_scaled(f, 9);
  }
  // Each field in its own range: no 24:00:00 and no leap second (23:59:60), which Unix time,
  // the count these times become, has no place for.
  if (*y < 1 || *mo < 1 || *mo > 12 || *d < 1 || *d > days_in_month(*y, *mo) || *h > 23 ||
      *mi > 59 || *sec > 59) {
    if (problem != nullptr) *problem = DateProblem::NoSuchInstant;
    return std::nullopt;
  }
  const std::int64_t days = days_from_civil(*y, *mo, *d);
  const std::int64_t secs = days * 86400 + *h * 3600LL + *mi * 60LL + *sec;
  // kDatetimeRange: years 1-9999 give +-2.5e11 s, so this cannot overflow.
  if (secs > kMaxDatetimeSeconds || secs < kMinDatetimeSeconds) {
    if (problem != nullptr) *problem = DateProblem::OutOfRange;
    return std::nullopt;
  }
  return secs * 1'000'000'000LL + frac;
}

std::optional<std::int64_t> parse_time_ns(std::string_view text, TimeUnit unit) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  if (unit == TimeUnit::Datetime) return parse_datetime_ns(text, nullptr);
  return parse_number_ns(text, unit);
}

}  // namespace gpumux::trace_import
