// Platform "sim": registered by name, one device per profile, strict parameters.
#include <catch2/catch.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/platform.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/sim/sim_platform.hpp"

using namespace gpumux;

namespace {

PlatformSetup two_devices() {
  PlatformSetup setup;
  DeviceProfile gpu;
  gpu.name = "test-gpu";
  gpu.h2d_gbps = gpu.d2h_gbps = 12.0;
  DeviceProfile cpu;
  cpu.name = "test-cpu";
  cpu.kind = DeviceKind::Cpu;
  setup.profiles = {gpu, cpu};
  return setup;
}

}  // namespace

TEST_CASE("platform sim is registered and builds one device per profile", "[sim][platform]") {
  // Profiles [test-gpu, test-cpu] -> devices 0 and 1, described as "sim (test-gpu, test-cpu)".
  REQUIRE(PlatformRegistry::instance().contains("sim"));
  auto platform = PlatformRegistry::instance().create("sim", two_devices());
  CHECK(platform->virtual_time());
  CHECK(platform->describe() == "sim (test-gpu, test-cpu)");
  const auto devices = platform->devices();
  REQUIRE(devices.size() == 2);
  CHECK(devices[0]->id() == DeviceId{0});
  CHECK(devices[1]->id() == DeviceId{1});
  CHECK(devices[1]->profile().kind == DeviceKind::Cpu);
  CHECK(platform->runtime().now() == 0);

  // The runtime drives the devices: a 1 ms host op on device 1.
  struct Obs final : DeviceObserver {
    void on_op_started(OpId, TimeNs) override {}
    void on_op_finished(const OpRecord& r) override { end = r.finished_ns; }
    [[nodiscard]] bool is_complete(OpId) const noexcept override { return true; }
    TimeNs end = -1;
  } obs;
  Device& cpu = *devices[1];
  cpu.set_observer(&obs);
  cpu.add_context(ContextId{0}, {});
  cpu.add_stream(StreamId{0}, ContextId{0}, {});
  OpSpec op;
  op.device = DeviceId{1};
  op.kind = OpKind::Host;
  op.solo_ns = ms_to_ns(1);
  cpu.submit(op);
  platform->runtime().run();
  CHECK(obs.end == 1'000'000);
}

TEST_CASE("platform sim rejects parameters", "[sim][platform]") {
  PlatformSetup setup = two_devices();
  setup.params = nlohmann::json{{"speed", 2}};
  CHECK_THROWS_AS(SimPlatform(setup), ConfigError);
  setup.params = nlohmann::json::object();
  CHECK_NOTHROW(SimPlatform(setup));
}
