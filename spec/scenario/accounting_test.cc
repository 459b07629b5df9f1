// WrLedger (accounting.h) against a small device that knows the truth: two QPs whose send and
// receive queues complete in order as IBTA and rxe do (unsignaled successes write no CQE, an
// error CQE is written even for an unsignaled WR, then the QP goes to ERR and flushes its SQ,
// then its RQ — the model's order; an SRQ is never flushed), on one shared CQ or on
// separate ones, one QP on an SRQ or not. After the CQs are drained, every WR must have the end
// the device gave it, whatever the wr_ids: here they come from {0, 1}, so almost every CQE's
// wr_id fits several WRs (the receives of a QP without SRQ on a shared CQ use {2, 3}: SideForTie).
#include "spec/scenario/accounting.h"

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rapidcheck.h"

namespace qptwin::scenario {
namespace {

struct Truth {
  Wqe::End end = Wqe::End::kOutstanding;
  WcStatus status = WcStatus::kSuccess;
  bool silently_done = false;  // SQ: succeeded without CQE, implied once a later CQE of the queue exists
};

struct Device {
  struct Qp {
    std::string name;
    bool err = false;
    bool srq = false;
    std::deque<size_t> sq, rq;  // truth: WRs not executed yet
    std::vector<size_t> sq_epoch;  // SQ WRs since the last RESET, in order (for implied)
    WrQueue ledger_sq, ledger_rq;
  };
  struct Cqe {
    int qp;
    bool send;
    size_t wr;  // the WR it is for (truth)
    WorkCompletion wc;
  };
  Qp qps[2];
  WrQueue ledger_srq;
  std::deque<size_t> srq;
  bool shared_cq = true;
  std::deque<Cqe> cqs[3];  // shared: cqs[0]; else cqs[0] send, cqs[1] recv
  std::vector<Wqe> wqes;
  std::vector<Truth> truth;
  WrLedger ledger{&wqes};
  int line = 0;
  int unclaimed = 0;
  std::string log;  // the operations, for a failing case

  std::deque<Cqe>& CqOf(bool send) { return cqs[shared_cq || send ? 0 : 1]; }

  void Write(int q, bool send, size_t wr, WcStatus status) {
    WorkCompletion wc;
    wc.wr_id = wqes[wr].wr_id;
    wc.status = status;
    // The opcode of an error CQE is undefined (IBTA 11.4.2.1); rxe leaves it 0 (SEND).
    wc.opcode = status != WcStatus::kSuccess ? WcOpcode::kSend
                : send                       ? WcOpcode::kRdmaWrite
                                             : WcOpcode::kRecv;
    truth[wr].end = Wqe::End::kCqe;
    truth[wr].status = status;
    if (send) {  // earlier silently done WRs of the epoch are implied by this CQE
      for (size_t i : qps[q].sq_epoch) {
        if (i == wr) break;
        if (truth[i].silently_done) truth[i].end = Wqe::End::kImplicit;
      }
    }
    CqOf(send).push_back({q, send, wr, wc});
  }

  void EnterErr(int q) {
    Qp& qp = qps[q];
    if (qp.err) return;
    log += "err " + qp.name + "\n";
    qp.err = true;
    for (size_t wr : qp.sq) Write(q, true, wr, WcStatus::kWrFlushErr);  // FlushSq, then FlushRq
    qp.sq.clear();
    for (size_t wr : qp.rq) Write(q, false, wr, WcStatus::kWrFlushErr);
    qp.rq.clear();
  }

  size_t NewWr(int q, bool send, uint64_t wr_id, bool signaled) {
    Wqe w;
    w.qp = send || !qps[q].srq ? qps[q].name : "s";
    w.queue = send ? "SQ" : qps[q].srq ? "SRQ" : "RQ";
    w.wr_id = wr_id;
    w.signaled = signaled;
    w.post_line = line;
    wqes.push_back(w);
    truth.push_back({});
    return wqes.size() - 1;
  }

  void PostSend(int q, uint64_t wr_id, bool signaled) {
    log += "post_send " + qps[q].name + " " + std::to_string(wr_id) + (signaled ? " sig\n" : "\n");
    size_t wr = NewWr(q, true, wr_id, signaled);
    ledger.Post(&qps[q].ledger_sq, wr);
    qps[q].sq_epoch.push_back(wr);
    if (qps[q].err) return Write(q, true, wr, WcStatus::kWrFlushErr);
    qps[q].sq.push_back(wr);
  }

  void PostRecv(int q, uint64_t wr_id) {
    log += "post_recv " + qps[q].name + " " + std::to_string(wr_id) + "\n";
    size_t wr = NewWr(q, false, wr_id, true);
    if (qps[q].srq) {
      ledger.Post(&ledger_srq, wr);
      srq.push_back(wr);
      return;
    }
    ledger.Post(&qps[q].ledger_rq, wr);
    if (qps[q].err) return Write(q, false, wr, WcStatus::kWrFlushErr);
    qps[q].rq.push_back(wr);
  }

