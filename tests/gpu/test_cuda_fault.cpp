// A GPU fault ends a run, never hangs it (issue 16; label gpu: needs a GPU). The cuda
// platform's launcher of op 40 enqueues a kernel that writes through an address nothing owns
// (platform_params.fault_at_op): the context keeps an illegal-address error, CUDA would run no
// more host functions, and the completion poller or the next CUDA call must surface it. The
// run must end within the shell's timeout with exit 1, say which op and which error, and leave
// no result folder (results are renamed into place only at the end).
#include <catch2/catch.hpp>

#include "../cli/cli_harness.hpp"
#include "gpu_test_support.hpp"

using namespace cli_test;

TEST_CASE("cuda: a GPU fault ends the run with exit 1, naming the op, with no result folder",
          "[gpu]") {
  gpu_test::require_gpu();
  const fs::path out = scratch() / "faulted";
  // timeout(1): a hang fails the test (exit 124) instead of stalling the suite.
  const Outcome r = gpumux_shell("timeout 120 '" + std::string(GPUMUX_BINARY) +
                                 "' run -q experiments/configs/default.json --set platform=cuda "
                                 "--set devices.0.profile=h100-sxm --set policy.name=pipeswitch "
                                 "--set horizon_s=5 --set platform_params.fault_at_op=40 --out '" +
                                 out.string() + "'");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Matchers::Contains("op "));
  CHECK_THAT(r.output, Catch::Matchers::Contains("illegal memory access"));
  CHECK_FALSE(fs::exists(out));
}
