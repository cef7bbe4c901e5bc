#include "engine/io/atomic_writer.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <fstream>
#include <sstream>

#include "tests/unit/test_util.h"

namespace profsh {
namespace {

std::vector<std::string> FilesWithPrefix(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.rfind(prefix, 0) == 0) out.push_back(name);
    }
    closedir(d);
  }
  return out;
}

TEST(AtomicWriter, WritesAndRenames) {
  std::string path = testing::TempPath("atomic.txt");
  ASSERT_TRUE(WriteFileAtomically(path, "hello").ok());
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  EXPECT_EQ(s, "hello");
  std::remove(path.c_str());
}

TEST(AtomicWriter, AbandonedWriteLeavesOldFileAndNoTemporary) {
  std::string path = testing::TempPath("atomic_keep.txt");
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  {
    auto w = AtomicWriter::Create(path);
    ASSERT_TRUE(w.ok());
    w.value()->Write("new content that is never committed");
  }
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  EXPECT_EQ(s, "old");
  std::string base = path.substr(path.rfind('/') + 1);
  auto leftovers = FilesWithPrefix("/tmp", base + ".tmp.");
  EXPECT_TRUE(leftovers.empty());
  std::remove(path.c_str());
}

TEST(AtomicWriter, MissingDirectoryIsAnError) {
  auto w = AtomicWriter::Create("/nonexistent-dir/x/out.json");
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("/nonexistent-dir/x/out.json"), std::string::npos);
}

TEST(AtomicWriter, GzipPathsAreCompressed) {
  std::string path = testing::TempPath("atomic.txt.gz");
  std::string payload(3 << 20, 'a');  // more than one buffer
  ASSERT_TRUE(WriteFileAtomically(path, payload).ok());
  gzFile f = gzopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::string back(payload.size() + 10, '\0');
  int n = gzread(f, back.data(), static_cast<unsigned>(back.size()));
  gzclose(f);
  EXPECT_EQ(static_cast<size_t>(n), payload.size());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_LT(static_cast<size_t>(st.st_size), payload.size() / 100);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace profsh
