// Files and the standard streams of the qptwin subcommands, with errors that name the file
// and the problem in strerror's words: "cannot read x.qps: is a directory".
//
// Contract:
//  1. Nothing here throws; a failure returns false (or an errno) and sets *error to one line,
//     control bytes of the path escaped.
//  2. Path "-" means the command's `in` (reading) or `out` (writing).
//  3. Written files are complete when WriteOutputFile returns true: written, flushed and
//     closed without error (a full disk is reported, not lost).
//  4. FdBuf remembers the errno of its first failed read or write; StreamErrno reads it, so
//     main() reports output that never reached stdout (/dev/full, a closed descriptor).
#pragma once

#include <istream>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace qptwin::cli {

// strerror's text starting lower-case: "no such file or directory", "permission denied".
std::string ErrnoText(int errnum);

// Reads all of `path` ("-": `in`) into *text. A directory is an error (EISDIR), not empty.
bool ReadInputFile(const std::string& path, std::istream& in, std::string* text,
                   std::string* error);

// Writes `text` to `path` ("-": `out`, flushed).
bool WriteOutputFile(const std::string& path, std::string_view text, std::ostream& out,
                     std::string* error);

// The errno behind a failed stream: an FdBuf's first error; EIO for another stream in a bad
// state; 0 when nothing failed.
int StreamErrno(const std::ios& stream);

// A stream buffer over a file descriptor that remembers the first read or write error.
class FdBuf : public std::streambuf {
 public:
  FdBuf(int fd, bool output);
  ~FdBuf() override;
  FdBuf(const FdBuf&) = delete;
  FdBuf& operator=(const FdBuf&) = delete;

  int error() const { return error_; }
  void set_error(int errnum) { if (error_ == 0) error_ = errnum; }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;
  int_type underflow() override;
  std::streamsize xsgetn(char* s, std::streamsize n) override;

 private:
  static constexpr size_t kBufferBytes = 1 << 16;
  bool WriteAll(const char* p, size_t n);
  bool FlushBuffer();

  int fd_;
  bool output_;
  int error_ = 0;
  std::unique_ptr<char[]> buf_;
};

}  // namespace qptwin::cli
