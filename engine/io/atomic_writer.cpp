#include "engine/io/atomic_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace profsh {

namespace {
constexpr size_t kBufferSize = 1 << 20;

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

struct AtomicWriter::Deflater {
  z_stream z;
  std::vector<char> out;
};

Result<std::unique_ptr<AtomicWriter>> AtomicWriter::Create(const std::string& path) {
  if (path.empty()) return Error{"output path is empty"};
  std::string temp = path + ".tmp.XXXXXX";
  std::vector<char> templ(temp.begin(), temp.end());
  templ.push_back('\0');
  int fd = mkostemp(templ.data(), O_CLOEXEC);
  if (fd < 0) return Error{path + ": cannot create output file: " + std::strerror(errno)};
  // mkostemp creates 0600; give the file the permissions a normal create would (umask applies).
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  return std::unique_ptr<AtomicWriter>(
      new AtomicWriter(path, std::string(templ.data()), fd, EndsWith(path, ".gz")));
}

AtomicWriter::AtomicWriter(std::string path, std::string temp_path, int fd, bool gzip)
    : path_(std::move(path)),
      temp_path_(std::move(temp_path)),
      fd_(fd),
      gzip_(gzip),
      buffer_(new char[kBufferSize]) {
  if (gzip_) {
    deflater_ = std::make_unique<Deflater>();
    std::memset(&deflater_->z, 0, sizeof(deflater_->z));
    deflater_->out.resize(kBufferSize);
    if (deflateInit2(&deflater_->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      Fail("cannot initialise zlib");
    }
  }
}

AtomicWriter::~AtomicWriter() {
  if (deflater_) deflateEnd(&deflater_->z);
  if (fd_ >= 0) close(fd_);
  if (!committed_) unlink(temp_path_.c_str());
}

void AtomicWriter::Fail(const std::string& what) {
  if (error_.empty()) error_ = path_ + ": " + what;
}

void AtomicWriter::WriteRaw(const char* data, size_t size) {
  while (size > 0 && error_.empty()) {
    ssize_t n = ::write(fd_, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      Fail(std::string("write failed: ") + std::strerror(errno));
      return;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void AtomicWriter::FlushBuffer() {
  if (buffered_ == 0) return;
  if (!gzip_) {
    WriteRaw(buffer_.get(), buffered_);
  } else {
    z_stream& z = deflater_->z;
    z.next_in = reinterpret_cast<Bytef*>(buffer_.get());
    z.avail_in = static_cast<uInt>(buffered_);
    while (z.avail_in > 0 && error_.empty()) {
      z.next_out = reinterpret_cast<Bytef*>(deflater_->out.data());
      z.avail_out = static_cast<uInt>(deflater_->out.size());
      deflate(&z, Z_NO_FLUSH);
      WriteRaw(deflater_->out.data(), deflater_->out.size() - z.avail_out);
    }
  }
  buffered_ = 0;
}

void AtomicWriter::Write(const char* data, size_t size) {
  bytes_written_ += size;
  if (size >= kBufferSize) {
    FlushBuffer();
    if (!gzip_) {
      WriteRaw(data, size);
      return;
    }
  }
  while (size > 0) {
    size_t n = std::min(size, kBufferSize - buffered_);
    std::memcpy(buffer_.get() + buffered_, data, n);
    buffered_ += n;
    data += n;
    size -= n;
    if (buffered_ == kBufferSize) FlushBuffer();
  }
}

Status AtomicWriter::Commit() {
  FlushBuffer();
  if (gzip_ && error_.empty()) {
    z_stream& z = deflater_->z;
    z.avail_in = 0;
    int rc;
    do {
      z.next_out = reinterpret_cast<Bytef*>(deflater_->out.data());
      z.avail_out = static_cast<uInt>(deflater_->out.size());
      rc = deflate(&z, Z_FINISH);
      WriteRaw(deflater_->out.data(), deflater_->out.size() - z.avail_out);
    } while (rc == Z_OK && error_.empty());
  }
  if (error_.empty() && fsync(fd_) != 0) Fail(std::string("fsync failed: ") + std::strerror(errno));
  if (close(fd_) != 0 && error_.empty()) Fail(std::string("close failed: ") + std::strerror(errno));
  fd_ = -1;
  if (!error_.empty()) return Error{error_};
  if (rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return Error{path_ + ": cannot move temporary file into place: " + std::strerror(errno)};
  }
  committed_ = true;
  return Status::Ok();
}

Status CheckWritable(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return Error{path + ": is a folder, not a file name"};
  auto writer = AtomicWriter::Create(path);
  if (!writer.ok()) return writer.error();
  return Status::Ok();  // the writer's destructor removes its temporary file
}

Status WriteFileAtomically(const std::string& path, std::string_view content) {
  auto writer = AtomicWriter::Create(path);
  if (!writer.ok()) return writer.error();
  writer.value()->Write(content);
  return writer.value()->Commit();
}

}  // namespace profsh
