// A sequence model at another input length (gpumux/model/model.hpp, at_sequence_length): how an
// input-length-dependent request's work is costed (D38).
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "gpumux/model/model.hpp"

namespace gpumux {

namespace {

double gemm_macs(const std::vector<GemmShape>& gemms) {
  double macs = 0;
  for (const GemmShape& g : gemms) {
    macs += static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k) *
            static_cast<double>(g.count);
  }
  return macs;
}

std::uint64_t scaled(std::uint64_t value, double ratio) {
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(value) * ratio));
}

/// Whether `layer` turns the per-token sequence into per-sequence values (a pooler or a
/// classifier head on one token): a linear layer with a GEMM whose rows are not one per token.
bool reduces_sequence(const Layer& layer, std::uint64_t tokens) {
  if (layer.kind != LayerKind::Linear) return false;
  for (const GemmShape& g : layer.gemms) {
    if (g.m != tokens) return true;
  }
  return false;
}

}  // namespace

Model at_sequence_length(const Model& base, std::uint32_t tokens) {
  const std::uint64_t old_t = base.sequence_length();
  if (old_t == 0) {
    throw std::invalid_argument("model '" + base.name() + "' has no sequence length");
  }
  if (tokens == 0) throw std::invalid_argument("a sequence of 0 tokens");
  const double r = static_cast<double>(tokens) / static_cast<double>(old_t);
  std::vector<Layer> layers = base.layers();
  for (Layer& l : layers) {
    if (reduces_sequence(l, old_t)) break;  // this layer and the rest see one vector
    const double old_macs = gemm_macs(l.gemms);
    const double extra = l.fwd_flops - 2 * old_macs;  // elementwise work beside the GEMMs
    for (GemmShape& g : l.gemms) {
      for (std::uint64_t* dim : {&g.m, &g.n, &g.k, &g.count}) {
        if (*dim == old_t) *dim = tokens;
      }
    }
    const double new_fwd =
        2 * gemm_macs(l.gemms) + extra * (l.kind == LayerKind::Attention ? r * r : r);
    l.bwd_flops = l.fwd_flops > 0 ? l.bwd_flops * (new_fwd / l.fwd_flops) : l.bwd_flops * r;
    l.fwd_flops = new_fwd;
    l.input_bytes = scaled(l.input_bytes, r);
    l.output_bytes = scaled(l.output_bytes, r);
  }
  std::map<std::string, Grouping, std::less<>> groupings;
  for (const std::string& g : base.grouping_names()) groupings[g] = base.grouping(g);
  return Model(base.name() + "@seq" + std::to_string(tokens),
               base.display_name() + " at " + std::to_string(tokens) + " tokens", std::move(layers),
               std::move(groupings), tokens);
}

}  // namespace gpumux
