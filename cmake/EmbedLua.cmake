# Turns a Lua source file into a C++ translation unit holding it as a string constant, so the
# prelude ships inside the binary. Usage: cmake -DINPUT=x.lua -DOUTPUT=y.cpp -DSYMBOL=name -P EmbedLua.cmake
file(READ "${INPUT}" content)
string(FIND "${content}" ")profsh_lua\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )profsh_lua\"")
endif()
file(WRITE "${OUTPUT}.tmp" "// Generated from ${INPUT} by cmake/EmbedLua.cmake. Do not edit.\nnamespace profsh::lua {\nextern const char* const ${SYMBOL};\nconst char* const ${SYMBOL} = R\"profsh_lua(${content})profsh_lua\";\n}  // namespace profsh::lua\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
