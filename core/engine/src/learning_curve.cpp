// Parametric (pow3) learning curves; the model and its sources are in learning_curve.hpp.
#include "gpumux/engine/learning_curve.hpp"

#include <cmath>
#include <random>

#include "gpumux/api/errors.hpp"

namespace gpumux {
namespace {

// FNV-1a over the config's canonical JSON text (nlohmann::json sorts object keys) and a
// seed: a stable key, independent of the standard library's std::hash.
std::uint64_t fnv1a(const std::string& text, std::uint64_t seed) {
  constexpr std::uint64_t kOffset = 14695981039346656037ULL;  // FNV-1a 64-bit offset basis
  constexpr std::uint64_t kPrime = 1099511628211ULL;          // FNV-1a 64-bit prime
  std::uint64_t h = kOffset ^ seed;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= kPrime;
  }
  return h;
}

}  // namespace

LearningCurve::LearningCurve(SearchSpace space, std::uint64_t seed, LearningCurveParams p)
    : space_(std::move(space)), seed_(seed), p_(p) {
  if (!(p_.width > 0.0) || !(p_.alpha_lo > 0.0) || p_.alpha_hi < p_.alpha_lo || p_.noise < 0.0) {
    throw Error("learning curve: width, alpha and noise must be positive");
  }
  std::mt19937_64 rng(seed_);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::size_t i = 0; i < space_.dims().size(); ++i) optimum_.push_back(u(rng));
}

std::uint64_t LearningCurve::key(const nlohmann::json& config) const {
  return fnv1a(config.dump(), seed_);
}

double LearningCurve::asymptote(const nlohmann::json& config) const {
  const std::vector<double> x = space_.unit(config);
  double sq = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) sq += (x[i] - optimum_[i]) * (x[i] - optimum_[i]);
  const double mean_sq = x.empty() ? 0.0 : sq / static_cast<double>(x.size());
  const double q = std::exp(-mean_sq / (2.0 * p_.width * p_.width));
  return p_.y_start + (p_.y_best - p_.y_start) * q;
}

double LearningCurve::metric(const nlohmann::json& config, int epoch) const {
  if (epoch < 1) throw Error("learning curve: epoch must be >= 1");
  const std::uint64_t k = key(config);
  std::mt19937_64 shape(k);
  const double alpha = std::uniform_real_distribution<double>(p_.alpha_lo, p_.alpha_hi)(shape);
  const double c = asymptote(config);
  const double clean = c - (c - p_.y_start) * std::pow(static_cast<double>(epoch), -alpha);
  double out = clean;
  if (p_.noise != 0.0) {
    // 2^64 / golden ratio (the splitmix64 increment) spreads the epochs over the key space.
    std::mt19937_64 jitter(k ^ (0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(epoch)));
    out = clean + std::normal_distribution<double>(0.0, p_.noise)(jitter);
  }
  // The config's bounds (tuning_config.cpp, SearchSpace::from_json) keep this finite; a NaN
  // here would reach a tuner's ranking and the trial_epoch event.
  if (!std::isfinite(out)) {
    throw Error("learning curve: the metric of config " + config.dump() + " at epoch " +
                std::to_string(epoch) + " is not a finite number");
  }
  return out;
}

}  // namespace gpumux
