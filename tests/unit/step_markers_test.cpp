// Step markers on the command line (regular expressions, engine/stream/step_regex.h) and the
// warning that names streams left without an end (engine/session/cut_streams.h).
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>
#include <vector>

#include "engine/recording/launcher.h"
#include "engine/session/cut_streams.h"
#include "engine/stream/step_regex.h"

namespace profsh {
namespace {

bool Finds(const char* expression, const std::string& name) {
  const stream::StepRegex* regex = stream::CompileStepRegex(expression, nullptr);
  EXPECT_NE(regex, nullptr) << expression;
  if (regex == nullptr) return false;
  const bool found = stream::StepRegexFind(regex, name.data(), name.size());
  stream::FreeStepRegex(regex);
  return found;
}

TEST(StepRegex, ReadsWhatUsersWrite) {
  EXPECT_TRUE(Finds("^Optimizer\\.step#", "Optimizer.step#SGD.step"));
  EXPECT_FALSE(Finds("^Optimizer\\.step#", "Optimizer.zero_grad#SGD.zero_grad"));
  EXPECT_FALSE(Finds("^Optimizer\\.step#", "xOptimizer.step#SGD.step"));
  EXPECT_FALSE(Finds("^Optimizer\\.step", "OptimizerXstep"));  // \. is a dot, not any character
  EXPECT_TRUE(Finds("step", "Optimizer.step#SGD.step"));       // searched anywhere
  EXPECT_TRUE(Finds("^enumerate\\(DataLoader\\)#",
                    "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"));
  EXPECT_TRUE(Finds("^ProfilerStep#\\d+$", "ProfilerStep#12"));
  EXPECT_FALSE(Finds("^ProfilerStep#\\d+$", "ProfilerStep#12a"));
  EXPECT_TRUE(Finds("^(train|eval)_step$", "eval_step"));
  // A name longer than any step name is not tested.
  EXPECT_FALSE(Finds("x", std::string(stream::kStepRegexLongestName + 1, 'x')));
  EXPECT_TRUE(Finds("x", std::string(stream::kStepRegexLongestName, 'x')));
}

TEST(StepRegex, MalformedExpressionsSayWhy) {
  std::string why;
  EXPECT_EQ(stream::CompileStepRegex("(ab", &why), nullptr);
  EXPECT_FALSE(why.empty());
  // Back-references would make matching exponential: refused.
  EXPECT_EQ(stream::CompileStepRegex("(a)\\1", &why), nullptr);
  const Status st = CheckStepMarker("[z-a]", StepMarkerSyntax::kRegex);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("malformed regular expression '[z-a]': "), std::string::npos);
  // The Lua API's syntax is unchanged.
  EXPECT_TRUE(CheckStepMarker("^ProfilerStep#%d+").ok());
  EXPECT_FALSE(CheckStepMarker("^step[").ok());
}

TEST(CutStreams, NamesProcessesAndWhy) {
  EXPECT_EQ(CutStreamsWarning({}, {}), "");
  ProcessEndings endings;
  endings.known[42] = "killed by SIGINT";
  EXPECT_EQ(CutStreamsWarning({{42, "python3 train.py"}}, endings),
            "1 process did not finish its stream: 42 (python3 train.py) killed by SIGINT; events "
            "up to its last drain are kept");
  // Read later (profsh.load of a kept folder): nothing is known of how it ended.
  EXPECT_EQ(CutStreamsWarning({{7, "a"}, {8, "b"}}, {}),
            "2 processes did not finish their streams: 7 (a) killed, or still running, 8 (b) "
            "killed, or still running; events up to their last drain are kept");
  // Right after the run: a process still in /proc is running (this one is).
  ProcessEndings just;
  just.just_recorded = true;
  const std::string self = CutStreamsWarning({{getpid(), "me"}}, just);
  EXPECT_NE(self.find("(me) still running"), std::string::npos) << self;
  std::vector<CutStream> many;
  for (int i = 1; i <= 7; ++i) many.push_back({i, std::string(100, 'c')});
  const std::string text = CutStreamsWarning(many, {});
  EXPECT_NE(text.find(std::string(80, 'c') + "...)"), std::string::npos);
  EXPECT_NE(text.find(" and 2 more;"), std::string::npos) << text;
}

}  // namespace
}  // namespace profsh
