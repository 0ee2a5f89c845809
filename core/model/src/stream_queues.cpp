// StreamQueues, the parts compiled once: the ring's growth and the stream checks with their error
// messages (cold paths, kept out of the devices' inlined hot paths).
#include "gpumux/model/stream_queues.hpp"
#include "gpumux/model/device_profile.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpumux {

void IndexRing::grow() {
  std::vector<std::uint32_t> bigger(std::max<std::size_t>(8, buf_.size() * 2));
  for (std::size_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
  buf_.swap(bigger);
  head_ = 0;
}

void StreamDirectory::check_new_stream(StreamId stream, ContextId ctx, bool context_known,
                                       const StreamOptions& options) const {
  const auto where = [&] { return owner_ + ": stream " + std::to_string(raw(stream)); };
  if (index_.count(stream) != 0) throw std::invalid_argument(where() + " added twice");
  if (!context_known) {
    throw std::invalid_argument(where() + ": unknown context " + std::to_string(raw(ctx)));
  }
  if (options.max_in_flight == 0) throw std::invalid_argument(where() + ": max_in_flight is 0");
}

void StreamDirectory::reject_stream(StreamId stream) const {
  throw std::invalid_argument(owner_ + ": unknown stream " + std::to_string(raw(stream)));
}

void StreamDirectory::reject_submit(const OpSpec& op, DeviceId device, const DeviceProfile& profile,
                                    const DeviceObserver* observer) const {
  const auto where = [&] { return owner_ + ": op " + std::to_string(raw(op.id)); };
  if (observer == nullptr) throw std::logic_error(where() + ": no observer set");
  if (op.device != device) {
    throw std::invalid_argument(where() + ": submitted to the wrong device");
  }
  (void)index(op.stream);
  if (op.solo_ns < 0 || op.setup_ns < 0) throw std::invalid_argument(where() + ": negative time");
  if (op.kind == OpKind::Compute) {
    throw std::invalid_argument(where() + ": demand " + std::to_string(op.demand) +
                                " outside (0, 1]");
  }
  // A copy, with the link modelled.
  if (profile.kind != DeviceKind::Gpu) {
    throw std::logic_error(where() + ": a CPU device has no copy engine");
  }
  throw std::logic_error(where() + ": the device profile has no bandwidth for it");
}

}  // namespace gpumux
