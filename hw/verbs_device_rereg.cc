// ibv_rereg_mr: the device's answer, unchanged. A new translation gets a new buffer that the
// region owns from then on (the old one is freed once the device let go of it).
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "hw/verbs_device.h"

namespace qptwin::hw {

int VerbsDevice::ReregMr(MrHandle h, int flags, PdHandle pd, size_t length, AccessFlags access,
                         uint8_t** buf, uint32_t* lkey, uint32_t* rkey) {
  MrEntry* m = mrs_.Find(h);
  if (m == nullptr) return EINVAL;
  ibv_pd* new_pd = nullptr;
  if (flags & rereg_flag::kChangePd) {
    PdEntry* p = pds_.Find(pd);
    if (p == nullptr) return EINVAL;
    new_pd = p->pd;
  }
  void* mem = nullptr;
  if ((flags & rereg_flag::kChangeTranslation) && length > 0) {
    const long page = sysconf(_SC_PAGESIZE);
    if (int ret = posix_memalign(&mem, static_cast<size_t>(page), length)) return ret;
    std::memset(mem, 0, length);
  }
  errno = 0;
  // ibv_rereg_mr(3): 0, or an ibv_rereg_mr_err_code (< 0) with errno set. Translation without
  // a length passes no address, as libibverbs' input check expects to refuse.
  const int ret = ibv_rereg_mr(m->mr, flags, new_pd, mem, mem ? length : 0,
                               static_cast<int>(access));
  if (ret != 0) {
    const int err = ret > 0 ? ret : (errno != 0 ? errno : EINVAL);
    std::free(mem);
    return err;
  }
  if (mem != nullptr) {
    std::free(m->buf);
    m->buf = mem;
  }
  if (buf != nullptr) *buf = static_cast<uint8_t*>(m->buf);
  if (lkey != nullptr) *lkey = m->mr->lkey;
  if (rkey != nullptr) *rkey = m->mr->rkey;
  return 0;
}

}  // namespace qptwin::hw
