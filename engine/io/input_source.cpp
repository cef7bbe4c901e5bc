#include "engine/io/input_source.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace profsh {

namespace {

constexpr size_t kHeadBytes = 4096;

std::string ErrnoText() {
  return std::strerror(errno);
}

class MappedInput final : public InputSource {
 public:
  MappedInput(std::string path, const char* data, size_t size)
      : InputSource(std::move(path)), data_(data), size_(size) {}
  ~MappedInput() override {
    if (data_ != nullptr) munmap(const_cast<char*>(data_), size_);
  }
  std::string_view WholeContent() const override { return {data_, size_}; }
  Result<size_t> Read(char* dst, size_t max) override {
    size_t n = std::min(max, size_ - offset_);
    std::memcpy(dst, data_ + offset_, n);
    offset_ += n;
    return n;
  }
  void ReleaseBefore(size_t offset) override {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t end = std::min(offset, size_) / page * page;
    if (end > released_) {
      // A private read-only mapping of a file: dropped pages would be read again from the file.
      madvise(const_cast<char*>(data_) + released_, end - released_, MADV_DONTNEED);
      released_ = end;
    }
  }
  std::string_view Head() const override { return {data_, std::min(size_, kHeadBytes)}; }
  size_t FileSize() const override { return size_; }
  size_t ContentSizeHint() const override { return size_; }

 private:
  const char* data_;
  size_t size_;
  size_t offset_ = 0;
  size_t released_ = 0;
};

class MemoryInputImpl final : public InputSource {
 public:
  MemoryInputImpl(std::string name, std::string content)
      : InputSource(std::move(name)), content_(std::move(content)) {}
  std::string_view WholeContent() const override { return content_; }
  Result<size_t> Read(char* dst, size_t max) override {
    size_t n = std::min(max, content_.size() - offset_);
    std::memcpy(dst, content_.data() + offset_, n);
    offset_ += n;
    return n;
  }
  std::string_view Head() const override {
    return std::string_view(content_).substr(0, kHeadBytes);
  }
  size_t FileSize() const override { return content_.size(); }
  size_t ContentSizeHint() const override { return content_.size(); }

 private:
  std::string content_;
  size_t offset_ = 0;
};

// Inflates a (possibly multi-member) gzip stream read from a file descriptor.
class GzipInput final : public InputSource {
 public:
  GzipInput(std::string path, int fd, size_t file_size)
      : InputSource(std::move(path)), fd_(fd), file_size_(file_size) {
    // Reads of up to 1 MiB, but no bigger than the file: a buffer is zeroed when made.
    in_.resize(std::clamp<size_t>(file_size, 1, size_t{1} << 20));
    std::memset(&z_, 0, sizeof(z_));
  }
  ~GzipInput() override {
    if (initialized_) inflateEnd(&z_);
    close(fd_);
  }

  Status Init() {
    if (inflateInit2(&z_, 15 + 16) != Z_OK) return Error{path() + ": cannot initialise zlib"};
    initialized_ = true;
    // Decompress the head for format detection; Read() hands these bytes out first.
    head_.resize(kHeadBytes);
    auto n = Inflate(head_.data(), head_.size());
    if (!n.ok()) return n.error();
    head_.resize(n.value());
    if (head_.empty()) return Error{cut_.empty() ? path() + ": gzip stream holds no data" : cut_};
    // The gzip trailer's ISIZE is the decompressed size modulo 2^32: a hint only.
    uint32_t isize = 0;
    if (file_size_ >= 4 && pread(fd_, &isize, 4, static_cast<off_t>(file_size_ - 4)) == 4) {
      size_hint_ = isize;
    }
    return Status::Ok();
  }

  Result<size_t> Read(char* dst, size_t max) override {
    size_t produced = 0;
    if (head_offset_ < head_.size()) {
      size_t n = std::min(max, head_.size() - head_offset_);
      std::memcpy(dst, head_.data() + head_offset_, n);
      head_offset_ += n;
      produced += n;
      if (produced == max) return produced;
    }
    auto more = Inflate(dst + produced, max - produced);
    if (!more.ok()) return more.error();
    produced += more.value();
    // The data ends at a cut: an error unless the reader keeps what came before it.
    if (produced == 0 && !cut_.empty() && !keep_data_before_cut_) return Error{cut_};
    return produced;
  }
  void KeepDataBeforeCut() override { keep_data_before_cut_ = true; }
  std::string CutShort() const override { return cut_; }
  std::string_view Head() const override { return head_; }
  size_t FileSize() const override { return file_size_; }
  size_t ContentSizeHint() const override { return size_hint_; }
  bool compressed() const override { return true; }

