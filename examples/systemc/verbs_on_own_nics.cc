// The verbs on NICs a SystemC user made and bound in its own platform (issue 12;
// model/systemc/nic.h contract 6): this sc_main makes a DRAM module, two qptwin::sc::Nic
// modules and the Fabric from the public headers, binds their sockets, and one thread
// process of the user's makes verbs calls on the Nics' Backend (Nic::backend()): the
// device, a PD, regions and queues placed in the DRAM at bus addresses, the QPs moved to
// RTS, an RC WRITE and a SEND posted and waited for with SystemC's wait. Nothing of the
// verbs' lives in this process's memory: every byte the NICs and the provider's CPU move
// is a transaction on the DRAM's socket.
//
//   verbs_on_own_nics [OUT_DIR]   writes OUT_DIR/verbs_on_own_nics.vcd (default: .)
//
// What it checks, on two cx6-100g NICs (nic_a and nic_b, the Backend's mdev0 and mdev1):
//  - the WRITE's 4 KiB and the SEND's 1 KiB are in b's region in the DRAM, byte for byte,
//    and each WR completes SUCCESS with its wr_id and opcode;
//  - the DRAM saw the provider's CPU write the send and receive WQEs (by_cpu) and the NICs
//    fetch them, read the payloads, write the data and the CQEs;
//  - the model's time is SystemC's after each wait;
//  - the VCD holds the Nics' own signals (link busy, QP number, state and occupancy).
// The exit code is 0 when every check held; each failed check prints a line.
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <set>
#include <string>
#include <vector>

#include "model/model_backend.h"
#include "model/systemc/nic.h"
#include "spec/bring_up.h"

namespace {

using qptwin::sc::DmaExtension;
using qptwin::sc::Nic;

int failures = 0;

void Check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "verbs_on_own_nics: FAILED: %s\n", what.c_str());
    ++failures;
  }
}

constexpr uint64_t kDramBase = 0x2'0000'0000;  // above 4 GiB, as a host's DRAM may be
constexpr uint64_t kDramBytes = 2 << 20;

// The user's memory: a target socket per initiator (each NIC's dma); 40 ns per access; what
// each transaction was for, counted ("cpu ..." for the provider's CPU, nic.h contract 3).
class Dram : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Dram> port;
  std::vector<uint8_t> bytes = std::vector<uint8_t>(kDramBytes);
  std::map<std::string, int> seen;
  int untagged = 0;  // transactions without a DmaExtension (there should be none)

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
    } else {
      ++untagged;
    }
    if (gp.is_write()) {
      std::memcpy(At(a), gp.get_data_ptr(), n);
    } else {
      std::memcpy(gp.get_data_ptr(), At(a), n);
    }
    delay += sc_core::sc_time(40, sc_core::SC_NS);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

// One side's verbs objects; its region and queues at bus addresses of the DRAM.
struct Side {
  std::unique_ptr<qptwin::Device> dev;
  qptwin::PdHandle pd;
  qptwin::MrHandle mr;
  uint64_t region = 0;  // bus address
  uint32_t lkey = 0, rkey = 0;
  qptwin::CqHandle cq;
  qptwin::QpHandle qp;
};

// The sides live until the process exits, after sc_main has destroyed the Nics: a
// program's Devices may outlive its modules (model_backend.h contract 7).
Side* TheSides() {
  static Side sides[2];
  return sides;
}

class Host : public sc_core::sc_module {
 public:
  // The host's MMIO path to each Nic (a TLM target must be bound): the verbs' doorbells
  // reach the Nic directly (nic.h contract 6), a driver of the host's own would use these.
  tlm_utils::simple_initiator_socket<Host> mmio0{"mmio0"}, mmio1{"mmio1"};
  sc_core::sc_signal<int> completions{"completions"};

  SC_HAS_PROCESS(Host);
  Host(sc_core::sc_module_name name, Dram* dram, Nic* nic) : sc_module(name), dram_(dram), nic_(nic) {
    SC_THREAD(Main);
  }

 private:
  static constexpr uint64_t kRegionBytes = 64 * 1024;
  static constexpr uint64_t kQueueBytes = 256 * 1024;

