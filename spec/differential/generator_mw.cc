// The memory-window steps of the differential generator (generator.h): alloc/dealloc of
// type 1 and 2 windows (now and then in another PD), type 1 binds by ibv_bind_mw and
// BIND_MW work requests with random rights and ranges (in and past the region, length 0, a
// region without MW_BIND), RDMA READ/WRITE/atomics through a window's rkey (bound, stale,
// from the wrong QP), LOCAL_INV and SEND_WITH_INV of windows' and regions' rkeys, and dereg
// of a region with windows bound. What rxe does with each: docs/differences.md (Memory
// windows) and tests/conformance/memory_window_test.cc.
//
// Shares of one MwAction (itself 14 of RandomAction's 114 draws, 12.3% of the steps):
// alloc 14% (then a bind of it 70%), bind 26% (type 1: ibv_bind_mw 80%, else a BIND_MW WR;
// type 2: a BIND_MW WR 85%, else ibv_bind_mw, EINVAL; then the peer reaches through it 50%;
// a type 2 window safe to invalidate is then invalidated 40%, by the peer's SEND_WITH_INV or
// a LOCAL_INV, and reached through again 50%), RDMA through a window 26% (one that answers
// the QP 70%; a dead one 10%; past the window 10%), SEND_WITH_INV 12%, LOCAL_INV 10% (a
// region's or no window's rkey 20%), dealloc 8%, dereg of the MW_BIND region 4%. A bind
// range: in the MW_BIND region 77%, past its end 8%, length 0 6%, m<d> without MW_BIND 6%,
// f0 of another PD 3%; rights: REMOTE_WRITE 60%, REMOTE_READ 60%, REMOTE_ATOMIC 40%,
// ZERO_BASED 6%.
//
// Safety on rxe 6.1 (contract 2 of GenMw::inv_safe): an invalidation never names the
// current rkey of a type 2 window that may be FREE with that rkey -- rxe_do_invalidate_mw
// would dereference its NULL QP (a kernel oops that ends the VM's run).
#include <string>
#include <vector>

#include "spec/differential/generator_state.h"

