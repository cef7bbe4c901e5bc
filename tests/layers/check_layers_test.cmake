# The layer check rejects an include that reaches up, naming the file, the line and the rule,
# and accepts includes of the layer itself, of the layers below and of system headers.
#   cmake -DCHECKER=<CheckLayers.cmake> -DWORK=<scratch folder> -P check_layers_test.cmake
cmake_policy(SET CMP0007 NEW)
file(REMOVE_RECURSE "${WORK}")
file(WRITE "${WORK}/engine/low/a.h" "#pragma once\n#include <vector>\n#include \"b.h\"\n")
file(WRITE "${WORK}/engine/low/b.h" "#pragma once\n")
file(WRITE "${WORK}/engine/high/c.cpp"
     "#include \"engine/high/d.h\"\n#include \"engine/low/a.h\"\n#include <string>\n")
file(WRITE "${WORK}/engine/high/d.h" "#pragma once\n")
set(rules "engine/low=engine/low|engine/high=engine/high,engine/low")

execute_process(COMMAND ${CMAKE_COMMAND} "-DROOT=${WORK}" "-DRULES=${rules}" -P "${CHECKER}"
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "a tree without upward includes was rejected:\n${err}")
endif()

# The low layer now reaches up, on its fourth line.
file(WRITE "${WORK}/engine/low/a.h"
     "#pragma once\n#include <vector>\n#include \"b.h\"\n#include \"engine/high/d.h\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} "-DROOT=${WORK}" "-DRULES=${rules}" -P "${CHECKER}"
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(status EQUAL 0)
  message(FATAL_ERROR "an upward include was accepted")
endif()
string(REGEX REPLACE "[ \n]+" " " err "${err}")
if(NOT err MATCHES "engine/low/a.h:4: includes engine/high/d.h: layer engine/low may include only engine/low")
  message(FATAL_ERROR "the error does not name the file, line and rule:\n${err}")
endif()
file(REMOVE_RECURSE "${WORK}")
message(STATUS "layer check: 2 passed, 0 failed")