 private:
  Result<size_t> Inflate(char* dst, size_t max) {
    z_.next_out = reinterpret_cast<Bytef*>(dst);
    z_.avail_out = static_cast<uInt>(std::min<size_t>(max, 1u << 30));
    size_t want = z_.avail_out;
    while (z_.avail_out > 0 && !finished_) {
      if (z_.avail_in == 0) {
        ssize_t n = read(fd_, in_.data(), in_.size());
        if (n < 0) return Error{path() + ": read failed: " + ErrnoText()};
        if (n == 0) {
          if (stream_open_) {
            // What was inflated before the cut is handed out; Read() decides whether the cut
            // is an error.
            cut_ = path() + ": gzip stream cut short (compressed byte " +
                   std::to_string(consumed_) + " of " + std::to_string(file_size_) + ")";
          }
          finished_ = true;
          break;
        }
        z_.next_in = in_.data();
        z_.avail_in = static_cast<uInt>(n);
      }
      size_t avail_before = z_.avail_in;
      stream_open_ = true;
      int rc = inflate(&z_, Z_NO_FLUSH);
      consumed_ += avail_before - z_.avail_in;
      if (rc == Z_STREAM_END) {
        stream_open_ = false;
        // Another gzip member may follow (concatenated .gz files are valid gzip).
        if (z_.avail_in == 0) {
          unsigned char probe;
          ssize_t n = read(fd_, &probe, 1);
          if (n <= 0) {
            finished_ = true;
            break;
          }
          in_[0] = probe;
          z_.next_in = in_.data();
          z_.avail_in = 1;
        }
        inflateReset(&z_);
        continue;
      }
      if (rc == Z_BUF_ERROR && z_.avail_in == 0) continue;
      if (rc != Z_OK) {
        return Error{path() + ": corrupt gzip data near compressed byte " +
                     std::to_string(consumed_) + (z_.msg ? std::string(": ") + z_.msg : "")};
      }
    }
    return want - z_.avail_out;
  }

  int fd_;
  size_t file_size_;
  size_t size_hint_ = 0;
  size_t consumed_ = 0;
  z_stream z_;
  bool initialized_ = false;
  bool finished_ = false;
  bool stream_open_ = false;
  bool keep_data_before_cut_ = false;
  std::string cut_;  // the error, when the stream was cut short
  std::vector<Bytef> in_;
  std::string head_;
  size_t head_offset_ = 0;
};

}  // namespace

Result<std::unique_ptr<InputSource>> OpenInput(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{path + ": cannot open: " + ErrnoText()};
  struct stat st;
  if (fstat(fd, &st) != 0) {
    std::string msg = path + ": cannot stat: " + ErrnoText();
    close(fd);
    return Error{msg};
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return Error{path + ": is a directory, not a trace file"};
  }
  if (!S_ISREG(st.st_mode)) {
    // Pipes and devices: read everything into memory.
    std::string content;
    char buf[65536];
    while (true) {
      ssize_t n = read(fd, buf, sizeof(buf));
      if (n < 0) {
        std::string msg = path + ": read failed: " + ErrnoText();
        close(fd);
        return Error{msg};
      }
      if (n == 0) break;
      content.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    if (content.empty()) return Error{path + ": file is empty"};
    return MemoryInput(path, std::move(content));
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    close(fd);
    return Error{path + ": file is empty"};
  }
  unsigned char magic[2] = {0, 0};
  ssize_t got = pread(fd, magic, 2, 0);
  if (got < 0) {
    std::string msg = path + ": read failed: " + ErrnoText();
    close(fd);
    return Error{msg};
  }
  if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    auto gz = std::make_unique<GzipInput>(path, fd, size);
    Status s = gz->Init();
    if (!s.ok()) return Error{s.message()};
    return std::unique_ptr<InputSource>(std::move(gz));
  }
  void* data = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (data == MAP_FAILED) return Error{path + ": cannot map file: " + ErrnoText()};
  madvise(data, size, MADV_SEQUENTIAL);
  return std::unique_ptr<InputSource>(
      std::make_unique<MappedInput>(path, static_cast<const char*>(data), size));
}

std::unique_ptr<InputSource> MemoryInput(std::string name, std::string content) {
  return std::make_unique<MemoryInputImpl>(std::move(name), std::move(content));
}

}  // namespace profsh
