// A user's own virtual platform with the qptwin SystemC NIC, from the public headers only:
// two hosts (a memory model and a small driver each), two NICs and a switch. Host A writes
// 64 bytes into host B's memory with an RC RDMA WRITE, then SENDs a message into a receive B
// posted; both check the bytes. A VCD of queue occupancy, QP state and link busy is written.
//
//   bazel run //examples/systemc:two_hosts -- /tmp/out   (writes /tmp/out/two_hosts.vcd)
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "model/profile.h"
#include "model/systemc/layout.h"
#include "model/systemc/memory.h"
#include "model/systemc/net.h"
#include "model/systemc/nic.h"

namespace {

namespace qsc = qptwin::sc;
using sc_core::sc_time;
using sc_core::SC_NS;
using sc_core::SC_US;

// Host memory map of this platform (the same on both hosts).
constexpr uint64_t kCq = 0x10000;     // one CQ of 16 CQEs
constexpr uint32_t kCqEntries = 16;
constexpr uint64_t kSq = 0x20000;     // SQ of 16 WQEs
constexpr uint64_t kRq = 0x30000;     // RQ of 16 WQEs
constexpr uint32_t kEntries = 16;
constexpr uint64_t kBuf = 0x100000;   // 64 KiB of data
constexpr uint32_t kQpn = 1, kCqn = 0, kKey = 0x1234, kPd = 7;
constexpr uint32_t kWriteBytes = 64;
const char kMessage[] = "SEND from host A to host B";

bool g_failed = false;
void Check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  if (!ok) g_failed = true;
}

