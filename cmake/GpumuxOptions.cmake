# Warnings and sanitizers shared by every gpumux target.
add_library(gpumux_options INTERFACE)
target_compile_options(gpumux_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>)
# CI turns warnings into errors (.ci/run seeds the cache with -DGPUMUX_WERROR=ON); users keep
# warnings as warnings so a newer compiler's new diagnostic does not break their build.
# nvcc: its own warnings become errors; host code is compiled by the C++ compiler under -Werror.
option(GPUMUX_WERROR "Treat compiler warnings as errors (CI)" OFF)
if(GPUMUX_WERROR)
  target_compile_options(gpumux_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
endif()
if(GPUMUX_SANITIZE)
  target_compile_options(gpumux_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${GPUMUX_SANITIZE} -fno-omit-frame-pointer>)
  target_link_options(gpumux_options INTERFACE -fsanitize=${GPUMUX_SANITIZE})
endif()

if(GPUMUX_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "GPUMUX_FUZZ needs clang (libFuzzer); use the fuzz preset")
  endif()
  # Coverage instrumentation for libFuzzer in every target; undefined behaviour aborts, so
  # the fuzzer reports it as a crash instead of printing and going on.
  target_compile_options(gpumux_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link -fno-sanitize-recover=all>)
endif()

# Provenance compiled into the binary (run.json).
execute_process(COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
  OUTPUT_VARIABLE GPUMUX_GIT_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT GPUMUX_GIT_REVISION)
  set(GPUMUX_GIT_REVISION "unknown")
endif()

# Links every gpumux part into an executable. The plug-in parts are OBJECT libraries so the
# registrars inside them (static bools) are never dropped by the linker; an OBJECT library's
# objects reach only a target that names it, so each core layer is named here.
set(GPUMUX_CORE_LAYERS gpumux_api gpumux_model gpumux_engine gpumux_io)
# In a CUDA build the program also exports its symbols, which libgpumux_cuda.so (loaded on
# first use of platform "cuda") resolves against, and builds that library first.
function(gpumux_link_all target)
  target_link_libraries(${target} PRIVATE
    ${GPUMUX_CORE_LAYERS} gpumux_sim gpumux_backend gpumux_cuda_entry gpumux_policies gpumux_options)
  if(GPUMUX_WITH_CUDA)
    set_target_properties(${target} PROPERTIES ENABLE_EXPORTS ON)
    add_dependencies(${target} gpumux_cuda)
  endif()
endfunction()

# Precompiled headers, a build-time saving only: nlohmann/json.hpp alone costs 3.9 s of GCC 12
# -O3 time in every translation unit that includes it, Catch2's single header 2.2 s (measured
# 2026-11-29 on the 2-core development VM; docs/results/ci-time-2026-11-29.md). Each target
# compiles them once. Sources still include what they use: clang-tidy reads them without the
# precompiled header (.ci/run_tidy.sh), so a missing include is still found.
# -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON builds without.
set(GPUMUX_PCH_HEADERS <nlohmann/json.hpp> <algorithm> <cstdint> <filesystem> <functional> <map>
    <memory> <optional> <string> <string_view> <unordered_map> <vector>)
function(gpumux_precompile target)
  target_precompile_headers(${target} PRIVATE ${GPUMUX_PCH_HEADERS} ${ARGN})
endfunction()