  // Device `k` of the Nics' Backend: its queue window and region in the DRAM, a PD, a CQ
  // and an RC QP.
  bool Open(int k, Side* s) {
    using namespace qptwin;
    qptwin::Backend* be = nic_->backend();
    if (be == nullptr || be->OpenDevice("mdev" + std::to_string(k), &s->dev) != 0) return false;
    const uint64_t queues = kDramBase + 0x10'0000 + k * kQueueBytes;
    s->region = kDramBase + 0x1'0000 + k * kRegionBytes;
    int actual = 0;
    QpInitAttr init;
    QpCap cap;
    // Without a window a queue would be in this process's memory, which the Nic's dma
    // does not reach: refused (nic.h contract 6).
    Check(s->dev->CreateCq(64, ChannelHandle{}, &s->cq, &actual) == EINVAL,
          "a CQ without queue memory on a Nic of the program's is EINVAL");
    if (model::ModelQueueMemoryAt(s->dev.get(), queues, kQueueBytes) != 0 ||
        s->dev->AllocPd(&s->pd) != 0 ||
        model::ModelRegMrAt(s->dev.get(), s->pd, s->region, kRegionBytes, access::kAll, &s->mr,
                            &s->lkey, &s->rkey) != 0 ||
        s->dev->CreateCq(64, ChannelHandle{}, &s->cq, &actual) != 0) {
      return false;
    }
    init.qp_type = QpType::kRc;
    init.pd = s->pd;
    init.send_cq = init.recv_cq = s->cq;
    init.cap = {16, 16, 1, 1, 0};
    return s->dev->CreateQp(init, &s->qp, &cap) == 0;
  }

  // Waits (SystemC's wait, inside the model) for one completion on `s`'s CQ.
  bool WaitOne(Side& s, uint64_t wr_id, qptwin::WcOpcode opcode) {
    std::vector<qptwin::WorkCompletion> wc;
    const int err = s.dev->WaitForCompletions(s.cq, 1, 1000000, &wc);
    completions.write(completions.read() + static_cast<int>(wc.size()));
    return err == 0 && wc.size() == 1 && wc[0].wr_id == wr_id &&
           wc[0].status == qptwin::WcStatus::kSuccess && wc[0].opcode == opcode;
  }

  uint64_t KernelNs() const { return sc_core::sc_time_stamp().value() / 1000; }  // 1 ps

  void Main() {
    using namespace qptwin;
    Check(nic_->backend() != nullptr, "the Nics' Backend was made in elaboration");
    Side& a = TheSides()[0];
    Side& b = TheSides()[1];
    Check(Open(0, &a) && Open(1, &b), "open mdev0 and mdev1 and make their objects in the DRAM");
    if (failures) return sc_core::sc_stop();
    Check(ConnectPair(*a.dev, a.qp, *b.dev, b.qp, BringUpParams{}) == 0, "both QPs to RTS");
    size_t bad = 0;

    // An RDMA WRITE of 4 KiB from a's region into b's.
    for (int i = 0; i < 4096; ++i) dram_->At(a.region)[i] = static_cast<uint8_t>(i * 11 + 3);
    SendWr write;
    write.wr_id = 1;
    write.opcode = WrOpcode::kRdmaWrite;
    write.send_flags = send_flag::kSignaled;
    write.sg_list = {{a.region, 4096, a.lkey}};
    write.remote_addr = b.region;
    write.rkey = b.rkey;
    const uint64_t posted_at = KernelNs();
    Check(a.dev->PostSend(a.qp, {write}, &bad) == 0, "post the WRITE");
    Check(WaitOne(a, 1, WcOpcode::kRdmaWrite), "the WRITE completes successfully");
    const uint64_t write_ns = KernelNs() - posted_at;
    Check(write_ns > 0, "SystemC's time passed while the WRITE went");
    Check(nic_->backend()->NowNs() == KernelNs(), "the model's time is SystemC's after the wait");
    Check(std::memcmp(dram_->At(a.region), dram_->At(b.region), 4096) == 0,
          "the WRITE's 4096 bytes are in b's region in the DRAM");

    // A SEND of 1 KiB into a receive b posts at 8 KiB into its region.
    RecvWr recv;
    recv.wr_id = 7;
    recv.sg_list = {{b.region + 8192, 1024, b.lkey}};
    Check(b.dev->PostRecv(b.qp, {recv}, &bad) == 0, "post the receive");
    SendWr send;
    send.wr_id = 2;
    send.opcode = WrOpcode::kSend;
    send.send_flags = send_flag::kSignaled;
    send.sg_list = {{a.region + 4096, 1024, a.lkey}};
    for (int i = 0; i < 1024; ++i) dram_->At(a.region + 4096)[i] = static_cast<uint8_t>(i * 5 + 9);
    Check(a.dev->PostSend(a.qp, {send}, &bad) == 0, "post the SEND");
    Check(WaitOne(a, 2, WcOpcode::kSend), "the SEND completes successfully");
    Check(WaitOne(b, 7, WcOpcode::kRecv), "the receive completes successfully");
    Check(std::memcmp(dram_->At(a.region + 4096), dram_->At(b.region + 8192), 1024) == 0,
          "the SEND's 1024 bytes are in the receive's buffer in the DRAM");
    std::printf("verbs_on_own_nics: the WRITE took %llu ns of SystemC time from its post\n",
                static_cast<unsigned long long>(write_ns));
    wait(1, sc_core::SC_NS);  // the last completions' value reaches the VCD
    sc_core::sc_stop();
  }

