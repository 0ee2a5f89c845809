// In-memory sort with sorted runs spilled and merged beyond a budget (arrival_sorter.hpp).
#include "arrival_sorter.hpp"

#include <algorithm>
#include <new>
#include <queue>

#include "gpumux/api/errors.hpp"

namespace gpumux::trace_import {
namespace {

constexpr std::size_t kEntryBytes = sizeof(SortEntry);
static_assert(kEntryBytes == 16);
// Runs are read back in pieces of at least this many entries, however many runs there are.
constexpr std::size_t kMinReadEntries = 256;

}  // namespace

ArrivalSorter::ArrivalSorter(const SortSpace& space, std::string file)
    : space_(space),
      file_(std::move(file)),
      capacity_(std::max<std::size_t>(space.memory_bytes / kEntryBytes, kMinReadEntries)) {}

void ArrivalSorter::add(SortEntry entry) {
  if (entries_.size() == capacity_) spill();
  if (entries_.size() == entries_.capacity()) {
    try {
      entries_.reserve(std::min(capacity_, std::max<std::size_t>(2 * entries_.size(), 4096)));
    } catch (const std::bad_alloc&) {
      out_of_memory("holding " + std::to_string(entries_.size()) + " arrival times to sort");
    }
  }
  entries_.push_back(entry);
  ++count_;
}

void ArrivalSorter::spill() {
  std::sort(entries_.begin(), entries_.end());
  if (!runs_) runs_ = std::make_unique<SpillFile>(space_.dir, "sorting arrival times", file_);
  const std::uint64_t first = runs_->size() / kEntryBytes;
  runs_->append(reinterpret_cast<const char*>(entries_.data()), entries_.size() * kEntryBytes);
  run_bounds_.emplace_back(first, first + entries_.size());
  entries_.clear();
}

void ArrivalSorter::drain(const std::function<void(const SortEntry&)>& fn) {
  if (!runs_) {
    std::sort(entries_.begin(), entries_.end());
    for (const SortEntry& e : entries_) fn(e);
    std::vector<SortEntry>().swap(entries_);
    return;
  }
  if (!entries_.empty()) spill();
  std::vector<SortEntry>().swap(entries_);  // the merge's buffers take its place
  merge(fn);
}

void ArrivalSorter::merge(const std::function<void(const SortEntry&)>& fn) {
  struct Run {
    std::uint64_t next;  // the next entry to read from the file
    std::uint64_t end;
    std::vector<SortEntry> buffer;
    std::size_t at = 0;
  };
  const std::size_t per_run = std::max(kMinReadEntries, capacity_ / run_bounds_.size());
  std::vector<Run> runs;
  try {
    runs.reserve(run_bounds_.size());
    for (const auto& [first, last] : run_bounds_) runs.push_back(Run{first, last, {}, 0});
  } catch (const std::bad_alloc&) {
    out_of_memory("merging " + std::to_string(run_bounds_.size()) + " sorted runs");
  }
  // Refills run r's buffer; false once it is exhausted.
  auto refill = [&](Run& r) {
    if (r.next == r.end) return false;
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(per_run, r.end - r.next));
    try {
      r.buffer.resize(n);
    } catch (const std::bad_alloc&) {
      out_of_memory("merging " + std::to_string(runs.size()) + " sorted runs");
    }
    runs_->read_at(r.next * kEntryBytes, reinterpret_cast<char*>(r.buffer.data()), n * kEntryBytes);
    r.next += n;
    r.at = 0;
    return true;
  };
  using Head = std::pair<SortEntry, std::size_t>;  // an entry and its run
  auto later = [](const Head& a, const Head& b) { return b.first < a.first; };
  std::priority_queue<Head, std::vector<Head>, decltype(later)> heads(later);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (refill(runs[i])) heads.push({runs[i].buffer[0], i});
  }
  while (!heads.empty()) {
    const auto [entry, i] = heads.top();
    heads.pop();
    fn(entry);
    Run& r = runs[i];
    if (++r.at < r.buffer.size() || refill(r)) heads.push({r.buffer[r.at], i});
  }
}

void ArrivalSorter::out_of_memory(const std::string& what) const {
  throw Error(file_ + ": out of memory " + what + " (" + std::to_string(count_) +
              " arrivals so far)");
}

}  // namespace gpumux::trace_import
