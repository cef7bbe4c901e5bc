# The charting library HTML reports inline: Apache ECharts, pinned by engine/report/web's
# package.json and package-lock.json. `npm ci` installs it once into the build folder; its
# minified file is embedded into the binary (engine/report/chart_library.cpp). Sets
# PROFSH_CHART_LIBRARY_JS, PROFSH_CHART_LIBRARY_VERSION and the target profsh_chart_library.
# A build without access to the npm registry can be given the file instead:
# -DPROFSH_CHART_LIBRARY=/path/to/echarts.min.js (of the version package.json pins).
set(PROFSH_CHART_LIBRARY "" CACHE FILEPATH
    "echarts.min.js to embed in HTML reports instead of installing it with npm ci")
set(PROFSH_REPORT_WEB ${PROJECT_SOURCE_DIR}/engine/report/web)
file(READ ${PROFSH_REPORT_WEB}/package.json PROFSH_REPORT_PACKAGE)
string(JSON PROFSH_CHART_LIBRARY_VERSION GET "${PROFSH_REPORT_PACKAGE}" dependencies echarts)
if(PROFSH_CHART_LIBRARY)
  if(NOT EXISTS "${PROFSH_CHART_LIBRARY}")
    message(FATAL_ERROR "PROFSH_CHART_LIBRARY: no such file: ${PROFSH_CHART_LIBRARY}")
  endif()
  set(PROFSH_CHART_LIBRARY_JS ${PROFSH_CHART_LIBRARY})
  add_custom_target(profsh_chart_library)
  return()
endif()
find_program(PROFSH_NPM npm)
if(NOT PROFSH_NPM)
  message(FATAL_ERROR "npm not found: it installs the charting library of HTML reports "
                      "(on Debian: apt-get install nodejs npm; build.sh does it), or give the "
                      "file with -DPROFSH_CHART_LIBRARY=/path/to/echarts.min.js")
endif()
set(PROFSH_REPORT_WEB_BUILD ${PROJECT_BINARY_DIR}/report_web)
file(MAKE_DIRECTORY ${PROFSH_REPORT_WEB_BUILD})
set(PROFSH_CHART_LIBRARY_JS ${PROFSH_REPORT_WEB_BUILD}/node_modules/echarts/dist/echarts.min.js)
add_custom_command(
  OUTPUT ${PROFSH_CHART_LIBRARY_JS}
  COMMAND ${CMAKE_COMMAND} -E copy ${PROFSH_REPORT_WEB}/package.json
          ${PROFSH_REPORT_WEB}/package-lock.json ${PROFSH_REPORT_WEB_BUILD}/
  COMMAND ${PROFSH_NPM} ci --ignore-scripts --no-audit --no-fund --loglevel=error
  COMMAND ${CMAKE_COMMAND} -E touch ${PROFSH_CHART_LIBRARY_JS}
  WORKING_DIRECTORY ${PROFSH_REPORT_WEB_BUILD}
  DEPENDS ${PROFSH_REPORT_WEB}/package.json ${PROFSH_REPORT_WEB}/package-lock.json
  COMMENT "Installing the charting library (npm ci, echarts ${PROFSH_CHART_LIBRARY_VERSION})")
add_custom_target(profsh_chart_library DEPENDS ${PROFSH_CHART_LIBRARY_JS})
