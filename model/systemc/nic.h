// qptwin::sc::Nic: an RDMA NIC as a SystemC module for a user's virtual platform.
//
//   host side                         NIC                                network side
//   mmio  (TLM target)   -> host interface (doorbells, commands)
//                            requester  (WQE fetch, payload read, packetize) -> port -> net_out
//   dma   (TLM initiator) <- every DMA: WQE, payload read/write, CQE, RQ WQE  <- port <- net_in
//                            responder  (checks, payload write, ACK/NAK/READ response)
//                            completer  (ACK/NAK/response handling, CQE write)
//
// Contract:
//  1. Register map, WQE and CQE layouts: layout.h. Behaviour (keys, QP state machine,
//     verdicts): behaviour.h, plain C++. This module adds time and moves bytes.
//  2. Every DMA is one tlm_generic_payload through `dma` (b_transport, byte addresses = host
//     physical addresses). The NIC annotates its own PCIe cost (below) and waits for the
//     total delay the user's memory or interconnect returns. A response status other than
//     TLM_OK_RESPONSE is an error completion, never a crash: WQE fetch -> kLocQpOpErr,
//     payload read or a READ response's write -> kLocProtErr, responder write -> NAK
//     remote operation error; a failed CQE write is counted in cqe_write_errors().
//  3. Processes: host interface (RQ doorbells) and port tx are SC_METHODs (no waits), the
//     port's receive side is a function the Switch calls (net.h); requester, responder,
//     completer and the CQE writer are SC_THREADs (they call b_transport, which may wait).
//     Temporal decoupling (TLM-2.0 LT, the global quantum, 1 us unless the user set one):
//     SQ doorbells go straight to the requester, which takes them, and the WQEs they cover,
//     up to a quantum ahead of SystemC time; the responder executes a clean RDMA WRITE (no
//     immediate, PSN expected, keys good) and the completer an ACK as soon as they are
//     delivered, up to a quantum before they are due, at their own time by annotation (the
//     WRITE's DMA carries the offset as its delay; ACK, CQE and packets carry their times).
//     Everything else (receive WQEs, READs, NAKs, errors) waits until it is due. So every
//     time below is kept; what a decoupled block reads (QP state, keys) is read early, a
//     WRITE's payload may be in host memory up to its lead early (a CQE never is), and
//     CQEs stay in order (one writer, FIFO). Timing from model::Timing (timing.h; e.g. the
//     cx6-100g profile), by block:
//       host interface: a doorbell acts doorbell_ns after its MMIO write (posted);
//                       a command costs ControlTiming's figure as the write's delay.
//       requester:  WQE fetch (no earlier than its doorbell acts) pcie_read_ns + 64 B at
//                   pcie_gbps; payload read pcie_read_ns + length at pcie_gbps (not for
//                   READ); then tx_latency_ns, and the send engine starts the message. Pipelined: the DMA read
//                   channel is busy only for the bytes, the send engine tx_pkt_ns per packet,
//                   messages leave in SQ order; of several QPs, the one due first goes
//                   first. Runs ahead in a tlm_quantumkeeper (each DMA and packet carries
//                   its time).
//       port:       each message's wire bytes (wire.h, headers per packet) at link.gbps, one
//                   message at a time; + propagation_ns per cable; Switch: + switch_ns.
//       receive:    rx_latency_ns after the last byte arrives (includes writing the payload:
//                   the payload DMA write carries no NIC delay, only the memory's).
//       responder:  SEND: RQ WQE fetch (pcie_read_ns + 64 B); READ: pcie_read_ns + length;
//                   then ack_ns until the ACK/NAK/response is handed to the port.
//       CQE:        the CQE writer issues the CQE's 32-byte DMA write cqe_ns after the WQE
//                   is done (so a polling host never sees it early), in order.
//     So an RC RDMA WRITE of n bytes through one Switch completes at doorbell +
//     doorbell_ns + 2 pcie_read_ns + 64 B and n B at pcie_gbps + tx_latency_ns +
//     wire(WRITE n) + 2 (2 propagation_ns + switch_ns + rx_latency_ns) + ack_ns + wire(ACK) +
//     cqe_ns: model/wire.h contract 4, the engine's path too (nic_test.cc checks exactly
//     this, examples/systemc/write_latency_test the engine).
//  4. Transports RC (SEND, SEND_WITH_IMM, RDMA WRITE[_WITH_IMM], RDMA READ), UC (SEND, WRITE)
//     and UD (SEND; the receive gets the 40-byte network header in front, packet.h). QP
//     states per spec/qp_state_table.h; ERR flushes both queues (kWrFlushErr, every WQE).
//     Not modelled: loss and retransmission, RNR retry (an RNR NAK completes with
//     kRnrRetryExcErr as rnr_retry = 0), atomics, SRQ, inline data and BlueFlame, context
//     caches, CQ overflow and CQ events.
//  5. Elaborate before the first sc_start (SystemC rule). The NIC is a port `port_id` of a
//     Switch; the peer is named by its port number in kModifyQp.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/systemc/behaviour.h"
#include "model/systemc/layout.h"
#include "model/systemc/net.h"
#include "model/systemc/timed_channel.h"
#include "model/timing.h"

