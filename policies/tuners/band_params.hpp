// The parameters the Hyperband-family tuners (hyperband, bohb, sync_bohb) share, and their
// reading into BandOptions. Thread rules: the spec lists are immutable after start-up.
#pragma once

#include "tuners/band_tuner.hpp"

namespace gpumux::tuners {

/// eta, min_epochs, max_epochs, max_concurrent, rounds and concurrent_brackets, with the
/// defaults given (each plug-in states the sources of its own defaults).
[[nodiscard]] ParamSpecs band_param_specs(std::int64_t max_epochs, bool concurrent_brackets,
                                          std::int64_t max_concurrent);
/// Reads them and builds the Hyperband bracket list (hyperband_brackets).
[[nodiscard]] BandOptions read_band_options(const TunerArgs& args, const ParamSpecs& specs);

}  // namespace gpumux::tuners
