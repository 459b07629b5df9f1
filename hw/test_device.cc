#include "hw/test_device.h"

#include "spec/vocabulary.h"

namespace qptwin::hw {

TestDevice OpenTestDevice() {
  TestDevice t;
  t.backend = testing::MakeBackend(testing::HwChoice(), &t.unavailable);
  if (!t.backend) return t;
  std::unique_ptr<Device> dev;
  int ret = t.backend->OpenDevice("", &dev);
  if (ret != 0) {
    t.unavailable = "OpenDevice failed: " + std::string(ErrnoName(ret));
    return t;
  }
  t.device = std::move(dev);
  return t;
}

TestDevice OpenTestDeviceOrSkip() {
  TestDevice t = OpenTestDevice();
  if (!t.device) testing::ReportUnavailable(testing::HwChoice(), t.unavailable);
  return t;
}

int CreateRcPair(const std::shared_ptr<Device>& dev, RcPair* out) {
  testing::SideOptions o;
  o.cap = {16, 16, 2, 2, 0};
  o.buf_len = kBufBytes;
  o.one_cq = true;
  int ret = dev->AllocPd(&out->pd);
  if (ret == 0) ret = testing::CreateSide(dev, o, out->pd, &out->a);
  if (ret == 0) ret = testing::CreateSide(dev, o, out->pd, &out->b);
  return ret;
}

int RcParams(Device* dev, BringUpParams* out) {
  PortAttr port;
  if (int ret = dev->QueryPort(1, &port)) return ret;
  BringUpParams p;
  p.path_mtu = port.active_mtu;
  p.sq_psn = 100;
  p.rq_psn = 100;
  p.max_rd_atomic = 4;
  p.max_dest_rd_atomic = 4;
  *out = p;
  return 0;
}

int ConnectRc(Device* dev, QpHandle qp, const ConnectionInfo& peer) {
  BringUpParams p;
  if (int ret = RcParams(dev, &p)) return ret;
  return BringUpTo(*dev, qp, p, peer);
}

int ConnectRcPair(Device* dev, const RcPair& pair) {
  BringUpParams p;
  if (int ret = RcParams(dev, &p)) return ret;
  return ConnectPair(*dev, pair.a.qp, *dev, pair.b.qp, p);
}

}  // namespace qptwin::hw
