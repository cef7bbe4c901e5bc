// The files profsh serve lists and serves: tensorboard_trace_handler's layout (profsh serve) and
// a run's windows (profsh run --serve), in numeric order, and nothing else.
#include "engine/serve/log_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <string>

namespace profsh::serve {
namespace {

struct Folder {
  std::string path;
  Folder() {
    char name[] = "/tmp/profsh_serve_dir_XXXXXX";
    char real[PATH_MAX];
    path = realpath(mkdtemp(name), real);
  }
  ~Folder() { std::filesystem::remove_all(path); }
  void Touch(const std::string& file) {
    std::filesystem::create_directories(std::filesystem::path(path + "/" + file).parent_path());
    std::ofstream(path + "/" + file) << "{}";
  }
};

TEST(ServeLogDir, RunWindowsAreBasePidWindow) {
  TraceNaming naming = TraceNaming::RunWindows("job");
  EXPECT_FALSE(naming.recursive());
  EXPECT_TRUE(naming.Matches("job.123.4.profsh"));
  EXPECT_TRUE(naming.Matches("job.123.4.json"));
  EXPECT_TRUE(naming.Matches("job.123.4.json.gz"));
  EXPECT_FALSE(naming.Matches("job.profsh"));         // the whole run's trace
  EXPECT_FALSE(naming.Matches("job.123.profsh"));     // no window
  EXPECT_FALSE(naming.Matches("job.12x.4.profsh"));   // not a pid
  EXPECT_FALSE(naming.Matches("jobs.123.4.profsh"));  // another base
  EXPECT_FALSE(naming.Matches("job.123.4.txt"));
  std::string worker, span;
  naming.Split("job.123.45.profsh", &worker, &span);
  EXPECT_EQ(worker, "123");
  EXPECT_EQ(span, "45");
  EXPECT_EQ(naming.RunName(""), "job");
}

TEST(ServeLogDir, ScansWindowsInNumericOrderAndOnlyThem) {
  Folder folder;
  for (const char* f :
       {"job.7.10.profsh", "job.7.9.profsh", "job.12.1.profsh", "job.profsh", "other.7.1.profsh",
        "notes.txt", "sub/job.7.1.profsh", "run/w.1.pt.trace.json"})
    folder.Touch(f);
  std::vector<serve::Run> runs = ScanLogDir(folder.path, TraceNaming::RunWindows("job"));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].name, "job");
  std::vector<std::string> paths;
  for (const TraceFile& t : runs[0].traces) paths.push_back(t.path);
  EXPECT_EQ(paths,
            (std::vector<std::string>{"job.7.9.profsh", "job.7.10.profsh", "job.12.1.profsh"}));
  TraceNaming windows = TraceNaming::RunWindows("job");
  EXPECT_EQ(ResolveUnder(folder.path, "job.7.9.profsh", windows).status, 200);
  EXPECT_EQ(ResolveUnder(folder.path, "notes.txt", windows).status, 404);
  EXPECT_EQ(ResolveUnder(folder.path, "job.profsh", windows).status, 404);
  EXPECT_EQ(ResolveUnder(folder.path, "sub/job.7.1.profsh", windows).status, 404);
  EXPECT_EQ(ResolveUnder(folder.path, "../job.7.9.profsh", windows).status, 403);
}

TEST(ServeLogDir, TensorBoardLayoutServesTracesOnly) {
  Folder folder;
  folder.Touch("run/w.1.pt.trace.json");
  folder.Touch("run/notes.txt");
  TraceNaming tb = TraceNaming::TensorBoard();
  std::vector<serve::Run> runs = ScanLogDir(folder.path, tb);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].name, "run");
  EXPECT_EQ(ResolveUnder(folder.path, "run/w.1.pt.trace.json", tb).status, 200);
  EXPECT_EQ(ResolveUnder(folder.path, "run/notes.txt", tb).status, 404);
}

// Workers named by numbers and by words in one run: numbers first, in numeric order, then the
// words in text order (a comparison mixing the two orders had a cycle: 9 < 10 < 1x < 9).
TEST(ServeLogDir, NumbersBeforeNamesInOneOrder) {
  Folder folder;
  for (const char* worker : {"1x", "10", "w", "9"})
    folder.Touch(std::string("run/") + worker + ".1.pt.trace.json");
  std::vector<serve::Run> runs = ScanLogDir(folder.path, TraceNaming::TensorBoard());
  ASSERT_EQ(runs.size(), 1u);
  std::vector<std::string> paths;
  for (const TraceFile& t : runs[0].traces) paths.push_back(t.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"run/9.1.pt.trace.json", "run/10.1.pt.trace.json",
                                             "run/1x.1.pt.trace.json", "run/w.1.pt.trace.json"}));
}

// profsh run --serve with an -o an earlier run used: the windows already in the folder when the
// run starts are not listed or served, unless the run writes them again (a new file under the
// same name, or the same file rewritten); windows it adds are.
TEST(ServeLogDir, WindowsOfAnEarlierRunAreLeftOut) {
  Folder folder;
  for (const char* f : {"job.7.1.profsh", "job.7.2.json", "other.7.1.profsh", "notes.txt"})
    folder.Touch(f);
  TraceNaming windows = TraceNaming::RunWindows("job");
  EXPECT_EQ(windows.LeaveOutPresentWindows(folder.path), 2u);
  EXPECT_TRUE(ScanLogDir(folder.path, windows).empty());
  EXPECT_EQ(ResolveUnder(folder.path, "job.7.1.profsh", windows).status, 404);
  EXPECT_EQ(ResolveUnder(folder.path, "job.7.2.json", windows).status, 404);

  folder.Touch("job.8.1.profsh");  // this run's
  {
    std::ofstream(folder.path + "/job.7.2.json.tmp") << "{\"traceEvents\": []}";
    std::filesystem::rename(folder.path + "/job.7.2.json.tmp", folder.path + "/job.7.2.json");
  }
  std::vector<serve::Run> runs = ScanLogDir(folder.path, windows);
  ASSERT_EQ(runs.size(), 1u);
  std::vector<std::string> paths;
  for (const TraceFile& t : runs[0].traces) paths.push_back(t.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"job.7.2.json", "job.8.1.profsh"}));
  EXPECT_EQ(ResolveUnder(folder.path, "job.8.1.profsh", windows).status, 200);
  EXPECT_EQ(ResolveUnder(folder.path, "job.7.2.json", windows).status, 200);
  EXPECT_EQ(ResolveUnder(folder.path, "job.7.1.profsh", windows).status, 404);

  std::ofstream(folder.path + "/job.7.1.profsh", std::ios::app) << " ";  // rewritten in place
  EXPECT_EQ(ResolveUnder(folder.path, "job.7.1.profsh", windows).status, 200);
  EXPECT_EQ(ScanLogDir(folder.path, windows)[0].traces.size(), 3u);
  // A naming without the note (profsh serve's, or a run's made before) lists them all.
  EXPECT_EQ(ScanLogDir(folder.path, TraceNaming::RunWindows("job"))[0].traces.size(), 3u);
}

}  // namespace
}  // namespace profsh::serve
