// ConnectX-6-like 100 GbE RoCE v2 profiles. The capabilities follow what mlx5 reports
// (ibv_devinfo -v on ConnectX-6 Dx); the behaviour is IBTA's (the model makes no claim about
// mlx5 firmware quirks); the timing is what this file documents, number by number.
#include "model/profile.h"

namespace qptwin::model {
namespace {

void Cx6Caps(Profile& p) {
  DeviceAttr& d = p.device;
  d.max_mr_size = ~0ull;
  d.vendor_id = 0x02c9;        // Mellanox
  d.vendor_part_id = 4125;     // ConnectX-6 Dx (0x101d)
  d.max_qp = 1 << 18;          // ibv_devinfo -v: max_qp 262144
  d.max_qp_wr = 1 << 15;       // 32768
  d.max_sge = 30;
  d.max_sge_rd = 30;
  d.max_cq = 1 << 24;
  d.max_cqe = (1 << 22) - 1;   // 4194303
  d.max_mr = 1 << 24;
  d.max_pd = 1 << 24;
  d.max_ah = 0x7fffffff;
  d.max_qp_rd_atom = 16;
  d.max_qp_init_rd_atom = 16;
  d.max_srq = 1 << 23;
  d.max_srq_wr = (1 << 15) - 1;
  d.max_srq_sge = 31;
  d.max_inline_data = 220;     // estimate: perftest's default inline size on mlx5 RC
  d.max_pkeys = 128;
  d.atomic_cap = AtomicCap::kHca;
  d.phys_port_cnt = 1;
  PortAttr& port = p.port;
  port.state = PortState::kActive;
  port.max_mtu = Mtu::k4096;
  port.active_mtu = Mtu::k4096;  // netdev MTU 9000 (jumbo frames) -> IB MTU 4096
  port.gid_tbl_len = 256;
  port.max_msg_sz = 1u << 30;    // mlx5: 0x40000000
  port.pkey_tbl_len = 1;
  port.lid = 0;
  port.active_width = 2;  // 4X
  port.active_speed = 64;  // reported for 100 GbE (HDR lane rate 50G x2 in ethtool terms)
  port.link_layer = LinkLayer::kEthernet;
}

void IbtaBehaviour(Quirks& q) {
  q.reject_extended_mask = false;
  q.send_errors_to_sqe = true;
  q.comm_est_event = true;
  q.sqd_event_needs_notify = true;
  q.fence_waits_for_all = false;
  q.rxe_queue_sizes = false;
  q.cq_overrun_is_sticky = true;
  q.qp_error_events = true;
  q.send_wc_with_imm = false;
  q.recv_in_err_flushed_at_once = true;
}

}  // namespace

Profile MakeCx6Profile() {
  Profile p;
  p.name = "cx6-100g";
  p.description = "ConnectX-6-like 100 GbE RoCE v2 NICs, back to back (2 m DAC); IBTA behaviour";
  Cx6Caps(p);
  IbtaBehaviour(p.quirks);
  Timing& t = p.timing;
  // Link: 100GBASE-CR4, 100 Gb/s of data after 64b/66b. RoCE v2 headers per wire.h.
  t.link = LinkTiming{WireFormat::kRoceV2, 100, 10, 0, 0};  // 2 m of copper: ~5 ns/m
  // PCIe Gen4 x16: 16 GT/s x 16 lanes x 128/130 = 252 Gb/s raw; ~80% after TLP headers at
  // 256 B max payload -> 200 Gb/s of DMA data.
  t.nic.pcie_gbps = 200;
  // DMA read round trip: Neugebauer et al., "Understanding PCIe performance for end host
  // networking" (SIGCOMM 2018) measure ~500-550 ns median for small reads on Xeon hosts.
  t.nic.pcie_read_ns = 500;
  t.nic.doorbell_ns = 200;  // MMIO posted write CPU -> NIC (estimate; same source's order)
  t.nic.wqe_bytes = 64;     // mlx5 send WQE basic block (MLX5_SEND_WQE_BB)
  // rdma-core providers/mlx5/qp.c post_send_db: one WR with inline data is copied with the
  // doorbell into the BlueFlame register, so the NIC does not fetch the WQE.
  t.nic.wqe_by_mmio = true;
  // NVIDIA ConnectX-6 Dx product brief: "up to 215 million messages per second" -> ~5 ns
  // of send-engine time per packet.
  t.nic.tx_pkt_ns = 5;
  t.nic.tx_latency_ns = 150;  // estimate: WQE parse, scheduling, header build
  t.nic.rx_latency_ns = 350;  // estimate: parse, ICRC, DMA write of the data into memory
  t.nic.ack_ns = 100;         // estimate: ACK generation in hardware
  t.nic.atomic_ns = 100;      // estimate: read-modify-write after the PCIe read
  t.nic.cqe_ns = 250;         // estimate: CQE build + PCIe posted write (64 B)
  t.nic.serial_processing = false;
  // Host (estimates, consistent with Kalia et al., "Design guidelines for high performance
  // RDMA systems", ATC 2016: a doorbell per post is the main per-call CPU cost).
  t.host = HostTiming{100, 15, 20, 4'000};  // post call, per WR, per CQE, event wake-up
  // Control path: firmware commands through the mlx5 command interface. Estimates of the
  // order reported for mlx5 (create QP tens of us, each modify a few us, CQ ~10 us, reg_mr
  // tens of us plus page pinning); no vendor figures are published.
  t.control = ControlTiming{10'000, 40'000, 5'000, 20'000, 20'000, 100};
  return p;
}

Profile MakeCx6DcProfile() {
  Profile p = MakeCx6Profile();
  p.name = "cx6-dc";
  p.description =
      "cx6-100g NICs in a 3-tier Clos: 5 switch hops (ToR-agg-spine-agg-ToR), 6 x 10 m fibre";
  // Cut-through data-centre switches: ~450 ns port to port (e.g. Broadcom Tomahawk-class
  // datasheets list 400-500 ns); 10 m of fibre is ~50 ns.
  p.timing.link.switch_hops = 5;
  p.timing.link.switch_ns = 450;
  p.timing.link.propagation_ns = 50;
  return p;
}

}  // namespace qptwin::model
