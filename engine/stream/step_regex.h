// Step markers as regular expressions (profsh run --step-marker): ECMAScript syntax, as
// std::regex reads it (the syntax of JavaScript and, for everything a step marker needs, of
// Python's re: \d, \., [...], (a|b), *, +, ?, {m,n}, ^, $). The injected runtime compiles one
// when it starts and tests a name once, when the name is first interned; nothing is matched per
// event. Back-references are refused: the matcher is the polynomial one, which keeps a long
// name from costing more than its length times the expression's size.
#pragma once

#include <cstddef>
#include <string>

namespace profsh::stream {

struct StepRegex;

// Names longer than this are not tested (they are never step names; stacks and shapes are).
inline constexpr size_t kStepRegexLongestName = 1024;

// The compiled expression, or null with *why set (std::regex's reason).
const StepRegex* CompileStepRegex(const char* expression, std::string* why);
void FreeStepRegex(const StepRegex* regex);

// Whether `regex` matches somewhere in the `length` bytes at `text` (as re.search does).
bool StepRegexFind(const StepRegex* regex, const char* text, size_t length);

}  // namespace profsh::stream
