// The sort behind `gpumux trace import --sort`: entries of (arrival ns, reference to the row's
// kept columns), 16 bytes each, ordered by time and then by reference (the rows' order, so the
// sort is stable). Up to SortSpace::memory_bytes of entries are sorted in memory; beyond that
// each full buffer is sorted and written as a run to an unlinked temporary file, and the runs
// are merged at the end, each read through a buffer of memory_bytes / runs. Memory therefore
// stays within about 1.5 x memory_bytes (vector growth) whatever the number of arrivals.
// Internal to core. Thread rules: one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpumux/io/trace_import.hpp"
#include "spill_file.hpp"

namespace gpumux::trace_import {

struct SortEntry {
  std::int64_t ns;
  std::uint64_t ref;
  friend bool operator<(const SortEntry& a, const SortEntry& b) noexcept {
    return a.ns != b.ns ? a.ns < b.ns : a.ref < b.ref;
  }
};

class ArrivalSorter {
 public:
  /// `file` (the trace) names messages.
  ArrivalSorter(const SortSpace& space, std::string file);

  void add(SortEntry entry);
  [[nodiscard]] std::uint64_t size() const noexcept { return count_; }
  /// Calls `fn` with every entry in order; once, after the last add().
  void drain(const std::function<void(const SortEntry&)>& fn);

 private:
  void spill();
  void merge(const std::function<void(const SortEntry&)>& fn);
  [[noreturn]] void out_of_memory(const std::string& what) const;

  SortSpace space_;
  std::string file_;
  std::size_t capacity_;  // entries held in memory before a run is written
  std::vector<SortEntry> entries_;
  std::unique_ptr<SpillFile> runs_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> run_bounds_;  // [first, last) entry
  std::uint64_t count_ = 0;
};

}  // namespace gpumux::trace_import
