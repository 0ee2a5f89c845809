// Calibration of runtime.host_round_trip_ns: the cuda platform's own round trip between two
// ops of one stream when the second waits in the host queue (docs/decisions.md D33).
//
// Method: a CudaPlatform on GPU 0 (no preload, no warm-up, a 64 MiB arena), one stream with one
// op in flight, `ops` 4 KiB host-to-device copies submitted at once. Each copy after the first is
// issued only when its predecessor's completion reached the host, so start(k+1) - end(k), both
// GPU event times, is the round trip: completion seen by the poller, posted to the runtime
// thread, the op handed to its launcher and enqueued. The median over the ops is returned (the
// first tenth is dropped as warm-up).
//
// Thread rules: call on a thread that may own a RealRuntime (it runs one to completion).
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

#include "gpumux/model/device_profile.hpp"

namespace gpumux {

/// Returns {"median_ns", "p10_ns", "p90_ns", "ops"}. Throws CudaError, DeviceUnavailable.
[[nodiscard]] nlohmann::json measure_host_round_trip(const DeviceProfile& profile, std::size_t ops);

}  // namespace gpumux
