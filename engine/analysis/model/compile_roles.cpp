#include "engine/analysis/model/compile_roles.h"

#include <charconv>

namespace profsh {

namespace {

constexpr std::string_view kRegionPrefix = "Torch-Compiled Region: ";

}  // namespace

CompileRole CompileRoleOfName(std::string_view n) {
  if (n.starts_with(kRegionPrefix)) return CompileRole::kRegion;
  if (n == kCompiledBackwardName) return CompileRole::kBackward;
  if (n == "CompiledFunction") return CompileRole::kForward;
  if (n.ends_with("(dynamo_timed)")) return CompileRole::kCompileWork;
  if (n == "TorchDynamo Cache Lookup") return CompileRole::kGuard;
  if (n.find("cpp_fused_") != std::string_view::npos) return CompileRole::kCppKernel;
  if (n.starts_with("triton_")) return CompileRole::kTritonLaunch;
  return CompileRole::kNone;
}

std::vector<CompileRole> CompileRolesOfTemplates(const Trace& trace) {
  std::vector<CompileRole> roles;
  roles.reserve(trace.events.templates().size());
  for (const EventTemplate& t : trace.events.templates())
    roles.push_back(CompileRoleOfName(trace.str(t.name)));
  return roles;
}

void ParseCompiledRegion(std::string_view name, int64_t* frame, int64_t* recompile) {
  *frame = *recompile = -1;
  if (!name.starts_with(kRegionPrefix)) return;
  std::string_view rest = name.substr(kRegionPrefix.size());
  const char* end = rest.data() + rest.size();
  auto [p, ec] = std::from_chars(rest.data(), end, *frame);
  if (ec != std::errc() || p == end || *p != '/') {
    *frame = -1;
    return;
  }
  if (std::from_chars(p + 1, end, *recompile).ec != std::errc()) *recompile = -1;
}

}  // namespace profsh
