#include "tools/exec/datapath.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "hw/convert.h"
#include "tools/exec/device_attrs.h"

namespace qptwin::exec {
namespace {

constexpr size_t kMinScratch = 64 * 1024;

uint64_t Translate(const ModelMr* mr, uint64_t base, uint64_t addr, uint64_t len) {
  if (addr < base || len > mr->mr.length || addr - base > mr->mr.length - len) return 0;
  return reinterpret_cast<uint64_t>(mr->model_addr) + (addr - base);
}

bool GrowScratch(ModelContext* m, size_t need) {
  if (m->scratch_len >= need) return true;
  size_t len = std::max(kMinScratch, m->scratch_len);
  while (len < need) len *= 2;
  if (!m->scratch_pd && m->dev->AllocPd(&m->scratch_pd) != 0) return false;
  if (m->scratch_mr) (void)m->dev->DeregMr(m->scratch_mr);
  m->scratch_mr = MrHandle{};
  m->scratch_len = 0;
  uint32_t rkey = 0;
  if (m->dev->RegMr(m->scratch_pd, len, IBV_ACCESS_LOCAL_WRITE, &m->scratch_mr, &m->scratch,
                    &m->scratch_lkey, &rkey) != 0) {
    return false;
  }
  m->scratch_len = len;
  return true;
}

}  // namespace

uint64_t LocalAddr(ModelContext* m, uint32_t lkey, uint64_t addr, uint64_t len) {
  auto it = m->by_key.find(lkey);
  if (it == m->by_key.end()) return addr;  // the model refuses the key itself
  const ModelMr* mr = it->second;
  return Translate(mr, reinterpret_cast<uint64_t>(mr->mr.addr), addr, len);
}

uint64_t RemoteAddr(int peer, uint32_t rkey, uint64_t addr, uint64_t len) {
  if (peer == kElsewhere) return addr;  // the other process's addresses and keys
  for (ModelContext* c : Preload::Get().contexts()) {
    if (peer >= 0 && c->index != peer) continue;
    auto it = c->by_key.find(rkey);
    if (it != c->by_key.end()) return Translate(it->second, it->second->iova, addr, len);
    // A window's rkey: the program names addresses as in its region (a zero-based window:
    // offsets from its start, which the model takes as they are).
    auto w = c->mw_keys.find(rkey);
    if (w == c->mw_keys.end()) continue;
    if (w->second.zero_based) return addr;
    auto r = c->by_key.find(w->second.lkey);
    if (r != c->by_key.end()) return Translate(r->second, r->second->iova, addr, len);
  }
  return addr;  // no region of this process: the responder refuses the key
}

MwBindInfo BindInfo(const ibv_mw_bind_info& info) {
  MwBindInfo b;
  b.addr = info.addr;
  b.length = info.length;
  b.mw_access_flags = info.mw_access_flags;
  if (info.mr != nullptr) {
    const auto* mr = reinterpret_cast<const ModelMr*>(info.mr);
    b.mr = mr->h;
    // Outside the region: 0, which the model's bind refuses as rxe's does (MW_BIND_ERR).
    b.addr = Translate(mr, mr->iova, info.addr, info.length);
  }
  return b;
}

void NoteBind(ModelContext* m, uint32_t rkey, const ibv_mw_bind_info& info) {
  if (info.mr == nullptr) return;
  m->mw_keys[rkey] = MwTarget{info.mr->lkey, (info.mw_access_flags & IBV_ACCESS_ZERO_BASED) != 0};
}

void NoteBinds(ModelContext* m, const std::vector<SendWr>& wrs, size_t posted) {
  for (size_t i = 0; i < posted && i < wrs.size(); ++i) {
    const SendWr& w = wrs[i];
    if (w.opcode != WrOpcode::kBindMw || !w.bind_info.mr) continue;
    for (const auto& [lkey, mr] : m->by_key) {
      if (mr->h != w.bind_info.mr) continue;
      m->mw_keys[w.rkey] =
          MwTarget{lkey, (w.bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED) != 0};
      break;
    }
  }
}

void ForgetWindow(ModelContext* m, uint32_t rkey) {
  auto it = m->mw_keys.lower_bound(rkey & ~0xffu);
  while (it != m->mw_keys.end() && (it->first >> 8) == (rkey >> 8)) it = m->mw_keys.erase(it);
}

int PeerDevice(const ibv_ah_attr& ah) {
  for (ModelContext* c : Preload::Get().contexts()) {
    if (ah.is_global) {
      for (int i = 0; i < 2; ++i) {
        Gid g;
        if (c->dev->QueryGid(1, i, &g) == 0 && g == qptwin::hw::FromIbvGid(ah.grh.dgid)) return c->index;
      }
    } else {
      PortAttr p;
      if (c->dev->QueryPort(1, &p) == 0 && p.lid == ah.dlid) return c->index;
    }
  }
  // The bridge reaches other processes by IPv4-mapped GIDs (GID 0) or IB LIDs only.
  static bool warned = false;
  const uint8_t* g = ah.grh.dgid.raw;
  const bool mapped = g[10] == 0xff && g[11] == 0xff &&
                      std::all_of(g, g + 10, [](uint8_t b) { return b == 0; });
  if (ah.is_global && !mapped && !warned && Preload::Get().bridge()) {
    warned = true;
    std::fprintf(stderr,
                 "qptwin preload: an address vector names a GID that is neither a device of this "
                 "process nor IPv4-mapped: nothing reaches it (other processes' devices are "
                 "reached by GID index 0, e.g. -g 0 / -x 0: tools/exec/README.md)\n");
  }
  return kElsewhere;
}

Sge InlineSge(ModelContext* m, const uint8_t* const* parts, const size_t* lens, size_t n,
              size_t* offset) {
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) total += lens[i];
  if (!GrowScratch(m, *offset + total)) return Sge{};
  uint8_t* at = m->scratch + *offset;
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(at, parts[i], lens[i]);
    at += lens[i];
  }
  Sge s{reinterpret_cast<uint64_t>(m->scratch + *offset), static_cast<uint32_t>(total),
        m->scratch_lkey};
  *offset += total;
  return s;
}

