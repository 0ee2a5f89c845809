// ServingFacet::request_count / request_job (D14): a request counts from its arrival,
// before its hook, so a policy that batches work by "requests since I last looked" (Salus'
// candidate sessions) sees every request that arrived at one instant on the first hook.
#include <catch2/catch.hpp>

#include <vector>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/policy.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "test_support.hpp"

using namespace gpumux;

namespace {

struct Seen {
  std::uint64_t request = 0;
  JobId hook_job{};
  JobId request_job{};
  std::size_t count = 0;
};
std::vector<Seen> g_seen;  // test thread only
bool g_unknown_throws = false;

// Serves nothing: records what the Context says about each request when its hook arrives.
class RequestProbe final : public Policy {
 public:
  explicit RequestProbe(const PolicyArgs&) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "test_request_probe"; }
  void on_request_arrival(Context& ctx, JobId job, RequestId r) override {
    g_seen.push_back({raw(r), job, ctx.serving().request_job(r), ctx.serving().request_count()});
    try {
      (void)ctx.serving().request_job(RequestId{ctx.serving().request_count()});
    } catch (const PolicyError&) {
      g_unknown_throws = true;
    }
  }
};
GPUMUX_REGISTER_POLICY("test_request_probe", RequestProbe, "test: records request ids");

nlohmann::json service(const std::string& name, std::vector<double> requests) {
  return {{"name", name}, {"kind", "inference"}, {"model", "resnet50"},
          {"batch", 1},   {"arrival_s", 0.0},    {"requests", std::move(requests)}};
}

}  // namespace

TEST_CASE("Context counts a request from its arrival and names its job", "[engine]") {
  g_seen.clear();
  auto doc = test::make_config(
      "test_request_probe",
      {{"jobs", {service("a", {1.0, 2.0}), service("b", {1.0}), service("c", {1.5})}}});
  doc["horizon_s"] = 3.0;
  (void)test::run_config(doc);
  REQUIRE(g_seen.size() == 4);
  for (const Seen& s : g_seen) CHECK(s.request_job == s.hook_job);
  // Two requests arrive at t = 1: both count on the first of their hooks.
  CHECK(g_seen[0].count == 2);
  CHECK(g_seen[1].count == 2);
  CHECK(g_seen[2].count == 3);
  CHECK(g_seen[3].count == 4);
  for (std::size_t i = 0; i < g_seen.size(); ++i) CHECK(g_seen[i].request == i);
  CHECK(g_unknown_throws);
}
