#include "tools/exec/user_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace qptwin::exec {
namespace {

// 0 when every page of [addr, addr + len) is mapped (mincore fails with ENOMEM otherwise).
int CheckMapped(uintptr_t addr, size_t len) {
  std::vector<unsigned char> vec(len / UserMemory::kPage + 1);
  return mincore(reinterpret_cast<void*>(addr), len, vec.data()) == 0 ? 0 : EFAULT;
}

// Writes [addr, addr + len) of this process into fd at offset through the raw system call (the
// libc wrapper is intercepted by the sanitizers, which check the range as a user-space read).
int WritePages(int fd, uintptr_t addr, size_t len, uint64_t offset) {
  while (len > 0) {
    const long n = syscall(SYS_pwrite64, fd, reinterpret_cast<const void*>(addr), len,
                           static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    addr += static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
    len -= static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace

UserMemory::~UserMemory() {
  if (fd_ >= 0) close(fd_);
}

int UserMemory::EnsureFile() {
  if (fd_ >= 0) return 0;
  fd_ = memfd_create("qptwin-mr", MFD_CLOEXEC);
  return fd_ >= 0 ? 0 : errno;
}

int UserMemory::Share(uintptr_t first, size_t n) {
  const size_t bytes = n * kPage;
  // Reuse a freed run that is big enough, else grow the file.
  uint64_t offset = file_size_;
  auto run = free_runs_.begin();
  for (; run != free_runs_.end() && static_cast<size_t>(run->second) < n; ++run) {
  }
  if (run != free_runs_.end()) {
    offset = run->first;
    const int left = run->second - static_cast<int>(n);
    free_runs_.erase(run);
    if (left > 0) free_runs_[offset + bytes] = left;
  } else {
    if (ftruncate(fd_, static_cast<off_t>(file_size_ + bytes)) != 0) return ENOMEM;
    file_size_ += bytes;
  }
  void* tmp = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                   static_cast<off_t>(offset));
  if (tmp == MAP_FAILED) return ENOMEM;
  // The whole pages move into the file, also the bytes around the program's buffer that belong
  // to its other objects. The kernel copies them (pwrite), so no user-space read touches bytes
  // outside the buffer (AddressSanitizer would rightly call that an overflow).
  if (int err = WritePages(fd_, first, bytes, offset)) {
    munmap(tmp, bytes);
    return err;
  }
  // mremap replaces the program's pages in one step: no moment where they are unmapped.
  if (mremap(tmp, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, reinterpret_cast<void*>(first)) ==
      MAP_FAILED) {
    munmap(tmp, bytes);
    return ENOMEM;
  }
  for (size_t i = 0; i < n; ++i) pages_[first + i * kPage] = Page{offset + i * kPage, 0};
  return 0;
}

int UserMemory::Alias(uint8_t* user, size_t length, uint8_t* model) {
  if (length == 0) return 0;
  const uintptr_t first = reinterpret_cast<uintptr_t>(user) / kPage * kPage;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(user) + length + kPage - 1) / kPage * kPage;
  if (int err = CheckMapped(first, end - first)) return err;
  if (int err = EnsureFile()) return err;
  // Pages not yet shared, in runs.
  for (uintptr_t p = first; p < end;) {
    if (pages_.count(p)) {
      p += kPage;
      continue;
    }
    uintptr_t q = p;
    while (q < end && !pages_.count(q)) q += kPage;
    if (int err = Share(p, (q - p) / kPage)) return err;
    p = q;
  }
  // Map the model's buffer onto the same memfd pages, a run of consecutive offsets at once.
  for (uintptr_t p = first; p < end;) {
    const uint64_t off = pages_[p].file_offset;
    uintptr_t q = p + kPage;
    while (q < end && pages_[q].file_offset == off + (q - p)) q += kPage;
    void* at = model + (p - first);
    if (mmap(at, q - p, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd_,
             static_cast<off_t>(off)) == MAP_FAILED) {
      return ENOMEM;
    }
    p = q;
  }
  for (uintptr_t p = first; p < end; p += kPage) ++pages_[p].refs;
  return 0;
}

void UserMemory::Release(uint8_t* user, size_t length) {
  if (length == 0) return;
  const uintptr_t first = reinterpret_cast<uintptr_t>(user) / kPage * kPage;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(user) + length + kPage - 1) / kPage * kPage;
  for (uintptr_t p = first; p < end; p += kPage) {
    auto it = pages_.find(p);
    if (it == pages_.end() || --it->second.refs > 0) continue;
    // The last registration of this page: a private copy for the program (if it still has
    // the page mapped), then the memfd page is freed.
    void* addr = reinterpret_cast<void*>(p);
    if (CheckMapped(p, kPage) == 0) {
      void* tmp = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (tmp != MAP_FAILED) {
        // The file holds the page's bytes: the kernel copies them (pread), for the same reason
        // as in Share.
        const long n = syscall(SYS_pread64, fd_, tmp, kPage,
                               static_cast<off_t>(it->second.file_offset));
        if (n != static_cast<long>(kPage) ||
            mremap(tmp, kPage, kPage, MREMAP_MAYMOVE | MREMAP_FIXED, addr) == MAP_FAILED) {
          munmap(tmp, kPage);
        }
      }
    }
    fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
              static_cast<off_t>(it->second.file_offset), kPage);
    free_runs_[it->second.file_offset] = 1;
    pages_.erase(it);
  }
}

}  // namespace qptwin::exec
