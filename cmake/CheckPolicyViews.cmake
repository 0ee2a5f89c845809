# Policies read jobs through JobView and ask Context (D18): no policy names the engine's job
# state or its members, hard-codes "the GPU" as device 0, or copies the allocation alignment.
# Usage: cmake -DSOURCE_DIR=<repo> -P CheckPolicyViews.cmake
cmake_minimum_required(VERSION 3.20)
file(GLOB_RECURSE policy_files "${SOURCE_DIR}/policies/*.hpp" "${SOURCE_DIR}/policies/*.cpp")
set(forbidden "JobState|DeviceResidency|\\.residency\\[|\\.allocations|\\.offsets|loading_op"
              "|DeviceId *[{(] *0 *[})]|DeviceId [a-z_]+ *[{(] *0 *[})]|= *256 *;")
string(JOIN "" forbidden ${forbidden})
set(violations "")
foreach(f IN LISTS policy_files)
  file(STRINGS "${f}" lines REGEX "${forbidden}")
  foreach(line IN LISTS lines)
    string(APPEND violations "${f}: ${line}\n")
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "policies/ reach into the engine (use JobView, Context::gpus, "
                      "round_to_allocation):\n${violations}")
endif()
list(LENGTH policy_files n)
message(STATUS "policy views: ${n} files checked, no engine internals")
