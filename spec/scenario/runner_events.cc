// The runner's completion channels (req_notify, get_cq_event, ack_cq_events), SRQ changes
// (modify_srq) and CQ resizing (resize_cq): FORMAT.md "Channels, SRQs and CQ sizes".
#include <cerrno>

#include "spec/scenario/runner.h"

namespace qptwin::scenario {

int Runner::CreateChannel(const Command& c, Step* step) {
  (void)step;
  Object& o = Obj(c.name);
  o.kind = ObjectKind::kChannel;
  o.device = Obj(c.device).device;
  Device* dev = DeviceOf(o);
  if (!dev) return ENODEV;
  ChannelHandle h;
  const int ret = dev->CreateCompChannel(&h);
  o.handle = ret == 0 ? h.id : 0;
  return ret;
}

int Runner::ReqNotify(const Command& c, Step* step) {
  (void)step;
  const Object& cq = Obj(c.name);
  Device* dev = DeviceOf(cq);
  if (!dev) return ENODEV;
  return dev->ReqNotifyCq(CqHandle{cq.handle}, c.solicited);
}

int Runner::GetCqEvent(const Command& c, Step* step) {
  const Object& ch = Obj(c.name);
  Device* dev = DeviceOf(ch);
  if (!dev) return ENODEV;
  CqHandle cq;
  const int ret = dev->GetCqEvent(ChannelHandle{ch.handle}, c.timeout_ms * 1000000, &cq);
  if (ret != 0) return ret;
  AddAttrs("cq_event cq=" + HandleName(ObjectKind::kCq, ch.device, cq.id), step);
  return 0;
}

int Runner::AckCqEvents(const Command& c, Step* step) {
  (void)step;
  const Object& cq = Obj(c.name);
  Device* dev = DeviceOf(cq);
  if (!dev) return ENODEV;
  dev->AckCqEvents(CqHandle{cq.handle}, static_cast<unsigned>(c.n));
  return 0;
}

int Runner::ModifySrq(const Command& c, Step* step) {
  (void)step;
  const Object& srq = Obj(c.name);
  Device* dev = DeviceOf(srq);
  if (!dev) return ENODEV;
  return dev->ModifySrq(SrqHandle{srq.handle}, c.srq_attr, c.srq_mask);
}

int Runner::ResizeCq(const Command& c, Step* step) {
  const Object& cq = Obj(c.name);
  Device* dev = DeviceOf(cq);
  if (!dev) return ENODEV;
  int actual = 0;
  const int ret = dev->ResizeCq(CqHandle{cq.handle}, c.cqe, &actual);
  if (ret == 0) AddAttrs("cq_attr cqe=" + std::to_string(actual), step);
  return ret;
}

int Runner::ReregMr(const Command& c, Step* step) {
  (void)step;
  Object& mr = Obj(c.name);
  Device* dev = DeviceOf(mr);
  if (!dev) return ENODEV;
  const PdHandle pd{c.pd.empty() ? 0 : Obj(c.pd).handle};
  uint8_t* buf = mr.buf;
  uint32_t lkey = mr.lkey, rkey = mr.rkey;
  const int ret = dev->ReregMr(MrHandle{mr.handle}, c.rereg_flags, pd, c.length, c.access, &buf,
                               &lkey, &rkey);
  if (ret != 0) return ret;
  mr.buf = buf;
  mr.lkey = lkey;
  mr.rkey = rkey;
  if (c.rereg_flags & rereg_flag::kChangeTranslation) mr.len = c.length;
  if (c.rereg_flags & rereg_flag::kChangePd) mr.pd = c.pd;
  return 0;
}

}  // namespace qptwin::scenario
