// C++ names as people write them (abi::__cxa_demangle); other names unchanged.
#pragma once

#include <string>

namespace profsh::symbols {

std::string Demangle(const char* name);

}  // namespace profsh::symbols
