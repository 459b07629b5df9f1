#include "spec/reference/sequence.h"

#include <algorithm>
#include <cerrno>
#include <ostream>
#include <set>
#include <sstream>

#include "spec/posting_rules.h"
#include "spec/qp_state_table.h"
#include "spec/reference/device_behaviour.h"

namespace qptwin::reference {
namespace {

constexpr uint32_t kDepth = 8;
constexpr uint32_t kMaxSge = 2;
constexpr uint32_t kQkey = 0x11111111;
constexpr size_t kMrLen = 4096;
using access::kAll;
const char* const kQpName[] = {"a", "b"};

// wr_id layout: qp index (bit 40), receive queue (bit 39), sequence number.
uint64_t WrId(int qp, bool recv, uint64_t seq) {
  return (uint64_t(qp) << 40) | (uint64_t(recv) << 39) | seq;
}

struct RefQp {
  QpHandle h;
  uint32_t qpn = 0;
  QpState state = QpState::kReset;
  std::deque<uint64_t> sq, rq;  // outstanding wr_ids in posting order
  uint32_t sq_depth = 0, rq_depth = 0, max_send_sge = 0, max_recv_sge = 0;
};

// Everything one run needs; `fail` records the first violated rule.
class Run {
 public:
  Run(Backend& backend, uint64_t settle_ns, const Behaviour* behaviour)
      : backend_(backend), settle_ns_(settle_ns), probe_(behaviour == nullptr) {
    if (behaviour) behaviour_ = *behaviour;
  }

  bool Setup();
  void Step(const SeqCommand& c);
  void Finish();
  std::string failure;
  int completions = 0;
  std::string Replay() const { return replay_.str(); }

 private:
  // One post list as a .qps line: count=N copies, the last one with `last` SGEs.
  void RecordPost(const SeqCommand& c, bool send, uint64_t first_wr_id, int rc);
  std::string SettleLine() const;  // the poll that stands for one Settle
  void Fail(const std::string& why) {
    if (failure.empty()) failure = why;
  }
  AttrMask MaskOf(const SeqCommand& c, QpState cur, QpState next) const;
  QpAttr AttrFor(int qp, const SeqCommand& c);
  void Modify(const SeqCommand& c);
  void PostSend(const SeqCommand& c);
  void PostRecv(const SeqCommand& c);
  void Settle(uint64_t ns);
  // A QP the reference holds in RTR, RTS, SQD or SQE that the device has in ERR (an
  // asynchronous error since the last look): taken as ObserveStates takes it; true then.
  bool MovedToErrMeanwhile(int qp);
  void Take(const WorkCompletion& wc);
  void ObserveStates();
  void CheckFlushedAtOnce();
  // The posting-rules oracle's verdict for command c on q (spec/posting_rules.h).
  PostVerdict ExpectedPost(const RefQp& q, bool send, const SeqCommand& c) const;