void ConvertSges(ModelContext* m, const ibv_sge* sg, int num_sge, std::vector<Sge>* out) {
  out->resize(num_sge > 0 ? num_sge : 0);
  for (int i = 0; i < num_sge; ++i) {
    Sge& s = (*out)[i];
    s.lkey = sg[i].lkey;
    s.length = sg[i].length;
    s.addr = sg[i].length == 0 ? sg[i].addr : LocalAddr(m, sg[i].lkey, sg[i].addr, sg[i].length);
  }
}

int PollInto(ModelCq* cq, int n, ibv_wc* wc, WorkCompletion* one) {
  if (n <= 0) return n < 0 ? -EINVAL : 0;
  ModelContext* m = cq->mctx;
  int got = 0;
  auto take = [&] {
    while (got < n && !cq->pending.empty()) {
      if (one) *one = cq->pending.front();
      if (wc) wc[got] = qptwin::hw::ToIbvWc(cq->pending.front());
      cq->pending.pop_front();
      ++got;
    }
  };
  take();
  if (got == n) return got;
  WorkCompletion buf[16];
  const int want = std::min(n - got, 16);
  const int r = m->dev->PollCq(cq->h, want, buf);
  if (r < 0) return got > 0 ? got : r;
  for (int i = 0; i < r; ++i) cq->pending.push_back(buf[i]);
  take();
  if (got > 0) return got;
  std::vector<WorkCompletion> more;
  (void)m->dev->WaitForCompletions(cq->h, 1, Preload::Get().TimeStep(kPollStepNs), &more);
  for (const WorkCompletion& w : more) cq->pending.push_back(w);
  Preload::Get().Harvest(m);
  take();
  return got;
}

}  // namespace qptwin::exec
