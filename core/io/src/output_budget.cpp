// The output budget of a run (output_budget.hpp).
#include "gpumux/io/output_budget.hpp"

#include <sys/statvfs.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <system_error>

namespace gpumux {

namespace fs = std::filesystem;

namespace {

// "12 GiB", "95.3 GiB", "0.0001 GiB": four significant digits, so the value a user gave
// (rounded up to whole bytes) reads as given.
std::string gib_text(std::uint64_t bytes) {
  const double gib = static_cast<double>(bytes) / static_cast<double>(std::uint64_t{1} << 30);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g GiB", gib);
  return buf;
}

}  // namespace

OutputBudget::OutputBudget(std::uint64_t limit_bytes, std::string source, FreeSpaceWatch watch)
    : limit_(limit_bytes), source_(std::move(source)), watch_(std::move(watch)) {
  watch_->interval_bytes = std::max<std::uint64_t>(watch_->interval_bytes, 1);
  next_check_ = watch_->interval_bytes;
}

std::uint64_t OutputBudget::watch_interval(std::uint64_t reserve_bytes) noexcept {
  constexpr std::uint64_t kMin = std::uint64_t{64} << 10;
  constexpr std::uint64_t kMax = std::uint64_t{64} << 20;
  return std::clamp<std::uint64_t>(reserve_bytes / 8, kMin, kMax);
}

bool OutputBudget::disk_has_room(std::uint64_t bytes) {
  const std::optional<std::uint64_t> free = watch_->free_bytes();
  if (!free || (*free >= bytes && *free - bytes >= watch_->reserve_bytes)) {
    next_check_ = used_ + bytes + watch_->interval_bytes;
    return true;
  }
  low_free_bytes_ = free;  // and measured again at the next write
  return false;
}

std::uint64_t OutputBudget::default_limit(std::uint64_t free_bytes) noexcept {
  const auto margin =
      static_cast<std::uint64_t>(static_cast<double>(free_bytes) * kFreeMarginShare);
  return free_bytes - std::min(margin, free_bytes);
}

std::optional<std::uint64_t> OutputBudget::free_bytes(const fs::path& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) return std::nullopt;
  // The folder may not exist yet: its nearest existing ancestor is on the same file system
  // (or the folder will be created on that one).
  while (!fs::exists(p, ec) && p.has_relative_path()) p = p.parent_path();
  struct statvfs st {};
  if (::statvfs(p.c_str(), &st) != 0) return std::nullopt;
  const auto unit = static_cast<std::uint64_t>(st.f_frsize != 0 ? st.f_frsize : st.f_bsize);
  const auto blocks = static_cast<std::uint64_t>(st.f_bavail);
  if (unit != 0 && blocks > std::numeric_limits<std::uint64_t>::max() / unit) {
    return std::numeric_limits<std::uint64_t>::max();
  }
  return blocks * unit;
}

std::uint64_t OutputBudget::gib_to_bytes(double gib) noexcept {
  const double bytes = std::ceil(gib * static_cast<double>(std::uint64_t{1} << 30));
  if (!(bytes > 0)) return 0;
  if (bytes >= 18446744073709551615.0) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(bytes);
}

OutputBudget OutputBudget::for_results(const fs::path& dir,
                                       std::optional<std::uint64_t> max_output_bytes) {
  if (max_output_bytes) {
    return OutputBudget(*max_output_bytes, "max_output_gib " + gib_text(*max_output_bytes));
  }
  const std::optional<std::uint64_t> free = free_bytes(dir);
  if (!free) {
    return OutputBudget(
        std::numeric_limits<std::uint64_t>::max(),
        "no limit: the free space under " + dir.string() + " could not be measured");
  }
  const std::uint64_t limit = default_limit(*free);
  const fs::path where = dir.parent_path();
  FreeSpaceWatch watch{[where] { return free_bytes(where); }, *free - limit,
                       watch_interval(*free - limit), where.string()};
  return OutputBudget(limit,
                      "the default max_output_gib " + gib_text(limit) + ": " +
                          std::to_string(static_cast<int>(100 * (1 - kFreeMarginShare))) +
                          "% of the " + gib_text(*free) + " free at the start under " +
                          where.string(),
                      std::move(watch));
}

void OutputBudget::fail(std::string_view file, const fs::path& dir) const {
  if (low_free_bytes_) {
    throw OutputBudgetExceeded(
        "output budget reached: writing " + std::string(file) + " of " + dir.string() +
        " would leave less than the " + gib_text(watch_->reserve_bytes) + " kept free under " +
        watch_->where + " (" + gib_text(*low_free_bytes_) +
        " free now: other writers share the disk); the run was stopped before it filled the "
        "disk and nothing was written under that name. Free space, or write less "
        "(\"events\": false, \"trace\": false, \"compress\": \"zstd\")");
  }
  throw OutputBudgetExceeded(
      "output budget reached: writing " + std::string(file) + " of " + dir.string() +
      " would pass " + source_ + " (" + std::to_string(used_) + " of " + std::to_string(limit_) +
      " bytes written); the run was stopped before it filled the disk and nothing was written "
      "under that name. Raise max_output_gib, shorten the run (horizon_s), or write less "
      "(\"events\": false, \"trace\": false, \"compress\": \"zstd\")");
}

}  // namespace gpumux
