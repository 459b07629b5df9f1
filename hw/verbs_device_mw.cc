// Memory windows over libibverbs: ibv_alloc_mw, ibv_dealloc_mw, ibv_bind_mw (type 1), and the
// objects a BIND_MW work request names (spec/backend.h, Memory windows).
#include <cerrno>

#include "hw/verbs_device.h"

namespace qptwin::hw {

int VerbsDevice::AllocMw(PdHandle pd, MwType type, MwHandle* out, uint32_t* rkey) {
  PdEntry* p = pds_.Find(pd);
  if (p == nullptr || out == nullptr) return EINVAL;
  errno = 0;
  ibv_mw* mw = ibv_alloc_mw(p->pd, static_cast<ibv_mw_type>(type));
  if (mw == nullptr) return LastErrno();
  *out = mws_.Add(MwEntry{mw, pd});
  if (rkey != nullptr) *rkey = mw->rkey;
  return 0;
}

int VerbsDevice::DeallocMw(MwHandle h) {
  MwEntry* m = mws_.Find(h);
  if (m == nullptr) return EINVAL;
  const int ret = ibv_dealloc_mw(m->mw);
  if (ret == 0) mws_.Remove(h);
  return ret;
}

int VerbsDevice::BindMw(QpHandle qp, MwHandle mw, const MwBind& bind, uint32_t* rkey) {
  QpEntry* q = qps_.Find(qp);
  MwEntry* m = mws_.Find(mw);
  if (q == nullptr || m == nullptr) return EINVAL;
  // providers/rxe rxe_bind_mw turns the bind into a BIND_MW WR whose conversion reads
  // bind_info.mr->lkey: without a region it would crash, so that is refused here.
  MrEntry* r = mrs_.Find(bind.bind_info.mr);
  if (r == nullptr) return EINVAL;
  ibv_mw_bind b{};
  b.wr_id = bind.wr_id;
  b.send_flags = static_cast<unsigned int>(bind.send_flags);
  b.bind_info.mr = r->mr;
  b.bind_info.addr = bind.bind_info.addr;
  b.bind_info.length = bind.bind_info.length;
  b.bind_info.mw_access_flags = static_cast<unsigned int>(bind.bind_info.mw_access_flags);
  // The program's rkey, when given, is what ibv_mw.rkey holds (the provider binds with
  // ibv_inc_rkey of it and names the window by it).
  if (bind.mw_rkey) m->mw->rkey = *bind.mw_rkey;
  // ibv_bind_mw(3): on success mw->rkey is the window's rkey after the bind.
  const int ret = ibv_bind_mw(q->qp, m->mw, &b);
  if (ret != 0) return ret;
  if (rkey != nullptr) *rkey = m->mw->rkey;
  return 0;
}

int VerbsDevice::ResolveBinds(const std::vector<SendWr>& wrs, std::vector<BindTarget>* out,
                              size_t* usable) {
  out->clear();
  for (size_t i = 0; i < wrs.size(); ++i) {
    if (wrs[i].opcode != WrOpcode::kBindMw) continue;
    MwEntry* m = mws_.Find(wrs[i].mw);
    MrEntry* r = mrs_.Find(wrs[i].bind_info.mr);
    // Unresolved: never reaches the provider (its conversion dereferences both).
    if (m == nullptr || r == nullptr) {
      *usable = std::min(*usable, i);
      return EINVAL;
    }
    out->resize(wrs.size());
    (*out)[i] = BindTarget{m->mw, r->mr};
    // The program's rkey, when given, is what the provider reads from mw->rkey at the post
    // (one value per window: a list binding one window twice names it by the last one).
    if (wrs[i].mw_rkey) m->mw->rkey = *wrs[i].mw_rkey;
  }
  return 0;
}

void VerbsDevice::NoteBindsPosted(const std::vector<SendWr>& wrs, size_t posted) {
  // The provider names the window by mw->rkey (convert_send_wr: mw_rkey) and the kernel
  // checks it against the window's current rkey (rxe_bind_mw). ibv_bind_mw keeps mw->rkey
  // current for type 1; for a type 2 bind posted directly libibverbs leaves that to the
  // program, so it is done here: the rkey the kernel gives the window when the bind runs,
  // index bits kept and the key byte taken from the WR (rxe_do_bind_mw).
  for (size_t i = 0; i < posted && i < wrs.size(); ++i) {
    // With the program's rkey given, mw->rkey is the program's: posting leaves it.
    if (wrs[i].opcode != WrOpcode::kBindMw || wrs[i].mw_rkey) continue;
    MwEntry* m = mws_.Find(wrs[i].mw);
    if (m == nullptr || m->mw->type != IBV_MW_TYPE_2) continue;
    m->mw->rkey = (m->mw->rkey & ~0xffu) | (wrs[i].rkey & 0xffu);
  }
}

}  // namespace qptwin::hw
