#include "spec/reference/device_behaviour.h"

#include <algorithm>
#include <cerrno>
#include <vector>

namespace qptwin::reference {
namespace {

constexpr uint64_t kQuietNs = 20'000'000;  // 20 ms: rxe's deferred tasks have run

// A QP of its own for each probe, so one probe's leftovers cannot touch the other.
int MakeQp(Device& dev, PdHandle pd, CqHandle cq, QpHandle* out) {
  QpInitAttr init;
  init.qp_type = QpType::kRc;
  init.pd = pd;
  init.send_cq = cq;
  init.recv_cq = cq;
  init.cap = {1, 1, 1, 1, 0};
  init.sq_sig_all = true;
  QpCap cap;
  return dev.CreateQp(init, out, &cap);
}

// RESET: post one send. EINVAL with bad_wr 1 says the WR was queued.
int ProbeRejectedSend(Device& dev, PdHandle pd, CqHandle cq, bool* queues) {
  QpHandle qp;
  if (int rc = MakeQp(dev, pd, cq, &qp)) return rc;
  SendWr wr;
  wr.wr_id = 1;
  size_t bad = 0;
  int rc = dev.PostSend(qp, {wr}, &bad);
  *queues = rc == EINVAL && bad == 1;
  // Destroying the QP discards the queued WR without a completion.
  return dev.DestroyQp(qp);
}

// INIT -> ERR, post one receive: flushed within settle_ns, or only by the next ERR modify.
int ProbeRecvInErr(Device& dev, PdHandle pd, CqHandle cq, uint64_t settle_ns, bool* waits) {
  QpHandle qp;
  if (int rc = MakeQp(dev, pd, cq, &qp)) return rc;
  QpAttr a;
  a.qp_state = QpState::kInit;
  a.port_num = 1;
  a.qp_access_flags = access::kLocalWrite;
  int rc = dev.ModifyQp(qp, a, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags);
  a.qp_state = QpState::kErr;
  if (rc == 0) rc = dev.ModifyQp(qp, a, attr::kState);
  size_t bad = 0;
  std::vector<WorkCompletion> wcs;
  // rxe's modify to ERR schedules its responder task; a receive posted while that is still
  // pending is flushed by it. Let it run first (nothing completes: the queues are empty).
  settle_ns = std::max<uint64_t>(settle_ns, kQuietNs);
  if (rc == 0) (void)dev.WaitForCompletions(cq, 1, settle_ns, &wcs);
  if (rc == 0) rc = dev.PostRecv(qp, {RecvWr{2, {}}}, &bad);
  if (rc == 0) {
    (void)dev.WaitForCompletions(cq, 1, settle_ns, &wcs);  // ETIMEDOUT: not flushed
    *waits = wcs.empty();
    rc = dev.ModifyQp(qp, a, attr::kState);  // ERR -> ERR flushes a waiting receive
    if (rc == 0 && *waits) (void)dev.WaitForCompletions(cq, 1, settle_ns, &wcs);
  }
  int destroyed = dev.DestroyQp(qp);
  return rc ? rc : destroyed;
}

}  // namespace

int ProbeDeviceBehaviour(Device& dev, PdHandle pd, uint64_t settle_ns, Behaviour* inout) {
  CqHandle cq;
  int actual = 0;
  if (int rc = dev.CreateCq(8, ChannelHandle{}, &cq, &actual)) return rc;
  Behaviour b = *inout;
  int rc = ProbeRejectedSend(dev, pd, cq, &b.post_send_below_rts_queues);
  if (rc == 0) rc = ProbeRecvInErr(dev, pd, cq, settle_ns, &b.recv_in_err_waits);
  int destroyed = dev.DestroyCq(cq);
  if (rc == 0) rc = destroyed;
  if (rc == 0) *inout = b;
  return rc;
}

}  // namespace qptwin::reference
