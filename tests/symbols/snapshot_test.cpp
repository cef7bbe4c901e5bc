// Unwinding and symbolising real samples: each test program of tests/symbols samples itself at
// a known instruction, and the chain of functions, modules, files and lines must come out
// exactly, whatever the binary was built with.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/symbols/elf_file.h"
#include "engine/symbols/symbolizer.h"
#include "engine/symbols/unwinder.h"
#include "tests/symbols/snapshot_file.h"

namespace profsh::symbols {
namespace {

using testing::CapturedSample;
using testing::MarkerLine;
using testing::ScratchDir;

struct Expected {
  std::string function;
  std::string module;
  std::string source;  // file name in tests/symbols
  std::string marker;  // its line
  bool inlined = false;
};

struct Outcome {
  std::vector<SourceFrame> frames;  // every frame of every unwound pc, innermost first
  UnwindStats unwind;
  SymbolizerStats symbols;
};

CapturedSample Capture(const std::vector<std::string>& program_args, const ScratchDir& dir) {
  CapturedSample sample;
  const std::string file = dir.path() + "/sample.bin";
  std::vector<std::string> argv = {program_args[0], file};
  argv.insert(argv.end(), program_args.begin() + 1, program_args.end());
  if (!testing::RunProgram(argv)) return sample;
  std::string error;
  EXPECT_TRUE(testing::ReadCapturedSample(file, &sample, &error)) << error;
  return sample;
}

Outcome UnwindAndSymbolize(const CapturedSample& sample, SymbolizerOptions options) {
  Outcome outcome;
  auto space = AddressSpace::FromProcMaps(sample.maps, "sample maps");
  EXPECT_TRUE(space.ok()) << space.error().message;
  if (!space.ok()) return outcome;
  space->ReadMissingBuildIds();
  Unwinder unwinder;
  Symbolizer symbolizer(std::move(options));
  for (const UnwoundFrame& pc : unwinder.Unwind(*space, sample.snapshot)) {
    for (SourceFrame& f : symbolizer.Symbolize(*space, pc.pc, pc.is_return_address)) {
      outcome.frames.push_back(std::move(f));
    }
  }
  outcome.unwind = unwinder.stats();
  outcome.symbols = symbolizer.stats();
  return outcome;
}

std::string Describe(const std::vector<SourceFrame>& frames) {
  std::string text;
  for (const SourceFrame& f : frames) {
    text += "  " + f.function + " [" + f.module + "] " +
            std::filesystem::path(f.file).filename().string() + ":" + std::to_string(f.line) +
            (f.inlined ? " (inlined)" : "") + "\n";
  }
  return text;
}

// The first frames are exactly `expected`; after them the process's own start-up frames
// (libc's, then _start) lead to the outermost frame, and the walk ended there, not short.
void ExpectChain(const Outcome& outcome, const std::vector<Expected>& expected) {
  SCOPED_TRACE("unwound:\n" + Describe(outcome.frames));
  ASSERT_GT(outcome.frames.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const SourceFrame& f = outcome.frames[i];
    const Expected& e = expected[i];
    SCOPED_TRACE("frame " + std::to_string(i));
    EXPECT_EQ(f.function, e.function);
    EXPECT_EQ(f.module, e.module);
    EXPECT_EQ(std::filesystem::path(f.file).filename().string(), e.source);
    EXPECT_EQ(f.line, MarkerLine(e.source, e.marker));
    EXPECT_EQ(f.inlined, e.inlined);
  }
  EXPECT_EQ(outcome.frames[expected.size()].module, "libc.so.6");
  EXPECT_EQ(outcome.frames.back().function, "_start");
  EXPECT_EQ(outcome.unwind.truncated, 0u);
}

std::vector<Expected> CChain(const std::string& module) {
  return {{"leaf_inlined", module, "target_c.c", "@c-sample", true},
          {"middle", module, "target_c.c", "@c-call-leaf"},
          {"outer", module, "target_c.c", "@c-call-middle"},
          {"main", module, "target_c.c", "@c-call-outer"}};
}

std::vector<Expected> CxxChain(const std::string& module) {
  return {{"profsh_test::InlinedLeaf", module, "target_cxx.cpp", "@cxx-sample", true},
          {"profsh_test::SampleHere(int)", module, "target_cxx.cpp", "@cxx-call-leaf"},
          {"int plugin::Accumulate<int>(int (*)(int), int)", "libsymbols_plugin.so", "plugin.cpp",
           "@plugin-call-callback"},
          {"plugin_compute", "libsymbols_plugin.so", "plugin.cpp", "@plugin-call-accumulate"},
          {"profsh_test::Runner::Run(char const*)", module, "target_cxx.cpp", "@cxx-call-plugin"},
          {"main", module, "target_cxx.cpp", "@cxx-call-run"}};
}

// Debug files only where a test puts them.
SymbolizerOptions Isolated(const ScratchDir& dir) {
  SymbolizerOptions options;
  options.debug_roots = {};
  options.debuginfod_cache = dir.path() + "/no-debuginfod-cache";
  return options;
}

TEST(SymbolsSnapshot, CWithCfiAndNoFramePointer) {
  ScratchDir dir;
  const CapturedSample sample = Capture({SYMBOLS_TARGET_C_CFI}, dir);
  ExpectChain(UnwindAndSymbolize(sample, Isolated(dir)), CChain("symbols_target_c_cfi"));
}

TEST(SymbolsSnapshot, CWithFramePointersAndNoUnwindTables) {
  ScratchDir dir;
  const CapturedSample sample = Capture({SYMBOLS_TARGET_C_FP}, dir);
  ExpectChain(UnwindAndSymbolize(sample, Isolated(dir)), CChain("symbols_target_c_fp"));
}

TEST(SymbolsSnapshot, ThroughASignalHandlersFrame) {
  ScratchDir dir;
  const CapturedSample sample = Capture({SYMBOLS_TARGET_C_CFI, "signal"}, dir);
  const Outcome outcome = UnwindAndSymbolize(sample, Isolated(dir));
  SCOPED_TRACE("unwound:\n" + Describe(outcome.frames));
  const std::string module = "symbols_target_c_cfi";
  const std::vector<Expected> handler = {
      {"leaf_inlined", module, "target_c.c", "@c-sample", true},
      {"middle", module, "target_c.c", "@c-call-leaf"},
      {"outer", module, "target_c.c", "@c-call-middle"},
      {"on_signal", module, "target_c.c", "@c-call-outer-in-handler"}};
  ASSERT_GT(outcome.frames.size(), handler.size() + 2);
  for (size_t i = 0; i < handler.size(); ++i) {
    EXPECT_EQ(outcome.frames[i].function, handler[i].function) << i;
    EXPECT_EQ(outcome.frames[i].line, MarkerLine(handler[i].source, handler[i].marker)) << i;
  }
  // Then libc: the signal trampoline and raise's frames (libc has no .symtab here: some are
  // named by offset), then main at the raise, down to _start.
  EXPECT_EQ(outcome.frames[handler.size()].module, "libc.so.6");
  size_t main_at = 0;
  for (size_t i = handler.size(); i < outcome.frames.size(); ++i) {
    if (outcome.frames[i].function == "main") main_at = i;
  }
  ASSERT_NE(main_at, 0u) << "the walk did not cross the signal frame";
  EXPECT_EQ(outcome.frames[main_at].line, MarkerLine("target_c.c", "@c-call-raise"));
  EXPECT_EQ(outcome.frames.back().function, "_start");
  EXPECT_EQ(outcome.unwind.truncated, 0u);
}

TEST(SymbolsSnapshot, CxxThroughALibraryLoadedWithDlopen) {
  ScratchDir dir;
  const CapturedSample sample = Capture({SYMBOLS_TARGET_CXX, SYMBOLS_PLUGIN}, dir);
  // The library was not mapped when the program started: it is in the maps of the sample.
  ASSERT_NE(sample.maps.find("libsymbols_plugin.so"), std::string::npos);
  ExpectChain(UnwindAndSymbolize(sample, Isolated(dir)), CxxChain("symbols_target_cxx"));
}

TEST(SymbolsSnapshot, StrippedBinaryWithDebugFileByBuildId) {
  ScratchDir dir;
  const CapturedSample sample = Capture({SYMBOLS_TARGET_CXX_BUILDID, SYMBOLS_PLUGIN}, dir);
  SymbolizerOptions options = Isolated(dir);
  options.debug_roots = {SYMBOLS_DEBUG_ROOT};
  ExpectChain(UnwindAndSymbolize(sample, options), CxxChain("target_cxx_stripped_buildid"));
  // Without its debug file the stripped program's frames are named by module and offset.
  const Outcome bare = UnwindAndSymbolize(sample, Isolated(dir));
  ASSERT_GE(bare.frames.size(), 5u);
  EXPECT_EQ(bare.frames[0].function.rfind("target_cxx_stripped_buildid+0x", 0), 0u)
      << Describe(bare.frames);
  EXPECT_EQ(bare.frames[0].module, "target_cxx_stripped_buildid");
  EXPECT_EQ(bare.unwind.truncated, 0u);  // .eh_frame survives strip
}

TEST(SymbolsSnapshot, StrippedBinaryWithDebugFileInDebuginfodCache) {
  ScratchDir dir;
  const CapturedSample sample = Capture({SYMBOLS_TARGET_CXX_BUILDID, SYMBOLS_PLUGIN}, dir);
  const std::string id = ReadBuildId(SYMBOLS_TARGET_CXX_BUILDID);
  ASSERT_EQ(id.size(), 40u);
  const std::string cache = dir.path() + "/debuginfod_client";
  std::filesystem::create_directories(cache + "/" + id);
  std::filesystem::copy_file(std::string(SYMBOLS_DEBUG_ROOT) + "/.build-id/" + id.substr(0, 2) +
                                 "/" + id.substr(2) + ".debug",
                             cache + "/" + id + "/debuginfo");
  SymbolizerOptions options = Isolated(dir);
  options.debuginfod_cache = cache;
  ExpectChain(UnwindAndSymbolize(sample, options), CxxChain("target_cxx_stripped_buildid"));
}

TEST(SymbolsSnapshot, StrippedBinaryWithDebugFileByDebuglink) {
  ScratchDir dir;
  const CapturedSample sample = Capture({SYMBOLS_TARGET_CXX_DEBUGLINK, SYMBOLS_PLUGIN}, dir);
  ExpectChain(UnwindAndSymbolize(sample, Isolated(dir)), CxxChain("target_cxx_stripped_debuglink"));
}

// Debian's own detached debug files (libc6-dbg, under /usr/lib/debug/.build-id): libc's frames
// below main, unnamed in the tests above (no debug root), get their names and lines.
TEST(SymbolsSnapshot, LibcFramesNamedFromDebiansDebugPackage) {
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  const std::string id = ReadBuildId(libc);
  if (id.size() < 3 || !std::filesystem::exists("/usr/lib/debug/.build-id/" + id.substr(0, 2) +
                                                "/" + id.substr(2) + ".debug")) {
    GTEST_SKIP() << "no libc6-dbg for this libc";
  }
  ScratchDir dir;
  const CapturedSample sample = Capture({SYMBOLS_TARGET_C_CFI}, dir);
  const Outcome outcome = UnwindAndSymbolize(sample, SymbolizerOptions());
  SCOPED_TRACE("unwound:\n" + Describe(outcome.frames));
  ASSERT_GE(outcome.frames.size(), 7u);
  EXPECT_EQ(outcome.frames[3].function, "main");
  EXPECT_EQ(outcome.frames[4].function, "__libc_start_call_main");
  EXPECT_EQ(outcome.frames[4].module, "libc.so.6");
  EXPECT_GT(outcome.frames[4].line, 0u);
  EXPECT_EQ(std::filesystem::path(outcome.frames[4].file).filename(), "libc_start_call_main.h");
  EXPECT_EQ(outcome.frames.back().function, "_start");
}

TEST(SymbolsSnapshot, ResultsAreCachedPerModuleOffset) {
  ScratchDir dir;
  const CapturedSample sample = Capture({SYMBOLS_TARGET_CXX, SYMBOLS_PLUGIN}, dir);
  auto space = AddressSpace::FromProcMaps(sample.maps, "sample maps");
  ASSERT_TRUE(space.ok());
  Unwinder unwinder;
  Symbolizer symbolizer(Isolated(dir));
  const auto pcs = unwinder.Unwind(*space, sample.snapshot);
  ASSERT_GE(pcs.size(), 6u);
  const auto first = symbolizer.Symbolize(*space, pcs[1].pc, true);
  EXPECT_EQ(symbolizer.stats().cache_hits, 0u);
  const auto again = symbolizer.Symbolize(*space, pcs[1].pc, true);
  EXPECT_EQ(symbolizer.stats().cache_hits, 1u);
  ASSERT_EQ(first.size(), again.size());
  EXPECT_EQ(first[0].function, again[0].function);
  EXPECT_EQ(symbolizer.stats().lookups, 2u);
  // The pc one byte before, sampled (not a return address): the same lookup, its own offset.
  const auto sampled = symbolizer.Symbolize(*space, pcs[1].pc - 1, false);
  EXPECT_EQ(symbolizer.stats().cache_hits, 2u);
  ASSERT_EQ(sampled.size(), first.size());
  EXPECT_EQ(sampled.back().function, first.back().function);
  EXPECT_EQ(sampled.back().module_offset + 1, first.back().module_offset);
}

TEST(SymbolsSnapshot, BuildIdsAreReadFromTheMappedFiles) {
  ScratchDir dir;
  const CapturedSample sample = Capture({SYMBOLS_TARGET_C_CFI}, dir);
  auto space = AddressSpace::FromProcMaps(sample.maps, "sample maps");
  ASSERT_TRUE(space.ok());
  EXPECT_GT(space->ReadMissingBuildIds(), 0u);
  const std::string id = ReadBuildId(SYMBOLS_TARGET_C_CFI);
  ASSERT_FALSE(id.empty());
  bool found = false;
  for (const Mapping& m : space->mappings()) {
    if (m.path == std::filesystem::canonical(SYMBOLS_TARGET_C_CFI).string()) {
      EXPECT_EQ(m.build_id, id);
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace profsh::symbols
