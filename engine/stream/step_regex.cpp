#include "engine/stream/step_regex.h"

#include <regex>

namespace profsh::stream {

struct StepRegex {
  std::regex expression;
};

const StepRegex* CompileStepRegex(const char* expression, std::string* why) {
  // The injected runtime is built without exceptions except in this file (its CMakeLists):
  // std::regex reports a malformed expression only by throwing.
  try {
    return new StepRegex{std::regex(expression, std::regex::ECMAScript | std::regex::nosubs |
                                                    std::regex_constants::__polynomial)};
  } catch (const std::regex_error& e) {
    if (why) *why = e.what();
  } catch (...) {
    if (why) *why = "it could not be compiled";
  }
  return nullptr;
}

void FreeStepRegex(const StepRegex* regex) {
  delete regex;
}

bool StepRegexFind(const StepRegex* regex, const char* text, size_t length) {
  if (length > kStepRegexLongestName) return false;
  try {
    return std::regex_search(text, text + length, regex->expression);
  } catch (...) {
    return false;  // std::regex_error (complexity, stack): not a step marker
  }
}

}  // namespace profsh::stream
