// Why a job's run ended, as the engine decides it (instead of comparing label strings).
// The JobEnd event's label is written from it (plus a reason for rejections), so the log is
// unchanged. Another change adds a typed end reason to events.hpp; the two are to be unified.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpumux {

enum class EndReason : std::uint8_t {
  Finished,    ///< every unit (iteration or request) done
  Rejected,    ///< the policy rejected it (label carries the policy's reason)
  Horizon,     ///< the run's horizon cut it off
  Unfinished,  ///< the run ended with no work left that could run it
};

/// The JobEnd label of each reason ("finished", "rejected", "horizon",
/// "unfinished: no work left to run").
[[nodiscard]] constexpr std::string_view to_string(EndReason r) noexcept {
  switch (r) {
    case EndReason::Finished:
      return "finished";
    case EndReason::Rejected:
      return "rejected";
    case EndReason::Horizon:
      return "horizon";
    case EndReason::Unfinished:
      return "unfinished: no work left to run";
  }
  return "?";
}

}  // namespace gpumux
