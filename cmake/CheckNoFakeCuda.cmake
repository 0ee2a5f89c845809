# ctest fakecuda_not_in_gpumux: the gpumux program defines no symbol of the CUDA test double
# (backend/testing/fakecuda): nothing in namespace gpumux::fakecuda, and none of the CUDA
# runtime, cuBLAS or kernel entry points the double defines (a CUDA build loads the real ones
# from libgpumux_cuda.so at run time, D12). Usage: cmake -DNM=nm -DBINARY=path -P this file.
if(NOT BINARY OR NOT EXISTS "${BINARY}")
  message(FATAL_ERROR "CheckNoFakeCuda: BINARY='${BINARY}' does not exist")
endif()
if(NOT NM)
  set(NM nm)
endif()
# nm's own output is megabytes: grep filters it (a CMake regex over it took 20 s).
execute_process(COMMAND ${NM} --defined-only "${BINARY}"
                COMMAND grep -c -E " main$"
                OUTPUT_VARIABLE mains OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT mains EQUAL 1)
  message(FATAL_ERROR "CheckNoFakeCuda: no symbol 'main' in ${BINARY}: stripped, or nm failed?")
endif()
# Mangled names: anything in gpumux::fakecuda contains "8fakecuda".
execute_process(COMMAND ${NM} --defined-only "${BINARY}"
                COMMAND grep -E "fakecuda| (cuda[A-Z][A-Za-z_0-9]*|cublas[A-Z][A-Za-z_0-9]*|gpumux_(bias_relu|elementwise|momentum_update|fill_weights|fault|noop))$"
                OUTPUT_VARIABLE found)
if(found)
  message(FATAL_ERROR "CheckNoFakeCuda: ${BINARY} defines test-double symbols:\n${found}")
endif()
message(STATUS "CheckNoFakeCuda: ${BINARY} holds no symbol of the CUDA test double")