namespace qptwin::sc {

struct NicConfig {
  uint32_t port_id = 0;
  model::Timing timing;
  uint32_t mtu = 4096;  // path MTU in bytes
};

class Nic : public sc_core::sc_module, private NetIf {
 public:
  tlm_utils::simple_target_socket<Nic> mmio;
  tlm_utils::simple_initiator_socket<Nic> dma;
  sc_core::sc_port<NetIf> net_out;   // bind to Switch::in(port_id)
  sc_core::sc_export<NetIf> net_in;  // bind Switch::out(port_id) to it

  Nic(sc_core::sc_module_name name, const NicConfig& config);

  // Adds to `tf`: link busy, the transmit queue's occupancy, and per listed QP its state
  // (QpState value) and its SQ/RQ occupancy (WQEs posted and not completed; the SQ's moves
  // when the requester takes a doorbell and the completer an ACK, which may be up to a
  // quantum before their times, contract 3). Tracing link busy costs the port one more
  // activation per packet (when the link goes idle).
  void Trace(sc_core::sc_trace_file* tf, const std::vector<uint32_t>& qpns);
  const QpContext& qp(uint32_t qpn) const { return qps_[qpn]; }
  uint64_t cqe_write_errors() const { return cqe_write_errors_; }
  uint64_t packets_sent() const { return packets_sent_; }
  const model::Timing& timing() const { return config_.timing; }

 private:
  struct Doorbell {
    uint32_t qpn = 0;
    bool rq = false;
    uint32_t value = 0;
    sc_core::sc_time ready;  // the NIC sees it: the MMIO write + doorbell_ns
  };
  struct CqeJob {
    uint32_t cqn = 0;
    Cqe cqe;
    sc_core::sc_time ready;  // the WQE is done + cqe_ns
  };
  struct Cq {
    bool exists = false;
    Ring ring;
    uint32_t pi = 0;
  };

  // nic_host.cc: MMIO, commands, DMA and CQE helpers.
  void MmioTransport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  uint32_t Execute(CmdOp op, sc_core::sc_time& delay);
  void HostInterface();
  // Puts the QP on the requester's work list; the requester wakes `delay` from now (or
  // earlier for other work).
  void Schedule(QpContext& qp, sc_core::sc_time delay = sc_core::SC_ZERO_TIME);
  // A DMA of `len` bytes with the NIC's own `cost`; true when the memory answered OK.
  // `local` is the caller's time offset (quantum keeper or 0): the transaction is issued at
  // sc_time_stamp() + *local, and *local grows by the delay (the caller decides to wait).
  // Each process has its own generic payload (no allocation per DMA).
  bool Dma(tlm::tlm_generic_payload& gp, tlm::tlm_command cmd, uint64_t addr, uint8_t* data, uint32_t len,
           sc_core::sc_time cost, sc_core::sc_time* local);
  bool DmaNow(tlm::tlm_generic_payload& gp, tlm::tlm_command cmd, uint64_t addr, uint8_t* data, uint32_t len,
              sc_core::sc_time cost);
  // Hands the CQE to the CQE writer, which writes it cqe_ns after `done` (default: now).
  void WriteCqe(uint32_t cqn, const Cqe& cqe, sc_core::sc_time done = sc_core::SC_ZERO_TIME);
  void CqeWriter();
  void Transmit(NetPacket np);  // to the port at np.ready (requests / responses queue)

  // nic_requester.cc: requester and the flush of an ERR QP.
  void Requester();
  bool SendOne(QpContext& qp);
  std::shared_ptr<engine::Packet> NewPacket();
  // `at`: when the WQE is done (the CQE is written cqe_ns later); errors: as soon as known.
  void CompleteLocal(QpContext& qp, const Wqe& w, WcStatus s, bool always,
                     sc_core::sc_time at = sc_core::SC_ZERO_TIME);
  void ToError(QpContext& qp);
  void Flush(QpContext& qp);

