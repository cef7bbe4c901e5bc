#include "engine/symbols/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>

namespace profsh::symbols {

std::string Demangle(const char* name) {
  if (name == nullptr) return {};
  if (std::strncmp(name, "_Z", 2) != 0) return name;
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) {
    std::free(demangled);
    return name;
  }
  std::string result(demangled);
  std::free(demangled);
  return result;
}

}  // namespace profsh::symbols
