// The runner's memory windows: alloc_mw, bind_mw, and the window fields of post_send
// (spec/backend.h, Memory windows). The runner keeps the program's view of each window: its
// rkey as the backend returned or moved it at the post, and where it was last bound.
#include <cerrno>

#include "spec/scenario/runner.h"

namespace qptwin::scenario {
namespace {

// ibv_inc_rkey: the key byte + 1.
uint32_t NextKey(uint32_t rkey) { return (rkey & ~0xffu) | ((rkey + 1) & 0xffu); }

}  // namespace

int Runner::AllocMw(const Command& c, Step* step) {
  Object& o = Obj(c.name);
  o.kind = ObjectKind::kMw;
  o.device = Obj(c.pd).device;
  o.pd = c.pd;
  Device* dev = DeviceOf(o);
  if (!dev) return ENODEV;
  MwHandle h;
  const int ret = dev->AllocMw(PdHandle{Obj(c.pd).handle}, c.mw_type, &h, &o.rkey);
  if (ret == 0) o.handle = h.id;
  (void)step;
  return ret;
}

int Runner::BindMw(const Command& c, Step* step) {
  const Object& qp = Obj(c.name);
  Device* dev = DeviceOf(qp);
  if (!dev) return ENODEV;
  Object& mw = Obj(c.mw);
  MwBind bind;
  bind.wr_id = c.send.wr_id;
  bind.send_flags = c.send.send_flags;
  SendWr wr;
  wr.opcode = WrOpcode::kBindMw;
  ResolveWindowFields(c, &wr);
  bind.bind_info = wr.bind_info;
  uint32_t rkey = 0;
  const int ret = dev->BindMw(QpHandle{qp.handle}, MwHandle{mw.handle}, bind, &rkey);
  if (ret == 0) {
    mw.rkey = rkey;
    mw.window_addr = bind.bind_info.addr;
    mw.zero_based = false;
    RecordPosts(c, 1, step->start_ns);
  }
  return ret;
}

void Runner::ResolveWindowFields(const Command& c, SendWr* wr) {
  if (!c.mw.empty()) {
    const Object& mw = Obj(c.mw);
    wr->mw = MwHandle{mw.handle};
    wr->rkey = NextKey(mw.rkey);
  }
  if (c.bind) {
    const Object& mr = Obj(c.bind->mr);
    wr->bind_info.mr = MrHandle{mr.handle};
    wr->bind_info.addr = mr.buf ? reinterpret_cast<uint64_t>(mr.buf) + c.bind->offset : 0;
    wr->bind_info.length = c.bind->length;
    wr->bind_info.mw_access_flags = c.access;
  }
  if (!c.inv.empty()) wr->imm_data = Obj(c.inv).rkey;
  if (c.remote && Obj(c.remote->mr).kind == ObjectKind::kMw) {
    const Object& mw = Obj(c.remote->mr);
    wr->rkey = mw.rkey;
    wr->remote_addr = (mw.zero_based ? 0 : mw.window_addr) + c.remote->offset;
  }
}

void Runner::NoteBindPosted(const Command& c, const SendWr& wr) {
  if (wr.opcode != WrOpcode::kBindMw || c.mw.empty()) return;
  // The backend names a type 2 window by the rkey of the bind it posted (hw
  // NoteBindsPosted); a type 1 window bound by a WR keeps ibv_mw's rkey (libibverbs), but
  // the runner cannot tell the types apart here, so it follows the WR for both: a remote=
  // through a type 1 window bound this way then names the key the device gave it.
  Object& mw = Obj(c.mw);
  mw.rkey = (mw.rkey & ~0xffu) | (wr.rkey & 0xffu);
  mw.window_addr = wr.bind_info.addr;
  mw.zero_based = (wr.bind_info.mw_access_flags & access::kZeroBased) != 0;
}

}  // namespace qptwin::scenario
