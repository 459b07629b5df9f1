// The engine on its own: two NICs in a World on SystemC's clock, no Backend.
#include "model/engine/nic.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "model/engine/world.h"
#include "model/sim/sc_clock.h"
#include "spec/vocabulary.h"

namespace qptwin::model::engine {
namespace {

struct End {
  Nic* nic;
  uint32_t ctx, pd, cq, qp, qpn;
  Mr* mr;
};

End MakeEnd(World& w, int i, QpType type) {
  End e{w.nic(i), 0, 0, 0, 0, 0, nullptr};
  e.ctx = e.nic->NewContext();
  EXPECT_EQ(e.nic->AllocPd(e.ctx, &e.pd), 0);
  EXPECT_EQ(e.nic->CreateCq(e.ctx, 16, 0, &e.cq, nullptr), 0);
  EXPECT_EQ(e.nic->RegMr(e.ctx, e.pd, 4096, access::kLocalWrite | access::kRemoteWrite, &e.mr), 0);
  QpInitAttr init;
  init.qp_type = type;
  init.pd = PdHandle{e.pd};
  init.send_cq = init.recv_cq = CqHandle{e.cq};
  init.cap = QpCap{4, 4, 1, 1, 0};
  init.sq_sig_all = true;
  EXPECT_EQ(e.nic->CreateQp(e.ctx, init, &e.qp, nullptr), 0);
  EXPECT_EQ(e.nic->QpNum(e.ctx, e.qp, &e.qpn), 0);
  return e;
}

void Bring(World& w, End& e, const End& peer) {
  QpAttr a;
  a.qp_state = QpState::kInit;
  a.port_num = 1;
  a.qp_access_flags = access::kRemoteWrite | access::kLocalWrite;
  ASSERT_EQ(e.nic->ModifyQp(e.ctx, e.qp, a,
                            attr::kState | attr::kPort | attr::kPkeyIndex | attr::kAccessFlags),
            0);
  a.qp_state = QpState::kRtr;
  a.ah_attr.is_global = true;
  a.ah_attr.port_num = 1;
  peer.nic->GidAt(1, &a.ah_attr.grh.dgid);
  a.dest_qp_num = peer.qpn;
  a.path_mtu = Mtu::k1024;
  a.min_rnr_timer = 1;
  ASSERT_EQ(e.nic->ModifyQp(e.ctx, e.qp, a,
                            attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn |
                                attr::kRqPsn | attr::kMaxDestRdAtomic | attr::kMinRnrTimer),
            0);
  a.qp_state = QpState::kRts;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  ASSERT_EQ(e.nic->ModifyQp(e.ctx, e.qp, a,
                            attr::kState | attr::kTimeout | attr::kRetryCnt | attr::kRnrRetry |
                                attr::kSqPsn | attr::kMaxQpRdAtomic),
            0);
}

TEST(Nic, RcWriteThroughTheFabricWithoutABackend) {
  World w(*FindProfile("rxe"), 2, 0, 1, std::make_unique<sim::ScClock>());
  End a = MakeEnd(w, 0, QpType::kRc);
  End b = MakeEnd(w, 1, QpType::kRc);
  Bring(w, a, b);
  Bring(w, b, a);
  std::memcpy(a.mr->buf, "engine", 6);
  SendWr wr;
  wr.wr_id = 42;
  wr.opcode = WrOpcode::kRdmaWrite;
  wr.sg_list = {Sge{reinterpret_cast<uint64_t>(a.mr->buf), 6, a.mr->lkey}};
  wr.remote_addr = reinterpret_cast<uint64_t>(b.mr->buf) + 10;
  wr.rkey = b.mr->rkey;
  ASSERT_EQ(a.nic->PostSend(a.ctx, a.qp, {wr}, nullptr), 0);
  WorkCompletion wc;
  // rxe answers each message inside the post (Behaviour::post_answers_each_message): the
  // WRITE went over the fabric and its ACK came back, in simulated time, before PostSend
  // returned.
  ASSERT_TRUE(w.profile().behaviour.post_answers_each_message);
  EXPECT_GT(w.events().Now(), 0u);
  ASSERT_EQ(a.nic->PollCq(a.ctx, a.cq, 1, &wc), 1);
  EXPECT_EQ(wc.wr_id, 42u);
  EXPECT_EQ(wc.status, WcStatus::kSuccess);
  EXPECT_EQ(std::memcmp(b.mr->buf + 10, "engine", 6), 0);
  EXPECT_GE(w.packets_sent(), 2u);  // the WRITE and its ACK
}

TEST(Nic, ContextsDoNotSeeEachOthersObjects) {
  World w(*FindProfile("rxe"), 1, 0, 1, std::make_unique<sim::ScClock>());
  Nic* n = w.nic(0);
  uint32_t c1 = n->NewContext(), c2 = n->NewContext(), pd = 0;
  ASSERT_EQ(n->AllocPd(c1, &pd), 0);
  EXPECT_EQ(n->DeallocPd(c2, pd), EINVAL);
  n->ReleaseContext(c1);
  EXPECT_EQ(n->DeallocPd(c1, pd), EINVAL);
}

}  // namespace
}  // namespace qptwin::model::engine
