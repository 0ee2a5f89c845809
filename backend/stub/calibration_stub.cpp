#include "gpumux/api/errors.hpp"
#include "gpumux/backend/calibration.hpp"

namespace gpumux {

int run_calibration(const CalibrationOptions&) {
  throw NotCompiled(
      "gpumux calibrate needs the 'cuda' platform, which was not compiled into this build "
      "(no nvcc at configure time); install the CUDA toolkit and reconfigure with "
      "-DGPUMUX_CUDA=ON");
}

}  // namespace gpumux