namespace qptwin::differential::internal {
namespace {

std::string N(uint64_t v) { return std::to_string(v); }

inline constexpr int kMaxWindows = 6;
inline constexpr uint64_t kBindMrLen = 16384;

GenQp* FindQp(Writer& w, const std::string& name) {
  for (GenQp& q : w.qps) {
    if (q.name == name) return &q;
  }
  return nullptr;
}

void MarkDirty(Writer& w, const GenQp& q) {
  for (GenCq& c : w.cqs) {
    if (c.name == q.send_cq || c.name == q.recv_cq) c.dirty = true;
  }
}

// A WR on a UD QP names an AH, as PostSend's do: without one hw's backend refuses the post
// before the provider (which would dereference it) and rings no doorbell, where the model's
// refused post rings one (Behaviour::rts_waits_for_doorbell; differential seed 3303
// sequences 432, 440, 453). With it the provider refuses a UD BIND_MW after the doorbell.
std::string UdAh(const GenQp& q) { return q.type == "UD" ? " ah=" + q.peer : ""; }

// The device's MW_BIND region, declared at its first use (and again after a dereg).
const std::string& BindMr(Writer& w, int dev) {
  std::string& name = w.bind_mr[dev];
  if (name.empty()) {
    name = "b" + N(dev) + "_" + N(w.bind_mrs++);
    w.Line("mr ", name, " pd=p", N(dev), " len=", N(kBindMrLen),
           " access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC|MW_BIND");
  }
  return name;
}

// Windows on `dev`: live ones (or any, dead included, when `dead_too`).
std::vector<GenMw*> Windows(Writer& w, int dev, bool dead_too) {
  std::vector<GenMw*> out;
  for (GenMw& m : w.mws) {
    if (m.dev == dev && (m.alive || dead_too)) out.push_back(&m);
  }
  return out;
}

// The window's rights: each remote right with 60%, now and then ZERO_BASED.
std::string WindowAccess(Writer& w) {
  std::string flags;
  auto add = [&flags](const char* f) { flags += (flags.empty() ? "" : "|") + std::string(f); };
  if (w.Chance(60)) add("REMOTE_WRITE");
  if (w.Chance(60)) add("REMOTE_READ");
  if (w.Chance(40)) add("REMOTE_ATOMIC");
  if (w.Chance(6)) add("ZERO_BASED");
  return flags.empty() ? "0" : flags;
}

// MR:OFF:LEN of a bind: mostly inside the device's MW_BIND region, else past its end, of
// length 0, or a region without MW_BIND (m<d>; f0 of another PD).
std::string BindRange(Writer& w, int dev, uint64_t* length) {
  static const std::vector<uint64_t> kLens = {8, 64, 64, 512, 1024, 4096};
  const uint64_t k = w.Below(100);
  std::string mr = BindMr(w, dev);
  uint64_t off = 1024 * w.Below(12);
  uint64_t len = w.Pick(kLens);
  if (k < 8) {
    off = kBindMrLen - 512;  // past the region's end
    len = 1024;
  } else if (k < 14) {
    len = 0;  // type 1: unbinds; type 2: MW_BIND_ERR
  } else if (k < 20) {
    mr = "m" + N(dev);  // no MW_BIND
  } else if (k < 23 && dev == 0) {
    mr = "f0";  // another PD, no MW_BIND
    off = 0;
    len = 64;
  }
  *length = len;
  return mr + ":" + N(off) + ":" + N(len);
}

void Bind(Writer& w, GenQp& q, GenMw* given);
void Access(Writer& w, GenQp& q, GenMw* given);
void SendWithInv(Writer& w, GenQp& q, const std::string& given);
void LocalInv(Writer& w, GenQp& q, const std::string& given);

// Allocates a window on q's device, and most of the time binds it on q at once.
void Alloc(Writer& w, GenQp& q) {
  if (static_cast<int>(w.mws.size()) >= kMaxWindows) return;
  GenMw m;
  m.name = "w" + N(w.mws.size());
  m.dev = q.dev;
  m.type = w.Chance(50) ? 1 : 2;
  const bool other_pd = q.dev == 0 && w.Chance(10);  // pf0: binds and accesses fail
  w.Line("alloc_mw ", m.name, " pd=", other_pd ? "pf0" : "p" + N(q.dev), " type=", N(m.type));
  w.mws.push_back(m);
  if (q.alive && w.Chance(70)) Bind(w, q, &w.mws.back());
}

// Binds a window of q's device (`given`, else a random one) on q; now and then q's peer
// then reaches through it (after a settle: the bind has run).
void Bind(Writer& w, GenQp& q, GenMw* given) {
  std::vector<GenMw*> cands = Windows(w, q.dev, false);
  if (given == nullptr && cands.empty()) return Alloc(w, q);
  GenMw& m = given ? *given : *w.Pick(cands);
  const bool by_wr = m.type == 2 ? w.Chance(85) : w.Chance(20);
  uint64_t length = 0;
  const std::string range = BindRange(w, q.dev, &length);
  const std::string access = WindowAccess(w);
  const bool signaled = q.sig_all || w.Chance(70);
  const std::string id = N(w.next_send_id++);
  const std::string flags = signaled ? " flags=SIGNALED" : "";
  if (by_wr) {
    w.Line("post_send ", q.name, " wr_id=", id, " op=BIND_MW mw=", m.name, " bind=", range,
           " access=", access, UdAh(q), flags);
  } else {
    w.Line("bind_mw ", q.name, " mw=", m.name, " bind=", range, " access=", access,
           " wr_id=", id, flags);
  }
  if (m.type == 2 && by_wr) {
    // The post moves the program's rkey on unless it fails: only a post that cannot fail
    // (a QP that takes posts, after a settle, with no RNR loop filling its queue) makes an
    // invalidation of the new rkey safe.
    const bool takes_posts = q.alive && !q.rnr_prone && q.type != "UD" &&
                             (q.state == Believed::kRts || q.state == Believed::kErr);
    if (takes_posts) m.inv_safe = true;
    m.bind_qp = q.name;
  }
  m.length = length;
  MarkDirty(w, q);
  w.unsettled = true;
  q.mw_err = true;  // MW_BIND_ERR moves it to ERR
  GenQp* peer = FindQp(w, q.peer);
  if (peer && peer->alive && w.Chance(50)) {
    Settle(w);
    Access(w, *peer, &m);
  }
  // A type 2 window's life: bound, used, invalidated (by q, or by its peer's send), used
  // again through the now stale rkey.
  if (m.type == 2 && m.inv_safe && w.Chance(40)) {
    Settle(w);
    if (peer && peer->alive && w.Chance(50)) {
      SendWithInv(w, *peer, m.name);
    } else {
      LocalInv(w, q, m.name);
    }
    if (peer && peer->alive && w.Chance(50)) {
      Settle(w);
      Access(w, *peer, &m);
    }
  }
}

// READ, WRITE, WRITE_IMM or an atomic from q through a window of its peer's device: mostly
// one that answers q (type 1 bound, type 2 bound by q's peer), else any, a dead one now and
// then (a stale rkey).
void Access(Writer& w, GenQp& q, GenMw* given) {
  GenQp* peer = FindQp(w, q.peer);
  if (peer == nullptr) return;
  std::vector<GenMw*> cands = given ? std::vector<GenMw*>{given}
                                    : Windows(w, peer->dev, w.Chance(10));
  if (cands.empty()) return;
  if (!given && w.Chance(70)) {
    std::vector<GenMw*> answering;
    for (GenMw* m : cands) {
      if (m->length > 0 && (m->type == 1 || m->bind_qp == peer->name)) answering.push_back(m);
    }
    if (!answering.empty()) cands = answering;
  }
  GenMw& m = *w.Pick(cands);
  static const std::vector<std::string> kOps = {"READ", "WRITE", "WRITE", "WRITE_IMM",
                                                "CMP_SWP", "FETCH_ADD"};
  SendChoice c;
  c.op = w.Pick(kOps);
  const bool atomic = c.op == "CMP_SWP" || c.op == "FETCH_ADD";
  const uint64_t span = m.length >= 8 ? m.length / 8 : 1;
  uint64_t off = 8 * w.Below(span);
  if (w.Chance(10)) off = m.length + 8;  // past the window (rxe: checked against the region)
  if (atomic && w.Chance(5)) off += 4;   // misaligned
  c.remote = m.name + ":" + N(off);
  PostSend(w, q, &c);
  q.mw_err = peer->mw_err = true;  // REM_ACCESS_ERR: the requester and responder to ERR
}

// An rkey to invalidate on `dev`: a window's that is safe to name, else a region's or a
// dead window's (a bad key). "" when there is none.
std::string InvTarget(Writer& w, int dev) {
  std::vector<std::string> keys;
  for (GenMw& m : w.mws) {
    if (m.dev != dev) continue;
    if (!m.alive || m.type == 1 || m.inv_safe) keys.push_back(m.name);
  }
  if (keys.empty() || w.Chance(20)) {
    static const std::vector<std::string> kRegions = {"m", "b", "x0", "f0"};
    const std::string& r = w.Pick(kRegions);
    if (r == "m") return "m" + N(dev);
    if (r == "b") return w.bind_mr[dev];  // "" when none declared yet
    return dev == 0 ? r : "m" + N(dev);
  }
  return w.Pick(keys);
}

void Invalidated(Writer& w, const std::string& name) {
  for (GenMw& m : w.mws) {
    if (m.name == name) m.inv_safe = false;
  }
}

void SendWithInv(Writer& w, GenQp& q, const std::string& given) {
  GenQp* peer = FindQp(w, q.peer);
  if (peer == nullptr) return;
  const std::string target = given.empty() ? InvTarget(w, peer->dev) : given;
  if (target.empty()) return;
  SendChoice c;
  c.op = "SEND_WITH_INV";
  c.extra = "inv=" + target;
  PostSend(w, q, &c);
  Invalidated(w, target);
  q.mw_err = peer->mw_err = true;  // REM_INV_REQ_ERR (receiver); UC/UD: LOC_QP_OP_ERR
}

void LocalInv(Writer& w, GenQp& q, const std::string& given) {
  const std::string target = given.empty() ? InvTarget(w, q.dev) : given;
  if (target.empty()) return;
  const bool signaled = q.sig_all || w.Chance(70);
  w.Line("post_send ", q.name, " wr_id=", N(w.next_send_id++), " op=LOCAL_INV inv=", target,
         UdAh(q), signaled ? " flags=SIGNALED" : "");
  Invalidated(w, target);
  MarkDirty(w, q);
  w.unsettled = true;
  q.mw_err = true;  // LOC_QP_OP_ERR moves it to ERR
}

void Dealloc(Writer& w) {
  std::vector<GenMw*> cands = Windows(w, 0, w.Chance(10));  // a dead one: EINVAL
  if (cands.empty()) return;
  GenMw& m = *w.Pick(cands);
  const char* verb = w.Chance(50) ? "dealloc_mw " : "destroy ";
  w.Line(verb, m.name);
  m.alive = false;
}

// Dereg of the MW_BIND region: EINVAL while a window is bound to it (rxe). Whether one is
// depends on binds the generator cannot see, so the region is not used again either way.
void DeregBindMr(Writer& w) {
  std::string& name = w.bind_mr[0];
  if (name.empty()) return;
  w.Line("destroy ", name);
  name.clear();
}

// Windows live on device 0 only: on hw every `device` line opens the same rxe, on the model
// each its own NIC, so a region declared on d1 would take the index a d0 region's key has
// there (f0, x0: the generator's keys of another PD / a dead region) and make the model's d1
// resolve a key rxe refuses (differential seed 3303 sequence 163). q, or its peer on d0.
GenQp* OnDevice0(Writer& w, GenQp& q) {
  if (q.dev == 0) return &q;
  GenQp* peer = FindQp(w, q.peer);
  return peer && peer->alive && peer->dev == 0 ? peer : nullptr;
}

}  // namespace

void MwAction(Writer& w, GenQp& q) {
  // Every window step follows a settle: what it meets (a bind done or not, a key
  // invalidated or not) must not depend on how far a real device got.
  Settle(w);
  const uint64_t k = w.Below(100);
  GenQp* q0 = OnDevice0(w, q);
  if (k < 14 || w.mws.empty()) {
    if (q0) Alloc(w, *q0);
  } else if (!q.alive) {
    return;
  } else if (k < 40) {
    if (q0 && q0->alive) Bind(w, *q0, nullptr);
  } else if (k < 66) {
    Access(w, q, nullptr);
  } else if (k < 78) {
    SendWithInv(w, q, "");
  } else if (k < 88) {
    LocalInv(w, q, "");
  } else if (k < 96) {
    Dealloc(w);
  } else {
    DeregBindMr(w);
  }
}

}  // namespace qptwin::differential::internal
