// Timing parameters of a modelled NIC, its link and its host, as profile data.
//
// Contract:
//  1. Plain data: the engine reads these and never branches on a profile name. Every value
//     is a duration in ns or a rate in Gb/s (10^9 bit/s); 0 means "free" (no cost).
//  2. Message path (requester side), each step starting when the previous one is done:
//       host:  post call (post_call_ns + post_wr_ns per WR) -> doorbell_ns (MMIO) ->
//       NIC:   WQE fetch (pcie_read_ns + WQEs at pcie_gbps; skipped for a single inline WR
//              when wqe_by_mmio: BlueFlame) -> payload fetch (pcie_read_ns + bytes at
//              pcie_gbps; skipped for inline data) -> tx_latency_ns -> the wire
//       (Nic::PostSend charges the host; the NIC's steps start when the doorbell write
//       reaches it, engine/doorbell_port.h contract 3: Nic::FetchWqes the doorbell and the
//       fetch of the WQEs that ring made known, the requester the rest.)
//       wire:  each packet's payload + its own headers (wire.h) at link.gbps, one packet at a
//              time per port -> propagation_ns per cable (hops + 1 cables) + switch_ns per
//              switch -> rx_latency_ns at the far NIC.
//     The responder answers after ack_ns (ACK/NAK), pcie_read_ns + ack_ns (READ response
//     data), pcie_read_ns + atomic_ns + ack_ns (atomics). A CQE is visible to the host
//     cqe_ns after the NIC completes the WQE (completion engine + PCIe posted write).
//  3. Engines: the send engine is busy tx_pkt_ns per packet (the NIC's packet rate); with
//     serial_processing (a software device) a message's tx_latency_ns and a response's
//     ack_ns also queue on one engine instead of overlapping.
//  4. Host: threads of their own clock per device; a program uses thread 0 unless it selects
//     another (Device::UseHostThread: a benchmark's T posting threads). Posting, consuming
//     CQEs (poll_cqe_ns each) and control verbs (ControlTiming) occupy the calling thread; a
//     Wait* returns no earlier than that thread is free. The threads share the NIC.
//     Completion events add event_wakeup_ns (interrupt, wake-up, ibv_get_cq_event).
//  5. Context caches (CacheTiming, model/engine/context_cache.h): with cache.enabled the NIC
//     keeps QP contexts, memory keys (MPT), page translations (MTT, one per page_bytes of a
//     region) and prefetched send WQEs in on-chip caches of the given entries. The send
//     engine looks up the QPC, the WQE and the local key/pages of a payload it reads; the
//     completer (reliable QPs) the WQE again when it retires it, whose CQE waits for a
//     re-read if it was evicted (retired WQEs stay cached until evicted); the responder the QPC and the
//     remote key/pages it touches. Each lookup that misses is one
//     context read over PCIe: the batch of a step's misses is ready miss_ns (0: pcie_read_ns)
//     after it starts, its bytes occupy the DMA read channel, and the NIC's context-fetch
//     unit is busy miss_ns / miss_overlap per miss (it overlaps miss_overlap reads), so
//     misses cap the message rate. WQE re-fetches have a unit of their own, with
//     wqe_miss_overlap reads in flight (0: the same unit as the contexts): a WQE is a plain
//     read of the send queue, a QPC/MPT/MTT miss a translation the pipeline waits on.
//     Entries 0: that kind is not cached (never misses).
#pragma once

#include <cstdint>

