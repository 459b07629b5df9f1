#include "examples/practice/recovery.h"

#include <algorithm>
#include <cerrno>

namespace qptwin::practice {
namespace {

constexpr int kPollBatch = 32;
constexpr uint64_t kWaitSliceNs = 1'000'000;  // wait on one CQ at most 1 ms before re-checking

// Counts this QP's completions as they are collected.
struct DrainState {
  uint32_t qp_num = 0;
  bool shared_cq = false;
  uint32_t send_seen = 0;
  uint32_t recv_seen = 0;
  bool last_send_seen = false;

  bool Done(const Outstanding& o) const {
    bool last_ok = !o.last_send_wr_id.has_value() || last_send_seen;
    if (shared_cq) return last_ok && send_seen + recv_seen >= o.send_cqes + o.recv_cqes;
    return last_ok && send_seen >= o.send_cqes && recv_seen >= o.recv_cqes;
  }
};

void Classify(const std::vector<WorkCompletion>& wcs, bool from_send_cq, const Outstanding& o,
              DrainState* st, RecoveryResult* out) {
  for (const WorkCompletion& wc : wcs) {
    if (wc.qp_num != st->qp_num) {
      out->others.push_back(wc);
      continue;
    }
    out->drained.push_back(wc);
    // On a shared CQ, a flushed WC does not say which queue it came from (its opcode is
    // undefined unless SUCCESS), so only the total is judged (DrainState::Done).
    if (from_send_cq) {
      ++st->send_seen;
    } else {
      ++st->recv_seen;
    }
    if (from_send_cq && o.last_send_wr_id && wc.wr_id == *o.last_send_wr_id) {
      st->last_send_seen = true;
    }
  }
}

int PollOnce(Device& dev, CqHandle cq, bool from_send_cq, const Outstanding& o, DrainState* st,
             RecoveryResult* out) {
  for (;;) {
    WorkCompletion wc[kPollBatch];
    int n = dev.PollCq(cq, kPollBatch, wc);
    if (n < 0) return -n;
    if (n == 0) return 0;
    Classify(std::vector<WorkCompletion>(wc, wc + n), from_send_cq, o, st, out);
  }
}

}  // namespace

int DrainQp(Backend& backend, Device& dev, QpHandle qp, const Outstanding& outstanding,
            uint64_t timeout_ns, RecoveryResult* out) {
  if (out == nullptr) return EINVAL;
  QpAttr attr;
  QpInitAttr init;
  if (int err = dev.QueryQp(qp, &attr, &init)) return err;
  DrainState st;
  if (int err = dev.QpNum(qp, &st.qp_num)) return err;
  st.shared_cq = init.send_cq == init.recv_cq;
  const uint64_t start = backend.NowNs();
  if (attr.qp_state == QpState::kReset) return 0;  // RESET holds no WRs (R9)
  if (attr.qp_state != QpState::kErr) {
    // IBTA 10.3.1 / R6: entering ERR completes every queued WR with WR_FLUSH_ERR.
    QpAttr err_attr;
    err_attr.qp_state = QpState::kErr;
    if (int err = dev.ModifyQp(qp, err_attr, attr::kState)) return err;
  }
  const uint64_t deadline = start + timeout_ns;
  for (;;) {
    if (int err = PollOnce(dev, init.send_cq, true, outstanding, &st, out)) return err;
    if (!st.shared_cq) {
      if (int err = PollOnce(dev, init.recv_cq, false, outstanding, &st, out)) return err;
    }
    if (st.Done(outstanding)) break;
    uint64_t now = backend.NowNs();
    if (now >= deadline) {
      out->drain_ns = now - start;
      return ETIMEDOUT;
    }
    // Let time pass on the queue still owing completions.
    bool send_owes = st.shared_cq || st.send_seen < outstanding.send_cqes ||
                     (outstanding.last_send_wr_id && !st.last_send_seen);
    CqHandle cq = send_owes ? init.send_cq : init.recv_cq;
    std::vector<WorkCompletion> got;
    (void)dev.WaitForCompletions(cq, 1, std::min(deadline - now, kWaitSliceNs), &got);
    Classify(got, send_owes, outstanding, &st, out);
  }
  out->drain_ns = backend.NowNs() - start;
  return 0;
}

int RecoverQp(Backend& backend, Device& dev, QpHandle qp, StoredConnection* conn,
              PeerLink* peer, const RecoveryOptions& opts, RecoveryResult* out) {
  if (out == nullptr || conn == nullptr) return EINVAL;
  if (int err = dev.QpNum(qp, &out->old_qp_num)) return err;
  if (int err = DrainQp(backend, dev, qp, opts.outstanding, opts.drain_timeout_ns, out)) {
    return err;
  }
  QpHandle target = qp;
  if (opts.mode == RecoveryMode::kReset) {
    QpAttr reset;
    reset.qp_state = QpState::kReset;  // any -> RESET: legal (qp_state_table)
    if (int err = dev.ModifyQp(qp, reset, attr::kState)) return err;
  } else {
    QpAttr attr;
    QpInitAttr init;
    if (int err = dev.QueryQp(qp, &attr, &init)) return err;
    QpHandle fresh;
    if (int err = dev.CreateQp(init, &fresh, nullptr)) return err;
    (void)dev.DestroyQp(qp);  // drained above: nothing of it is lost
    if (peer) peer->Disconnect(out->old_qp_num);
    target = fresh;
  }
  out->qp = target;
  if (int err = dev.QpNum(target, &out->qp_num)) return err;
  if (peer) {
    ConnectionInfo local;
    if (int err = dev.LocalConnectionInfo(target, &local)) return err;
    if (int err = peer->Connect(local, conn->params, &conn->remote)) return err;
  }
  return ConnectQp(dev, target, *conn);
}

}  // namespace qptwin::practice
