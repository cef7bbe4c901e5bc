/* A test program's own CPU sample, taken at a known instruction: PROFSH_SAMPLE_POINT() traps
 * (int3), and the SIGTRAP handler writes what a perf sample carries (the interrupted user
 * registers in perf's order, the user stack from the stack pointer up) and /proc/self/maps to
 * the file named by profsh_capture_install(). The unit tests unwind and symbolise it.
 * File: "PSNAP001", u64 regs[24], u64 mask, u64 stack_size, stack bytes, u64 maps_size, maps. */
#ifndef PROFSH_TESTS_SYMBOLS_SNAPSHOT_CAPTURE_H
#define PROFSH_TESTS_SYMBOLS_SNAPSHOT_CAPTURE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#define PROFSH_SAMPLE_POINT() __asm__ volatile("int3" ::: "memory")

static const char* profsh_capture_path;
static char profsh_capture_maps[1 << 20];

static void profsh_capture_write(int fd, const void* data, size_t size) {
  const char* p = (const char*)data;
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n <= 0) _exit(3);
    p += n;
    size -= (size_t)n;
  }
}

static size_t profsh_capture_read_maps(void) {
  int fd = open("/proc/self/maps", O_RDONLY);
  size_t used = 0;
  ssize_t n;
  if (fd < 0) _exit(4);
  while (used < sizeof profsh_capture_maps - 1 &&
         (n = read(fd, profsh_capture_maps + used, sizeof profsh_capture_maps - 1 - used)) > 0) {
    used += (size_t)n;
  }
  close(fd);
  profsh_capture_maps[used] = '\0';
  return used;
}

/* The end of the mapping holding `address` (the stack's top), from the maps text. */
static uint64_t profsh_capture_mapping_end(uint64_t address) {
  const char* line = profsh_capture_maps;
  while (*line) {
    char* end;
    uint64_t start = strtoull(line, &end, 16);
    uint64_t stop = strtoull(end + 1, NULL, 16);
    if (address >= start && address < stop) return stop;
    line = strchr(line, '\n');
    if (!line) break;
    ++line;
  }
  return address;
}

static void profsh_capture_handler(int sig, siginfo_t* info, void* context) {
  static const int kPerfOrder[24] = {REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI,
                                     REG_RBP, REG_RSP, REG_RIP, REG_EFL, -1,      -1,
                                     -1,      -1,      -1,      -1,      REG_R8,  REG_R9,
                                     REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
  ucontext_t* uc = (ucontext_t*)context;
  uint64_t regs[24] = {0};
  uint64_t mask = 0;
  uint64_t sp, stack_size, maps_size;
  int i, fd;
  (void)sig;
  (void)info;
  for (i = 0; i < 24; ++i) {
    if (kPerfOrder[i] < 0) continue;
    regs[i] = (uint64_t)uc->uc_mcontext.gregs[kPerfOrder[i]];
    mask |= 1ull << i;
  }
  sp = regs[7];
  maps_size = profsh_capture_read_maps();
  stack_size = profsh_capture_mapping_end(sp) - sp;
  if (stack_size > (1u << 19)) stack_size = 1u << 19;
  fd = open(profsh_capture_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) _exit(5);
  profsh_capture_write(fd, "PSNAP001", 8);
  profsh_capture_write(fd, regs, sizeof regs);
  profsh_capture_write(fd, &mask, sizeof mask);
  profsh_capture_write(fd, &stack_size, sizeof stack_size);
  profsh_capture_write(fd, (const void*)(uintptr_t)sp, stack_size);
  profsh_capture_write(fd, &maps_size, sizeof maps_size);
  profsh_capture_write(fd, profsh_capture_maps, maps_size);
  close(fd);
}

static void profsh_capture_install(const char* path) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = profsh_capture_handler;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  profsh_capture_path = path;
  sigaction(SIGTRAP, &action, NULL);
}

#endif
