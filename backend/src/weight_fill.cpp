#include "gpumux/backend/weight_fill.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>
#include "gpumux/api/seed.hpp"

namespace gpumux {

namespace {

// Two random 16-bit halves -> two bf16 values of magnitude in [2^-9, 2^-5).
std::uint32_t dual(std::uint32_t r) noexcept {
  const std::uint32_t exps = ((118u + ((r >> 7) & 3u)) << 7) | ((118u + ((r >> 23) & 3u)) << 23);
  return (r & 0x807f807fu) | exps;
}

std::uint64_t pair_bits(std::uint64_t seed, std::uint64_t pair) noexcept {
  return splitmix64(seed ^ (pair * 0xd1b54a32d192ed03ull));
}

}  // namespace

std::uint32_t weight_word(std::uint64_t seed, std::uint64_t i) noexcept {
  const std::uint64_t r = pair_bits(seed, i >> 1);
  return dual(static_cast<std::uint32_t>((i & 1) != 0 ? r >> 32 : r));
}

void fill_weights(void* data, std::size_t bytes, std::uint64_t seed,
                  std::uint64_t first_word) noexcept {
  auto* out = static_cast<unsigned char*>(data);
  const std::size_t words = bytes / 4;
  std::size_t i = 0;
  if ((first_word & 1) != 0 && words > 0) {  // align to a pair
    const std::uint32_t w = weight_word(seed, first_word);
    std::memcpy(out, &w, 4);
    i = 1;
  }
  for (; i + 1 < words; i += 2) {
    const std::uint64_t r = pair_bits(seed, (first_word + i) >> 1);
    const std::uint32_t w[2] = {dual(static_cast<std::uint32_t>(r)),
                                dual(static_cast<std::uint32_t>(r >> 32))};
    std::memcpy(out + 4 * i, w, 8);
  }
  for (; i < words; ++i) {
    const std::uint32_t w = weight_word(seed, first_word + i);
    std::memcpy(out + 4 * i, &w, 4);
  }
  if (const std::size_t rest = bytes % 4; rest != 0) {
    const std::uint32_t w = weight_word(seed, first_word + words);
    std::memcpy(out + 4 * words, &w, rest);  // little-endian: the low bytes
  }
}

void fill_weights_parallel(void* data, std::size_t bytes, std::uint64_t seed, unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  constexpr std::size_t kMin = std::size_t{8} << 20;  // not worth a thread below this
  const std::size_t words = bytes / 4;
  threads =
      static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(1, bytes / kMin)));
  if (threads <= 1) {
    fill_weights(data, bytes, seed);
    return;
  }
  auto* out = static_cast<unsigned char*>(data);
  const std::size_t per = (words / threads + 1) & ~std::size_t{1};  // even: whole pairs
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    const std::size_t first = std::min(words, per * t);
    const std::size_t last = t + 1 == threads ? words : std::min(words, per * (t + 1));
    if (first >= last) break;
    pool.emplace_back([=] { fill_weights(out + 4 * first, 4 * (last - first), seed, first); });
  }
  for (auto& th : pool) th.join();
  if (const std::size_t rest = bytes % 4; rest != 0) {
    const std::uint32_t w = weight_word(seed, words);
    std::memcpy(out + 4 * words, &w, rest);
  }
}

std::uint64_t seed_for(const char* name) noexcept {
  std::uint64_t h = 1469598103934665603ull;
  for (const char* p = name; *p != '\0'; ++p) {
    h ^= static_cast<unsigned char>(*p);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace gpumux