  // nic_responder.cc: port, responder, completer.
  void PortTx();
  // The port's receive side (NetIf): rx_latency_ns after the last byte is in, requests to
  // the responder, the rest to the completer.
  void Deliver(const NetPacket& np) override;
  void Responder();
  void Respond(QpContext& qp, const engine::Packet& p);
  // Consumes a receive WQE for `bytes`; kNone when written, kRnr when none is posted, else
  // the NAK (the CQE, with its error status, is in *cqe when a WQE was consumed).
  engine::NakCode Receive(QpContext& qp, const std::vector<uint8_t>& bytes, Cqe* cqe);
  // The reply is handed to the port ack_ns after `at` (when the request was processed).
  void Reply(const QpContext& qp, const engine::Packet& req, engine::PacketKind kind,
             engine::NakCode nak, std::vector<uint8_t> data, sc_core::sc_time at);
  // The responder's fast path ahead of SystemC time: a clean RDMA WRITE (no immediate) on a
  // receiving RC/UC QP is executed at np.ready by annotation; false: not such a request (the
  // responder waits until it is due and takes the exact path).
  bool RespondAhead(QpContext& qp, const NetPacket& np);
  void Completer();

  const NicConfig config_;
  KeyTable keys_;
  std::vector<QpContext> qps_;
  std::array<Cq, kMaxCqs> cqs_;
  uint64_t cmd_args_[kCmdArgs] = {};
  uint32_t cmd_status_ = 0;
  TimedChannel<Doorbell> doorbells_;  // RQ doorbells (the host interface applies them)
  // SQ doorbells go to the requester directly, each QP's in order with the time the NIC
  // sees it: the requester fetches a WQE no earlier than its doorbell, and may take
  // doorbells ahead of SystemC time (within its quantum) as it takes everything else.
  struct SqBell {
    uint32_t value = 0;
    sc_core::sc_time ready;
  };
  struct SqBells {
    std::vector<SqBell> items;
    size_t head = 0;
    sc_core::sc_time acts;  // the last doorbell taken acts (its WQEs are fetched no earlier)
    bool empty() const { return head == items.size(); }
    const SqBell& front() const { return items[head]; }
    void pop() {
      if (++head == items.size()) items.clear(), head = 0;
    }
  };
  std::vector<SqBells> sq_bells_;
  // Takes the QP's next SQ doorbell (sq_pi, occupancy); the time it acts.
  void TakeSqBell(QpContext& qp);
  sc_core::sc_time WorkDue(uint32_t qpn) const;
  sc_core::sc_time EarliestWork();  // moves the listed QP due first to the list's head
  std::vector<uint32_t> work_;  // the requester's work list (QPNs), from work_head_
  size_t work_head_ = 0;
  sc_core::sc_event work_event_;
  // The port serves two queues: the requester's packets (stamped ahead of time) and the
  // responder's ACKs/NAKs/READ responses, so neither waits behind the other's times.
  sc_core::sc_event tx_event_;  // either tx queue's head is due
  TimedChannel<NetPacket> tx_requests_, tx_responses_, requests_, responses_;
  TimedChannel<CqeJob> cqes_;
  tlm_utils::tlm_quantumkeeper qk_;
  sc_core::sc_time requester_time_;  // the requester's next WQE fetch may start (DMA channel)
  sc_core::sc_time engine_free_;     // the send engine is done with the last message
  sc_core::sc_time link_free_;         // the port's last byte of the last packet leaves
  sc_core::sc_signal<bool> link_busy_;
  bool trace_link_ = false;
  int tx_occupancy_ = 0;
  uint64_t cqe_write_errors_ = 0;
  uint64_t packets_sent_ = 0;
  static constexpr size_t kPacketPool = 64;
  std::vector<std::shared_ptr<engine::Packet>> packet_pool_;
  size_t pool_cursor_ = 0;
  tlm::tlm_generic_payload requester_gp_, responder_gp_, completer_gp_, cqe_gp_;
  // Per packet kind, the last message's wire time (wire.h), reused while its shape repeats.
  struct WireMemo {
    size_t bytes = ~size_t{0};
    bool imm = false;
    sc_core::sc_time wire;
  };
  std::array<WireMemo, engine::kNumPacketKinds> wire_memo_;
  // The timing's figures as sc_time, converted once (the hot path builds no sc_time from
  // integers or doubles); a read's byte time memoized for the last length.
  struct Delays {
    sc_core::sc_time doorbell, pcie_read, wqe_bytes, wqe_fetch, tx_latency, tx_pkt, rx_latency,
        ack, cqe, propagation;
  };
  const Delays d_;
  static Delays DelaysOf(const model::Timing& t);
  sc_core::sc_time ReadBytes(uint32_t len);  // len bytes at pcie_gbps
  uint32_t read_memo_len_ = ~0u;
  sc_core::sc_time read_memo_;
};

}  // namespace qptwin::sc