namespace qptwin::model {

enum class WireFormat : uint8_t {
  kRoceV2,      // Ethernet + IPv4 + UDP + IB transport headers + ICRC
  kInfiniBand,  // LRH + IB transport headers + ICRC + VCRC
};

struct LinkTiming {
  WireFormat format = WireFormat::kRoceV2;
  double gbps = 10;              // data rate on the wire (after line coding)
  uint64_t propagation_ns = 500;  // per cable, one way (about 5 ns per metre of fibre)
  int switch_hops = 0;           // switches between two NICs
  uint64_t switch_ns = 0;        // per switch, port to port (cut-through)
};

struct NicTiming {
  double pcie_gbps = 0;         // DMA data rate; 0: memory copies are free (rxe)
  uint64_t pcie_read_ns = 0;    // DMA read round trip (WQE, payload, READ/ATOMIC data)
  uint64_t doorbell_ns = 0;     // MMIO doorbell write until the NIC sees it
  uint32_t wqe_bytes = 64;      // one send WQE (fetched by DMA unless pushed by MMIO)
  bool wqe_by_mmio = false;     // a single inline WR travels with its doorbell (BlueFlame)
  uint64_t tx_pkt_ns = 0;       // send engine occupancy per packet
  uint64_t tx_latency_ns = 2000;  // WQE ready -> first byte on the wire
  uint64_t rx_latency_ns = 0;   // last byte in -> responder/completer acts
  uint64_t ack_ns = 500;        // request processed -> ACK/NAK/response on the wire
  uint64_t atomic_ns = 0;       // responder: executing an atomic after its PCIe read
  uint64_t cqe_ns = 0;          // WQE done -> CQE visible in host memory
  bool serial_processing = true;  // one engine for everything (software device)
  // The transport and RNR timers run on a clock of this tick (a software device: the host
  // kernel's jiffies); 0: exact. A timer of d expires as Linux's timer wheel has it: d in
  // whole ticks (the transport timeout rounded down, the RNR timer up, at least 1) counted
  // from the current tick, then rounded up to the next bucket of its wheel level (level 0:
  // the next tick; 8 ticks from 63 ticks on, 64 from 504, ...); timers of one bucket fire
  // in the reverse order of their arming (hlist_add_head).
  uint64_t timer_tick_ns = 0;
  // Where the ticks fall: the kernel's tick count at simulated time t is
  // (t + timer_tick_phase_ns) / timer_tick_ns (< timer_tick_ns). A program on a real host
  // starts at an arbitrary point of the kernel's tick, so no one value is the device's.
  uint64_t timer_tick_phase_ns = 0;
  // A software device's retry from behind a WQE's first PSN (rxe_req.c req_retry ->
  // retry_first_write_send) steps through (comp.psn - first_psn) & 0xffffff packets of the
  // first SEND/WRITE one by one, about 2^24 when comp.psn is behind: the time per packet
  // stepped. The requester sends again when the loop ends, and a flush of the QP (ERR)
  // happens then. 0: no time. Measured for rxe in tools/rxe-vm: 54,000 (docs/differences.md
  // row 127). Where the host's program runs meanwhile is the host's, not the device's:
  // model/model_backend.h ModelOptions::retry_skip: whether the model spends this time
  // (the default does not) and whether the program waits for it (below).
  uint64_t retry_skip_ps_per_packet = 0;
  // The loop runs on the CPU of the program's next wake-up: the program waits for it
  // (World::StallHost; its waits and Advance end no earlier).
  bool retry_skip_stalls_host = false;
  // K > 0: the program goes on beside the loop until its K-th wake-up after the loop starts
  // (World::HostWakes) and waits for the loop's end from there (World::StallHostAtWake).
  int retry_skip_host_joins_at = 0;
  // A program the loop stalled runs again this long after the loop's end (0: at once).
  uint64_t retry_skip_host_wakes_late_ns = 0;
};

struct HostTiming {
  uint64_t post_call_ns = 0;    // per ibv_post_send/recv call: barrier + doorbell write
  uint64_t post_wr_ns = 0;      // per WR in the call: building the WQE
  uint64_t poll_cqe_ns = 0;     // per CQE consumed by ibv_poll_cq
  uint64_t event_wakeup_ns = 0;  // completion channel: interrupt -> thread runs again
};

// Control verbs are commands to the device (firmware on a hardware NIC, a system call
// into the kernel driver on rxe); the calling thread waits for them.
struct ControlTiming {
  uint64_t create_cq_ns = 0;
  uint64_t create_qp_ns = 0;
  uint64_t modify_qp_ns = 0;   // per ibv_modify_qp call (one state transition)
  uint64_t destroy_qp_ns = 0;
  uint64_t reg_mr_ns = 0;      // fixed part of ibv_reg_mr
  uint64_t reg_mr_page_ns = 0;  // per 4 KiB page pinned and mapped
  // Destroying a QP that a bound type 2 memory window still names: the call waits this long
  // before it returns (the QP is gone from the start: messages to it are dropped), and the
  // rest of the device runs on meanwhile. rxe: rxe_do_bind_mw takes a reference on the QP
  // for a type 2 window (dropped by its invalidation or dealloc), and rxe_destroy_qp ->
  // __rxe_cleanup waits for the QP's last reference with wait_for_completion_timeout(50 s),
  // then warns and frees it anyway; the program sees 0 after 50 s. Measured in tools/rxe-vm
  // (docs/differences.md row 131). 0: no wait (a hardware NIC's firmware does not wait).
  uint64_t destroy_qp_bound_mw_wait_ns = 0;
};

// The NIC's context caches (ICM caches on mlx5); contract 5. Off by default (rxe, ibta:
// a software device / the reference behaviour has none).
struct CacheTiming {
  bool enabled = false;
  uint32_t qpc_entries = 0;   // QP contexts held on chip
  uint32_t mpt_entries = 0;   // memory keys (one per registered region)
  uint32_t mtt_entries = 0;   // page translations (one per page_bytes of a region)
  uint32_t wqe_entries = 0;   // send WQEs held after their prefetch, all QPs together
  uint32_t ways = 8;          // entries per set (LRU within a set); 0 = fully associative
  uint32_t page_bytes = 4096;  // the MTT's page size
  uint32_t qpc_bytes = 256;   // bytes read per miss, by kind
  uint32_t mpt_bytes = 64;
  uint32_t mtt_bytes = 8;
  uint64_t miss_ns = 0;       // a context read's round trip; 0 = NicTiming::pcie_read_ns
  uint32_t miss_overlap = 1;  // QPC/MPT/MTT reads the NIC keeps in flight at once
  uint32_t wqe_miss_overlap = 0;  // WQE re-fetches in flight on their own unit; 0: shared
};

struct Timing {
  LinkTiming link;
  NicTiming nic;
  HostTiming host;
  ControlTiming control;
  CacheTiming cache;
};

}  // namespace qptwin::model
