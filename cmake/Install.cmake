# One layout for `cmake --install`, the release bundle and the .deb (cmake/Packaging.cmake):
#   bin/profsh
#   lib/profsh/        the collector libraries, the sample workload and its ITT library, found
#                      from bin/profsh as ../lib/profsh (engine/recording/launcher.cpp)
#   lib/profsh/python/ the PyTorch start-up hook, the fallback and the plugin's build helper;
#                      the Dask driver of `profsh job map --dask`
#   lib/profsh/torch_plugin_src/  the plugin's sources, built at first use against the
#                      workload's own torch (never a prebuilt plugin: the user's torch differs)
#   share/profsh/scripts/  the recipes and their sample traces
#   share/doc/profsh/  README and docs
# The report templates and the chart library are inside the binary.
set(PROFSH_INSTALL_LIBRARY_DIR lib/profsh)

install(TARGETS profsh RUNTIME DESTINATION bin)
install(TARGETS profsh_collector profsh_memory itt_ranges
        LIBRARY DESTINATION ${PROFSH_INSTALL_LIBRARY_DIR})
install(TARGETS nvtx_pipeline RUNTIME DESTINATION ${PROFSH_INSTALL_LIBRARY_DIR})
install(FILES ${PROJECT_BINARY_DIR}/python/sitecustomize.py
              ${PROJECT_BINARY_DIR}/python/profsh_torch_fallback.py
              ${PROFSH_INSTALLED_TORCH_BUILD_HELPER}
              ${PROJECT_BINARY_DIR}/python/profsh_job_map.py
        DESTINATION ${PROFSH_INSTALL_LIBRARY_DIR}/python)
install(DIRECTORY ${PROJECT_BINARY_DIR}/torch_plugin_src/
        DESTINATION ${PROFSH_INSTALL_LIBRARY_DIR}/torch_plugin_src)

# The recipes and what they read; the samples' C++ sources are built into lib/profsh instead.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scripts/ DESTINATION share/profsh/scripts
        PATTERN CMakeLists.txt EXCLUDE PATTERN "*.cpp" EXCLUDE PATTERN "*.h" EXCLUDE
        PATTERN __pycache__ EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/profsh)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/profsh/docs)

# The shipped programs, built apart from the tests: `cmake --build build --target
# profsh_shipped` before installing or packaging without a whole build.
add_custom_target(profsh_shipped
  DEPENDS profsh profsh_collector profsh_memory itt_ranges nvtx_pipeline)

include(${CMAKE_CURRENT_LIST_DIR}/Packaging.cmake)
