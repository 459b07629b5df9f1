#include "tools/cli/cli_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "tools/cli/escape.h"

namespace qptwin::cli {
namespace {

std::string Problem(bool reading, const std::string& path, int errnum) {
  const std::string name = path != "-" ? EscapeControl(path)
                           : reading   ? "standard input"
                                       : "standard output";
  return (reading ? "cannot read " : "cannot write ") + name + ": " + ErrnoText(errnum);
}

}  // namespace

std::string ErrnoText(int errnum) {
  std::string text = std::strerror(errnum);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

int StreamErrno(const std::ios& stream) {
  if (const auto* fd = dynamic_cast<const FdBuf*>(stream.rdbuf()); fd && fd->error()) {
    return fd->error();
  }
  return stream.bad() ? EIO : 0;
}

bool ReadInputFile(const std::string& path, std::istream& in, std::string* text,
                   std::string* error) {
  text->clear();
  if (path == "-") {
    char block[1 << 16];
    while (in.read(block, sizeof block) || in.gcount() > 0) text->append(block, in.gcount());
    if (int e = StreamErrno(in)) {
      *error = Problem(true, path, e);
      return false;
    }
    return true;
  }
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = Problem(true, path, errno);
    return false;
  }
  struct stat st;
  int e = fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
  char block[1 << 16];
  while (e == 0) {
    const ssize_t n = read(fd, block, sizeof block);
    if (n == 0) break;
    if (n > 0) {
      text->append(block, static_cast<size_t>(n));
    } else if (errno != EINTR) {
      e = errno;
    }
  }
  close(fd);
  if (e != 0) {
    *error = Problem(true, path, e);
    return false;
  }
  return true;
}

bool WriteOutputFile(const std::string& path, std::string_view text, std::ostream& out,
                     std::string* error) {
  if (path == "-") {
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (int e = StreamErrno(out)) {
      *error = Problem(false, path, e);
      return false;
    }
    return true;
  }
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    *error = Problem(false, path, errno);
    return false;
  }
  int e = 0;
  for (size_t done = 0; done < text.size() && e == 0;) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n >= 0) {
      done += static_cast<size_t>(n);
    } else if (errno != EINTR) {
      e = errno;
    }
  }
  if (close(fd) != 0 && e == 0) e = errno;
  if (e != 0) {
    *error = Problem(false, path, e);
    return false;
  }
  return true;
}

FdBuf::FdBuf(int fd, bool output) : fd_(fd), output_(output), buf_(new char[kBufferBytes]) {
  if (output_) {
    setp(buf_.get(), buf_.get() + kBufferBytes);
  } else {
    setg(buf_.get(), buf_.get(), buf_.get());
  }
}

FdBuf::~FdBuf() {
  if (output_) FlushBuffer();
}

bool FdBuf::WriteAll(const char* p, size_t n) {
  if (error_ != 0) return false;
  while (n > 0) {
    const ssize_t w = write(fd_, p, n);
    if (w >= 0) {
      p += w;
      n -= static_cast<size_t>(w);
    } else if (errno != EINTR) {
      error_ = errno;
      return false;
    }
  }
  return true;
}

bool FdBuf::FlushBuffer() {
  const size_t n = static_cast<size_t>(pptr() - pbase());
  setp(buf_.get(), buf_.get() + kBufferBytes);
  return WriteAll(buf_.get(), n);
}

FdBuf::int_type FdBuf::overflow(int_type c) {
  if (!output_ || !FlushBuffer()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

std::streamsize FdBuf::xsputn(const char* s, std::streamsize n) {
  if (!output_ || error_ != 0) return 0;
  if (n <= epptr() - pptr()) {
    std::memcpy(pptr(), s, static_cast<size_t>(n));
    pbump(static_cast<int>(n));
    return n;
  }
  if (!FlushBuffer() || !WriteAll(s, static_cast<size_t>(n))) return 0;
  return n;
}

int FdBuf::sync() {
  if (!output_) return 0;
  return FlushBuffer() ? 0 : -1;
}

FdBuf::int_type FdBuf::underflow() {
  if (output_ || error_ != 0) return traits_type::eof();
  for (;;) {
    const ssize_t n = read(fd_, buf_.get(), kBufferBytes);
    if (n > 0) {
      setg(buf_.get(), buf_.get(), buf_.get() + n);
      return traits_type::to_int_type(*gptr());
    }
    if (n == 0) return traits_type::eof();
    if (errno != EINTR) {
      error_ = errno;
      return traits_type::eof();
    }
  }
}

std::streamsize FdBuf::xsgetn(char* s, std::streamsize n) {
  std::streamsize done = 0;
  while (done < n) {
    if (gptr() == egptr()) {
      if (n - done >= static_cast<std::streamsize>(kBufferBytes) && error_ == 0) {
        const ssize_t r = read(fd_, s + done, static_cast<size_t>(n - done));  // large: direct
        if (r > 0) {
          done += r;
          continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) error_ = errno;
        break;
      }
      if (traits_type::eq_int_type(underflow(), traits_type::eof())) break;
    }
    const std::streamsize k = std::min<std::streamsize>(n - done, egptr() - gptr());
    std::memcpy(s + done, gptr(), static_cast<size_t>(k));
    gbump(static_cast<int>(k));
    done += k;
  }
  return done;
}

}  // namespace qptwin::cli