// The host's software: an SC_THREAD that writes WQEs into its memory and rings doorbells.
class Driver : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Driver> mmio;  // -> the NIC's registers
  tlm_utils::simple_initiator_socket<Driver> mem;   // -> its own memory
  sc_core::sc_event* peer_ready = nullptr;          // B tells A its receive is posted
  sc_core::sc_event ready;
  bool done = false;

  Driver(sc_core::sc_module_name n, bool sender, uint32_t peer_port)
      : sc_module(n), mmio("mmio"), mem("mem"), sender_(sender), peer_port_(peer_port) {
    SC_HAS_PROCESS(Driver);
    SC_THREAD(Main);
  }

 private:
  void Access(tlm_utils::simple_initiator_socket<Driver>& s, tlm::tlm_command cmd,
              uint64_t addr, void* data, uint32_t len) {
    tlm::tlm_generic_payload gp;
    gp.set_command(cmd);
    gp.set_address(addr);
    gp.set_data_ptr(static_cast<unsigned char*>(data));
    gp.set_data_length(len);
    gp.set_streaming_width(len);
    sc_time delay = sc_core::SC_ZERO_TIME;
    s->b_transport(gp, delay);
    if (!gp.is_response_ok()) Check(false, "bus access");
    wait(delay);
  }
  void Reg(uint64_t addr, uint64_t v, uint32_t len) {
    Access(mmio, tlm::TLM_WRITE_COMMAND, addr, &v, len);
  }
  uint32_t Command(qsc::CmdOp op, std::initializer_list<uint64_t> args) {
    int i = 0;
    for (uint64_t a : args) Reg(qsc::kRegCmdArg0 + 8 * i++, a, 8);
    for (; i < qsc::kCmdArgs; ++i) Reg(qsc::kRegCmdArg0 + 8 * i, 0, 8);
    Reg(qsc::kRegCmdOp, static_cast<uint32_t>(op), 4);
    uint32_t status = 0;
    Access(mmio, tlm::TLM_READ_COMMAND, qsc::kRegCmdStatus, &status, 4);
    return status;
  }
  void Post(uint64_t ring, uint32_t& pi, const qsc::Wqe& w, uint64_t doorbell) {
    uint8_t raw[qsc::kWqeBytes];
    qsc::EncodeWqe(w, raw);
    Access(mem, tlm::TLM_WRITE_COMMAND, ring + (pi++ % kEntries) * qsc::kWqeBytes, raw,
           sizeof raw);
    Reg(doorbell, pi, 4);
  }
  // Polls the CQ every 100 ns, as a CPU would spin on ibv_poll_cq.
  qsc::Cqe WaitCqe() {
    for (;;) {
      uint8_t raw[qsc::kCqeBytes];
      Access(mem, tlm::TLM_READ_COMMAND, kCq + (ci_ % kCqEntries) * qsc::kCqeBytes, raw,
             sizeof raw);
      const qsc::Cqe c = qsc::DecodeCqe(raw);
      if (c.owner == qsc::OwnerOf(ci_, kCqEntries)) {
        ++ci_;
        return c;
      }
      wait(100, SC_NS);
    }
  }
  void Setup() {
    using namespace qptwin::attr;  // NOLINT: the modify masks read as the kernel's table
    const uint64_t access = qptwin::access::kLocalWrite | qptwin::access::kRemoteWrite;
    bool ok = Command(qsc::CmdOp::kCreateCq, {kCqn, kCq, kCqEntries}) == 0 &&
              Command(qsc::CmdOp::kCreateQp,
                      {kQpn, static_cast<uint64_t>(qptwin::QpType::kRc), kSq, kEntries, kRq,
                       kEntries, kCqn | uint64_t{kCqn} << 32, kPd}) == 0 &&
              Command(qsc::CmdOp::kRegMr, {kKey, kPd, kBuf, 0x10000, access}) == 0 &&
              Command(qsc::CmdOp::kModifyQp,
                      {kQpn, kState | kPkeyIndex | kPort | kAccessFlags,
                       uint64_t(qptwin::QpState::kInit), 0, 0, 0, access}) == 0 &&
              Command(qsc::CmdOp::kModifyQp,
                      {kQpn, kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic |
                                 kMinRnrTimer,
                       uint64_t(qptwin::QpState::kRtr), peer_port_, kQpn, 0}) == 0 &&
              Command(qsc::CmdOp::kModifyQp,
                      {kQpn, kState | kTimeout | kRetryCnt | kRnrRetry | kSqPsn | kMaxQpRdAtomic,
                       uint64_t(qptwin::QpState::kRts), 0, 0, 0}) == 0;
    Check(ok, sender_ ? "host A: CQ, QP, MR created, QP in RTS" : "host B: CQ, QP, MR, RTS");
  }
  void Main() {
    Setup();
    if (sender_) {
      wait(*peer_ready);
      uint8_t data[kWriteBytes];
      for (uint32_t i = 0; i < kWriteBytes; ++i) data[i] = static_cast<uint8_t>(i * 7 + 1);
      Access(mem, tlm::TLM_WRITE_COMMAND, kBuf, data, kWriteBytes);
      qsc::Wqe w;
      w.opcode = qptwin::WrOpcode::kRdmaWrite;
      w.flags = qptwin::send_flag::kSignaled;
      w.wr_id = 1;
      w.addr = kBuf;
      w.length = kWriteBytes;
      w.lkey = kKey;
      w.remote_addr = kBuf + 0x1000;
      w.rkey = kKey;
      const sc_time rung = sc_core::sc_time_stamp();
      Post(kSq, sq_pi_, w, qsc::SqDoorbell(kQpn));
      qsc::Cqe c = WaitCqe();
      std::printf("host A: WRITE completed after %s\n", (sc_core::sc_time_stamp() - rung).to_string().c_str());
      Check(c.status == qptwin::WcStatus::kSuccess && c.wr_id == 1, "host A: WRITE CQE success");
      Access(mem, tlm::TLM_WRITE_COMMAND, kBuf + 0x100, const_cast<char*>(kMessage),
             sizeof kMessage);
      w.opcode = qptwin::WrOpcode::kSend;
      w.wr_id = 2;
      w.addr = kBuf + 0x100;
      w.length = sizeof kMessage;
      Post(kSq, sq_pi_, w, qsc::SqDoorbell(kQpn));
      c = WaitCqe();
      Check(c.status == qptwin::WcStatus::kSuccess && c.wr_id == 2, "host A: SEND CQE success");
    } else {
      qsc::Wqe r;
      r.wr_id = 100;
      r.addr = kBuf + 0x2000;
      r.length = 256;
      r.lkey = kKey;
      Post(kRq, rq_pi_, r, qsc::RqDoorbell(kQpn));
      ready.notify(sc_core::SC_ZERO_TIME);
      const qsc::Cqe c = WaitCqe();
      Check(c.status == qptwin::WcStatus::kSuccess && c.wr_id == 100 &&
                c.opcode == qptwin::WcOpcode::kRecv && c.byte_len == sizeof kMessage,
            "host B: receive CQE for the SEND");
      char got[sizeof kMessage] = {};
      Access(mem, tlm::TLM_READ_COMMAND, kBuf + 0x2000, got, sizeof got);
      Check(std::memcmp(got, kMessage, sizeof got) == 0, "host B: SEND data in the receive buffer");
      uint8_t data[kWriteBytes];
      Access(mem, tlm::TLM_READ_COMMAND, kBuf + 0x1000, data, kWriteBytes);
      bool same = true;
      for (uint32_t i = 0; i < kWriteBytes; ++i) same &= data[i] == static_cast<uint8_t>(i * 7 + 1);
      Check(same, "host B: RDMA WRITE data in memory");
    }
    done = true;
  }

  bool sender_;
  uint32_t peer_port_;
  uint32_t sq_pi_ = 0, rq_pi_ = 0, ci_ = 0;
};

}  // namespace

