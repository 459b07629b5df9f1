// A SystemC user's own platform with the model's NICs and a driver of the user's own, from
// set-up to data path, with no verbs call (issue 12; model/systemc/nic.h): this sc_main
// makes two hosts' memory (a DRAM module), an MMIO bus per NIC, two qptwin::sc::Nic modules
// and the Fabric between them from the public header, binds their sockets, and runs one
// driver thread per host. The drivers set their NICs up by commands in the NICs' MMIO
// mailboxes (queue memory in the DRAM, a PD, a region, a CQ with its interrupt, an RC QP,
// its moves to RTS), as a driver asks firmware, then write WQEs into rings in the DRAM,
// ring doorbells with TLM writes of their own and take CQEs by their owner byte: host A
// polls its CQ, host B arms its CQ and sleeps until the NIC's interrupt (an MSI-X-like
// write the DRAM turns into an sc_event).
//
//   driver_on_model [OUT_DIR]   writes OUT_DIR/driver_on_model.vcd (default: .)
//
// What it does, on two cx6-100g NICs (nic_a and nic_b, the model's mdev0 and mdev1):
//  - host B's driver writes a receive WQE into its RQ ring and its producer into the
//    ring's doorbell record, arms its CQ (an 8-byte TLM write: CQ number, consumer index)
//    and waits for the interrupt;
//  - host A's driver writes an RC WRITE of 4 KiB and a SEND of 1 KiB into its send ring,
//    rings once (an 8-byte TLM write: QP number, producer) and polls its CQ ring;
//  - every byte moved (payloads, WQEs, CQEs, records) is a transaction on the DRAM's
//    socket, counted by what it was for; the data is checked in the DRAM byte for byte;
//  - the VCD holds the NICs' own signals (link busy, QP state and occupancy) and the
//    drivers' view (commands run, CQEs taken, doorbells written).
// The exit code is 0 when every check held; each failed check prints a line.
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/engine/command_port.h"
#include "model/model_backend.h"
#include "model/systemc/nic.h"
#include "spec/qp_state_table.h"

namespace {

using qptwin::sc::DmaExtension;
using qptwin::sc::Nic;

int failures = 0;

void Check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "driver_on_model: FAILED: %s\n", what.c_str());
    ++failures;
  }
}

constexpr uint64_t kDramBase = 0x4000'0000;
constexpr uint64_t kDramBytes = 4 << 20;
// Interrupt k: a 4-byte write at kMsiBase + 4 * k (its value the vector), in the DRAM's
// range, as an MSI-X address an interrupt controller decodes.
constexpr uint64_t kMsiBase = kDramBase + 0x3f'f000;

// The user's memory: a target socket per initiator (each NIC's DMA); 40 ns per access; what
// each transaction was for, counted (a NIC's accesses for a driver's verb are "cpu ...",
// model/systemc/nic.h contract 3).
class Dram : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Dram> port;
  std::vector<uint8_t> bytes = std::vector<uint8_t>(kDramBytes);
  std::map<std::string, int> seen;
  sc_core::sc_event irq[2];  // an interrupt's write reached the DRAM (at its annotated time)

  explicit Dram(sc_core::sc_module_name name) : sc_module(name), port("port") {
    port.register_b_transport(this, &Dram::BTransport);
  }
  uint8_t* At(uint64_t addr) { return &bytes[addr - kDramBase]; }

 private:
  void BTransport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const uint64_t a = gp.get_address();
    const uint64_t n = gp.get_data_length();
    if (a < kDramBase || n > kDramBytes || a - kDramBase > kDramBytes - n) {
      gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    if (const auto* ext = gp.get_extension<DmaExtension>()) {
      ++seen[std::string(ext->tag.by_cpu ? "cpu " : "nic ") +
             qptwin::model::engine::ToName(ext->tag.kind)];
    }
    if (gp.is_write()) {
      std::memcpy(At(a), gp.get_data_ptr(), n);
    } else {
      std::memcpy(gp.get_data_ptr(), At(a), n);
    }
    delay += sc_core::sc_time(40, sc_core::SC_NS);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    if (gp.is_write() && n == 4 && a >= kMsiBase && a < kMsiBase + 8) {
      irq[(a - kMsiBase) / 4].notify(delay);  // when the write lands, as an LT target says
    }
  }
};