  // The SQ head executes: fails with `fail` (kSuccess: succeeds).
  void ExecSend(int q, WcStatus fail) {
    Qp& qp = qps[q];
    if (qp.err || qp.sq.empty()) return;
    log += "exec " + qp.name + " " + std::string(ToName(fail)) + "\n";
    size_t wr = qp.sq.front();
    qp.sq.pop_front();
    if (fail != WcStatus::kSuccess) {
      Write(q, true, wr, fail);  // IBTA 10.7.3.1: even unsignaled
      return EnterErr(q);
    }
    if (wqes[wr].signaled) return Write(q, true, wr, WcStatus::kSuccess);
    truth[wr].silently_done = true;
  }

  // A message arrives and takes the receive queue's head (or the SRQ's).
  void Receive(int q, bool too_long) {
    Qp& qp = qps[q];
    std::deque<size_t>& rq = qp.srq ? srq : qp.rq;
    if (qp.err || rq.empty()) return;
    log += "receive " + qp.name + (too_long ? " too_long\n" : "\n");
    size_t wr = rq.front();
    rq.pop_front();
    Write(q, false, wr, too_long ? WcStatus::kLocLenErr : WcStatus::kSuccess);
    if (too_long) EnterErr(q);
  }

  void Poll(int cq, int n) {
    if (!cqs[cq].empty()) log += "poll c" + std::to_string(cq) + " " + std::to_string(n) + "\n";
    for (; n > 0 && !cqs[cq].empty(); --n) {
      Cqe c = cqs[cq].front();
      cqs[cq].pop_front();
      Qp& qp = qps[c.qp];
      CqeSeen seen;
      seen.wc = c.wc;
      seen.cq = "c" + std::to_string(cq);
      seen.qp = qp.name;
      seen.line = line;
      QpQueues queues;
      queues.sq = &qp.ledger_sq;
      queues.rq = qp.srq ? &ledger_srq : &qp.ledger_rq;
      queues.rq_is_srq = qp.srq;
      queues.sq_on_cq = shared_cq || cq == 0;
      queues.rq_on_cq = shared_cq || cq == 1;
      if (ledger.Complete(seen, queues) < 0) ++unclaimed;
    }
  }

  void Drain() {
    Poll(0, 1 << 30);
    Poll(1, 1 << 30);
  }

