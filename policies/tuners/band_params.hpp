// The parameters the Hyperband-family tuners (hyperband, bohb, sync_bohb) share, their
// reading into BandOptions, and BandPlugin: the plug-in class of a family member, which
// differs from the others only in its name and the defaults of BandDefaults.
// Thread rules: the spec lists are immutable after start-up; a tuner belongs to one thread.
#pragma once

#include <cstdint>
#include <string_view>

#include "tuners/band_tuner.hpp"

namespace gpumux::tuners {

/// eta, min_epochs, max_epochs, max_concurrent, rounds and concurrent_brackets, with the
/// defaults given (each plug-in states the sources of its own defaults).
[[nodiscard]] ParamSpecs band_param_specs(std::int64_t max_epochs, bool concurrent_brackets,
                                          std::int64_t max_concurrent);
/// Reads them and builds the Hyperband bracket list (hyperband_brackets).
[[nodiscard]] BandOptions read_band_options(const TunerArgs& args, const ParamSpecs& specs);

/// What one Hyperband-family plug-in sets: its registered name and band_param_specs'
/// defaults.
struct BandDefaults {
  const char* name;
  std::int64_t max_epochs;
  bool concurrent_brackets;
  std::int64_t max_concurrent;
};

/// The plug-in whose name and defaults are D (a namespace-scope constant of its file).
template <const BandDefaults& D>
class BandPlugin final : public BandTuner {
 public:
  explicit BandPlugin(const TunerArgs& args)
      : BandTuner(args, read_band_options(args, param_specs())) {}
  [[nodiscard]] std::string_view name() const noexcept override { return D.name; }

  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs =
        band_param_specs(D.max_epochs, D.concurrent_brackets, D.max_concurrent);
    return specs;
  }
};

}  // namespace gpumux::tuners
