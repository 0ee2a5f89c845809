// Model files (traces/models/<name>.json, schema in traces/formats.md): strict parsing, and
// the catalog of a folder of them.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpumux/model/model.hpp"

namespace gpumux {

/// Parses one model file; throws TraceError naming the file and key.
[[nodiscard]] Model load_model(const std::filesystem::path& file);
/// The same from the text of a model file; `file` names it in messages.
[[nodiscard]] Model parse_model_text(std::string_view text, const std::string& file);

/// All models of a directory, by name. Loaded on demand and cached.
class ModelCatalog final : public ModelSource {
 public:
  explicit ModelCatalog(std::filesystem::path directory);
  /// Throws ConfigError-style TraceError listing the valid names for an unknown model.
  [[nodiscard]] const Model& at(std::string_view name) const override;
  [[nodiscard]] bool contains(std::string_view name) const override;
  /// directory()/<name>.json
  [[nodiscard]] std::string origin(std::string_view name) const override;
  [[nodiscard]] std::vector<std::string> names() const;  ///< sorted
  [[nodiscard]] const std::filesystem::path& directory() const noexcept { return directory_; }

 private:
  std::filesystem::path directory_;
  mutable std::map<std::string, Model, std::less<>> cache_;
};

}  // namespace gpumux