  // RESET and back to RTS, after the application polled what was left (accounting.h rule 4).
  void Reset(int q) {
    Drain();
    log += "reset " + qps[q].name + "\n";
    Qp& qp = qps[q];
    for (size_t wr : qp.sq) truth[wr].end = Wqe::End::kDiscarded;
    for (size_t wr : qp.rq) truth[wr].end = Wqe::End::kDiscarded;
    for (size_t wr : qp.sq_epoch) {
      if (truth[wr].silently_done && truth[wr].end == Wqe::End::kOutstanding) {
        truth[wr].end = Wqe::End::kDiscarded;  // nothing after it proves it was done
      }
    }
    qp.sq.clear();
    qp.rq.clear();
    qp.sq_epoch.clear();
    qp.err = false;
    ledger.EndAll(&qp.ledger_sq, Wqe::End::kDiscarded, line, 0);
    ledger.EndAll(&qp.ledger_rq, Wqe::End::kDiscarded, line, 0);
  }
};

std::string Show(const Device& d) {
  std::string out;
  for (size_t i = 0; i < d.wqes.size(); ++i) {
    const Wqe& w = d.wqes[i];
    out += w.qp + " " + w.queue + " wr_id=" + std::to_string(w.wr_id) +
           (w.signaled ? " sig" : "") + " truth=" + std::string(ToName(d.truth[i].end)) + "/" +
           std::string(ToName(d.truth[i].status)) + " ledger=" + std::string(ToName(w.end)) +
           "/" + std::string(ToName(w.status)) + "\n";
  }
  return out;
}

TEST(WrLedger, EveryWrEndsAsTheDeviceEndedItWhateverTheWrIds) {
  const bool ok = rc::check("ledger == device truth after draining", [] {
    Device d;
    d.shared_cq = *rc::gen::arbitrary<bool>();
    d.log = d.shared_cq ? "shared cq\n" : "send cq c0, recv cq c1\n";
    d.qps[0].name = "a";
    d.qps[1].name = "b";
    d.qps[1].srq = *rc::gen::arbitrary<bool>();
    if (d.qps[1].srq) d.log += "b on srq s\n";
    const int steps = *rc::gen::inRange(1, 60);
    for (int i = 0; i < steps; ++i) {
      d.line = i + 1;
      const int q = *rc::gen::inRange(0, 2);
      const uint64_t id = *rc::gen::inRange<uint64_t>(0, 2);
      switch (*rc::gen::inRange(0, 9)) {
        case 0:
        case 1:
          d.PostSend(q, id, *rc::gen::arbitrary<bool>());
          break;
        case 2:
          // A shared CQ cannot tell a send's flush from a receive's with the same wr_id when
          // the send may have completed silently (accounting.h SideForTie): there the
          // receives of a QP without SRQ use wr_ids of their own.
          d.PostRecv(q, d.shared_cq && !d.qps[q].srq ? id + 2 : id);
          break;
        case 3:
        case 4:
          d.ExecSend(q, *rc::gen::element(WcStatus::kSuccess, WcStatus::kSuccess,
                                          WcStatus::kSuccess, WcStatus::kRemAccessErr,
                                          WcStatus::kLocProtErr));
          break;
        case 5:
          d.Receive(q, *rc::gen::inRange(0, 5) == 0);
          break;
        case 6:
          d.EnterErr(q);
          break;
        case 7:
          d.Poll(*rc::gen::inRange(0, 2), *rc::gen::inRange(1, 4));
          break;
        case 8:
          if (*rc::gen::inRange(0, 4) == 0) d.Reset(q);
          break;
      }
    }
    d.line = steps + 1;
    d.Drain();
    if (d.unclaimed != 0) RC_FAIL("a CQE was charged to no WR\n" + d.log + Show(d));
    for (size_t i = 0; i < d.wqes.size(); ++i) {
      if (d.wqes[i].end != d.truth[i].end ||
          (d.truth[i].end == Wqe::End::kCqe && d.wqes[i].status != d.truth[i].status)) {
        RC_FAIL("WR " + std::to_string(i) + " mis-accounted\n" + d.log + Show(d));
      }
    }
  });
  EXPECT_TRUE(ok);
}

// Named regressions of issue 14, on the ledger alone.
WrQueue* Sq(Device& d, int q) { return &d.qps[q].ledger_sq; }

TEST(WrLedger, RepeatedWrIdsChargeTheSignaledWrNotTheFirstUnsignaledOne) {
  Device d;
  d.qps[0].name = "a";
  d.qps[1].name = "b";
  d.PostSend(0, 0, false);
  d.PostSend(0, 0, true);
  d.ExecSend(0, WcStatus::kSuccess);
  d.ExecSend(0, WcStatus::kSuccess);
  d.Drain();
  EXPECT_EQ(d.wqes[0].end, Wqe::End::kImplicit);
  EXPECT_EQ(d.wqes[1].end, Wqe::End::kCqe);
  EXPECT_EQ(Sq(d, 0)->Live(), 0u);
}

TEST(WrLedger, SharedCqReceiveErrorIsTheReceiveNotASendWithItsWrId) {
  Device d;
  d.qps[0].name = "a";
  d.qps[1].name = "b";
  d.PostSend(0, 0, true);      // wr 0: still waiting
  d.PostRecv(0, 0);            // wr 1
  d.Receive(0, /*too_long=*/true);  // LOC_LEN_ERR on the receive, then ERR flushes the send
  d.Drain();
  EXPECT_EQ(d.wqes[1].end, Wqe::End::kCqe);
  EXPECT_EQ(d.wqes[1].status, WcStatus::kLocLenErr);
  EXPECT_EQ(d.wqes[0].status, WcStatus::kWrFlushErr);
}

TEST(WrLedger, FlushRunStartIsMovedBackWhenMoreFlushesArrive) {
  Device d;
  d.qps[0].name = "a";
  d.qps[1].name = "b";
  d.PostSend(0, 0, false);
  d.PostSend(0, 0, false);
  d.PostSend(0, 0, true);
  d.EnterErr(0);  // three flushes, all wr_id 0
  d.Poll(0, 1);   // placed as late as possible first: the signaled WR
  EXPECT_EQ(d.wqes[2].end, Wqe::End::kCqe);
  d.Drain();      // two more: the run starts at the first WR after all
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(d.wqes[i].end, Wqe::End::kCqe) << i;
    EXPECT_EQ(d.wqes[i].status, WcStatus::kWrFlushErr) << i;
  }
}

TEST(WrLedger, CqeAfterDestroyStillClaimsItsWr) {
  std::vector<Wqe> wqes(2);
  wqes[0].wr_id = 5;
  wqes[0].signaled = true;
  wqes[1].wr_id = 6;
  wqes[1].signaled = true;
  WrLedger ledger(&wqes);
  WrQueue sq, rq;
  ledger.Post(&sq, 0);
  ledger.Post(&sq, 1);
  ledger.EndAll(&sq, Wqe::End::kDestroyed, 10, 0);
  EXPECT_EQ(sq.Live(), 0u);
  CqeSeen c;
  c.wc.wr_id = 5;
  c.wc.status = WcStatus::kWrFlushErr;
  c.line = 11;
  QpQueues queues{&sq, &rq, true, true, false};
  EXPECT_EQ(ledger.Complete(c, queues), 0);
  EXPECT_EQ(wqes[0].end, Wqe::End::kCqe);
  EXPECT_EQ(wqes[0].end_line, 11);
  EXPECT_EQ(wqes[1].end, Wqe::End::kDestroyed);
}

}  // namespace
}  // namespace qptwin::scenario
