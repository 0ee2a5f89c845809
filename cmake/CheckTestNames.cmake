# Fails when a Catch2 test name holds a ';'. catch_discover_tests turns each name into a ctest
# test, and CMake splits a list at ';': such a test becomes several ctest entries, each
# matching no test case, and passes without running anything.
#   cmake -DBINARY=<catch2 test program> -P CheckTestNames.cmake
# (Catch2's exit code here is the number of tests listed, so the output is what is checked.)
cmake_policy(SET CMP0007 NEW)  # list() keeps empty elements
execute_process(COMMAND ${BINARY} --list-test-names-only OUTPUT_VARIABLE names)
if(names STREQUAL "")
  message(FATAL_ERROR "${BINARY} --list-test-names-only listed no tests")
endif()
string(FIND "${names}" ";" at)
if(NOT at EQUAL -1)
  string(REPLACE ";" "<SEMICOLON>" shown "${names}")
  string(REPLACE "\n" ";" lines "${shown}")
  list(FILTER lines INCLUDE REGEX "<SEMICOLON>")
  list(JOIN lines "\n  " bad)
  message(FATAL_ERROR "test names with ';' (ctest would run none of them):\n  ${bad}")
endif()
