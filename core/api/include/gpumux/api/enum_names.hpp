// One name table per enum: the same constexpr table serves to_string, parsing, and the list
// of valid names in error messages, so the three can no longer drift apart.
//
//   inline constexpr EnumNames<Precision, 2> kPrecisionNames{{
//       {Precision::Fp32, "fp32"}, {Precision::Fp16, "fp16"}}};
//   kPrecisionNames.name(Precision::Fp16)  -> "fp16"
//   kPrecisionNames.parse("fp32")          -> Precision::Fp32 (nullopt when unknown)
//   kPrecisionNames.list()                 -> "fp32, fp16" (table order)
//
// Thread rules: tables are immutable constants; every member is safe from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpumux {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

template <class E, std::size_t N>
struct EnumNames {
  EnumName<E> entries[N];

  /// The name of `v`, or "?" for a value not in the table.
  [[nodiscard]] constexpr std::string_view name(E v) const noexcept {
    for (const auto& e : entries) {
      if (e.value == v) return e.name;
    }
    return "?";
  }

  /// The value named `text` (exact, case-sensitive), or nullopt.
  [[nodiscard]] constexpr std::optional<E> parse(std::string_view text) const noexcept {
    for (const auto& e : entries) {
      if (e.name == text) return e.value;
    }
    return std::nullopt;
  }

  /// The valid names in table order, joined with `separator` ("fp32, tf32, fp16").
  [[nodiscard]] std::string list(std::string_view separator = ", ") const {
    std::string out;
    for (std::size_t i = 0; i < N; ++i) {
      if (i > 0) out += separator;
      out += entries[i].name;
    }
    return out;
  }

  [[nodiscard]] static constexpr std::size_t size() noexcept { return N; }
};

}  // namespace gpumux
