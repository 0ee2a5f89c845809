// SHA-256 (FIPS 180-4) of bytes, as 64 lowercase hex digits. Used to fingerprint a run's
// resolved inputs so that a sweep can tell a stale result from a complete one, and an imported
// trace's data (trace_sidecar.hpp); not used for security.
//
// Thread rules: sha256_hex() is a pure function, safe from any number of threads at once. A
// Sha256 object holds the state of one digest: one thread at a time per object (distinct
// objects in distinct threads are fine).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpumux {

[[nodiscard]] std::string sha256_hex(std::string_view bytes);

/// The same digest of bytes given in pieces (a file as it streams): update() any number of
/// times, then hex() once.
class Sha256 {
 public:
  void update(std::string_view bytes);
  /// The digest of everything given; call once, after the last update().
  [[nodiscard]] std::string hex();

 private:
  std::array<std::uint32_t, 8> h_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<unsigned char, 64> block_{};
  std::size_t block_used_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace gpumux
