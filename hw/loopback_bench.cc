// Rough numbers for one device looped back on itself through the hw Backend: SEND/RECV
// ping-pong latency and RDMA WRITE bandwidth. For calibrating model profiles, not a perftest
// replacement. Usage (Soft-RoCE): tools/rxe-vm/run -- bazel-bin/hw/loopback_bench [iters]
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "hw/test_device.h"

namespace qptwin::hw {
namespace {

int Fail(const char* what, int err) {
  std::fprintf(stderr, "loopback_bench: %s: %s\n", what, std::string(ErrnoName(err)).c_str());
  return 1;
}

int Run(int iters) {
  TestDevice t = OpenTestDevice();
  if (!t.device) {
    std::fprintf(stderr, "loopback_bench: no RDMA device: %s\n", t.unavailable.c_str());
    return 77;
  }
  Device* dev = t.device.get();
  RcPair p;
  int ret = CreateRcPair(t.device, &p);
  if (ret == 0) ret = ConnectRcPair(dev, p);
  if (ret != 0) return Fail("setup", ret);
  DeviceAttr attr;
  if ((ret = dev->QueryDevice(&attr)) != 0) return Fail("QueryDevice", ret);
  std::printf("device %s max_inline_data(probed) %d\n", attr.name.c_str(), attr.max_inline_data);

  // Ping-pong: a sends 64 B to b, b answers; one iteration is one round trip.
  auto sge = [](const Side& s, uint32_t len) {
    return Sge{reinterpret_cast<uint64_t>(s.buf), len, s.lkey};
  };
  size_t bad = 0;
  std::vector<WorkCompletion> wcs;
  RecvWr ra{1, {sge(p.a, 64)}}, rb{2, {sge(p.b, 64)}};
  SendWr sa, sb;
  sa.sg_list = {sge(p.a, 64)};
  sa.send_flags = send_flag::kSignaled;
  sb = sa;
  sb.sg_list = {sge(p.b, 64)};
  uint64_t t0 = t.backend->NowNs();
  for (int i = 0; i < iters; ++i) {
    if ((ret = dev->PostRecv(p.b.qp, {rb}, &bad)) != 0) return Fail("PostRecv", ret);
    if ((ret = dev->PostRecv(p.a.qp, {ra}, &bad)) != 0) return Fail("PostRecv", ret);
    if ((ret = dev->PostSend(p.a.qp, {sa}, &bad)) != 0) return Fail("PostSend", ret);
    wcs.clear();
    if ((ret = dev->WaitForCompletions(p.b.scq, 1, kWaitNs, &wcs)) != 0) return Fail("wait", ret);
    if ((ret = dev->PostSend(p.b.qp, {sb}, &bad)) != 0) return Fail("PostSend", ret);
    // a: its send completion and the reply; b: its send completion.
    if ((ret = dev->WaitForCompletions(p.a.scq, 2, kWaitNs, &wcs)) != 0) return Fail("wait", ret);
    if ((ret = dev->WaitForCompletions(p.b.scq, 1, kWaitNs, &wcs)) != 0) return Fail("wait", ret);
  }
  uint64_t rtt = (t.backend->NowNs() - t0) / static_cast<uint64_t>(iters);
  std::printf("send/recv 64 B ping-pong: %d iters, %.1f us round trip, %.1f us one way\n", iters,
              rtt / 1e3, rtt / 2e3);

  // RDMA WRITE bandwidth: 32 KiB writes, up to 8 outstanding.
  constexpr uint32_t kMsg = 32 * 1024;
  constexpr int kDepth = 8;
  SendWr w;
  w.opcode = WrOpcode::kRdmaWrite;
  w.sg_list = {sge(p.a, kMsg)};
  w.remote_addr = reinterpret_cast<uint64_t>(p.b.buf);
  w.rkey = p.b.rkey;
  w.send_flags = send_flag::kSignaled;
  int writes = iters, posted = 0, done = 0;
  t0 = t.backend->NowNs();
  while (done < writes) {
    while (posted < writes && posted - done < kDepth) {
      if ((ret = dev->PostSend(p.a.qp, {w}, &bad)) != 0) return Fail("PostSend", ret);
      ++posted;
    }
    wcs.clear();
    if ((ret = dev->WaitForCompletions(p.a.scq, 1, kWaitNs, &wcs)) != 0) return Fail("wait", ret);
    for (const WorkCompletion& wc : wcs) {
      if (wc.status != WcStatus::kSuccess) return Fail("write completion", EIO);
    }
    done += static_cast<int>(wcs.size());
  }
  uint64_t ns = t.backend->NowNs() - t0;
  double mb_s = static_cast<double>(kMsg) * writes / (static_cast<double>(ns) / 1e9) / 1e6;
  std::printf("rdma write %u B x %d, depth %d: %.1f MB/s (%.1f us per write)\n", kMsg, writes,
              kDepth, mb_s, ns / 1e3 / writes);
  return 0;
}

}  // namespace
}  // namespace qptwin::hw

int main(int argc, char** argv) {
  int iters = argc > 1 ? std::atoi(argv[1]) : 1000;
  return qptwin::hw::Run(iters > 0 ? iters : 1000);
}
