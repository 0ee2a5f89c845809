// The output budget of one run: how many bytes its result files may put on disk. A valid run
// can be very long (2^63 iterations) and its events stream to disk as they happen, so without
// a bound it writes until the disk is full. One OutputBudget per run, owned by its
// ResultWriter, is charged by every byte on its way to the disk: the streamed files
// (events.jsonl, trace.json, after the compressor when `compress` is on, so compressed bytes
// are counted), config.resolved.json, the summaries, run.json and the marker. A write that
// would pass the limit is refused before it reaches the disk, the run ends with an
// OutputBudgetExceeded (exit 1) naming the budget and the file, and the ResultWriter removes
// its temporary folder: nothing appears under the final name.
//
// The limit is the config's `max_output_gib`, or by default the free space of the results
// file system when the run starts less a margin (default_limit). The default also watches the
// disk while the run writes: other writers (a sweep's other points under -j N, anything else on
// the machine) share that free space, so every FreeSpaceWatch::interval bytes the free space is
// measured again, and a write that would leave less than the margin free is refused too.
//
// An early estimate ("this run will write about N GB; M GB free") plugs in before the run:
// it reads limit() and source() from the writer's budget (ResultWriter::budget()) and warns or
// refuses when its estimate exceeds them. charge() stays the enforcement: an estimate can be
// wrong, the count of bytes written cannot.
//
// Thread rules: one budget belongs to one ResultWriter, on one thread (sweep points each have
// their own); not thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "gpumux/api/errors.hpp"

namespace gpumux {

/// A run stopped because its outputs reached the budget (a runtime failure: exit 1).
class OutputBudgetExceeded final : public Error {
 public:
  using Error::Error;
};

/// How the default budget re-measures the disk while writing.
struct FreeSpaceWatch {
  /// Bytes free to an unprivileged writer now, or nullopt when unknown (then not checked).
  std::function<std::optional<std::uint64_t>()> free_bytes;
  std::uint64_t reserve_bytes = 0;   ///< a write must leave at least this much free
  std::uint64_t interval_bytes = 0;  ///< bytes charged between two measurements (> 0)
  std::string where;                 ///< the folder measured, for messages
};

class OutputBudget {
 public:
  /// The default's margin: the share of the free space left free (5%), so the disk keeps room
  /// for the rest of the system and for other writers while the run goes.
  static constexpr double kFreeMarginShare = 0.05;
  /// The largest `max_output_gib` accepted (1 PiB): its bytes fit in 64 bits.
  static constexpr double kMaxGib = 1024.0 * 1024.0;

  /// `limit_bytes` may be written; `source` says where the limit came from, for messages
  /// ("max_output_gib 0.5 GiB", "the default max_output_gib 11.4 GiB: 95% of the 12 GiB free
  /// at the start under /data/results").
  OutputBudget(std::uint64_t limit_bytes, std::string source)
      : limit_(limit_bytes), source_(std::move(source)) {}
  /// As above, and the disk is re-measured while writing (`watch`; the default budget's).
  OutputBudget(std::uint64_t limit_bytes, std::string source, FreeSpaceWatch watch);

  /// The budget of a run writing under `dir`: `max_output_bytes` when set, else the default
  /// for the free space of the file system holding dir (free_bytes; no limit when it cannot
  /// be measured).
  [[nodiscard]] static OutputBudget for_results(const std::filesystem::path& dir,
                                                std::optional<std::uint64_t> max_output_bytes);

  /// The default limit for `free_bytes` free on the results file system: the free space less
  /// kFreeMarginShare of it.
  [[nodiscard]] static std::uint64_t default_limit(std::uint64_t free_bytes) noexcept;

  /// Bytes an unprivileged writer may still use on the file system holding `path`, measured
  /// (statvfs: f_bavail x f_frsize) on its nearest existing ancestor; nullopt when unknown.
  [[nodiscard]] static std::optional<std::uint64_t> free_bytes(const std::filesystem::path& path);

  /// `gib` GiB in bytes (rounded up, so never 0 for a positive value).
  [[nodiscard]] static std::uint64_t gib_to_bytes(double gib) noexcept;

  /// The interval between two measurements of the disk for a `reserve_bytes` margin: an
  /// eighth of it, so a few writers between two measurements do not use it up, within
  /// [64 KiB, 64 MiB] (a statvfs costs about a microsecond; 64 MiB of output far more).
  [[nodiscard]] static std::uint64_t watch_interval(std::uint64_t reserve_bytes) noexcept;

  /// Takes `bytes` from the budget if they fit, and, when watched, leave the margin free on
  /// the disk; false (nothing taken) when they do not.
  [[nodiscard]] bool take(std::uint64_t bytes) {
    if (bytes > limit_ - used_) return false;
    if (watch_ && used_ + bytes >= next_check_ && !disk_has_room(bytes)) return false;
    used_ += bytes;
    return true;
  }
  /// Takes `bytes` about to be written to `file` of result folder `dir`, or throws
  /// OutputBudgetExceeded naming the budget, the file and the folder.
  void charge(std::uint64_t bytes, std::string_view file, const std::filesystem::path& dir) {
    if (!take(bytes)) fail(file, dir);
  }
  /// Throws the OutputBudgetExceeded of a write to `file` of `dir` that did not fit.
  [[noreturn]] void fail(std::string_view file, const std::filesystem::path& dir) const;

  [[nodiscard]] std::uint64_t limit() const noexcept { return limit_; }
  [[nodiscard]] std::uint64_t used() const noexcept { return used_; }
  [[nodiscard]] const std::string& source() const noexcept { return source_; }

 private:
  // Measures the disk: true when `bytes` more leave the margin free (or it cannot be told).
  [[nodiscard]] bool disk_has_room(std::uint64_t bytes);

  std::uint64_t limit_;
  std::uint64_t used_ = 0;
  std::string source_;
  std::optional<FreeSpaceWatch> watch_;
  std::uint64_t next_check_ = 0;                 ///< used_ at which the disk is measured again
  std::optional<std::uint64_t> low_free_bytes_;  ///< the measurement that refused a write
};

}  // namespace gpumux
