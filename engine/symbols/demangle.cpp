#include "engine/symbols/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>

namespace profsh::symbols {

std::string Demangle(const char* name) {
  if (name == nullptr) return {};
  if (std::strncmp(name, "_Z", 2) != 0) return name;
  // "_ZdlPvm@plt", "_Z3foov@@VERS_1": the mangled part, then the suffix as it is.
  const char* at = std::strchr(name, '@');
  const std::string mangled = at != nullptr ? std::string(name, at) : std::string(name);
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) {
    std::free(demangled);
    return name;
  }
  std::string result(demangled);
  std::free(demangled);
  if (at != nullptr) result += at;
  return result;
}

}  // namespace profsh::symbols
