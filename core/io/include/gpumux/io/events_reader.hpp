// Reading a run's events.jsonl back into an EventLog (gpumux/api/events.hpp).
#pragma once

#include <string>

#include "gpumux/api/events.hpp"

namespace gpumux {

/// Parses events.jsonl back (for offline summaries of real runs), each line decoded by its
/// kind's field table (event_fields.hpp): an unknown kind or key, a missing key, a value of the
/// wrong type or an unknown enum name throws TraceError naming the file and the line.
[[nodiscard]] EventLog read_events_jsonl(const std::string& file);

}  // namespace gpumux
