#include "spec/vocabulary.h"

#include <cerrno>

#include <gtest/gtest.h>

namespace qptwin {
namespace {

TEST(Vocabulary, QpStateNamesRoundTrip) {
  for (int v = 0; v < kNumQpStates; ++v) {
    auto s = static_cast<QpState>(v);
    EXPECT_EQ(ParseQpState(ToName(s)), s) << v;
  }
  EXPECT_EQ(ParseQpState("ibv_qps_rtr"), QpState::kRtr);
  EXPECT_EQ(ParseQpState("error"), QpState::kErr);
  EXPECT_EQ(ParseQpState("3"), QpState::kRts);
  EXPECT_FALSE(ParseQpState("RTX"));
  EXPECT_FALSE(ParseQpState("7"));
}

TEST(Vocabulary, QpTypeAcceptsKernelXrcNames) {
  EXPECT_EQ(ParseQpType("XRC_INI"), QpType::kXrcSend);
  EXPECT_EQ(ParseQpType("IB_QPT_XRC_TGT"), QpType::kXrcRecv);
  EXPECT_EQ(ParseQpType("IBV_QPT_RC"), QpType::kRc);
  EXPECT_EQ(ToName(QpType::kXrcSend), "XRC_SEND");
  EXPECT_EQ(static_cast<int>(QpType::kRawPacket), 8);
  EXPECT_FALSE(ParseQpType("RD"));
}

TEST(Vocabulary, AttrMaskParsesNamesAndNumbers) {
  EXPECT_EQ(ParseAttrMask("0x1a1"), 0x1a1u);
  EXPECT_EQ(ParseAttrMask("417"), 417u);
  EXPECT_EQ(ParseAttrMask("STATE|AV|IBV_QP_PATH_MTU"), attr::kState | attr::kAv | attr::kPathMtu);
  EXPECT_EQ(ParseAttrMask("state,qkey"), attr::kState | attr::kQkey);
  EXPECT_FALSE(ParseAttrMask("STATE|"));
  EXPECT_FALSE(ParseAttrMask("STATE|BOGUS"));
  EXPECT_FALSE(ParseAttrMask(""));
  EXPECT_FALSE(ParseAttrMask("0xZZ"));
  EXPECT_EQ(FormatAttrMask(attr::kState | attr::kDestQpn | (1u << 22)), "STATE|DEST_QPN|BIT22");
  EXPECT_EQ(FormatAttrMask(0), "0");
}

TEST(Vocabulary, AttrBitsHaveLibibverbsValues) {
  EXPECT_EQ(attr::kDestQpn, 1u << 20);
  EXPECT_EQ(attr::kRateLimit, 1u << 25);
  EXPECT_EQ(attr::kMinRnrTimer, 32768u);
  EXPECT_EQ(attr::kStandardBits, 0x1fffffu);
  for (int b = 0; b <= 20; ++b) EXPECT_NE(AttrBitName(1u << b), "?") << b;
}

TEST(Vocabulary, WcAndWrEnumsHaveLibibverbsValues) {
  EXPECT_EQ(static_cast<int>(WcStatus::kWrFlushErr), 5);
  EXPECT_EQ(static_cast<int>(WcStatus::kRnrRetryExcErr), 13);
  EXPECT_EQ(static_cast<int>(WcOpcode::kRecvRdmaWithImm), 129);
  EXPECT_EQ(static_cast<int>(WrOpcode::kAtomicFetchAndAdd), 6);
  EXPECT_EQ(static_cast<int>(EventType::kQpLastWqeReached), 16);
  EXPECT_EQ(ParseWcStatus("WR_FLUSH_ERR"), WcStatus::kWrFlushErr);
  EXPECT_EQ(ToName(EventType::kSqDrained), "SQ_DRAINED");
}

TEST(Vocabulary, FlagSets) {
  EXPECT_EQ(ParseAccessFlags("LOCAL_WRITE|REMOTE_WRITE"), access::kLocalWrite | access::kRemoteWrite);
  EXPECT_EQ(FormatAccessFlags(access::kRemoteRead | access::kRemoteAtomic), "REMOTE_READ|REMOTE_ATOMIC");
  EXPECT_EQ(ParseSendFlags("SIGNALED|FENCE"), send_flag::kSignaled | send_flag::kFence);
  EXPECT_FALSE(ParseSendFlags("LOUD"));
}

TEST(Vocabulary, MtuAndErrno) {
  EXPECT_EQ(MtuBytes(Mtu::k1024), 1024u);
  EXPECT_EQ(MtuBytes(Mtu::k4096), 4096u);
  EXPECT_EQ(ParseMtu("2048"), Mtu::k2048);
  EXPECT_EQ(ParseMtu("IBV_MTU_256"), Mtu::k256);
  EXPECT_FALSE(ParseMtu("1500"));
  EXPECT_EQ(ErrnoName(EINVAL), "EINVAL");
  EXPECT_EQ(ParseErrno("eopnotsupp"), EOPNOTSUPP);
  EXPECT_EQ(ParseErrno("ok"), 0);
}

}  // namespace
}  // namespace qptwin
