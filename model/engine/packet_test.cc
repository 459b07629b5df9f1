#include "model/engine/packet.h"

#include <gtest/gtest.h>

namespace qptwin::model::engine {
namespace {

TEST(Packet, PsnArithmeticWrapsAt24Bits) {
  EXPECT_EQ(PsnAdd(0xffffff, 1), 0u);
  EXPECT_EQ(PsnDiff(0, 0xffffff), 1);
  EXPECT_EQ(PsnDiff(0xffffff, 0), -1);
  EXPECT_EQ(PsnDiff(100, 90), 10);
}

TEST(Packet, NamesAndDescription) {
  EXPECT_EQ(ToName(PacketKind::kReadResp), "READ_RESP");
  EXPECT_EQ(ToName(NakCode::kRnr), "RNR");
  EXPECT_EQ(ToName(static_cast<NakCode>(99)), "?");
  Packet p;
  p.kind = PacketKind::kNak;
  p.nak = NakCode::kRemoteAccess;
  p.psn = 7;
  p.src_qpn = 17;
  p.dst_qpn = 18;
  p.dst_nic = 1;
  EXPECT_EQ(Describe(p), "NAK(REMOTE_ACCESS) psn=7 n=1 0->1 qpn 17->18 0B");
}

}  // namespace
}  // namespace qptwin::model::engine
