// The random streams of a run. Every random draw of a run comes from the config's one `seed`
// through derive_seed(seed, stream, index): each consumer has its own stream, and within it
// each member (a service, a tuning job) its own index, so adding a service or a tuning job
// never changes the draws of another, and no two consumers share a sequence.
//
// | stream             | who draws                                  | index                      |
// |--------------------|--------------------------------------------|----------------------------|
// | Arrivals           | a service's arrival generator (config)     | its place in services      |
// | RequestVariability | a dynamic service's per-request work       | its job index              |
// | Tuner              | a tuning job's tuner (sampling, PBT)       | its place in tuning        |
// | LearningCurve      | a tuning job's synthetic learning curves   | its place in tuning        |
// | Policy             | Context::rng, for randomised policies      | 0                          |
//
// Not from the run seed: weights the real backends stage are a function of the model's name
// (backend/src/weight_fill.cpp), so every run holds the same bytes; `gpumux trace import`
// spreads per-minute counts with its own --seed.
#pragma once

#include <cstdint>

namespace gpumux {

/// SplitMix64's output function (Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014; constants of Vigna's splitmix64.c): a bijection of 64-bit words
/// whose outputs for nearby inputs are uncorrelated.
[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// One SplitMix64 step: the output for state `x` (mix64 of x plus the golden-ratio gamma).
[[nodiscard]] constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  return mix64(x + 0x9e3779b97f4a7c15ULL);
}

/// The consumers of a run's randomness (see the table above). Values are part of the results:
/// never renumber one.
enum class SeedStream : std::uint64_t {
  Arrivals = 0,
  RequestVariability = 1,
  Tuner = 2,
  LearningCurve = 3,
  Policy = 4
};

/// The seed of member `index` of `stream` in a run seeded `seed`:
/// splitmix64(splitmix64(seed ^ stream x C) ^ (index + 1)), C an odd 64-bit constant (Steele
/// et al.'s second gamma). Arrivals (stream 0) keeps the derivation gpumux has always used.
[[nodiscard]] constexpr std::uint64_t derive_seed(std::uint64_t seed, SeedStream stream,
                                                  std::uint64_t index) noexcept {
  const std::uint64_t salt = static_cast<std::uint64_t>(stream) * 0xd1b54a32d192ed03ULL;
  return splitmix64(splitmix64(seed ^ salt) ^ (index + 1));
}

}  // namespace gpumux
