// Put first on the include path of core/api's translation units (core/CMakeLists.txt): the
// layer of contracts must compile without the JSON library, so an include of it fails here.
#error "core/api must not include nlohmann/json.hpp: JSON belongs to core/io (docs/engine.md)"
