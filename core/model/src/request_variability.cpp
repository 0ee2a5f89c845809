// Request variability (gpumux/model/request_variability.hpp): drawing, and the check
// against the model a service runs.
#include "gpumux/model/request_variability.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gpumux/api/errors.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

std::uint32_t RequestVariability::draw(std::mt19937_64& rng) const {
  // 53 random bits as a double in [0, 1): the same value on every platform (the standard
  // distributions are not specified bit for bit).
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
  const auto i = static_cast<std::size_t>(std::min<std::ptrdiff_t>(
      it - cumulative.begin(), static_cast<std::ptrdiff_t>(cumulative.size()) - 1));
  if (kind == VariabilityKind::EarlyExit) return exits[i].layer_end;
  const std::uint32_t t = lengths[i].tokens;
  return std::min(max_tokens, (t + bucket - 1) / bucket * bucket);
}

std::uint32_t RequestVariability::full_work() const noexcept {
  if (kind == VariabilityKind::EarlyExit) return exits.empty() ? 0 : exits.back().layer_end;
  if (lengths.empty()) return 0;
  return std::min(max_tokens, (lengths.back().tokens + bucket - 1) / bucket * bucket);
}

void RequestVariability::resolve(const Model& m) {
  if (!model.empty() && model != m.name()) {
    throw std::invalid_argument("the distribution was written for model '" + model +
                                "', the service runs '" + m.name() + "'");
  }
  if (kind == VariabilityKind::InputLength) {
    if (m.sequence_length() == 0) {
      throw std::invalid_argument("input_length needs a sequence model; '" + m.name() +
                                  "' has no sequence_length");
    }
    return;
  }
  std::uint32_t previous = 0;
  for (std::size_t i = 0; i < exits.size(); ++i) {
    Exit& x = exits[i];
    std::uint32_t found = 0;
    for (std::uint32_t l = 0; l < m.layer_count(); ++l) {
      if (m.layer(l).name == x.after) found = l + 1;
    }
    if (found == 0) {
      throw std::invalid_argument("exits[" + std::to_string(i) + "].after: no layer '" + x.after +
                                  "' in model '" + m.name() + "'");
    }
    if (found <= previous) {
      throw std::invalid_argument("exits[" + std::to_string(i) +
                                  "].after: exits must be in layer order");
    }
    previous = found;
    x.layer_end = found;
  }
  if (previous != m.layer_count()) {
    throw std::invalid_argument("the last exit must be the model's last layer ('" +
                                m.layer(m.layer_count() - 1).name + "')");
  }
}

}  // namespace gpumux
