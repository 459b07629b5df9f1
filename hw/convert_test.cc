#include "hw/convert.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

namespace qptwin::hw {
namespace {

QpAttr DistinctQpAttr() {
  QpAttr a;
  a.qp_state = QpState::kRts;
  a.cur_qp_state = QpState::kRtr;
  a.path_mtu = Mtu::k2048;
  a.qkey = 0x11111111;
  a.rq_psn = 0x123456;
  a.sq_psn = 0x654321;
  a.dest_qp_num = 0x42;
  a.qp_access_flags = access::kRemoteRead | access::kLocalWrite;
  a.cap = {10, 11, 2, 3, 64};
  a.ah_attr.is_global = true;
  a.ah_attr.grh.dgid.raw[15] = 7;
  a.ah_attr.grh.sgid_index = 3;
  a.ah_attr.grh.hop_limit = 9;
  a.ah_attr.grh.flow_label = 0xabcde;
  a.ah_attr.grh.traffic_class = 5;
  a.ah_attr.dlid = 0x1234;
  a.ah_attr.sl = 2;
  a.ah_attr.port_num = 1;
  a.alt_ah_attr.dlid = 0x99;
  a.pkey_index = 4;
  a.alt_pkey_index = 5;
  a.en_sqd_async_notify = true;
  a.sq_draining = true;
  a.max_rd_atomic = 6;
  a.max_dest_rd_atomic = 7;
  a.min_rnr_timer = 12;
  a.port_num = 1;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 6;
  a.alt_port_num = 2;
  a.alt_timeout = 3;
  a.rate_limit = 1000;
  return a;
}

TEST(Convert, QpAttrFieldsReachIbvQpAttr) {
  ibv_qp_attr ia = ToIbvQpAttr(DistinctQpAttr());
  EXPECT_EQ(ia.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(ia.cur_qp_state, IBV_QPS_RTR);
  EXPECT_EQ(ia.path_mtu, IBV_MTU_2048);
  EXPECT_EQ(ia.rq_psn, 0x123456u);
  EXPECT_EQ(ia.sq_psn, 0x654321u);
  EXPECT_EQ(ia.qp_access_flags, unsigned{IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE});
  EXPECT_EQ(ia.cap.max_inline_data, 64u);
  EXPECT_EQ(ia.ah_attr.is_global, 1);
  EXPECT_EQ(ia.ah_attr.grh.dgid.raw[15], 7);
  EXPECT_EQ(ia.ah_attr.grh.flow_label, 0xabcdeu);
  EXPECT_EQ(ia.ah_attr.dlid, 0x1234);
  EXPECT_EQ(ia.alt_ah_attr.dlid, 0x99);
  EXPECT_EQ(ia.en_sqd_async_notify, 1);
  EXPECT_EQ(ia.min_rnr_timer, 12);
  EXPECT_EQ(ia.rnr_retry, 6);
  EXPECT_EQ(ia.rate_limit, 1000u);
}

TEST(Convert, QpAttrRoundTripsThroughIbv) {
  QpAttr a = DistinctQpAttr();
  QpAttr b = FromIbvQpAttr(ToIbvQpAttr(a));
  EXPECT_EQ(b.qp_state, a.qp_state);
  EXPECT_EQ(b.cur_qp_state, a.cur_qp_state);
  EXPECT_EQ(b.path_mtu, a.path_mtu);
  EXPECT_EQ(b.qkey, a.qkey);
  EXPECT_EQ(b.dest_qp_num, a.dest_qp_num);
  EXPECT_EQ(b.qp_access_flags, a.qp_access_flags);
  EXPECT_EQ(b.cap.max_send_wr, a.cap.max_send_wr);
  EXPECT_EQ(b.cap.max_recv_sge, a.cap.max_recv_sge);
  EXPECT_EQ(b.ah_attr.grh.dgid, a.ah_attr.grh.dgid);
  EXPECT_EQ(b.ah_attr.grh.sgid_index, a.ah_attr.grh.sgid_index);
  EXPECT_EQ(b.ah_attr.grh.hop_limit, a.ah_attr.grh.hop_limit);
  EXPECT_EQ(b.ah_attr.grh.traffic_class, a.ah_attr.grh.traffic_class);
  EXPECT_EQ(b.ah_attr.is_global, a.ah_attr.is_global);
  EXPECT_EQ(b.ah_attr.sl, a.ah_attr.sl);
  EXPECT_EQ(b.alt_pkey_index, a.alt_pkey_index);
  EXPECT_EQ(b.sq_draining, a.sq_draining);
  EXPECT_EQ(b.max_rd_atomic, a.max_rd_atomic);
  EXPECT_EQ(b.max_dest_rd_atomic, a.max_dest_rd_atomic);
  EXPECT_EQ(b.timeout, a.timeout);
  EXPECT_EQ(b.retry_cnt, a.retry_cnt);
  EXPECT_EQ(b.alt_port_num, a.alt_port_num);
  EXPECT_EQ(b.alt_timeout, a.alt_timeout);
}

TEST(Convert, SendImmDataGoesOutInNetworkOrder) {
  SendWr w;
  w.opcode = WrOpcode::kSendWithImm;
  w.imm_data = 0x01020304;
  SendChain chain;
  BuildSendChain({w}, QpType::kRc, {}, &chain);
  ASSERT_EQ(chain.wrs.size(), 1u);
  EXPECT_EQ(chain.wrs[0].imm_data, htonl(0x01020304));
  EXPECT_EQ(chain.wrs[0].opcode, IBV_WR_SEND_WITH_IMM);
}

TEST(Convert, WcImmDataComesBackInHostOrder) {
  ibv_wc wc{};
  wc.wc_flags = IBV_WC_WITH_IMM;
  wc.imm_data = htonl(0xa0b0c0d0);
  wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
  wc.status = IBV_WC_SUCCESS;
  WorkCompletion out = FromIbvWc(wc);
  EXPECT_EQ(out.imm_data, 0xa0b0c0d0u);
  EXPECT_EQ(out.opcode, WcOpcode::kRecvRdmaWithImm);
  EXPECT_EQ(out.wc_flags, wc_flag::kWithImm);
}

TEST(Convert, WcWithoutImmFlagHasZeroImmData) {
  ibv_wc wc{};
  wc.imm_data = 0x12345678;  // garbage a provider may leave
  wc.status = IBV_WC_WR_FLUSH_ERR;
  wc.wr_id = 77;
  wc.qp_num = 9;
  WorkCompletion out = FromIbvWc(wc);
  EXPECT_EQ(out.imm_data, 0u);
  EXPECT_EQ(out.status, WcStatus::kWrFlushErr);
  EXPECT_EQ(out.wr_id, 77u);
  EXPECT_EQ(out.qp_num, 9u);
}

TEST(Convert, WcToIbvIsTheInverseOfFromIbv) {
  ibv_wc imm{};
  imm.wr_id = 5;
  imm.wc_flags = IBV_WC_WITH_IMM | IBV_WC_GRH;
  imm.imm_data = htonl(0x0a0b0c0d);
  imm.opcode = IBV_WC_RECV;
  imm.byte_len = 40;
  imm.qp_num = 17;
  imm.src_qp = 18;
  imm.pkey_index = 1;
  imm.slid = 3;
  imm.sl = 2;
  imm.dlid_path_bits = 1;
  ibv_wc inv{};
  inv.wc_flags = IBV_WC_WITH_INV;
  inv.invalidated_rkey = 0x1234;  // host order (ibv_poll_cq(3))
  inv.opcode = IBV_WC_RECV;
  for (const ibv_wc& wc : {imm, inv}) {
    const ibv_wc back = ToIbvWc(FromIbvWc(wc));
    EXPECT_EQ(back.wr_id, wc.wr_id);
    EXPECT_EQ(back.wc_flags, wc.wc_flags);
    EXPECT_EQ(back.imm_data, wc.imm_data);  // the union with invalidated_rkey
    EXPECT_EQ(back.opcode, wc.opcode);
    EXPECT_EQ(back.byte_len, wc.byte_len);
    EXPECT_EQ(back.qp_num, wc.qp_num);
    EXPECT_EQ(back.src_qp, wc.src_qp);
    EXPECT_EQ(back.pkey_index, wc.pkey_index);
    EXPECT_EQ(back.slid, wc.slid);
    EXPECT_EQ(back.sl, wc.sl);
    EXPECT_EQ(back.dlid_path_bits, wc.dlid_path_bits);
  }
}

TEST(Convert, SendChainLinksWrsAndPointsIntoItsSges) {
  std::vector<SendWr> wrs(3);
  wrs[0].wr_id = 1;
  wrs[1].wr_id = 2;
  wrs[1].sg_list = {{0x1000, 8, 5}};
  wrs[2].wr_id = 3;
  wrs[2].sg_list = {{0x2000, 16, 6}, {0x3000, 32, 7}};
  SendChain chain;
  BuildSendChain(wrs, QpType::kRc, {}, &chain);
  ASSERT_EQ(chain.wrs.size(), 3u);
  EXPECT_EQ(chain.head(), &chain.wrs[0]);
  EXPECT_EQ(chain.wrs[0].next, &chain.wrs[1]);
  EXPECT_EQ(chain.wrs[1].next, &chain.wrs[2]);
  EXPECT_EQ(chain.wrs[2].next, nullptr);
  EXPECT_EQ(chain.wrs[0].num_sge, 0);
  EXPECT_EQ(chain.wrs[0].sg_list, nullptr);
  EXPECT_EQ(chain.wrs[2].num_sge, 2);
  EXPECT_EQ(chain.wrs[2].sg_list, &chain.sges[1]);
  EXPECT_EQ(chain.wrs[2].sg_list[1].addr, 0x3000u);
  EXPECT_EQ(chain.wrs[2].sg_list[1].length, 32u);
  EXPECT_EQ(chain.wrs[2].sg_list[1].lkey, 7u);
  EXPECT_EQ(chain.IndexOf(&chain.wrs[2]), 2u);
  EXPECT_EQ(chain.IndexOf(nullptr), 0u);  // unnamed: nothing claimed as posted
}

TEST(Convert, EmptySendListGivesNullHead) {
  SendChain chain;
  BuildSendChain({}, QpType::kRc, {}, &chain);
  EXPECT_EQ(chain.head(), nullptr);
}

TEST(Convert, AtomicWrFillsTheAtomicUnion) {
  SendWr w;
  w.opcode = WrOpcode::kAtomicCmpAndSwp;
  w.remote_addr = 0xdead0000;
  w.rkey = 0x77;
  w.compare_add = 5;
  w.swap = 9;
  SendChain chain;
  BuildSendChain({w}, QpType::kRc, {}, &chain);
  EXPECT_EQ(chain.wrs[0].wr.atomic.remote_addr, 0xdead0000u);
  EXPECT_EQ(chain.wrs[0].wr.atomic.rkey, 0x77u);
  EXPECT_EQ(chain.wrs[0].wr.atomic.compare_add, 5u);
  EXPECT_EQ(chain.wrs[0].wr.atomic.swap, 9u);
}

TEST(Convert, RdmaWrFillsTheRdmaUnion) {
  SendWr w;
  w.opcode = WrOpcode::kRdmaRead;
  w.remote_addr = 0xbeef000;
  w.rkey = 0x55;
  SendChain chain;
  BuildSendChain({w}, QpType::kRc, {}, &chain);
  EXPECT_EQ(chain.wrs[0].wr.rdma.remote_addr, 0xbeef000u);
  EXPECT_EQ(chain.wrs[0].wr.rdma.rkey, 0x55u);
}

TEST(Convert, UdWrFillsTheUdUnionWithTheResolvedAh) {
  SendWr w;
  w.remote_qpn = 0x1234;
  w.remote_qkey = 0x11111111;
  ibv_ah* fake_ah = reinterpret_cast<ibv_ah*>(0x1000);  // never dereferenced
  SendChain chain;
  BuildSendChain({w}, QpType::kUd, {fake_ah}, &chain);
  EXPECT_EQ(chain.wrs[0].wr.ud.ah, fake_ah);
  EXPECT_EQ(chain.wrs[0].wr.ud.remote_qpn, 0x1234u);
  EXPECT_EQ(chain.wrs[0].wr.ud.remote_qkey, 0x11111111u);
}

TEST(Convert, RecvChainLinksWrs) {
  std::vector<RecvWr> wrs(2);
  wrs[0].wr_id = 10;
  wrs[0].sg_list = {{0x1000, 64, 1}};
  wrs[1].wr_id = 11;
  RecvChain chain;
  BuildRecvChain(wrs, &chain);
  EXPECT_EQ(chain.wrs[0].next, &chain.wrs[1]);
  EXPECT_EQ(chain.wrs[1].next, nullptr);
  EXPECT_EQ(chain.wrs[0].sg_list->length, 64u);
  EXPECT_EQ(chain.wrs[1].num_sge, 0);
  EXPECT_EQ(chain.IndexOf(&chain.wrs[1]), 1u);
}

TEST(Convert, PortAttrKeepsLinkLayerAndMtu) {
  ibv_port_attr p{};
  p.state = IBV_PORT_ACTIVE;
  p.active_mtu = IBV_MTU_1024;
  p.max_mtu = IBV_MTU_4096;
  p.link_layer = IBV_LINK_LAYER_ETHERNET;
  p.gid_tbl_len = 16;
  p.lid = 0;
  PortAttr out = FromIbvPortAttr(p);
  EXPECT_EQ(out.state, PortState::kActive);
  EXPECT_EQ(out.active_mtu, Mtu::k1024);
  EXPECT_EQ(out.max_mtu, Mtu::k4096);
  EXPECT_EQ(out.link_layer, LinkLayer::kEthernet);
  EXPECT_EQ(out.gid_tbl_len, 16);
}

TEST(Convert, DeviceAttrKeepsLimits) {
  ibv_device_attr d{};
  d.max_qp_wr = 1 << 14;
  d.max_sge = 32;
  d.max_cqe = 1 << 16;
  d.atomic_cap = IBV_ATOMIC_HCA;
  d.phys_port_cnt = 1;
  DeviceAttr out = FromIbvDeviceAttr(d, "rxe0");
  EXPECT_EQ(out.name, "rxe0");
  EXPECT_EQ(out.max_qp_wr, 1 << 14);
  EXPECT_EQ(out.max_sge, 32);
  EXPECT_EQ(out.max_cqe, 1 << 16);
  EXPECT_EQ(out.atomic_cap, AtomicCap::kHca);
  EXPECT_EQ(out.phys_port_cnt, 1);
}

}  // namespace
}  // namespace qptwin::hw
