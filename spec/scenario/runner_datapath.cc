// The runner's data path: posting, polling, async events and MR contents.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "spec/scenario/runner.h"

namespace qptwin::scenario {

std::vector<Sge> Runner::ResolveSges(const std::vector<SgeRef>& refs) {
  std::vector<Sge> sges;
  sges.reserve(refs.size());
  for (const SgeRef& ref : refs) {
    const Object& mr = Obj(ref.mr);
    // A destroyed or failed MR resolves to address 0 / lkey 0: the backend judges it.
    Sge s;
    s.addr = mr.buf ? reinterpret_cast<uint64_t>(mr.buf) + ref.offset : 0;
    s.length = ref.length;
    s.lkey = mr.lkey;
    sges.push_back(s);
  }
  return sges;
}

int Runner::AddressHandleTo(const Object& sender, const std::string& target, AhHandle* ah) {
  auto key = std::make_pair(sender.pd, target);
  auto it = ahs_.find(key);
  if (it != ahs_.end()) {
    *ah = AhHandle{it->second};
    return 0;
  }
  AhAttr attr;
  uint32_t qp_num = 0;
  if (int ret = AddressTo(sender, target, &attr, &qp_num)) return ret;
  if (int ret = DeviceOf(sender)->CreateAh(PdHandle{Obj(sender.pd).handle}, attr, ah)) {
    return ret;
  }
  ahs_[key] = ah->id;
  return 0;
}

int Runner::PostSend(const Command& c, Step* step) {
  const Object& qp = Obj(c.name);
  Device* dev = DeviceOf(qp);
  if (!dev) return ENODEV;
  SendWr wr = c.send;
  wr.sg_list = ResolveSges(c.sges);
  if (c.remote) {
    const Object& mr = Obj(c.remote->mr);
    wr.remote_addr = mr.buf ? reinterpret_cast<uint64_t>(mr.buf) + c.remote->offset : 0;
    wr.rkey = mr.rkey;
  }
  ResolveWindowFields(c, &wr);
  if (!c.ah.empty()) {
    if (int ret = AddressHandleTo(qp, c.ah, &wr.ah)) {
      step->note = "could not create an address handle to " + c.ah;
      return ret;
    }
    wr.remote_qpn = Obj(c.ah).qp_num;
    std::vector<std::string>& senders = Obj(c.ah).ud_senders;
    if (std::find(senders.begin(), senders.end(), c.name) == senders.end()) {
      senders.push_back(c.name);
    }
    if (!c.remote_qkey_given) wr.remote_qkey = Obj(c.ah).qkey;
  }
  std::vector<SendWr> wrs(c.count, wr);
  for (uint32_t i = 0; i < c.count; ++i) wrs[i].wr_id = c.wr_id + i;
  if (c.last_sges) wrs.back().sg_list = ResolveSges(*c.last_sges);
  size_t bad = wrs.size();
  int ret = dev->PostSend(QpHandle{qp.handle}, wrs, &bad);
  if (ret == 0 || bad > 0) NoteBindPosted(c, wr);
  if (ret != 0 && c.count > 1) step->note = "bad_wr index " + std::to_string(bad);
  RecordPosts(c, ret == 0 ? wrs.size() : (bad < wrs.size() ? bad : 0), step->start_ns);
  return ret;
}

int Runner::PostRecv(const Command& c, Step* step) {
  const Object& target = Obj(c.name);
  Device* dev = DeviceOf(target);
  if (!dev) return ENODEV;
  RecvWr wr;
  wr.sg_list = ResolveSges(c.sges);
  std::vector<RecvWr> wrs(c.count, wr);
  for (uint32_t i = 0; i < c.count; ++i) wrs[i].wr_id = c.wr_id + i;
  if (c.last_sges) wrs.back().sg_list = ResolveSges(*c.last_sges);
  size_t bad = wrs.size();
  int ret = target.kind == ObjectKind::kSrq
                ? dev->PostSrqRecv(SrqHandle{target.handle}, wrs, &bad)
                : dev->PostRecv(QpHandle{target.handle}, wrs, &bad);
  if (ret != 0 && c.count > 1) step->note = "bad_wr index " + std::to_string(bad);
  RecordPosts(c, ret == 0 ? wrs.size() : (bad < wrs.size() ? bad : 0), step->start_ns);
  return ret;
}

std::string Runner::QpName(int device, uint32_t qp_num) const {
  // A live QP wins over a destroyed one whose number was reused.
  for (bool destroyed : {false, true}) {
    for (const auto& [name, qp] : qps_) {
      const Object& o = *qp;
      if (o.device == device && o.handle && o.qp_num == qp_num && o.destroyed == destroyed) {
        return name;
      }
    }
  }
  return "qpn" + std::to_string(qp_num);  // not one of ours (should not happen)
}

int Runner::Poll(const Command& c, Step* step) {
  const Object& cq = Obj(c.name);
  Device* dev = DeviceOf(cq);
  if (!dev) return ENODEV;
  std::vector<WorkCompletion> wcs;
  int ret = dev->WaitForCompletions(CqHandle{cq.handle}, c.n, c.timeout_ms * 1000000, &wcs);
  if (ret != 0 && ret != ETIMEDOUT) return ret;
  step->outcomes.reserve(wcs.size() + 1);
  for (const WorkCompletion& wc : wcs) {
    Outcome& o = step->outcomes.emplace_back();  // reserved: no outcome moves
    o.kind = Outcome::Kind::kWc;
    o.wc = wc;
    o.qp = QpName(cq.device, wc.qp_num);
    auto local = objects_.find(o.qp);
    if (local != objects_.end()) {
      o.src_qp = QpNumName(local->second, wc.src_qp);
      if (wc.wc_flags & wc_flag::kWithInv) o.invalidated = KeyName(cq.device, wc.imm_data);
    } else {
      o.src_qp = wc.src_qp ? "qpn:" + std::to_string(wc.src_qp) : "0";
    }
  }
  for (Outcome& o : step->outcomes) RecordCompletion(c.name, &o, *step);
  Outcome polled;
  polled.kind = Outcome::Kind::kPolled;
  polled.count = static_cast<int>(wcs.size());
  step->outcomes.push_back(std::move(polled));
  if (ret == ETIMEDOUT && options_.narrate) {
    step->note = "timed out after " + std::to_string(c.timeout_ms) + " ms with " +
                 std::to_string(wcs.size()) + " of " + std::to_string(c.n);
  }
  return ret;
}

std::string Runner::EventObject(int device, const AsyncEvent& ev) const {
  auto find = [&](ObjectKind kind, uint32_t handle) -> std::string {
    for (const auto& [name, o] : objects_) {
      if (o.kind == kind && o.device == device && o.handle == handle) return name;
    }
    return "#" + std::to_string(handle);
  };
  if (ev.qp) return "qp=" + find(ObjectKind::kQp, ev.qp.id);
  if (ev.cq) return "cq=" + find(ObjectKind::kCq, ev.cq.id);
  if (ev.srq) return "srq=" + find(ObjectKind::kSrq, ev.srq.id);
  return "port=" + std::to_string(ev.port_num);
}

int Runner::Events(const Command& c, Step* step) {
  int ret = 0;
  if (c.wait_for) {
    ret = ETIMEDOUT;
    for (auto& dev : devices_) {
      if (dev && dev->WaitForAsyncEvent(*c.wait_for, QpHandle{}, c.timeout_ms * 1000000) == 0) {
        ret = 0;
        break;
      }
    }
  }
  struct Taken {
    int device;
    AsyncEvent ev;
  };
  std::vector<Taken> taken;
  for (size_t d = 0; d < devices_.size(); ++d) {
    if (!devices_[d]) continue;
    for (const AsyncEvent& ev : devices_[d]->TakeAsyncEvents()) {
      taken.push_back({static_cast<int>(d), ev});
    }
  }
  std::stable_sort(taken.begin(), taken.end(), [](const Taken& a, const Taken& b) {
    return a.ev.time_ns < b.ev.time_ns;
  });
  for (const Taken& t : taken) {
    Outcome o;
    o.kind = Outcome::Kind::kEvent;
    o.event = t.ev.type;
    o.object = EventObject(t.device, t.ev);
    step->outcomes.push_back(std::move(o));
  }
  return ret;
}

int Runner::FillOrCheck(const Command& c, Step* step) {
  const Object& mr = Obj(c.name);
  if (!mr.buf || c.offset + c.length > mr.len) {
    step->failures.push_back("range " + std::to_string(c.offset) + "+" +
                             std::to_string(c.length) + " is outside MR " + c.name +
                             " (length " + std::to_string(mr.len) + ")");
    return EINVAL;
  }
  uint8_t* p = mr.buf + c.offset;
  if (c.verb == Verb::kFill) {
    std::memset(p, c.byte, c.length);
    return 0;
  }
  for (uint64_t i = 0; i < c.length; ++i) {
    if (p[i] == c.byte) continue;
    Outcome o;
    o.kind = Outcome::Kind::kMismatch;
    o.offset = c.offset + i;
    o.got = p[i];
    o.want = c.byte;
    step->outcomes.push_back(o);
    step->failures.push_back("byte " + std::to_string(o.offset) + " of " + c.name + " is " +
                             std::to_string(o.got) + ", expected " + std::to_string(o.want));
    return 0;
  }
  return 0;
}

}  // namespace qptwin::scenario
