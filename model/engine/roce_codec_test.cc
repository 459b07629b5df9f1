#include "model/engine/roce_codec.h"

#include <gtest/gtest.h>

#include <cstring>

#include "model/wire.h"

namespace qptwin::model::engine {
namespace {

constexpr uint32_t kA = 0x7f0a0001;  // 127.10.0.1
constexpr uint32_t kB = 0x7f0a0002;

RoceEndpoints Ep() { return RoceEndpoints{kA, kB}; }

std::vector<std::vector<uint8_t>> Encode(const Packet& p, uint32_t mtu = 1024) {
  std::vector<std::vector<uint8_t>> d;
  EncodeRoce(p, mtu, Ep(), &d);
  return d;
}

Packet Payload(Packet p, size_t n) {
  std::vector<uint8_t> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i * 7 + 3);
  p.data.assign(b.data(), b.data() + b.size());
  return p;
}

// Everything a datagram carries compares equal after the trip.
void ExpectSame(const Packet& a, const Packet& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.transport, b.transport);
  EXPECT_EQ(a.dst_qpn, b.dst_qpn);
  EXPECT_EQ(a.psn, b.psn);
  EXPECT_EQ(a.npkts, b.npkts);
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.solicited, b.solicited);
  EXPECT_EQ(a.has_imm, b.has_imm);
  EXPECT_EQ(a.has_inv, b.has_inv);
  if (a.has_imm || a.has_inv) {
    EXPECT_EQ(a.imm, b.imm);
  }
  EXPECT_EQ(a.qkey, b.qkey);
  EXPECT_EQ(a.xrc_srqn, b.xrc_srqn);
  EXPECT_EQ(a.remote_addr, b.remote_addr);
  EXPECT_EQ(a.rkey, b.rkey);
  EXPECT_EQ(a.length, b.length);
  EXPECT_EQ(a.compare_add, b.compare_add);
  EXPECT_EQ(a.swap, b.swap);
  EXPECT_EQ(a.nak, b.nak);
  EXPECT_EQ(a.rnr_timer, b.rnr_timer);
  EXPECT_EQ(a.atomic_orig, b.atomic_orig);
  ASSERT_EQ(a.data.size(), b.data.size());
  EXPECT_EQ(0, std::memcmp(a.data.data(), b.data.data(), a.data.size()));
}

Packet RoundTrip(const Packet& p, uint32_t mtu = 1024, size_t* datagrams = nullptr) {
  const auto d = Encode(p, mtu);
  if (datagrams) *datagrams = d.size();
  RoceReassembler r;
  Packet out;
  for (size_t i = 0; i < d.size(); ++i) {
    const RoceResult res = r.Feed(d[i].data(), d[i].size(), Ep(), &out);
    EXPECT_EQ(res, i + 1 == d.size() ? RoceResult::kMessage : RoceResult::kPartial)
        << "datagram " << i << ": " << ToName(res);
  }
  EXPECT_EQ(r.partial_streams(), 0u);
  return out;
}

