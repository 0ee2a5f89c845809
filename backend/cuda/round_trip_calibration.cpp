#include "gpumux/backend/cuda/round_trip_calibration.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include "gpumux/api/errors.hpp"
#include "gpumux/backend/cuda/cuda_platform.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/model/device_profile.hpp"

namespace gpumux {

namespace {

class Records final : public DeviceObserver {
 public:
  void on_op_started(OpId /*op*/, TimeNs /*when_ns*/) override {}
  void on_op_finished(const OpRecord& r) override { ended[raw(r.op)] = r; }
  [[nodiscard]] bool is_complete(OpId op) const noexcept override {
    const auto it = ended.find(raw(op));
    return it != ended.end() && it->second.status == OpStatus::Ok;
  }
  std::map<std::uint64_t, OpRecord> ended;
};

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::ptrdiff_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[static_cast<std::size_t>(k)];
}

}  // namespace

nlohmann::json measure_host_round_trip(const DeviceProfile& profile, std::size_t ops) {
  PlatformSetup setup;
  setup.profiles.push_back(profile);
  setup.params = {{"preload", "none"}, {"warmup", false}, {"arena_gib", 0.0625}};
  CudaPlatform platform(setup);
  CudaDevice& dev = *platform.gpu(0);
  Records rec;
  dev.set_observer(&rec);
  dev.add_context(ContextId{0}, {});
  dev.add_stream(StreamId{0}, ContextId{0}, StreamOptions{0, 1});
  for (std::size_t i = 0; i < ops; ++i) {
    OpSpec op;
    op.id = OpId{i};
    op.device = DeviceId{0};
    op.stream = StreamId{0};
    op.kind = OpKind::CopyH2D;
    op.purpose = OpPurpose::MigrateState;
    op.bytes = 4096;
    op.weight_offset = 0;
    dev.submit(op);
  }
  platform.real_runtime().run();
  if (rec.ended.size() != ops) throw CudaError("round-trip calibration: an op did not finish");
  std::vector<double> gaps;
  for (std::size_t i = std::max<std::size_t>(ops / 10, 1); i < ops; ++i) {
    gaps.push_back(
        static_cast<double>(rec.ended.at(i).started_ns - rec.ended.at(i - 1).finished_ns));
  }
  return {{"median_ns", percentile(gaps, 0.5)},
          {"p10_ns", percentile(gaps, 0.1)},
          {"p90_ns", percentile(gaps, 0.9)},
          {"ops", ops}};
}

}  // namespace gpumux
