// Per-request variability of a dynamic model's service (D38): each request of the
// service draws its own work when it arrives, so its execution time is a distribution, not a
// constant. Two kinds:
//  - early_exit: the request leaves the network after one of several exit points (the last
//    layer it runs), with a probability per exit (an early-exit depth histogram);
//  - input_length: the request carries a sequence of N tokens (a token-length histogram);
//    the model runs at that length, padded up to a bucket (the way servers pad to shapes).
// A batch runs lock-step: the member with the most work decides (the deepest exit, the longest
// input, to which the others are padded), unless an early-exit model `compacts` (members that
// exit leave the batch, so later layers run at a smaller batch).
//
// Written in a service's "dynamic" key (an object, or the path of a JSON file holding one);
// traces/formats.md documents the keys and traces/dynamic/ holds files with their sources.
// Thread rules: values; draw() uses the caller's generator.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gpumux/api/enum_names.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

class Model;

enum class VariabilityKind : std::uint8_t { EarlyExit, InputLength };
inline constexpr EnumNames<VariabilityKind, 2> kVariabilityKindNames{
    {{VariabilityKind::EarlyExit, "early_exit"}, {VariabilityKind::InputLength, "input_length"}}};

struct RequestVariability {
  struct Exit {
    std::string after;            ///< the last layer a request leaving here runs (its name)
    std::uint32_t layer_end = 0;  ///< layers run: index of `after` + 1 (resolve() sets it)
    double weight = 0;
  };
  struct LengthBin {
    std::uint32_t tokens = 0;  ///< the bin's upper edge: a request here has this many tokens
    double weight = 0;
  };

  VariabilityKind kind = VariabilityKind::EarlyExit;
  std::string model;        ///< the zoo model the distribution was written for ("" = any)
  std::string source;       ///< where the distribution comes from (required: data has a source)
  std::vector<Exit> exits;  ///< early_exit, in layer order
  bool compacts = false;    ///< early_exit: exited members leave the batch
  std::vector<LengthBin> lengths;  ///< input_length, ascending edges
  std::uint32_t bucket = 1;        ///< input_length: lengths round up to a multiple of this
  std::uint32_t max_tokens = 0;    ///< input_length: longest input the model accepts
  /// Cumulative weights, normalised to end at 1 (one per exit or length bin).
  std::vector<double> cumulative;

  /// One request's work, drawn from the distribution with `rng`: an exit's layer_end, or a
  /// token count rounded up to the bucket (at most max_tokens). Two uses of the generator's
  /// output per draw are never made: one 64-bit value per request.
  [[nodiscard]] std::uint32_t draw(std::mt19937_64& rng) const;
  /// The work of a request that runs the whole model (the last exit; the longest input).
  [[nodiscard]] std::uint32_t full_work() const noexcept;
  /// Checks the distribution against the model it will run on and fills layer_end; throws
  /// std::invalid_argument with the problem ("exit 2: no layer 'x' in model 'resnet50'").
  void resolve(const Model& model);
};

}  // namespace gpumux
