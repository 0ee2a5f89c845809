// Strong identifiers: an enum class per kind so a job id can never be passed as a stream id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace gpumux {

enum class JobId : std::uint32_t {};
enum class RequestId : std::uint64_t {};  ///< global index of an inference request
enum class OpId : std::uint64_t {};
enum class DeviceId : std::uint16_t {};
/// The most devices a run may have: every DeviceId value, 0 to 65535.
inline constexpr std::size_t kMaxDevices = std::size_t{1} << 16;
enum class ContextId : std::uint32_t {
};  ///< an execution context (a CUDA context / worker process)
enum class StreamId : std::uint32_t {};
enum class TimerId : std::uint64_t {};

template <class Id>
constexpr auto raw(Id id) noexcept {
  return static_cast<std::underlying_type_t<Id>>(id);
}

/// Index into the engine's vectors (ids are dense, starting at 0).
template <class Id>
constexpr std::size_t index_of(Id id) noexcept {
  return static_cast<std::size_t>(raw(id));
}

}  // namespace gpumux