  Dram* dram_;
  Nic* nic_;
};

}  // namespace

int sc_main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : ".";
  Dram dram("dram");
  Nic nic_a("nic_a"), nic_b("nic_b");  // cx6-100g: the Backend's mdev0 and mdev1
  qptwin::sc::Fabric fabric("fabric", 2);
  Host host("host", &dram, &nic_a);
  host.mmio0.bind(nic_a.mmio);
  host.mmio1.bind(nic_b.mmio);
  for (Nic* nic : {&nic_a, &nic_b}) {
    nic->dma.bind(dram.port);
    nic->net_out.bind(fabric.in(nic->index()));
    fabric.out(nic->index()).bind(nic->net_in);
  }
  sc_core::sc_trace_file* tf =
      sc_core::sc_create_vcd_trace_file((out + "/verbs_on_own_nics").c_str());
  if (!tf) {
    std::fprintf(stderr, "verbs_on_own_nics: cannot write %s/verbs_on_own_nics.vcd\n", out.c_str());
    return 2;
  }
  sc_core::sc_trace(tf, host.completions, "completions");
  nic_a.Trace(tf, 1);
  nic_b.Trace(tf, 1);
  sc_core::sc_start();
  sc_core::sc_close_vcd_trace_file(tf);
  for (const auto& [what, n] : dram.seen) std::printf("verbs_on_own_nics: DRAM %s x%d\n", what.c_str(), n);
  Check(dram.untagged == 0, "every DRAM transaction carries its DmaExtension");
  Check(dram.seen["cpu SEND_WQE"] == 2 && dram.seen["nic SEND_WQE"] == 2,
        "the provider's CPU wrote two send WQEs into the DRAM, the NIC fetched them");
  Check(dram.seen["cpu RECV_WQE"] == 1 && dram.seen["nic RECV_WQE"] >= 1,
        "the receive's WQE went through the DRAM");
  Check(dram.seen["nic CQE"] == 3, "three CQEs written into the DRAM");
  Check(dram.seen["nic PAYLOAD_READ"] >= 2 && dram.seen["nic WRITE_DATA"] >= 1,
        "the payloads moved through the DRAM");
  // nic.h contract 7: each block of a Nic is a SystemC process of its own, its child (the
  // first Nic also has the World's own two).
  std::set<std::string> processes;
  for (const sc_core::sc_object* child : nic_a.get_child_objects()) {
    if (std::string(child->kind()) == "sc_method_process") processes.insert(child->basename());
  }
  std::printf("verbs_on_own_nics: nic_a's processes:");
  for (const std::string& p : processes) std::printf(" %s", p.c_str());
  std::printf("\n");
  for (const char* block : {"port", "send_engine", "completer", "transport_timer", "rnr_timer",
                            "retry_loop", "answer_wait", "roce_out", "cqe_visible", "roce_in"}) {
    Check(processes.erase(block) == 1, std::string("nic_a.") + block + " is an SC_METHOD of nic_a");
  }
  Check(processes.empty(), "nic_a has no other process");
  if (failures == 0) std::printf("verbs_on_own_nics: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
