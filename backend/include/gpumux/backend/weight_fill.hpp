// Deterministic pseudo-random contents for host weight stores and scratch buffers, shared by
// the emulated and CUDA backends so every byte that crosses a (real or emulated) link is
// reproducible and checkable.
//
// Every aligned 32-bit word is two bfloat16 values (hi, lo) with a random sign, a random 7-bit
// mantissa and an exponent in [2^-9, 2^-6], i.e. magnitudes in [0.002, 0.031]. Read as fp32
// the word is (about) the hi value; read as two bf16 they are two finite numbers; read as two
// fp16 they are finite too (magnitudes about 0.5 to 2). So one buffer serves fp32, bf16 and
// fp16 GEMMs without NaNs or infinities. Built from integer operations only, so the CUDA fill
// kernel (backend/cuda/kernels.cu) produces the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpumux {

/// Fills `bytes` bytes at `data` (any alignment; a trailing partial word gets its low bytes).
/// Depends only on (seed, byte index / 4): fill(p, n, s) then fill(p + 4k, n - 4k, s, k)
/// produces the same bytes as one call. Thread-compatible.
void fill_weights(void* data, std::size_t bytes, std::uint64_t seed,
                  std::uint64_t first_word = 0) noexcept;

/// fill_weights() split over `threads` threads (0: hardware concurrency); same bytes.
void fill_weights_parallel(void* data, std::size_t bytes, std::uint64_t seed, unsigned threads = 0);

/// The word fill_weights() writes at word index `i` (for tests).
[[nodiscard]] std::uint32_t weight_word(std::uint64_t seed, std::uint64_t i) noexcept;

/// A stable seed for a model name (FNV-1a).
[[nodiscard]] std::uint64_t seed_for(const char* name) noexcept;

}  // namespace gpumux
