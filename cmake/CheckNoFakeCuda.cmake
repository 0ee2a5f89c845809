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
execute_process(COMMAND ${NM} --defined-only --demangle "${BINARY}"
                OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "CheckNoFakeCuda: ${NM} failed on ${BINARY} (${rc})")
endif()
if(NOT symbols MATCHES " main\n")
  message(FATAL_ERROR "CheckNoFakeCuda: no symbol 'main' in ${BINARY}: is it stripped?")
endif()
string(REGEX MATCHALL "[^\n]*(fakecuda|[ \t](cuda[A-Z][A-Za-z_0-9]*|cublas[A-Z][A-Za-z_0-9]*|gpumux_(bias_relu|elementwise|momentum_update|fill_weights|fault|noop)))\n"
       found "${symbols}")
if(found)
  message(FATAL_ERROR "CheckNoFakeCuda: ${BINARY} defines test-double symbols:\n${found}")
endif()
message(STATUS "CheckNoFakeCuda: ${BINARY} holds no symbol of the CUDA test double")