TEST(RoceCodec, Crc32IsIeee) {
  const uint8_t s[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  EXPECT_EQ(~Crc32Le(0xffffffffu, s, sizeof(s)), 0xcbf43926u);
  // rxe_icrc.c's seed: 8 bytes of 1s (the masked LRH) from 0xffffffff.
  const uint8_t ones[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  EXPECT_EQ(Crc32Le(0xffffffffu, ones, 8), 0xdebb20e3u);
}

TEST(RoceCodec, SendOnlyLayoutIsBigEndianBthPaddedWithIcrc) {
  Packet p = Payload(Packet{}, 5);
  p.dst_qpn = 0x123456;
  p.psn = 0xabcdef;
  p.solicited = true;
  const auto d = Encode(p);
  ASSERT_EQ(d.size(), 1u);
  ASSERT_EQ(d[0].size(), 12u + 8 + 4);  // BTH, 5 bytes padded to 8, ICRC
  EXPECT_EQ(d[0][0], 0x04);             // RC SEND_ONLY
  EXPECT_EQ(d[0][1], 0x80 | 3 << 4);    // SE, PadCnt 3, TVer 0
  EXPECT_EQ(d[0][2], 0xff);             // P_Key
  EXPECT_EQ(d[0][3], 0xff);
  EXPECT_EQ(d[0][5], 0x12);
  EXPECT_EQ(d[0][7], 0x56);
  EXPECT_EQ(d[0][8], 0x80);  // AckReq
  EXPECT_EQ(d[0][9], 0xab);  // PSN
  EXPECT_EQ(d[0][11], 0xef);
  EXPECT_EQ(d[0][12], 3);  // payload
  const uint32_t icrc = RoceIcrc(d[0].data(), d[0].size(), Ep());
  EXPECT_EQ(d[0][d[0].size() - 4], icrc & 0xff);  // little-endian, as rxe stores it
}

TEST(RoceCodec, EveryPacketKindRoundTrips) {
  std::vector<Packet> all;
  Packet send = Payload(Packet{}, 100);
  send.dst_qpn = 17;
  send.psn = 5;
  all.push_back(send);
  Packet imm = send;
  imm.op = WrOpcode::kSendWithImm;
  imm.has_imm = true;
  imm.imm = 0xdeadbeef;
  imm.solicited = true;
  all.push_back(imm);
  Packet inv = send;
  inv.op = WrOpcode::kSendWithInv;
  inv.has_inv = true;
  inv.imm = 0x1234;
  all.push_back(inv);
  Packet write = Payload(Packet{}, 8);
  write.kind = PacketKind::kWrite;
  write.op = WrOpcode::kRdmaWrite;
  write.remote_addr = 0x7fff12345678;
  write.rkey = 0x99;
  write.dst_qpn = 18;
  all.push_back(write);
  Packet write_imm = write;
  write_imm.op = WrOpcode::kRdmaWriteWithImm;
  write_imm.has_imm = true;
  write_imm.imm = 42;
  all.push_back(write_imm);
  Packet read;
  read.kind = PacketKind::kReadReq;
  read.op = WrOpcode::kRdmaRead;
  read.remote_addr = 0x1000;
  read.rkey = 7;
  read.length = 3000;
  all.push_back(read);
  Packet cas;
  cas.kind = PacketKind::kAtomic;
  cas.op = WrOpcode::kAtomicCmpAndSwp;
  cas.remote_addr = 0x2000;
  cas.rkey = 8;
  cas.compare_add = 1;
  cas.swap = 2;
  all.push_back(cas);
  Packet fadd = cas;
  fadd.op = WrOpcode::kAtomicFetchAndAdd;
  fadd.compare_add = 5;
  fadd.swap = 0;
  all.push_back(fadd);
  Packet ack;
  ack.kind = PacketKind::kAck;
  ack.psn = 0xffffff;
  all.push_back(ack);
  for (NakCode c : {NakCode::kRnr, NakCode::kPsnSeqErr, NakCode::kInvalidRequest,
                    NakCode::kRemoteAccess, NakCode::kRemoteOp}) {
    Packet nak;
    nak.kind = PacketKind::kNak;
    nak.nak = c;
    nak.rnr_timer = c == NakCode::kRnr ? 14 : 0;
    all.push_back(nak);
  }
  Packet rresp = Payload(Packet{}, 64);
  rresp.kind = PacketKind::kReadResp;
  rresp.op = WrOpcode::kSend;  // responses carry no WR opcode
  all.push_back(rresp);
  Packet aresp;
  aresp.kind = PacketKind::kAtomicResp;
  aresp.atomic_orig = 0x0102030405060708;
  all.push_back(aresp);
  Packet ud = Payload(Packet{}, 32);
  ud.transport = QpType::kUd;
  ud.qkey = 0x11111111;
  ud.src_qpn = 0x654321;
  all.push_back(ud);
  Packet uc = write;
  uc.transport = QpType::kUc;
  all.push_back(uc);
  Packet xrc = send;
  xrc.transport = QpType::kXrcSend;
  xrc.xrc_srqn = 0x77;
  all.push_back(xrc);
  Packet xrc_ack = ack;
  xrc_ack.transport = QpType::kXrcSend;
  all.push_back(xrc_ack);
  for (const Packet& p : all) {
    SCOPED_TRACE(Describe(p));
    Packet back = RoundTrip(p);
    Packet want = p;
    if (want.kind == PacketKind::kReadResp) want.op = WrOpcode::kRdmaRead;
    ExpectSame(want, back);
    if (p.transport != QpType::kUd) {
      EXPECT_EQ(back.src_qpn, 0u);  // not on the wire
    }
    uint32_t ip = 0;
    EXPECT_TRUE(GidToIpv4(back.sgid, &ip));
    EXPECT_EQ(ip, kA);
  }
}

TEST(RoceCodec, MultiPacketMessagesTakeOnePsnAndOpcodePerPacket) {
  for (PacketKind k : {PacketKind::kSend, PacketKind::kWrite, PacketKind::kReadResp}) {
    for (size_t len : {size_t{1024}, size_t{1025}, size_t{3000}, size_t{4096}, size_t{65536}}) {
      Packet p = Payload(Packet{}, len);
      p.kind = k;
      p.op = k == PacketKind::kWrite ? WrOpcode::kRdmaWriteWithImm
                                     : k == PacketKind::kSend ? WrOpcode::kSendWithImm
                                                              : WrOpcode::kRdmaRead;
      p.has_imm = k != PacketKind::kReadResp;
      p.imm = 9;
      p.psn = 0xfffffe;  // wraps
      if (k == PacketKind::kWrite) {  // RETH on the FIRST packet only
        p.rkey = 3;
        p.remote_addr = 0x4000;
      }
      const uint32_t n = model::PacketCount(len, 1024);
      p.npkts = n;
      size_t datagrams = 0;
      SCOPED_TRACE(Describe(p));
      ExpectSame(p, RoundTrip(p, 1024, &datagrams));
      EXPECT_EQ(datagrams, n);
      const auto d = Encode(p);
      const uint8_t base = k == PacketKind::kSend ? 0x00 : k == PacketKind::kWrite ? 0x06 : 0x0d;
      for (uint32_t i = 0; i < n; ++i) {
        const uint32_t psn = (uint32_t{d[i][9]} << 16 | d[i][10] << 8 | d[i][11]);
        EXPECT_EQ(psn, PsnAdd(p.psn, i));
        uint8_t want = i == 0 ? (n == 1 ? base + 4 : base) : i + 1 < n ? base + 1 : base + 2;
        if (k == PacketKind::kReadResp) want = n == 1 ? 0x10 : i == 0 ? 0x0d : i + 1 < n ? 0x0e : 0x0f;
        if (k != PacketKind::kReadResp && i + 1 == n) ++want;  // *_WITH_IMMEDIATE
        if (k == PacketKind::kWrite && n == 1) want = 0x0b;
        if (k == PacketKind::kSend && n == 1) want = 0x05;
        EXPECT_EQ(d[i][0], want) << "packet " << i;
        if (i + 1 < n) {  // full packets: BTH, RETH/AETH on the first, MTU bytes, ICRC
          EXPECT_EQ(d[i].size(), 12u + (i == 0 && k == PacketKind::kWrite ? 16 : 0) +
                                     (i == 0 && k == PacketKind::kReadResp ? 4 : 0) + 1024 + 4);
        }
      }
    }
  }
}

TEST(RoceCodec, ZeroLengthMessagesAreOnePacket) {
  Packet p;
  p.kind = PacketKind::kWrite;
  p.op = WrOpcode::kRdmaWrite;
  size_t n = 0;
  ExpectSame(p, RoundTrip(p, 1024, &n));
  EXPECT_EQ(n, 1u);
  Packet s;
  ExpectSame(s, RoundTrip(s, 1024, &n));
  EXPECT_EQ(n, 1u);
}

TEST(RoceCodec, MalformedDatagramsAreRejected) {
  Packet p = Payload(Packet{}, 3000);
  p.kind = PacketKind::kWrite;
  p.op = WrOpcode::kRdmaWrite;
  const auto d = Encode(p);
  ASSERT_EQ(d.size(), 3u);
  RoceReassembler r;
  Packet out;
  // Every truncation of every packet, and one flipped bit anywhere: never a message.
  for (const auto& g : d) {
    for (size_t n = 0; n < g.size(); ++n) {
      RoceResult res = r.Feed(g.data(), n, Ep(), &out);
      EXPECT_NE(res, RoceResult::kMessage);
      EXPECT_NE(res, RoceResult::kPartial);
    }
    for (size_t bit = 0; bit < g.size() * 8; ++bit) {
      if (bit / 8 == 4) continue;  // BTH's FECN/BECN/reserved byte: masked out of the ICRC
      std::vector<uint8_t> bad = g;
      bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      RoceResult res = r.Feed(bad.data(), bad.size(), Ep(), &out);
      EXPECT_NE(res, RoceResult::kMessage) << bit;
      EXPECT_NE(res, RoceResult::kPartial) << bit;
    }
  }
  // Wrong endpoints: the ICRC covers the addresses.
  RoceEndpoints other{kB, kA};
  EXPECT_EQ(r.Feed(d[0].data(), d[0].size(), other, &out), RoceResult::kBadIcrc);
  // Unknown opcode with a correct ICRC.
  std::vector<uint8_t> u = d[0];
  u[0] = 0x15;  // reserved
  const uint32_t icrc = RoceIcrc(u.data(), u.size(), Ep());
  for (int k = 0; k < 4; ++k) u[u.size() - 4 + k] = static_cast<uint8_t>(icrc >> (8 * k));
  EXPECT_EQ(r.Feed(u.data(), u.size(), Ep(), &out), RoceResult::kMalformed);
  // UD has SEND_ONLY only.
  u[0] = 0x6a;
  EXPECT_EQ(r.Feed(u.data(), u.size(), Ep(), &out), RoceResult::kMalformed);
}

TEST(RoceCodec, OutOfSequencePacketsDropThePartialMessage) {
  Packet p = Payload(Packet{}, 3000);
  p.psn = 10;
  const auto d = Encode(p);
  RoceReassembler r;
  Packet out;
  // MIDDLE and LAST without FIRST.
  EXPECT_EQ(r.Feed(d[1].data(), d[1].size(), Ep(), &out), RoceResult::kOutOfOrder);
  EXPECT_EQ(r.Feed(d[2].data(), d[2].size(), Ep(), &out), RoceResult::kOutOfOrder);
  // A lost MIDDLE: the LAST drops the message.
  EXPECT_EQ(r.Feed(d[0].data(), d[0].size(), Ep(), &out), RoceResult::kPartial);
  EXPECT_EQ(r.Feed(d[2].data(), d[2].size(), Ep(), &out), RoceResult::kOutOfOrder);
  EXPECT_EQ(r.partial_streams(), 0u);
  // A FIRST again restarts; then the whole message arrives.
  EXPECT_EQ(r.Feed(d[0].data(), d[0].size(), Ep(), &out), RoceResult::kPartial);
  EXPECT_EQ(r.Feed(d[0].data(), d[0].size(), Ep(), &out), RoceResult::kPartial);
  EXPECT_EQ(r.Feed(d[1].data(), d[1].size(), Ep(), &out), RoceResult::kPartial);
  EXPECT_EQ(r.Feed(d[2].data(), d[2].size(), Ep(), &out), RoceResult::kMessage);
  EXPECT_EQ(out.npkts, 3u);
  EXPECT_EQ(out.psn, 10u);
  // A request and a response stream on one QP do not mix.
  Packet resp = p;
  resp.kind = PacketKind::kReadResp;
  const auto e = Encode(resp);
  EXPECT_EQ(r.Feed(d[0].data(), d[0].size(), Ep(), &out), RoceResult::kPartial);
  EXPECT_EQ(r.Feed(e[0].data(), e[0].size(), Ep(), &out), RoceResult::kPartial);
  EXPECT_EQ(r.Feed(d[1].data(), d[1].size(), Ep(), &out), RoceResult::kPartial);
  EXPECT_EQ(r.Feed(e[1].data(), e[1].size(), Ep(), &out), RoceResult::kPartial);
  EXPECT_EQ(r.Feed(d[2].data(), d[2].size(), Ep(), &out), RoceResult::kMessage);
  EXPECT_EQ(out.kind, PacketKind::kSend);
  EXPECT_EQ(r.Feed(e[2].data(), e[2].size(), Ep(), &out), RoceResult::kMessage);
  EXPECT_EQ(out.kind, PacketKind::kReadResp);
}

TEST(RoceCodec, Ipv4MappedGids) {
  uint32_t ip = 0;
  EXPECT_TRUE(GidToIpv4(Ipv4ToGid(0x7f000001), &ip));
  EXPECT_EQ(ip, 0x7f000001u);
  Gid link_local;
  link_local.raw[0] = 0xfe;
  link_local.raw[1] = 0x80;
  EXPECT_FALSE(GidToIpv4(link_local, &ip));
}

}  // namespace
}  // namespace qptwin::model::engine