  Backend& backend_;
  uint64_t settle_ns_;
  bool probe_;  // no behaviour given: find it out on the device (ProbeDeviceBehaviour)
  Behaviour behaviour_;
  std::unique_ptr<Device> dev_;
  PortAttr port_;
  DeviceAttr dattr_;
  PdHandle pd_;
  CqHandle cq_;
  MrHandle mr_;
  uint8_t* buf_ = nullptr;
  uint32_t lkey_ = 0, rkey_ = 0;
  RefQp qp_[2];
  uint64_t seq_ = 0;
  std::set<uint64_t> discarded_;  // WRs a RESET discarded (a CQE may already have been written)
  // Send WRs a post the QP refused in RESET left queued (post_send_below_rts_queues): a
  // transport timer armed before the RESET (rxe never stops it) may run out there and make
  // them stale: never completed, their slots free (docs/differences.md row 124). They stay in
  // RefQp::sq; one that never completes is not a loss, and the queue's room is judged with
  // them and without them.
  std::set<uint64_t> may_vanish_;
  std::vector<uint64_t> flush_now_;  // receives posted in ERR that R4 flushes at once
  std::ostringstream replay_;        // SeqResult::replay
};

bool Run::Setup() {
  replay_ << SequencePreamble();
  if (backend_.OpenDevice("", &dev_) != 0) return Fail("OpenDevice failed"), false;
  int actual = 0;
  if (dev_->QueryDevice(&dattr_) || dev_->QueryPort(1, &port_) || dev_->AllocPd(&pd_) ||
      dev_->CreateCq(4096, ChannelHandle{}, &cq_, &actual) ||
      dev_->RegMr(pd_, kMrLen, kAll, &mr_, &buf_, &lkey_, &rkey_)) {
    return Fail("setup of PD/CQ/MR failed"), false;
  }
  if (probe_ && ProbeDeviceBehaviour(*dev_, pd_, settle_ns_, &behaviour_) != 0) {
    return Fail("probing the device's behaviour failed"), false;
  }
  for (auto& q : qp_) {
    QpInitAttr init;
    init.qp_type = QpType::kRc;
    init.pd = pd_;
    init.send_cq = cq_;
    init.recv_cq = cq_;
    init.cap = {kDepth, kDepth, kMaxSge, kMaxSge, 0};
    init.sq_sig_all = true;
    QpCap cap;
    if (dev_->CreateQp(init, &q.h, &cap) || dev_->QpNum(q.h, &q.qpn)) {
      return Fail("CreateQp failed"), false;
    }
    q.sq_depth = cap.max_send_wr;
    q.rq_depth = cap.max_recv_wr;
    q.max_send_sge = cap.max_send_sge;
    q.max_recv_sge = cap.max_recv_sge;
  }
  return true;
}

AttrMask Run::MaskOf(const SeqCommand& c, QpState cur, QpState next) const {
  AttrMask base = c.with_state ? attr::kState : 0;
  if (TransitionOf(cur, next).valid) base |= MinimumMask(QpType::kRc, cur, next);
  if (!c.with_state) base &= ~attr::kState;
  return (base | c.add) & ~c.drop;
}

QpAttr Run::AttrFor(int qp, const SeqCommand& c) {
  ConnectionInfo peer;
  (void)dev_->LocalConnectionInfo(qp_[1 - qp].h, &peer);
  int gid_index = 0;
  (void)dev_->DefaultGidIndex(1, &gid_index);
  QpAttr a;
  a.qp_state = c.target;
  a.cur_qp_state = qp_[qp].state;
  a.port_num = c.bad_port ? static_cast<uint8_t>(dattr_.phys_port_cnt + 1) : 1;
  a.pkey_index = 0;
  a.qkey = kQkey;
  a.qp_access_flags = kAll;
  a.path_mtu = port_.active_mtu;
  a.ah_attr = AddressTo(peer, gid_index);
  a.dest_qp_num = peer.qp_num;
  a.timeout = 8;        // 4.096 us * 2^8 ~ 1 ms
  a.retry_cnt = 3;
  a.rnr_retry = c.rnr_retry;
  a.min_rnr_timer = 14;  // 1.28 ms (IBTA 9.7.5.2.8 encoding): few RNR retries per settle
  a.max_rd_atomic = 1;
  a.max_dest_rd_atomic = 1;
  a.en_sqd_async_notify = true;
  return a;
}

void Run::Modify(const SeqCommand& c) {
  RefQp& q = qp_[c.qp];
  QpState cur = q.state;
  QpState next = NextState(cur, c.target, c.with_state ? attr::kState : 0);
  AttrMask mask = MaskOf(c, cur, next);
  QpAttr now;
  QpInitAttr init;
  if (dev_->QueryQp(q.h, &now, &init) != 0) return Fail("QueryQp failed");
  int expect = 0;
  if (!IsModifyOk(cur, next, QpType::kRc, mask)) {
    expect = EINVAL;
  } else if (c.bad_port && (mask & attr::kPort)) {
    expect = EINVAL;
  } else if ((mask & attr::kState) && cur == QpState::kSqd && now.sq_draining &&
             next != QpState::kErr) {
    expect = EINVAL;  // R12: leaving SQD while draining
  }
  // Only a modify carrying IBV_QP_STATE resets (rxe_qp_from_attr); RESET -> RESET too.
  const bool resets = next == QpState::kReset && (mask & attr::kState) && expect == 0;
  if (resets) Settle(0);  // take what is already there
  const QpAttr attrs = AttrFor(c.qp, c);
  int rc = dev_->ModifyQp(q.h, attrs, mask);
  replay_ << ModifyLine(kQpName[c.qp], kQpName[1 - c.qp], attrs, mask) << " expect="
          << (rc == 0 ? "ok" : ErrnoName(rc)) << "\n";
  if (rc == EINVAL && expect == 0 && MovedToErrMeanwhile(c.qp)) {
    // The device moved the QP to ERR by itself after the last step's look (an RNR or
    // transport retry of a WQE outstanding ran out late: measured on rxe in CI, seed
    // 20261206 sequence 601), so the modify's current state was not `cur`: R7/R15's
    // asynchronous ERR, as ObserveStates takes it after a step.
    replay_ << "# " << kQpName[c.qp] << " was in ERR by then (the device moved it)\n";
    return;
  }
  if (rc != expect) {
    std::ostringstream os;
    os << "modify " << kQpName[c.qp] << " " << ToName(cur) << "->" << ToName(next) << " mask "
       << FormatAttrMask(mask) << ": got " << ErrnoName(rc) << ", expected " << ErrnoName(expect)
       << " (" << Judge(QpType::kRc, cur, next, mask).Reason() << ")";
    return Fail(os.str());
  }
  if (rc != 0) return;
  q.state = next;
  if (resets) {  // R9: discarded without completions
    for (uint64_t id : q.sq) discarded_.insert(id);
    for (uint64_t id : q.rq) discarded_.insert(id);
    q.sq.clear();
    q.rq.clear();
  }
}

// Predicts a post's result: the posting-rules oracle on this queue. Where the queue fills at
// the same WR whose SGE count is too large, `also` names the second answer (both are right).
PostVerdict Run::ExpectedPost(const RefQp& q, bool send, const SeqCommand& c) const {
  PostQueue pq;
  pq.type = QpType::kRc;
  pq.state = q.state;
  pq.outstanding = send ? q.sq.size() : q.rq.size();
  pq.depth = send ? q.sq_depth : q.rq_depth;
  pq.max_sge = send ? q.max_send_sge : q.max_recv_sge;
  std::vector<size_t> sges(c.count, 1);
  sges.back() = static_cast<size_t>(c.sges_last);
  if (!send) return JudgeRecvList(pq, sges);
  std::vector<SendWrFacts> wrs;
  for (size_t n : sges) {
    SendWrFacts f;
    f.opcode = c.write ? WrOpcode::kRdmaWrite : WrOpcode::kSend;
    f.num_sge = n;
    f.length = 8 * n;
    wrs.push_back(f);
  }
  return JudgeSendList(pq, wrs, behaviour_);
}

void Run::PostSend(const SeqCommand& c) {
  RefQp& q = qp_[c.qp];
  std::vector<SendWr> wrs;
  for (int i = 0; i < c.count; ++i) {
    SendWr wr;
    wr.wr_id = WrId(c.qp, false, ++seq_);
    int sges = (i == c.count - 1) ? c.sges_last : 1;
    for (int s = 0; s < sges; ++s) wr.sg_list.push_back({reinterpret_cast<uint64_t>(buf_) + 8 * s, 8, lkey_});
    wr.opcode = c.write ? WrOpcode::kRdmaWrite : WrOpcode::kSend;
    wr.remote_addr = reinterpret_cast<uint64_t>(buf_) + 2048;
    wr.rkey = rkey_;
    wrs.push_back(wr);
  }
  const PostVerdict v = ExpectedPost(q, true, c);
  const size_t want_bad = v.bad;
  const int expect = v.err;
  const bool either = v.also != PostRule::kOk;
  size_t bad = 12345;
  int rc = dev_->PostSend(q.h, wrs, &bad);
  RecordPost(c, true, wrs.front().wr_id, rc);
  size_t posted = rc == 0 ? wrs.size() : bad;
  bool ok = rc == expect && (rc == 0 || bad == want_bad);
  if (either && (rc == ENOMEM || rc == EINVAL) && bad == want_bad) ok = true;
  // As if the first k stale WRs' slots were free again (the timer's drain takes every WR
  // queued when it runs out: those posted before it, a prefix in posting order).
  RefQp without = q;
  for (auto it = without.sq.begin(); !ok && it != without.sq.end();) {
    if (may_vanish_.count(*it) == 0) {
      ++it;
      continue;
    }
    it = without.sq.erase(it);
    const PostVerdict v2 = ExpectedPost(without, true, c);
    ok = rc == v2.err && (rc == 0 || bad == v2.bad);
    if (v2.also != PostRule::kOk && (rc == ENOMEM || rc == EINVAL) && bad == v2.bad) ok = true;
  }
  if (!ok) {
    std::ostringstream os;
    os << "post_send " << kQpName[c.qp] << " (" << c.count << " WRs) in " << ToName(q.state)
       << ": got " << ErrnoName(rc) << " bad_wr=" << bad << ", expected " << ErrnoName(expect)
       << " bad_wr=" << want_bad;
    return Fail(os.str());
  }
  for (size_t i = 0; i < posted && i < wrs.size(); ++i) {
    q.sq.push_back(wrs[i].wr_id);
    if (rc != 0 && q.state == QpState::kReset) may_vanish_.insert(wrs[i].wr_id);
  }
}

void Run::PostRecv(const SeqCommand& c) {
  RefQp& q = qp_[c.qp];
  std::vector<RecvWr> wrs;
  for (int i = 0; i < c.count; ++i) {
    RecvWr wr;
    wr.wr_id = WrId(c.qp, true, ++seq_);
    int sges = (i == c.count - 1) ? c.sges_last : 1;
    for (int s = 0; s < sges; ++s) {
      wr.sg_list.push_back({reinterpret_cast<uint64_t>(buf_) + 1024 + 64 * s, 64, lkey_});
    }
    wrs.push_back(wr);
  }
  const PostVerdict v = ExpectedPost(q, false, c);
  const size_t want_bad = v.bad;
  const int expect = v.err;
  const bool either = v.also != PostRule::kOk;
  size_t bad = 12345;
  int rc = dev_->PostRecv(q.h, wrs, &bad);
  RecordPost(c, false, wrs.front().wr_id, rc);
  size_t posted = rc == 0 ? wrs.size() : bad;
  bool ok = rc == expect && (rc == 0 || bad == want_bad);
  if (either && (rc == ENOMEM || rc == EINVAL) && bad == want_bad) ok = true;
  if (!ok) {
    std::ostringstream os;
    os << "post_recv " << kQpName[c.qp] << " (" << c.count << " WRs) in " << ToName(q.state)
       << ": got " << ErrnoName(rc) << " bad_wr=" << bad << ", expected " << ErrnoName(expect)
       << " bad_wr=" << want_bad;
    return Fail(os.str());
  }
  for (size_t i = 0; i < posted && i < wrs.size(); ++i) {
    q.rq.push_back(wrs[i].wr_id);
    if (FlushedAtPost(false, q.state, behaviour_)) {
      flush_now_.push_back(wrs[i].wr_id);
    }
  }
}

// R4: a receive posted in ERR is flushed at once, so it has completed once the step settled
// (not with recv_in_err_waits: then the next move to ERR flushes it, Finish's at the latest).
void Run::CheckFlushedAtOnce() {
  for (uint64_t id : flush_now_) {
    const RefQp& q = qp_[(id >> 40) & 1];
    for (uint64_t left : q.rq) {
      if (left != id) continue;
      std::ostringstream os;
      os << "receive wr_id=0x" << std::hex << id << std::dec << " posted in ERR on "
         << kQpName[(id >> 40) & 1] << " was not flushed at once (R4)";
      return Fail(os.str());
    }
  }
  flush_now_.clear();
}

void Run::Take(const WorkCompletion& wc) {
  ++completions;
  int qp = static_cast<int>((wc.wr_id >> 40) & 1);
  bool recv = (wc.wr_id >> 39) & 1;
  RefQp& q = qp_[qp];
  std::deque<uint64_t>& queue = recv ? q.rq : q.sq;
  std::ostringstream os;
  os << "completion wr_id=0x" << std::hex << wc.wr_id << std::dec << " status "
     << ToName(wc.status) << " on " << kQpName[qp] << (recv ? " RQ" : " SQ");
  if (wc.qp_num != q.qpn) return Fail(os.str() + ": qp_num does not match");
  // Stale WRs ahead of this one never complete (may_vanish_).
  if (!recv && std::find(queue.begin(), queue.end(), wc.wr_id) != queue.end()) {
    while (!queue.empty() && queue.front() != wc.wr_id && may_vanish_.count(queue.front())) {
      queue.pop_front();
    }
  }
  if (!queue.empty() && queue.front() == wc.wr_id) {
    queue.pop_front();
    return;
  }
  if (discarded_.erase(wc.wr_id)) return;  // written before the RESET discarded the queue
  bool known = false;
  for (uint64_t id : queue) known |= id == wc.wr_id;
  Fail(os.str() + (known ? ": out of posting order" : ": not outstanding (lost or duplicated)"));
}

void Run::Settle(uint64_t ns) {
  std::vector<WorkCompletion> wcs;
  if (ns == 0) {
    WorkCompletion wc[16];
    int n;
    while ((n = dev_->PollCq(cq_, 16, wc)) > 0) wcs.insert(wcs.end(), wc, wc + n);
  } else {
    (void)dev_->WaitForCompletions(cq_, 1 << 20, ns, &wcs);  // ETIMEDOUT: quiet for ns
  }
  for (const auto& wc : wcs) Take(wc);
}

bool Run::MovedToErrMeanwhile(int qp) {
  RefQp& q = qp_[qp];
  if (q.state == QpState::kErr || q.state == QpState::kReset || q.state == QpState::kInit) {
    return false;  // nothing outstanding can move it (RESET, INIT) or it is there already
  }
  QpAttr a;
  QpInitAttr init;
  if (dev_->QueryQp(q.h, &a, &init) != 0 || a.qp_state != QpState::kErr) return false;
  q.state = QpState::kErr;
  return true;
}

void Run::ObserveStates() {
  for (int i = 0; i < 2; ++i) {
    QpAttr a;
    QpInitAttr init;
    if (dev_->QueryQp(qp_[i].h, &a, &init) != 0) return Fail("QueryQp failed");
    if (a.qp_state == qp_[i].state) continue;
    if (a.qp_state != QpState::kErr) {
      return Fail(std::string("QP ") + kQpName[i] + " moved by itself from " +
                  std::string(ToName(qp_[i].state)) + " to " + std::string(ToName(a.qp_state)));
    }
    qp_[i].state = a.qp_state;  // the device moved it to ERR (an error completion, R7/R15)
  }
}

void Run::RecordPost(const SeqCommand& c, bool send, uint64_t first_wr_id, int rc) {
  // SGEs as PostSend/PostRecv build them: 8-byte SGEs at m:0 (sends), 64-byte at m:1024.
  auto sges = [send](int n) {
    std::string out;
    for (int s = 0; s < n; ++s) {
      if (s) out += ",";
      out += send ? "m:" + std::to_string(8 * s) + ":8" : "m:" + std::to_string(1024 + 64 * s) + ":64";
    }
    return out;
  };
  const char* qp = kQpName[c.qp];
  if (send) {
    replay_ << "post_send " << qp << " wr_id=" << first_wr_id
            << (c.write ? " op=WRITE remote=m:2048" : " op=SEND");
  } else {
    replay_ << "post_recv " << qp << " wr_id=" << first_wr_id;
  }
  replay_ << " sge=" << sges(c.count > 1 ? 1 : c.sges_last);
  if (c.count > 1) {
    replay_ << " count=" << c.count;
    if (c.sges_last != 1) replay_ << " last_sge=" << sges(c.sges_last);
  }
  replay_ << " expect=" << (rc == 0 ? "ok" : ErrnoName(rc)) << "\n";
}

std::string Run::SettleLine() const {
  return "poll cq0 n=4096 timeout_ms=" + std::to_string(std::max<uint64_t>(1, settle_ns_ / 1'000'000));
}

void Run::Step(const SeqCommand& c) {
  switch (c.kind) {
    case SeqCommand::Kind::kModify: Modify(c); break;
    case SeqCommand::Kind::kPostSend: PostSend(c); break;
    case SeqCommand::Kind::kPostRecv: PostRecv(c); break;
    case SeqCommand::Kind::kSettle: break;
    case SeqCommand::Kind::kBringUp: {
      SeqCommand m = c;
      m.kind = SeqCommand::Kind::kModify;
      m.add = m.drop = 0;
      m.bad_port = false;
      m.with_state = true;
      if (qp_[c.qp].state == QpState::kErr || qp_[c.qp].state == QpState::kSqe) {
        m.target = QpState::kReset;
        Modify(m);
      }
      for (QpState s : {QpState::kInit, QpState::kRtr, QpState::kRts}) {
        if (static_cast<int>(qp_[c.qp].state) >= static_cast<int>(s)) continue;
        m.target = s;
        Modify(m);
      }
      break;
    }
  }
  Settle(settle_ns_);
  replay_ << SettleLine() << "\n";
  ObserveStates();
  CheckFlushedAtOnce();
}

void Run::Finish() {
  if (!failure.empty()) return;
  for (auto& q : qp_) {
    if (q.state == QpState::kReset) {
      // RESET -> ERR is illegal. What a refused send left queued in RESET
      // (post_send_below_rts_queues) stays there until the QP is destroyed: no completion.
      for (uint64_t id : q.sq) discarded_.insert(id);
      q.sq.clear();
      continue;
    }
    QpAttr a;
    a.qp_state = QpState::kErr;
    replay_ << "modify " << kQpName[&q - qp_] << " state=ERR  # the final move to ERR\n";
    if (dev_->ModifyQp(q.h, a, attr::kState) != 0) return Fail("final move to ERR failed");
    q.state = QpState::kErr;
  }
  const auto stale = [this](uint64_t id) { return may_vanish_.count(id) != 0; };
  size_t left = qp_[0].rq.size() + qp_[1].rq.size();
  for (const RefQp& q : qp_) left += q.sq.size() - std::count_if(q.sq.begin(), q.sq.end(), stale);
  std::vector<WorkCompletion> wcs;
  (void)dev_->WaitForCompletions(cq_, static_cast<int>(left), 5'000'000'000ull, &wcs);
  for (const auto& wc : wcs) Take(wc);
  Settle(settle_ns_);  // nothing more may come
  for (int i = 0; i < 2; ++i) {
    std::deque<uint64_t>& sq = qp_[i].sq;
    sq.erase(std::remove_if(sq.begin(), sq.end(), stale), sq.end());  // stale: not a loss
    if (!qp_[i].sq.empty() || !qp_[i].rq.empty()) {
      Fail(std::string("QP ") + kQpName[i] + ": " + std::to_string(qp_[i].sq.size()) + " send and " +
           std::to_string(qp_[i].rq.size()) + " receive WRs never completed after ERR");
    }
  }
}

SeqResult RunWith(Backend& backend, const std::vector<SeqCommand>& cmds, uint64_t settle_ns,
                  const Behaviour* behaviour) {
  Run run(backend, settle_ns, behaviour);
  SeqResult r;
  if (run.Setup()) {
    for (const auto& c : cmds) {
      run.Step(c);
      ++r.commands;
      if (!run.failure.empty()) break;
    }
    run.Finish();
  }
  r.failure = run.failure;
  r.completions = run.completions;
  r.replay = run.Replay();
  return r;
}

}  // namespace

SeqResult RunSequence(Backend& backend, const std::vector<SeqCommand>& cmds, uint64_t settle_ns) {
  return RunWith(backend, cmds, settle_ns, nullptr);
}

SeqResult RunSequence(Backend& backend, const std::vector<SeqCommand>& cmds, uint64_t settle_ns,
                      const Behaviour& behaviour) {
  return RunWith(backend, cmds, settle_ns, &behaviour);
}

}  // namespace qptwin::reference
