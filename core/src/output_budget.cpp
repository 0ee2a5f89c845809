// The output budget of a run (output_budget.hpp).
#include "gpumux/output_budget.hpp"

#include <sys/statvfs.h>

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
  return OutputBudget(limit, "the default max_output_gib " + gib_text(limit) + ": " +
                                 std::to_string(static_cast<int>(100 * (1 - kFreeMarginShare))) +
                                 "% of the " + gib_text(*free) + " free at the start under " +
                                 dir.parent_path().string());
}

void OutputBudget::fail(std::string_view file, const fs::path& dir) const {
  throw OutputBudgetExceeded(
      "output budget reached: writing " + std::string(file) + " of " + dir.string() +
      " would pass " + source_ + " (" + std::to_string(used_) + " of " + std::to_string(limit_) +
      " bytes written); the run was stopped before it filled the disk and nothing was written "
      "under that name. Raise max_output_gib, shorten the run (horizon_s), or write less "
      "(\"events\": false, \"trace\": false, \"compress\": \"zstd\")");
}

}  // namespace gpumux
