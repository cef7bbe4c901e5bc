#include "engine/session/cut_streams.h"

#include <sys/stat.h>

#include "engine/util/human_text.h"

namespace profsh {

namespace {

constexpr size_t kNamed = 5;
constexpr size_t kCommandChars = 80;

std::string WhyCut(int64_t pid, const ProcessEndings& endings) {
  if (auto it = endings.known.find(pid); it != endings.known.end()) return it->second;
  if (!endings.just_recorded) return "killed, or still running";
  struct stat st;
  const std::string proc = "/proc/" + std::to_string(pid);
  return stat(proc.c_str(), &st) == 0 ? "still running" : "killed by a signal";
}

std::string ShortCommand(const std::string& command) {
  if (command.size() <= kCommandChars) return command;
  size_t cut = kCommandChars;
  while (cut > 0 && (static_cast<unsigned char>(command[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return command.substr(0, cut) + "...";
}

}  // namespace

std::string CutStreamsWarning(const std::vector<CutStream>& cut, const ProcessEndings& endings) {
  if (cut.empty()) return "";
  const bool one = cut.size() == 1;
  std::string text = Plural(cut.size(), "process", "processes") +
                     (one ? " did not finish its stream: " : " did not finish their streams: ");
  for (size_t i = 0; i < cut.size() && i < kNamed; ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(cut[i].pid) + " (" + ShortCommand(cut[i].command) + ") " +
            WhyCut(cut[i].pid, endings);
  }
  if (cut.size() > kNamed) text += " and " + std::to_string(cut.size() - kNamed) + " more";
  text +=
      one ? "; events up to its last drain are kept" : "; events up to their last drain are kept";
  return text;
}

}  // namespace profsh
