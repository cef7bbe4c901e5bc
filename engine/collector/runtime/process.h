// The runtime's process-level entry points, used by the libc wrappers (interpose.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace profsh::runtime {

// Reads PROFSH_SESSION and friends, reserves the buffers, opens this image's stream and starts
// the drain thread. Returns false (and stays inactive) without a session or on failure.
bool Initialize();
// The image ends: drain everything, write the end block (stream::EndReason).
void Shutdown(uint8_t reason);
// At exit(), from the atexit handler the cuda activity registers after loading libcupti (so it
// runs before libcupti's and libcuda's destructors): CUPTI's last records (a forced flush),
// encoded, then CUPTI is off: nothing calls it afterwards.
void FlushGpuAtExit();
// Around execve: flush and mark the stream; if execve returns, say it failed.
void BeforeExec(const char* path);
void ExecFailed();
// The environment for an exec: `envp` itself, or, when it lacks profsh's variables (a program
// that built its own environment), a copy in `room` with them added back.
char** EnvironmentForExec(char* const* envp, char** room, size_t room_entries);

}  // namespace profsh::runtime