int sc_main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  const qptwin::model::Profile* profile = qptwin::model::FindProfile("cx6-100g");
  const qptwin::model::Timing& timing = profile->timing;

  // Elaboration: the modules and their bindings, all before sc_start.
  qsc::Switch sw("switch", 2, timing.link);
  qsc::Memory mem_a("mem_a"), mem_b("mem_b");
  for (qsc::Memory* m : {&mem_a, &mem_b}) {
    m->Map(kCq, 0x30000);  // CQ, SQ, RQ
    m->Map(kBuf, 0x10000);
  }
  qsc::NicConfig cfg_a, cfg_b;
  cfg_a.port_id = 0;
  cfg_b.port_id = 1;
  cfg_a.timing = cfg_b.timing = timing;
  qsc::Nic nic_a("nic_a", cfg_a), nic_b("nic_b", cfg_b);
  Driver host_a("host_a", true, 1), host_b("host_b", false, 0);
  host_a.peer_ready = &host_b.ready;
  for (auto [host, nic, mem, port] : {std::tuple{&host_a, &nic_a, &mem_a, 0},
                                      std::tuple{&host_b, &nic_b, &mem_b, 1}}) {
    host->mmio.bind(nic->mmio);  // doorbells and commands
    host->mem.bind(mem->cpu);    // the driver's own memory accesses
    nic->dma.bind(mem->nic);     // every DMA of the NIC
    nic->net_out.bind(sw.in(port));  // the network: port `port` of the switch
    sw.out(port).bind(nic->net_in);
  }
  // Every DMA of NIC A with its time (a user's memory or interconnect model sees the same).
  mem_a.on_access = [](const tlm::tlm_generic_payload& gp, const sc_time& at) {
    std::printf("  dma nic_a %-5s 0x%06llx %4u B at %s\n", gp.is_read() ? "read" : "write",
                static_cast<unsigned long long>(gp.get_address()), gp.get_data_length(),
                at.to_string().c_str());
  };

  sc_core::sc_trace_file* tf = sc_core::sc_create_vcd_trace_file((dir + "/two_hosts").c_str());
  tf->set_time_unit(1, sc_core::SC_PS);  // wire times are exact in ps
  nic_a.Trace(tf, {kQpn});
  nic_b.Trace(tf, {kQpn});

  sc_core::sc_start(sc_time(1, sc_core::SC_MS));
  sc_core::sc_close_vcd_trace_file(tf);
  Check(host_a.done && host_b.done, "both drivers finished within 1 ms of simulated time");
  std::printf("%s: two_hosts example, %llu packets sent by nic_a, VCD %s/two_hosts.vcd\n",
              g_failed ? "FAIL" : "PASS", static_cast<unsigned long long>(nic_a.packets_sent()),
              dir.c_str());
  return g_failed ? 1 : 0;
}
