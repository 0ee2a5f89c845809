// The kept columns of rows that `gpumux trace import --sort` has read but not yet written
// (each row's "tail": its output line after arrival_s). Tails are kept in memory up to
// SortSpace::tail_memory_bytes, then appended to an unlinked temporary file (spill_file.hpp) and
// read back by reference when the sorted rows are written, through a small cache (kTailCacheBytes)
// for tails that many rows share (the invocations of one function). Internal to core.
// Thread rules: one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpumux/io/trace_import.hpp"
#include "spill_file.hpp"

namespace gpumux::trace_import {

inline constexpr std::size_t kTailCacheBytes = std::size_t{8} << 20;

class TailStore {
 public:
  TailStore(const SortSpace& space, std::string file);

  /// Stores `tail`; returns its reference (increasing with each call).
  std::uint64_t add(std::string_view tail);
  /// The tail stored under `ref`; valid until the next call.
  std::string_view get(std::uint64_t ref);

 private:
  struct Cached {
    std::uint64_t ref = ~std::uint64_t{0};
    std::string text;
  };

  SortSpace space_;
  std::string file_;
  std::string memory_;  // length-prefixed tails while they fit
  std::unique_ptr<SpillFile> spilled_;
  std::vector<Cached> cache_;
  std::size_t cached_bytes_ = 0;
  std::string scratch_;
};

}  // namespace gpumux::trace_import
