// The plain behaviour of the SystemC NIC, without SystemC.
#include "model/systemc/behaviour.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "model/systemc/layout.h"

namespace qptwin::sc {
namespace {

TEST(ScKeyTable, ChecksKeyPdBoundsAndAccess) {
  KeyTable t;
  ASSERT_EQ(0, t.Register(5, Region{1, 0x1000, 0x100, access::kRemoteWrite}));
  EXPECT_EQ(EINVAL, t.Register(5, Region{1, 0, 1, 0}));
  EXPECT_TRUE(t.Check(5, 1, 0x1000, 0x100, access::kRemoteWrite));
  EXPECT_FALSE(t.Check(5, 2, 0x1000, 8, 0));                      // another PD
  EXPECT_FALSE(t.Check(5, 1, 0x10f9, 8, 0));                      // past the end
  EXPECT_FALSE(t.Check(5, 1, 0x1000, 8, access::kRemoteRead));    // no such right
  EXPECT_FALSE(t.Check(6, 1, 0x1000, 8, 0));                      // no such key
  EXPECT_EQ(0, t.Deregister(5));
  EXPECT_FALSE(t.Check(5, 1, 0x1000, 8, 0));
}

TEST(ScQpContext, ModifyFollowsTheKernelTable) {
  QpContext qp;
  qp.type = QpType::kRc;
  ModifyArgs m;
  m.mask = attr::kState;
  m.state = QpState::kRtr;
  EXPECT_EQ(EINVAL, ApplyModify(qp, m));  // RESET -> RTR is not in the table
  EXPECT_EQ(QpState::kReset, qp.state);
  m.mask = attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags;
  m.state = QpState::kInit;
  EXPECT_EQ(0, ApplyModify(qp, m));
  EXPECT_EQ(QpState::kInit, qp.state);
  EXPECT_EQ(static_cast<int>(QpState::kInit), qp.traced_state);
}

TEST(ScLayout, WqeAndCqeRoundTrip) {
  Wqe w;
  w.opcode = WrOpcode::kRdmaRead;
  w.flags = 3;
  w.imm = 0x01020304;
  w.wr_id = 0x1122334455667788;
  w.addr = 0xdead0000;
  w.length = 4096;
  w.lkey = 9;
  w.remote_addr = 0xbeef0000;
  w.rkey = 10;
  w.ud_qpn = 11;
  uint8_t raw[kWqeBytes];
  EncodeWqe(w, raw);
  const Wqe d = DecodeWqe(raw);
  EXPECT_EQ(w.wr_id, d.wr_id);
  EXPECT_EQ(w.remote_addr, d.remote_addr);
  EXPECT_EQ(w.opcode, d.opcode);
  EXPECT_EQ(w.ud_qpn, d.ud_qpn);
  Cqe c;
  c.wr_id = 42;
  c.status = WcStatus::kRemAccessErr;
  c.owner = 1;
  uint8_t rc[kCqeBytes];
  EncodeCqe(c, rc);
  EXPECT_EQ(42u, DecodeCqe(rc).wr_id);
  EXPECT_EQ(WcStatus::kRemAccessErr, DecodeCqe(rc).status);
  EXPECT_EQ(1, rc[31]);
  EXPECT_EQ(1, OwnerOf(63, 64));
  EXPECT_EQ(0, OwnerOf(64, 64));
}

}  // namespace
}  // namespace qptwin::sc
