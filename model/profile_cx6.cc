// ConnectX-6-like 100 GbE RoCE v2 profiles. The capabilities and behaviour are the "cx6"
// description of spec/device_description.cc (mlx5's caps, IBTA behaviour); the timing is what
// this file documents, number by number.
#include "model/profile.h"

namespace qptwin::model {

Profile MakeCx6Profile() {
  Profile p = ProfileOf("cx6-100g",
                        "ConnectX-6-like 100 GbE RoCE v2 NICs, back to back (2 m DAC); IBTA behaviour",
                        "cx6");
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
  t.cache = Cx6ContextCaches();
  return p;
}

// The context caches (ICM caches: QPC, MPT, MTT, WQE) of a ConnectX-5/6-class NIC. NVIDIA
// publishes neither the capacities nor the miss cost. Two values are calibrated to published
// ConnectX-6 measurements (docs/bench/REPORT.md section 8 has the side-by-side table): Ren et
// al., "Scaling Up Memory Disaggregated Applications with SMART" (ASPLOS 2024), Figure 4,
// 8-byte READ/WRITE with T threads x D outstanding WRs on a 200 Gb/s ConnectX-6 (the
// artifact's ae/raw-reference/fig4{a,b}.csv, github.com/madsys-dev/smart). The others are
// ESTIMATES whose shape follows the published work listed in that section (Storm, SYSTOR
// 2019; SRNIC, NSDI 2023; Husky, NSDI 2023; FaRM, NSDI 2014).
CacheTiming Cx6ContextCaches() {
  CacheTiming c;
  c.enabled = true;
  c.qpc_entries = 2048;   // estimate: the cliff between 1,024 and 4,096 active QPs
  c.mpt_entries = 4096;   // estimate
  c.mtt_entries = 65536;  // estimate: 256 MiB of 4 KiB pages translated on chip
  // SMART Fig. 4b: WRITE throughput holds up to 960 WRs outstanding (60 x 16: 92.7 Mop/s)
  // and falls at 1,152 (72 x 16: 67.0; 36 x 32: 91.4 -> 48 x 32: 69.9 at 1,536). A retired
  // WQE keeps its entry until evicted (nic_cache.cc), so the WRs outstanding get about half
  // of the cache: 2,048 entries put the model's first misses between 960 and 1,152 WRs
  // outstanding with a thread per QP (REPORT section 8); 1,024 put them at ~576.
  c.wqe_entries = 2048;
  // Fully associative LRU: SMART's WRITE rises linearly up to the cliff (no early conflict
  // misses); 8-way sets of the same capacity missed from ~400 WRs outstanding on.
  c.ways = 0;
  c.page_bytes = 4096;    // ibv_reg_mr of ordinary (not huge) pages
  c.qpc_bytes = 256;      // estimate of the order of mlx5's QPC (struct mlx5_ifc_qpc_bits)
  c.mpt_bytes = 64;       // mlx5 mkey context (struct mlx5_ifc_mkc_bits, 64 B)
  c.mtt_bytes = 8;        // one 64-bit translation per page (struct mlx5_mtt)
  c.miss_ns = 0;          // a PCIe read round trip (pcie_read_ns above)
  // SMART Fig. 4b: past the cliff WRITE stays at 63-64 Mop/s from 1,152 to 3,072 WRs
  // outstanding, where a WQE cache of 1,024 loses most WQEs before their ACK (the completer
  // reads a WQE again to retire it: timing.h contract 5): the NIC re-fetches at least ~63 M
  // WQEs/s, i.e. 63 M/s x 500 ns = ~32 reads in flight. The
  // smallest value consistent with that plateau, for WQE re-fetches (a plain read of the
  // send queue, on a unit of their own).
  c.wqe_miss_overlap = 32;
  // Estimate: QPC/MPT/MTT misses are translations the pipeline waits on, 8 in flight (16 M
  // misses/s per NIC). No published number separates them; SRNIC's relative drops with
  // QPs (REPORT section 8) are steeper than WQE misses alone give.
  c.miss_overlap = 8;
  return c;
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