// A NIC's MMIO bus: the driver's commands and doorbells cross it; 20 ns per access.
class MmioBus : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<MmioBus> in;
  tlm_utils::simple_initiator_socket<MmioBus> to_nic;
  explicit MmioBus(sc_core::sc_module_name name) : sc_module(name), in("in"), to_nic("to_nic") {
    in.register_b_transport(this, &MmioBus::BTransport);
  }

 private:
  void BTransport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    delay += sc_core::sc_time(20, sc_core::SC_NS);
    to_nic->b_transport(gp, delay);
  }
};

Dram* TheDram() {
  static Dram* dram = new Dram("dram");  // made before the first sc_start, kept to the end
  return dram;
}

template <typename T>
void Put(uint8_t* at, T v) {
  std::memcpy(at, &v, sizeof v);
}
template <typename T>
T Get(const uint8_t* at) {
  T v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

// One host: its NIC (slot = index), a region in the DRAM, a CQ and an RC QP whose rings are
// in the DRAM, and what its driver knows of them: every number from the NIC's answers.
struct Host {
  int slot = 0;
  uint64_t gid[2] = {};   // its port's GID (QUERY_PORT)
  uint64_t pd = 0;        // PD number (ALLOC_PD)
  uint64_t region = 0;    // bus address
  uint32_t lkey = 0, rkey = 0;
  qptwin::model::SendRing sq;
  qptwin::model::RecvRing rq;
  qptwin::model::CqRing cqr;
  uint32_t cq_taken = 0;  // the driver's consumer index
  uint32_t vector = 0;    // its interrupt's value (CREATE_CQ)
};

namespace cmd = qptwin::model::engine::command;

class Drivers : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Drivers> mmio0{"mmio0"}, mmio1{"mmio1"};
  sc_core::sc_signal<int> cqes_a{"cqes_a"}, cqes_b{"cqes_b"}, doorbells{"doorbells"};
  sc_core::sc_signal<int> interrupts_b{"interrupts_b"}, commands{"commands"};

  SC_HAS_PROCESS(Drivers);
  explicit Drivers(sc_core::sc_module_name name) : sc_module(name) {
    SC_THREAD(HostA);
    SC_THREAD(HostB);
  }

 private:
  static constexpr size_t kRegion = 64 * 1024;

  // One command (engine/command_port.h): CMD_IN0..7 written (the registers keep the last
  // command's: unused ones 0), CMD_OP written, CMD_STATUS and CMD_OUT0..7 read, each an MMIO
  // access on the NIC's bus. The errno; *out the answers.
  uint32_t Command(Host& h, cmd::Op op, const std::vector<uint64_t>& in,
                   uint64_t out[cmd::kWords] = nullptr) {
    uint8_t word[8];
    bool ok = true;
    for (size_t i = 0; i < cmd::kWords; ++i) {
      Put<uint64_t>(word, i < in.size() ? in[i] : 0);
      ok = ok && Mmio(h, tlm::TLM_WRITE_COMMAND, cmd::kInOffset + 8 * i, word, 8);
    }
    Put<uint32_t>(word, static_cast<uint32_t>(op));
    ok = ok && Mmio(h, tlm::TLM_WRITE_COMMAND, cmd::kOpOffset, word, 4) &&
         Mmio(h, tlm::TLM_READ_COMMAND, cmd::kStatusOffset, word, 4);
    const uint32_t status = ok ? Get<uint32_t>(word) : EIO;
    for (int i = 0; out != nullptr && i < cmd::kWords; ++i) {
      ok = ok && Mmio(h, tlm::TLM_READ_COMMAND, cmd::kOutOffset + 8 * i, word, 8);
      out[i] = Get<uint64_t>(word);
    }
    commands.write(commands.read() + 1);
    return ok ? status : EIO;
  }

  // The driver's set-up, as it asks firmware: queue memory (a window of the DRAM per NIC),
  // the port's GID, a PD, a region in the DRAM, a CQ with its interrupt, an RC QP.
  bool Open(int slot, Host* h) {
    using namespace qptwin;
    h->slot = slot;
    h->region = kDramBase + 0x20'0000 + slot * kRegion;
    h->vector = 0xfee0'0000u + static_cast<uint32_t>(slot);
    uint64_t o[cmd::kWords];
    if (Command(*h, cmd::Op::kQueueMemory, {kDramBase + 0x10'0000 + slot * 0x4'0000, 0x4'0000}) != 0 ||
        Command(*h, cmd::Op::kQueryPort, {1}, o) != 0) {
      return false;
    }
    h->gid[0] = o[0];
    h->gid[1] = o[1];
    if (Command(*h, cmd::Op::kAllocPd, {}, o) != 0) return false;
    h->pd = o[0];
    if (Command(*h, cmd::Op::kRegMr, {h->pd, h->region, kRegion, access::kAll}, o) != 0) return false;
    h->lkey = static_cast<uint32_t>(o[0]);
    h->rkey = static_cast<uint32_t>(o[1]);
    if (Command(*h, cmd::Op::kCreateCq, {64, kMsiBase + 4 * uint64_t(slot), h->vector, 1}, o) != 0) {
      return false;
    }
    h->cqr.cqn = static_cast<uint32_t>(o[0]);
    h->cqr.addr = o[1];
    h->cqr.record = o[2];
    h->cqr.slots = static_cast<uint32_t>(o[3]);
    const uint64_t cqs = uint64_t{h->cqr.cqn} | uint64_t{h->cqr.cqn} << 32;
    if (Command(*h, cmd::Op::kCreateQp,
                {static_cast<uint64_t>(QpType::kRc), h->pd, cqs, 16 | uint64_t{16} << 32, 1 | 1 << 16},
                o) != 0) {
      return false;
    }
    h->sq.qpn = static_cast<uint32_t>(o[0]);
    h->sq.addr = o[1];
    h->sq.slots = static_cast<uint32_t>(o[2]);
    h->sq.stride = static_cast<uint32_t>(o[2] >> 32);
    h->rq.addr = o[3];
    h->rq.record = o[4];
    h->rq.slots = static_cast<uint32_t>(o[5]);
    h->rq.stride = static_cast<uint32_t>(o[5] >> 32);
    return true;
  }

  // RESET -> INIT -> RTR -> RTS towards `peer`, each step a MODIFY_QP on the legality
  // table's minimum mask (perftest's values: MTU 1024, timeout 14, 7 retries, PSN 0x100).
  bool Connect(Host& h, const Host& peer) {
    using qptwin::QpState;
    const QpState path[] = {QpState::kReset, QpState::kInit, QpState::kRtr, QpState::kRts};
    for (int i = 0; i + 1 < 4; ++i) {
      const uint64_t mask = qptwin::MinimumMask(qptwin::QpType::kRc, path[i], path[i + 1]);
      const uint64_t in2 = static_cast<uint64_t>(path[i + 1]) |
                           static_cast<uint64_t>(qptwin::Mtu::k1024) << 16 | uint64_t{1} << 24 |
                           uint64_t{14} << 48 | uint64_t{12} << 56;
      const uint64_t in5 = uint64_t{qptwin::access::kAll} | uint64_t{7} << 32 |
                           uint64_t{7} << 40 | uint64_t{1} << 48 | uint64_t{1} << 56;
      if (Command(h, cmd::Op::kModifyQp, {h.sq.qpn, mask, in2, peer.sq.qpn,
                                          0x100 | uint64_t{0x100} << 32, in5, peer.gid[0],
                                          peer.gid[1]}) != 0) {
        return false;
      }
    }
    return true;
  }

  // A send WQE (model/engine/send_wqe_image.h) with one SGE, signaled, at the producer.
  void WriteSendWqe(Host& h, uint64_t wr_id, qptwin::WrOpcode op, uint64_t addr, uint32_t len,
                    uint64_t remote_addr, uint32_t rkey) {
    uint8_t* w = TheDram()->At(h.sq.addr + uint64_t{h.sq.producer % h.sq.slots} * h.sq.stride);
    std::memset(w, 0, h.sq.stride);
    Put<uint64_t>(w + 0, wr_id);
    Put<uint64_t>(w + 8, remote_addr);
    Put<uint32_t>(w + 48, static_cast<uint32_t>(op));
    Put<uint32_t>(w + 52, qptwin::send_flag::kSignaled);
    Put<uint32_t>(w + 60, rkey);
    Put<uint32_t>(w + 92, 1);
    Put<uint32_t>(w + 100, h.sq.producer + 1);  // the WQE's index + 1
    Put<uint64_t>(w + 112, addr);
    Put<uint32_t>(w + 120, len);
    Put<uint32_t>(w + 124, h.lkey);
    ++h.sq.producer;
  }

  // The doorbell: QP number and producer, one 8-byte write through the NIC's MMIO bus.
  void Ring(Host& h) {
    uint8_t word[8];
    Put<uint32_t>(word, h.sq.qpn);
    Put<uint32_t>(word + 4, h.sq.producer);
    Check(Mmio(h, tlm::TLM_WRITE_COMMAND, Nic::kDoorbellOffset, word, 8),
          "the NIC took the doorbell of mdev" + std::to_string(h.slot));
    doorbells.write(doorbells.read() + 1);
  }

  // The CQ's arm (model/sim/platform.h contract 8): CQ number, then the driver's consumer
  // index; an interrupt at the next CQE (or at once, were CQEs waiting untaken).
  void Arm(Host& h) {
    uint8_t word[8];
    Put<uint32_t>(word, h.cqr.cqn);
    Put<uint32_t>(word + 4, h.cq_taken & 0xffffff);
    Check(Mmio(h, tlm::TLM_WRITE_COMMAND, Nic::kCqArmOffset, word, 8),
          "the NIC took the CQ arm of mdev" + std::to_string(h.slot));
  }

  bool Mmio(Host& h, tlm::tlm_command command, uint64_t offset, uint8_t* data, unsigned len) {
    tlm::tlm_generic_payload gp;
    gp.set_command(command);
    gp.set_address(offset);
    gp.set_data_ptr(data);
    gp.set_data_length(len);
    gp.set_streaming_width(len);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    (h.slot == 0 ? mmio0 : mmio1)->b_transport(gp, delay);
    wait(delay);  // the access's time on the way, as an LT initiator spends it
    return gp.is_response_ok();
  }

  // A receive WQE (model/engine/recv_queue.h contract 2) and the new producer in the record.
  void PostReceive(Host& h, uint64_t wr_id, uint64_t addr, uint32_t len) {
    uint8_t* w = TheDram()->At(h.rq.addr + uint64_t{h.rq.producer % h.rq.slots} * h.rq.stride);
    std::memset(w, 0, h.rq.stride);
    Put<uint32_t>(w, 1);
    Put<uint64_t>(w + 8, wr_id);
    Put<uint64_t>(w + 16, addr);
    Put<uint32_t>(w + 24, len);
    Put<uint32_t>(w + 28, h.lkey);
    Put<uint32_t>(TheDram()->At(h.rq.record), ++h.rq.producer);
  }

  // Polls the CQ ring every 100 ns until a CQE of this pass is there (model/engine/cq.h
  // contract 5: byte 63 the owner), takes it and writes the consumer record; *tries: the
  // polls that found none.
  bool TakeCqe(Host& h, uint64_t* wr_id, uint8_t* status, uint8_t* opcode, int* tries_out = nullptr) {
    for (int tries = 0; tries < 100000; ++tries) {
      if (tries_out) *tries_out = tries;
      const uint8_t* cqe =
          TheDram()->At(h.cqr.addr + uint64_t{h.cq_taken % h.cqr.slots} * 64);
      if (cqe[63] == (((h.cq_taken / h.cqr.slots) & 1) ^ 1)) {
        *wr_id = Get<uint64_t>(cqe);
        *status = cqe[32];
        *opcode = cqe[33];
        Put<uint32_t>(TheDram()->At(h.cqr.record), ++h.cq_taken);
        (h.slot == 0 ? cqes_a : cqes_b).write(static_cast<int>(h.cq_taken));
        return true;
      }
      wait(100, sc_core::SC_NS);
    }
    return false;
  }

  void Done() {
    wait(10, sc_core::SC_NS);  // the signals' last values reach the VCD
    if (++done_ == 2) sc_core::sc_stop();
  }

  void HostA() {
    using namespace qptwin;
    // Set-up by the NICs' commands (a driver asks its firmware): both hosts' queues.
    Check(Open(0, &a_) && Open(1, &b_), "set up both NICs, queues and regions in the DRAM");
    Check(Connect(a_, b_) && Connect(b_, a_), "both QPs to RTS");
    if (failures) return sc_core::sc_stop();
    ready_ = true;
    ready_event_.notify();
    if (!receive_posted_) wait(receive_posted_event_);
    // From here no verbs call: the driver's WQEs, doorbell and CQ poll.
    uint8_t* src = TheDram()->At(a_.region);
    for (size_t i = 0; i < 4096 + 1024; ++i) src[i] = static_cast<uint8_t>(i * 13 + 5);
    WriteSendWqe(a_, 1, WrOpcode::kRdmaWrite, a_.region, 4096, b_.region, b_.rkey);
    WriteSendWqe(a_, 2, WrOpcode::kSend, a_.region + 4096, 1024, 0, 0);
    const sc_core::sc_time rung = sc_core::sc_time_stamp();
    Ring(a_);
    for (uint64_t want = 1; want <= 2; ++want) {
      uint64_t wr_id = 0;
      uint8_t status = 0xff, opcode = 0xff;
      Check(TakeCqe(a_, &wr_id, &status, &opcode), "a CQE on mdev0's CQ");
      Check(wr_id == want && status == static_cast<uint8_t>(WcStatus::kSuccess),
            "CQE " + std::to_string(want) + ": wr_id " + std::to_string(wr_id) + ", status " +
                std::to_string(status));
    }
    Check(std::memcmp(src, TheDram()->At(b_.region), 4096) == 0,
          "the WRITE's 4096 bytes are in mdev1's region in the DRAM");
    std::printf("driver_on_model: a WRITE of 4096 B and a SEND of 1024 B, one doorbell, both "
                "CQEs taken %s after it\n",
                (sc_core::sc_time_stamp() - rung).to_string().c_str());
    Done();
  }

  void HostB() {
    if (!ready_) wait(ready_event_);
    PostReceive(b_, 7, b_.region + 8192, 1024);
    Arm(b_);  // before A rings: the interrupt cannot be missed
    receive_posted_ = true;
    receive_posted_event_.notify();
    // Sleeps until the NIC's interrupt; the CQE is in the DRAM by then (the NIC wrote it
    // first on the same path).
    const sc_core::sc_time slept = sc_core::sc_time_stamp();
    wait(TheDram()->irq[1]);
    interrupts_b.write(interrupts_b.read() + 1);
    Check(Get<uint32_t>(TheDram()->At(kMsiBase + 4)) == b_.vector, "the interrupt's vector");
    std::printf("driver_on_model: mdev1's interrupt woke host B %s after it slept\n",
                (sc_core::sc_time_stamp() - slept).to_string().c_str());
    uint64_t wr_id = 0;
    uint8_t status = 0xff, opcode = 0xff;
    int empty_polls = -1;
    Check(TakeCqe(b_, &wr_id, &status, &opcode, &empty_polls), "a CQE on mdev1's CQ");
    Check(empty_polls == 0, "the CQE was there when the interrupt came");
    Check(wr_id == 7 && status == static_cast<uint8_t>(qptwin::WcStatus::kSuccess) &&
              opcode == static_cast<uint8_t>(qptwin::WcOpcode::kRecv),
          "the receive's CQE");
    Check(std::memcmp(TheDram()->At(a_.region + 4096), TheDram()->At(b_.region + 8192), 1024) == 0,
          "the SEND's 1024 bytes are in the receive's buffer in the DRAM");
    Done();
  }

  Host a_, b_;
  bool ready_ = false, receive_posted_ = false;
  sc_core::sc_event ready_event_, receive_posted_event_;
  int done_ = 0;
};

}  // namespace

int sc_main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : ".";
  // The platform: the DRAM, a bus and a NIC per host, the fabric between the NICs.
  Dram& dram = *TheDram();
  MmioBus bus_a("bus_a"), bus_b("bus_b");
  Nic nic_a("nic_a"), nic_b("nic_b");  // cx6-100g, the model's mdev0 and mdev1
  qptwin::sc::Fabric fabric("fabric", 2);
  Drivers drivers("drivers");
  drivers.mmio0.bind(bus_a.in);
  drivers.mmio1.bind(bus_b.in);
  bus_a.to_nic.bind(nic_a.mmio);
  bus_b.to_nic.bind(nic_b.mmio);
  for (Nic* nic : {&nic_a, &nic_b}) {
    nic->dma.bind(dram.port);
    nic->net_out.bind(fabric.in(nic->index()));
    fabric.out(nic->index()).bind(nic->net_in);
  }
  sc_core::sc_trace_file* tf = sc_core::sc_create_vcd_trace_file((out + "/driver_on_model").c_str());
  if (!tf) {
    std::fprintf(stderr, "driver_on_model: cannot write %s/driver_on_model.vcd\n", out.c_str());
    return 2;
  }
  sc_core::sc_trace(tf, drivers.cqes_a, "cqes_a");
  sc_core::sc_trace(tf, drivers.cqes_b, "cqes_b");
  sc_core::sc_trace(tf, drivers.doorbells, "doorbells");
  sc_core::sc_trace(tf, drivers.interrupts_b, "interrupts_b");
  sc_core::sc_trace(tf, drivers.commands, "commands");
  nic_a.Trace(tf, 1);
  nic_b.Trace(tf, 1);
  sc_core::sc_start();  // the drivers stop the simulation when both are done
  sc_core::sc_close_vcd_trace_file(tf);
  for (const auto& [what, n] : dram.seen) std::printf("driver_on_model: DRAM %s x%d\n", what.c_str(), n);
  std::printf("driver_on_model: %d commands set both NICs up\n", drivers.commands.read());
  Check(drivers.commands.read() == 18, "18 commands: 6 to set each NIC up, 3 to connect each QP");
  Check(dram.seen["nic SEND_WQE"] == 1, "the NIC fetched both send WQEs in one read");
  Check(dram.seen["cpu SEND_WQE"] == 0 && dram.seen["cpu RECV_WQE"] == 0,
        "no verbs post wrote a WQE");
  Check(dram.seen["nic CQE"] == 3, "three CQEs written into the DRAM");
  Check(dram.seen["nic CQ_EVENT"] == 1, "one interrupt: host B's one arm");
  Check(dram.seen["nic WRITE_DATA"] >= 1 && dram.seen["nic PAYLOAD_READ"] >= 2,
        "the payloads moved through the DRAM");
  if (failures == 0) std::printf("driver_on_model: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
