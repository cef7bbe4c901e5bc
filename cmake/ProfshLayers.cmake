# The engine's layers: each folder is a library that may include only itself and the layers it
# names (and, transitively, what those may include). profsh_layer() records the rule; the build
# runs CheckLayers.cmake over every source before compiling, so an include that reaches up (or
# sideways) fails the build with the file, the line and the rule it breaks.

set_property(GLOBAL PROPERTY PROFSH_LAYER_RULES "")

# profsh_allow(FOLDER DEPENDS folder...): FOLDER (relative to the project root) may include the
# named folders and whatever they may include.
function(profsh_allow folder)
  cmake_parse_arguments(A "" "" "DEPENDS" ${ARGN})
  set(allowed ${folder})
  foreach(dep IN LISTS A_DEPENDS)
    get_property(dep_allowed GLOBAL PROPERTY "PROFSH_ALLOWED_${dep}")
    if(NOT DEFINED dep_allowed OR dep_allowed STREQUAL "")
      message(FATAL_ERROR "layer ${folder} depends on ${dep}, which is not declared before it")
    endif()
    list(APPEND allowed ${dep_allowed})
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  set_property(GLOBAL PROPERTY "PROFSH_ALLOWED_${folder}" "${allowed}")
  string(REPLACE ";" "," allowed_text "${allowed}")
  set_property(GLOBAL APPEND PROPERTY PROFSH_LAYER_RULES "${folder}=${allowed_text}")
endfunction()

# profsh_layer(NAME FOLDER SOURCES ... DEPENDS layer-name...): a static library of one folder
# whose dependencies are private (a layer above sees only what it links itself).
function(profsh_layer name folder)
  cmake_parse_arguments(L "" "" "SOURCES;DEPENDS;LIBRARIES;FOLDERS" ${ARGN})
  set(dep_folders ${L_FOLDERS})
  foreach(dep IN LISTS L_DEPENDS)
    get_property(dep_folder GLOBAL PROPERTY "PROFSH_FOLDER_${dep}")
    list(APPEND dep_folders ${dep_folder})
  endforeach()
  profsh_allow(${folder} DEPENDS ${dep_folders})
  set_property(GLOBAL PROPERTY "PROFSH_FOLDER_${name}" ${folder})
  add_library(profsh_${name} STATIC ${L_SOURCES})
  target_include_directories(profsh_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  foreach(dep IN LISTS L_DEPENDS)
    target_link_libraries(profsh_${name} PRIVATE profsh_${dep})
  endforeach()
  target_link_libraries(profsh_${name} PRIVATE ${L_LIBRARIES})
  add_dependencies(profsh_${name} profsh_layer_check)
endfunction()

# The check itself: one stamp, redone whenever a source or the rules change.
function(profsh_layer_check_target)
  get_property(rules GLOBAL PROPERTY PROFSH_LAYER_RULES)
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS
       ${PROJECT_SOURCE_DIR}/engine/*.h ${PROJECT_SOURCE_DIR}/engine/*.cpp
       ${PROJECT_SOURCE_DIR}/bindings/*.h ${PROJECT_SOURCE_DIR}/bindings/*.cpp
       ${PROJECT_SOURCE_DIR}/repl/*.h ${PROJECT_SOURCE_DIR}/repl/*.cpp)
  string(REPLACE ";" "|" rules_text "${rules}")
  set(stamp ${PROJECT_BINARY_DIR}/layers.checked)
  add_custom_command(
    OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} "-DROOT=${PROJECT_SOURCE_DIR}" "-DRULES=${rules_text}"
            "-DSTAMP=${stamp}" -P ${PROJECT_SOURCE_DIR}/cmake/CheckLayers.cmake
    DEPENDS ${sources} ${PROJECT_SOURCE_DIR}/cmake/CheckLayers.cmake
            ${PROJECT_SOURCE_DIR}/engine/CMakeLists.txt
    COMMENT "Checking that no include reaches up a layer"
    VERBATIM)
  add_custom_target(profsh_layer_check DEPENDS ${stamp})
endfunction()
