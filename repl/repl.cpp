#include "repl/repl.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "repl/line_editor.h"

namespace profsh::repl {

namespace {

lua::Interpreter* g_running_session = nullptr;

void OnSigint(int) {
  if (g_running_session != nullptr) g_running_session->Interrupt();
}

std::string HistoryPath() {
  if (const char* p = std::getenv("PROFSH_HISTORY")) return p;
  if (const char* home = std::getenv("HOME")) return std::string(home) + "/.profsh_history";
  return "";
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// Runs `input` with Ctrl-C turned into an "interrupted!" error inside Lua.
lua::Interpreter::Eval EvaluateInterruptibly(lua::Interpreter& session, const std::string& input,
                                             std::string* out) {
  struct sigaction action = {}, previous = {};
  action.sa_handler = OnSigint;
  sigemptyset(&action.sa_mask);
  g_running_session = &session;
  sigaction(SIGINT, &action, &previous);
  auto result = session.Evaluate(input, out);
  sigaction(SIGINT, &previous, nullptr);
  g_running_session = nullptr;
  return result;
}

}  // namespace

int RunRepl(lua::Interpreter& session) {
  const bool terminal = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
  LineEditor editor(STDIN_FILENO, STDOUT_FILENO);
  std::string history_path;
  if (terminal) {
    history_path = HistoryPath();
    if (!history_path.empty()) editor.LoadHistory(history_path);
    editor.SetCompleter([&](const std::string& line, size_t cursor) {
      Completion c;
      c.candidates = session.Complete(line, cursor, &c.start);
      return c;
    });
    std::cout << "profsh "
              << "— type :help for help, Ctrl-D to exit" << std::endl;
  }

  std::string pending;
  while (true) {
    const std::string prompt = pending.empty() ? "profsh> " : ">> ";
    std::string line;
    if (terminal) {
      auto r = editor.ReadLine(prompt, &line);
      if (r == LineEditor::Result::kEof) break;
      if (r == LineEditor::Result::kInterrupted) {
        pending.clear();
        continue;
      }
      editor.AddHistory(line);
      editor.AppendHistoryFile(history_path, line);
    } else {
      if (!std::getline(std::cin, line)) break;
      // Echo the input so that a piped session reads like a transcript.
      std::cout << prompt << line << "\n";
    }

    std::string trimmed = Trim(line);
    if (pending.empty() && !trimmed.empty() && trimmed[0] == ':') {
      std::string command = trimmed.substr(1);
      std::string arg;
      size_t space = command.find(' ');
      if (space != std::string::npos) {
        arg = Trim(command.substr(space + 1));
        command = command.substr(0, space);
      }
      if (command == "help" || command == "h" || command == "?") {
        std::cout << session.Help(arg) << "\n";
      } else if (command == "quit" || command == "q" || command == "exit") {
        break;
      } else {
        std::cout << "unknown command ':" << command << "' (commands: :help [topic], :quit)\n";
      }
      std::cout.flush();
      continue;
    }
    if (pending.empty() && trimmed.empty()) continue;
    pending += pending.empty() ? line : "\n" + line;
    std::string output;
    std::cout.flush();
    auto result = EvaluateInterruptibly(session, pending, &output);
    std::fflush(stdout);
    if (result == lua::Interpreter::Eval::kIncomplete) continue;
    pending.clear();
    if (result == lua::Interpreter::Eval::kError) {
      std::cout << output << "\n";
    } else {
      std::cout << output;
    }
    std::cout.flush();
  }
  if (!pending.empty()) std::cout << "stdin: incomplete chunk at end of input\n";
  if (terminal) std::cout << "\n";
  return 0;
}

}  // namespace profsh::repl
