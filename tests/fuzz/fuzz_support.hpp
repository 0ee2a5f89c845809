// Shared by the libFuzzer harnesses in tests/fuzz: the fixture repository root they parse
// against, and the one rule every harness checks. Each harness defines
// LLVMFuzzerTestOneInput; built with -fsanitize=fuzzer it is a fuzzer, linked with
// corpus_main.cpp it replays tests/fuzz/corpus/<harness>/ as a regression test.
//
// The rule: a parser given any bytes either succeeds or throws a gpumux::InputError (bad
// input, exit 2). Any other exception escapes the harness and is a finding (libFuzzer reports
// an uncaught exception as a crash), as is any sanitizer report.
//
// Thread rules: one thread, as libFuzzer calls the harness.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "gpumux/api/errors.hpp"

namespace gpumux::fuzz {

/// tests/fuzz/root: a tiny repository (one real model, one real device profile, an arrivals
/// CSV and a job file) so that each execution reads little from disk.
inline std::filesystem::path root() {
  return GPUMUX_FUZZ_ROOT;
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Runs `parse`; an InputError is an expected outcome, anything else propagates.
template <class F>
void input_errors_only(F&& parse) {
  try {
    parse();
  } catch (const InputError&) {
    // rejected input: fine
  }
}

}  // namespace gpumux::fuzz
