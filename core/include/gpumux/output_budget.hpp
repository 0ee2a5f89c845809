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
// file system when the run starts less a margin (default_limit).
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
#include <optional>
#include <string>
#include <string_view>

#include "gpumux/errors.hpp"

namespace gpumux {

/// A run stopped because its outputs reached the budget (a runtime failure: exit 1).
class OutputBudgetExceeded final : public Error {
 public:
  using Error::Error;
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

  /// Takes `bytes` from the budget if they fit; false (nothing taken) when they do not.
  [[nodiscard]] bool take(std::uint64_t bytes) noexcept {
    if (bytes > limit_ - used_) return false;
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
  std::uint64_t limit_;
  std::uint64_t used_ = 0;
  std::string source_;
};

}  // namespace gpumux
