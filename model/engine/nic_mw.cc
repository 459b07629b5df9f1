// Memory windows on the model: the verbs (ibv_alloc_mw, ibv_dealloc_mw, ibv_bind_mw), the
// local operations the requester runs (BIND_MW, LOCAL_INV) and the responder's resolution of
// an rkey that names a window. The rules are window.h's; the sources are listed there and
// in spec/backend.h (Memory windows).
#include <cerrno>
#include <cstdio>

#include "model/engine/nic.h"
#include "model/engine/world.h"

namespace qptwin::model::engine {
namespace {

// ibv_inc_rkey (libibverbs verbs.h): the key byte + 1, the index kept.
uint32_t IncRkey(uint32_t rkey) { return (rkey & ~0xffu) | ((rkey + 1) & 0xffu); }

}  // namespace

int Nic::AllocMw(uint32_t ctx, uint32_t pd, MwType type, uint32_t* out, uint32_t* rkey) {
  auto it = pds_.find(pd);
  if (it == pds_.end() || it->second.ctx != ctx || out == nullptr) return EINVAL;
  // ib_uverbs_alloc_mw: only IB_MW_TYPE_1 and IB_MW_TYPE_2 (measured: type 3 EINVAL).
  if (type != MwType::kType1 && type != MwType::kType2) return EINVAL;
  const int max_mw = profile().device.max_mw;
  if (max_mw == 0) return EOPNOTSUPP;  // libibverbs ibv_alloc_mw: no alloc_mw op
  if (static_cast<int>(mws_.size()) >= max_mw) return profile().behaviour.over_limit_errno;
  Mw* mw = mws_.Alloc(world_->NewHandle(), ctx, pd, type);
  if (mw == nullptr) return ENOMEM;
  *out = mw->handle;
  if (rkey != nullptr) *rkey = mw->rkey;
  ChargeHost(profile().timing.control.reg_mr_ns);  // one command to the device, as reg_mr's
  return 0;
}

int Nic::DeallocMw(uint32_t ctx, uint32_t mw) {
  Mw* m = mws_.ByHandle(mw);
  if (m == nullptr || m->ctx != ctx) return EINVAL;
  mws_.Dealloc(mw);  // rxe_dealloc_mw: a bound window is unbound with it
  return 0;
}

int Nic::BindMw(uint32_t ctx, uint32_t qp, uint32_t mw, const MwBind& bind, uint32_t* rkey) {
  Qp* q = FindQp(ctx, qp);
  Mw* m = mws_.ByHandle(mw);
  if (q == nullptr || m == nullptr || m->ctx != ctx) return EINVAL;
  if (m->type != MwType::kType1) return EINVAL;  // libibverbs ibv_bind_mw
  const Mr* r = mrs_.ByHandle(bind.bind_info.mr.id);
  if (r == nullptr || r->ctx != ctx) return EINVAL;  // spec/backend.h: a region is required
  if (r->pd != m->pd) return EPERM;                  // libibverbs ibv_bind_mw
  if (bind.bind_info.mw_access_flags & access::kZeroBased) return EINVAL;  // providers/rxe
  // providers/rxe rxe_bind_mw: a BIND_MW WR with the next key, posted on the QP; the
  // program's rkey moves on only when the post succeeded.
  SendWr wr;
  wr.wr_id = bind.wr_id;
  wr.opcode = WrOpcode::kBindMw;
  wr.send_flags = bind.send_flags;
  wr.mw = MwHandle{mw};
  const uint32_t held = bind.mw_rkey.value_or(m->host_rkey);  // the program's ibv_mw.rkey
  wr.mw_rkey = held;
  wr.rkey = IncRkey(held);
  wr.bind_info = bind.bind_info;
  size_t bad = 0;
  if (int err = PostSend(ctx, qp, {wr}, &bad)) return err;
  m->host_rkey = wr.rkey;
  if (rkey != nullptr) *rkey = wr.rkey;
  return 0;
}

void Nic::NoteBindPosted(uint32_t ctx, const SendWr& wr, SendWqe* w) {
  Mw* m = mws_.ByHandle(wr.mw.id);
  if (m == nullptr || m->ctx != ctx) return;
  if (wr.mw_rkey) {
    // The program's own ibv_mw.rkey (providers/rxe convert_send_wr: mw_rkey = ibmw->rkey),
    // which posting does not change for type 2.
    w->wr.mw_rkey = m->host_rkey = *wr.mw_rkey;
    return;
  }
  w->wr.mw_rkey = m->host_rkey;
  // hw/verbs_device_mw.cc NoteBindsPosted: the program's rkey of a type 2 window follows
  // the bind it posted (libibverbs leaves that to the program; the backend does it).
  if (m->type == MwType::kType2) m->host_rkey = (m->host_rkey & ~0xffu) | (wr.rkey & 0xffu);
}

uint8_t* Nic::RemoteBytes(const Qp& qp, uint32_t rkey, uint32_t pd, uint64_t addr, uint64_t len,
                          AccessFlags need) {
  if (mws_.ByIndex(rkey) == nullptr) return mrs_.Remote(rkey, pd, addr, len, need);
  // rxe_resp.c check_rkey: rkey_is_mw -> rxe_lookup_mw, then the window's region.
  WindowAccess a;
  a.qp = qp.handle;
  a.pd = pd;
  a.addr = addr;
  a.len = len;
  a.need = need;
  a.range_of_region = profile().behaviour.mw_range_checked_against_mr;
  uint64_t at = 0;
  const Mw* w = mws_.Lookup(rkey, a, &at);
  if (w == nullptr) return nullptr;
  const Mr* mr = mrs_.ByHandle(w->mr);
  return mr ? MrTable::Within(*mr, at, len) : nullptr;
}

WcStatus Nic::RunLocalOp(Qp& qp, const SendWqe& w) {
  if (w.wr.opcode == WrOpcode::kBindMw) {
    // rxe_req.c rxe_do_local_ops: a failed bind is IB_WC_MW_BIND_ERR.
    BindRequest r;
    r.mw_rkey = w.wr.mw_rkey;
    r.new_rkey = w.wr.rkey;
    r.mr = mrs_.ByHandle(w.wr.bind_info.mr.id);
    // A driver's WQE names the region by number (command_port.h kRegMr's out2): one of
    // another context is no region of this QP's (the post's check for a verbs WR).
    if (r.mr != nullptr && r.mr->ctx != qp.ctx) r.mr = nullptr;
    r.addr = w.wr.bind_info.addr;
    r.length = w.wr.bind_info.length;
    r.access = w.wr.bind_info.mw_access_flags;
    r.qp = qp.handle;
    r.qp_pd = qp.init.pd.id;
    return mws_.Bind(r) == 0 ? WcStatus::kSuccess : WcStatus::kMwBindErr;
  }
  // LOCAL_INV: a window's rkey (rxe_invalidate_mw); a region's is refused too (measured on
  // rxe 6.1 for a region from ibv_reg_mr). A failure is IB_WC_LOC_QP_OP_ERR.
  const uint32_t key = w.wr.imm_data;
  return InvalidateWindow(qp, key, "LOCAL_INV") == 0 ? WcStatus::kSuccess
                                                     : WcStatus::kLocQpOpErr;
}

int Nic::InvalidateWindow(const Qp& qp, uint32_t rkey, const char* how) {
  if (mws_.ByIndex(rkey) == nullptr) return EINVAL;
  if (profile().behaviour.invalidate_free_type2_window_faults && mws_.NamesFreeType2(rkey) &&
      device_faults_.size() < kMaxFaults) {
    char what[160];
    std::snprintf(what, sizeof what,
                  "%s of rkey 0x%x on qpn %u names a type 2 window that is not bound "
                  "(Behaviour::invalidate_free_type2_window_faults)",
                  how, static_cast<unsigned>(rkey), static_cast<unsigned>(qp.qpn));
    device_faults_.push_back(what);
  }
  return mws_.Invalidate(rkey);
}

}  // namespace qptwin::model::engine
