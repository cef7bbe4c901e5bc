#include "engine/collector/runtime/memory_scope.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/stream/stream_format.h"

namespace profsh::runtime {

namespace {

bool IsCommand() {
  const char* launcher = getenv(stream::kEnvLauncherPid);
  return launcher && *launcher && strtoll(launcher, nullptr, 10) == getppid();
}

bool IsPython() {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return false;
  exe[n] = '\0';
  const char* base = strrchr(exe, '/');
  return strncmp(base ? base + 1 : exe, "python", 6) == 0;
}

// A program linked with libtorch (its libraries are mapped before any constructor runs).
bool LinksTorch() {
  return dl_iterate_phdr(
             [](dl_phdr_info* info, size_t, void*) {
               return info->dlpi_name && strstr(info->dlpi_name, "/libc10.") != nullptr ? 1 : 0;
             },
             nullptr) != 0;
}

}  // namespace

bool RecordsMemoryHere() {
  const char* scope = getenv(stream::kEnvProfileMemory);
  if (!scope || !*scope || strcmp(scope, "0") == 0 || strcmp(scope, "all") == 0) return true;
  if (IsCommand() || IsPython() || LinksTorch()) return true;
  using SetModeFn = void (*)(int);
  constexpr int kReportNothing = 2;  // memory_hooks.cpp's kModeNone
  if (auto set_mode = reinterpret_cast<SetModeFn>(dlsym(RTLD_DEFAULT, "profsh_memory_set_mode")))
    set_mode(kReportNothing);
  return false;
}

}  // namespace profsh::runtime
