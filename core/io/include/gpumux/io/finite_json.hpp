// JSON has no NaN or infinity. nlohmann::json::dump writes such a double as null, silently;
// null_non_finite makes that explicit for the documents gpumux writes (summary.json): it
// replaces each non-finite number by null and says where it did (docs/outputs.md).
//
// Thread rules: a pure function of its argument.
#pragma once

#include <nlohmann/json.hpp>

namespace gpumux {

/// Replaces every NaN or infinite number in `doc` (at any depth) by null and returns an object
/// {"<JSON pointer>": "nan" | "inf" | "-inf"} naming each one replaced; empty when every
/// number was finite.
[[nodiscard]] nlohmann::json null_non_finite(nlohmann::json& doc);

}  // namespace gpumux
