# core/ must not include anything from sim/, backend/, policies/ or CUDA: the arrow of
# dependencies points one way (experiments -> policies, sim, backend -> core).
# Usage: cmake -DSOURCE_DIR=<repo> -P CheckCoreIsolation.cmake
file(GLOB_RECURSE core_files "${SOURCE_DIR}/core/*.hpp" "${SOURCE_DIR}/core/*.cpp")
set(violations "")
foreach(f IN LISTS core_files)
  file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS lines)
    if(line MATCHES "gpumux/(sim|backend|policies)/" OR line MATCHES "cuda|cublas|cuda_runtime")
      list(APPEND violations "${f}: ${line}")
    endif()
  endforeach()
endforeach()
if(violations)
  list(JOIN violations "\n" msg)
  message(FATAL_ERROR "core/ includes code it must not depend on:\n${msg}")
endif()
list(LENGTH core_files n)
message(STATUS "core isolation: ${n} files checked, no forbidden includes")
