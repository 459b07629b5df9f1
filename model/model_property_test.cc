// Property: random sequences of modify / post / poll / advance on a pair of QPs never
// crash, return only verbs errnos, leave a QP unchanged when a modify is refused, and
// account for every posted WR exactly once (a CQE, a flush, or an unsignaled success).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <map>

#include "tests/support/support.h"
#include "spec/qp_state_table.h"

namespace qptwin::model::testing {
namespace {

using namespace ::qptwin::testing;  // tests/support/support.h

struct Command {
  int kind = 0;  // 0 modify, 1 post send, 2 post recv, 3 poll, 4 advance
  int qp = 0;
  int state = 0;
  bool minimal_mask = true;
  uint32_t random_mask = 0;
  int opcode = 0;
  bool signaled = true;
  bool bad_lkey = false;
  int count = 1;
  uint32_t len = 8;
  uint64_t ns = 0;
};

rc::Gen<Command> GenCommand() {
  return rc::gen::apply(
      [](int kind, int qp, int state, bool minimal, uint32_t mask, int op, bool sig, int bad,
         int count, uint32_t len, uint64_t ns) {
        Command c;
        c.kind = kind;
        c.qp = qp;
        c.state = state;
        c.minimal_mask = minimal;
        c.random_mask = mask;
        c.opcode = op;
        c.signaled = sig;
        c.bad_lkey = bad == 0;
        c.count = count;
        c.len = len;
        c.ns = ns;
        return c;
      },
      rc::gen::weightedElement<int>({{1, 0}, {4, 1}, {3, 2}, {1, 3}, {2, 4}}),
      rc::gen::inRange(0, 2), rc::gen::inRange(0, 7),
      rc::gen::weightedElement<bool>({{4, true}, {1, false}}), rc::gen::arbitrary<uint32_t>(),
      rc::gen::inRange(0, 8), rc::gen::arbitrary<bool>(), rc::gen::inRange(0, 40),
      rc::gen::inRange(1, 4), rc::gen::inRange<uint32_t>(0, 3000),
      rc::gen::inRange<uint64_t>(0, 3000000));
}

struct Posted {
  int qp;
  bool send;
  bool signaled;
  int epoch;
};

constexpr WrOpcode kOps[] = {WrOpcode::kSend,          WrOpcode::kSendWithImm,
                             WrOpcode::kRdmaWrite,     WrOpcode::kRdmaWriteWithImm,
                             WrOpcode::kRdmaRead,      WrOpcode::kAtomicCmpAndSwp,
                             WrOpcode::kAtomicFetchAndAdd, WrOpcode::kLocalInv};

QpAttr FullAttr(Side& self, Side& peer, QpState state) {
  QpAttr a;
  a.qp_state = state;
  a.port_num = 1;
  a.qp_access_flags = access::kAll;
  a.qkey = 0x11111111;
  ConnectionInfo info;
  (void)peer.dev->LocalConnectionInfo(peer.qp, &info);
  a.ah_attr = AddressTo(info, 1);
  a.path_mtu = Mtu::k1024;
  a.dest_qp_num = info.qp_num;
  a.max_dest_rd_atomic = 2;
  a.max_rd_atomic = 2;
  a.min_rnr_timer = 1;
  a.timeout = 8;
  a.retry_cnt = 2;
  a.rnr_retry = 2;
  (void)self;
  return a;
}

bool IsVerbsErrno(int e) { return e == 0 || e == EINVAL || e == ENOMEM || e == EOPNOTSUPP; }

void RunScenario(QpType type, double loss, bool connected, const std::vector<Command>& cmds) {
  ModelOptions o;
  o.loss_rate = loss;
  o.seed = 3;
  auto be = MakeModelBackend(o);
  SideOptions so;
  so.type = type;
  so.cq_depth = 4096;
  so.cap = QpCap{8, 8, 2, 2, 32};
  Side sides[2] = {MakeSide(*be, "mdev0", so), MakeSide(*be, "mdev1", so)};
  AhHandle ah[2];
  for (int i = 0; i < 2; ++i) {
    ConnectionInfo info;
    RC_ASSERT(sides[1 - i].dev->LocalConnectionInfo(sides[1 - i].qp, &info) == 0);
    RC_ASSERT(sides[i].dev->CreateAh(sides[i].pd, AddressTo(info, 1), &ah[i]) == 0);
  }
  if (connected) Connect(sides[0], sides[1]);
  std::map<uint64_t, Posted> posted;
  std::map<uint64_t, std::vector<WorkCompletion>> seen;
  int epoch[2] = {0, 0};
  uint64_t next_id = 1;
  auto poll = [&](Side& s) {
    WorkCompletion wc[32];
    for (CqHandle cq : {s.scq, s.rcq}) {
      int n;
      while ((n = s.dev->PollCq(cq, 32, wc)) > 0) {
        for (int i = 0; i < n; ++i) seen[wc[i].wr_id].push_back(wc[i]);
      }
      RC_ASSERT(n == 0);
    }
  };

  for (const Command& c : cmds) {
    Side& s = sides[c.qp];
    Side& peer = sides[1 - c.qp];
    if (c.kind == 0) {
      QpAttr before;
      RC_ASSERT(s.dev->QueryQp(s.qp, &before, nullptr) == 0);
      QpState target = static_cast<QpState>(c.state);
      AttrMask mask = c.minimal_mask ? MinimumMask(type, before.qp_state, target)
                                     : (c.random_mask & ((1u << 22) - 1)) | attr::kState;
      if (mask == 0) mask = attr::kState;
      int err = s.dev->ModifyQp(s.qp, FullAttr(s, peer, target), mask);
      RC_ASSERT(IsVerbsErrno(err));
      QpAttr after;
      RC_ASSERT(s.dev->QueryQp(s.qp, &after, nullptr) == 0);
      if (err != 0) {
        RC_ASSERT(after.qp_state == before.qp_state);
      } else if (target == QpState::kReset && (mask & attr::kState)) {
        ++epoch[c.qp];
      }
    } else if (c.kind == 1) {
      std::vector<SendWr> wrs;
      for (int i = 0; i < c.count; ++i) {
        SendWr w = Wr(next_id + i, kOps[c.opcode],
                      {Sge{s.Addr(0), c.opcode >= 5 ? 8 : c.len, c.bad_lkey ? s.lkey + 1 : s.lkey}},
                      c.signaled ? send_flag::kSignaled : 0);
        w.remote_addr = peer.Addr(64);
        w.rkey = peer.rkey;
        w.ah = ah[c.qp];
        w.remote_qpn = peer.qpn;
        w.remote_qkey = 0x11111111;
        wrs.push_back(w);
      }
      size_t bad = 1000;
      int err = s.dev->PostSend(s.qp, wrs, &bad);
      RC_ASSERT(IsVerbsErrno(err));
      size_t ok = err ? bad : wrs.size();
      RC_ASSERT(ok <= wrs.size());
      for (size_t i = 0; i < ok; ++i) posted[next_id + i] = {c.qp, true, c.signaled, epoch[c.qp]};
      next_id += wrs.size();
    } else if (c.kind == 2) {
      std::vector<RecvWr> wrs;
      for (int i = 0; i < c.count; ++i) wrs.push_back(Rwr(next_id + i, {s.At(1024, 3000)}));
      size_t bad = 1000;
      int err = s.dev->PostRecv(s.qp, wrs, &bad);
      RC_ASSERT(IsVerbsErrno(err));
      size_t ok = err ? bad : wrs.size();
      for (size_t i = 0; i < ok; ++i) posted[next_id + i] = {c.qp, false, true, epoch[c.qp]};
      next_id += wrs.size();
    } else if (c.kind == 3) {
      poll(s);
    } else {
      be->Advance(c.ns);
    }
  }
  // End: every QP not in RESET goes to ERR, which flushes what is left. A QP left in RESET
  // keeps what was posted there (rxe queues a refused send, Behaviour::post_send_below_rts_queues)
  // without completing it: like a RESET, at most once.
  for (int i = 0; i < 2; ++i) {
    QpAttr q;
    RC_ASSERT(sides[i].dev->QueryQp(sides[i].qp, &q, nullptr) == 0);
    if (q.qp_state != QpState::kReset) {
      QpAttr e;
      e.qp_state = QpState::kErr;
      RC_ASSERT(sides[i].dev->ModifyQp(sides[i].qp, e, attr::kState) == 0);
    } else {
      ++epoch[i];
    }
  }
  be->Advance(100000000);
  poll(sides[0]);
  poll(sides[1]);
  size_t successes = 0;
  for (const auto& [id, wcs] : seen) {
    successes += wcs[0].status == WcStatus::kSuccess;
    RC_ASSERT(posted.count(id) == 1u);
    RC_ASSERT(wcs.size() == 1u);  // never twice
  }
  for (const auto& [id, p] : posted) {
    bool current = p.epoch == epoch[p.qp];
    auto it = seen.find(id);
    size_t n = it == seen.end() ? 0 : it->second.size();
    if (!current) continue;  // discarded by a RESET (R9): at most once, checked above
    if (p.signaled) {
      RC_ASSERT(n == 1u);
    } else if (n == 1) {
      RC_ASSERT(it->second[0].status != WcStatus::kSuccess);  // R21
    }
  }
  RC_CLASSIFY(successes > 0, "some WR completed successfully");
  RC_CLASSIFY(seen.size() > successes, "some WR completed in error or flushed");
}

RC_GTEST_PROP(ModelProperty, RandomVerbsAccountForEveryWrOnRc, ()) {
  auto connected = *rc::gen::weightedElement<bool>({{4, true}, {1, false}});
  auto n = *rc::gen::inRange<size_t>(1, 80);
  auto cmds = *rc::gen::container<std::vector<Command>>(n, GenCommand());
  RunScenario(QpType::kRc, 0, connected, cmds);
}

RC_GTEST_PROP(ModelProperty, RandomVerbsAccountForEveryWrWithLoss, ()) {
  auto type = *rc::gen::element(QpType::kRc, QpType::kUc, QpType::kUd);
  auto connected = *rc::gen::weightedElement<bool>({{4, true}, {1, false}});
  auto n = *rc::gen::inRange<size_t>(1, 80);
  auto cmds = *rc::gen::container<std::vector<Command>>(n, GenCommand());
  RunScenario(type, 0.1, connected, cmds);
}

}  // namespace
}  // namespace qptwin::model::testing
