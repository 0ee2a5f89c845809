# `cmake --install <build> --prefix <prefix>` layout (README "Install"):
#   <prefix>/bin/gpumux
#   <prefix>/share/gpumux/.gpumux-install        marker: an installed data folder (data_root.hpp)
#   <prefix>/share/gpumux/traces/...             models, devices, arrivals, dynamic, kernels,
#                                                workloads, with their SOURCE/README files
#   <prefix>/share/gpumux/experiments/configs/   the shipped experiment configs
#   <prefix>/share/gpumux/experiments/sweeps/    the shipped sweep files
#   <prefix>/share/doc/gpumux/                   README.md and docs/
# The program finds share/gpumux from its own folder (GPUMUX_DATA_FROM_BIN, core/CMakeLists.txt),
# so the prefix can move as a whole. The converter scripts of traces/tools and the model-zoo
# generators (*.py) are tools for the checkout and are not installed.
install(TARGETS gpumux RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(GPUMUX_DATA_DEST ${CMAKE_INSTALL_DATADIR}/gpumux)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/traces/ DESTINATION ${GPUMUX_DATA_DEST}/traces
        PATTERN "tools" EXCLUDE PATTERN "*.py" EXCLUDE PATTERN "__pycache__" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/experiments/configs ${PROJECT_SOURCE_DIR}/experiments/sweeps
        DESTINATION ${GPUMUX_DATA_DEST}/experiments)
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/gpumux-install-marker
     CONTENT "gpumux ${PROJECT_VERSION}: installed data; results default to the current folder\n")
install(FILES ${PROJECT_BINARY_DIR}/gpumux-install-marker DESTINATION ${GPUMUX_DATA_DEST}
        RENAME .gpumux-install)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
