// SHA-256 (FIPS 180-4) of bytes, as 64 lowercase hex digits. Used to fingerprint a run's
// resolved inputs so that a sweep can tell a stale result from a complete one; not used for
// security. Pure function, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace gpumux {

[[nodiscard]] std::string sha256_hex(std::string_view bytes);

}  // namespace gpumux
