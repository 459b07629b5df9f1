// The verbs-level model inside a SystemC user's own simulation (model/sim/sc_clock.h
// contract 8): this sc_main calls sc_start itself, and its own thread process is the host's
// driver. The driver makes verbs calls on a model Backend (the engine: the QP state
// machine, the transport, the profile's timing, every DMA through the platform's TLM
// sockets); a call that waits (WaitForCompletions) waits with SystemC's wait(), so the
// program's other processes run meanwhile, on the one scheduler.
//
//   verbs_in_simulation [OUT_DIR]   writes OUT_DIR/verbs_in_simulation.vcd (default: .)
//
// What it does, on two cx6-100g NICs (mdev0, mdev1) through the platform's fabric:
//  - an RC RDMA WRITE of 4 KiB from mdev0 into mdev1's region, then a SEND of 1 KiB into a
//    receive posted on mdev1; the data is checked byte for byte;
//  - a ticker process wakes every 100 ns meanwhile (the proof that the model's waits are
//    SystemC's: it counts the simulated time the driver waited);
//  - the VCD holds the NICs' own signals (model/sim/platform.h contract 10: each port's
//    link_busy, and per QP its number, state, send and receive queue occupancy, at the
//    engine's times), the driver's view (QP states as it queried them, its send queue's
//    occupancy, the completions it has seen) and the ticker.
// The exit code is 0 when every check held; each failed check prints a line.
#include <systemc>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "model/model_backend.h"
#include "model/sim/platform.h"
#include "spec/bring_up.h"

namespace {

int failures = 0;

void Check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "verbs_in_simulation: FAILED: %s\n", what.c_str());
    ++failures;
  }
}

uint64_t KernelNs() {
  return sc_core::sc_time_stamp().value() / sc_core::sc_time(1, sc_core::SC_NS).value();
}

// One host's side: its device, a region, a CQ and an RC QP.
struct Side {
  std::unique_ptr<qptwin::Device> dev;
  qptwin::PdHandle pd;
  qptwin::MrHandle mr;
  uint8_t* buf = nullptr;
  uint32_t lkey = 0, rkey = 0;
  qptwin::CqHandle cq;
  qptwin::QpHandle qp;
  uint64_t Addr(size_t off) const { return reinterpret_cast<uint64_t>(buf) + off; }
};

class Ticker : public sc_core::sc_module {
 public:
  sc_core::sc_signal<int> ticks{"ticks"};
  SC_HAS_PROCESS(Ticker);
  explicit Ticker(sc_core::sc_module_name name) : sc_module(name) { SC_THREAD(Run); }

 private:
  void Run() {
    for (int n = 1;; ++n) {
      sc_core::wait(100, sc_core::SC_NS);
      ticks.write(n);
    }
  }
};

class Driver : public sc_core::sc_module {
 public:
  sc_core::sc_signal<int> qp_state_a{"qp_state_a"}, qp_state_b{"qp_state_b"};
  sc_core::sc_signal<int> sq_occupancy_a{"sq_occupancy_a"};
  sc_core::sc_signal<int> completions{"completions"};

  SC_HAS_PROCESS(Driver);
  Driver(sc_core::sc_module_name name, qptwin::Backend* backend, const Ticker* ticker)
      : sc_module(name), backend_(backend), ticker_(ticker) {
    SC_THREAD(Run);
  }

 private:
  static constexpr size_t kRegion = 65536;

  bool Open(const std::string& name, Side* s) {
    using namespace qptwin;
    if (backend_->OpenDevice(name, &s->dev) != 0) return false;
    int actual = 0;
    QpInitAttr init;
    QpCap cap;
    if (s->dev->AllocPd(&s->pd) != 0 ||
        s->dev->RegMr(s->pd, kRegion, access::kAll, &s->mr, &s->buf, &s->lkey, &s->rkey) != 0 ||
        s->dev->CreateCq(64, ChannelHandle{}, &s->cq, &actual) != 0) {
      return false;
    }
    init.qp_type = QpType::kRc;
    init.pd = s->pd;
    init.send_cq = init.recv_cq = s->cq;
    init.cap = {16, 16, 1, 1, 0};
    return s->dev->CreateQp(init, &s->qp, &cap) == 0;
  }

  int StateOf(Side& s) {
    qptwin::QpAttr attr;
    qptwin::QpInitAttr init;
    return s.dev->QueryQp(s.qp, &attr, &init) == 0 ? static_cast<int>(attr.qp_state) : -1;
  }

  // Waits (SystemC's wait, inside the model) for one completion on `s`'s CQ.
  bool WaitOne(Side& s, uint64_t wr_id, qptwin::WcOpcode opcode) {
    std::vector<qptwin::WorkCompletion> wc;
    const int err = s.dev->WaitForCompletions(s.cq, 1, 1000000, &wc);
    const bool ok = err == 0 && wc.size() == 1 && wc[0].wr_id == wr_id &&
                    wc[0].status == qptwin::WcStatus::kSuccess && wc[0].opcode == opcode;
    completions.write(completions.read() + static_cast<int>(wc.size()));
    return ok;
  }

  void Run() {
    using namespace qptwin;
    Side a, b;
    Check(Open("mdev0", &a) && Open("mdev1", &b), "open both devices and make their objects");
    if (failures) return sc_core::sc_stop();
    qp_state_a.write(StateOf(a));
    qp_state_b.write(StateOf(b));
    Check(ConnectPair(*a.dev, a.qp, *b.dev, b.qp, BringUpParams{}) == 0, "both QPs to RTS");
    qp_state_a.write(StateOf(a));
    qp_state_b.write(StateOf(b));
    size_t bad = 0;

    // An RDMA WRITE of 4 KiB: a's bytes 0..4095 into b's region at 0.
    for (size_t i = 0; i < 4096; ++i) a.buf[i] = static_cast<uint8_t>(i * 7 + 1);
    SendWr write;
    write.wr_id = 1;
    write.opcode = WrOpcode::kRdmaWrite;
    write.send_flags = send_flag::kSignaled;
    write.sg_list = {{a.Addr(0), 4096, a.lkey}};
    write.remote_addr = b.Addr(0);
    write.rkey = b.rkey;
    const uint64_t posted_at = KernelNs();
    const int ticks_before = ticker_->ticks.read();
    Check(a.dev->PostSend(a.qp, {write}, &bad) == 0, "post the WRITE");
    sq_occupancy_a.write(1);
    Check(WaitOne(a, 1, WcOpcode::kRdmaWrite), "the WRITE completes successfully");
    sq_occupancy_a.write(0);
    const uint64_t write_ns = KernelNs() - posted_at;
    Check(std::memcmp(a.buf, b.buf, 4096) == 0, "the WRITE's 4096 bytes are in b's region");
    Check(backend_->NowNs() == KernelNs(),
          "the model's time is SystemC's after the wait (" + std::to_string(backend_->NowNs()) +
              " vs " + std::to_string(KernelNs()) + " ns)");
    // The ticker ran while the driver waited: one tick per 100 ns of SystemC time.
    const int ticked = ticker_->ticks.read() - ticks_before;
    Check(write_ns > 0 && ticked >= static_cast<int>(write_ns / 100) - 1 &&
              ticked <= static_cast<int>(write_ns / 100) + 1,
          "the ticker ticked " + std::to_string(ticked) + " times in " +
              std::to_string(write_ns) + " ns");

    // A SEND of 1 KiB into a receive posted on b (at offset 8192 of its region).
    for (size_t i = 0; i < 1024; ++i) a.buf[16384 + i] = static_cast<uint8_t>(0xA5 ^ i);
    RecvWr recv;
    recv.wr_id = 2;
    recv.sg_list = {{b.Addr(8192), 1024, b.lkey}};
    Check(b.dev->PostRecv(b.qp, {recv}, &bad) == 0, "post the receive");
    SendWr send;
    send.wr_id = 3;
    send.opcode = WrOpcode::kSend;
    send.send_flags = send_flag::kSignaled;
    send.sg_list = {{a.Addr(16384), 1024, a.lkey}};
    const uint64_t sent_at = KernelNs();
    Check(a.dev->PostSend(a.qp, {send}, &bad) == 0, "post the SEND");
    sq_occupancy_a.write(1);
    Check(WaitOne(b, 2, WcOpcode::kRecv), "the receive completes successfully");
    Check(WaitOne(a, 3, WcOpcode::kSend), "the SEND completes successfully");
    sq_occupancy_a.write(0);
    const uint64_t send_ns = KernelNs() - sent_at;
    Check(std::memcmp(a.buf + 16384, b.buf + 8192, 1024) == 0,
          "the SEND's 1024 bytes are in the receive's buffer");

    std::printf("verbs_in_simulation: RC WRITE 4096 B completed %llu ns after its post, SEND 1024 B "
                "%llu ns; %d ticks of 100 ns; SystemC time %s\n",
                static_cast<unsigned long long>(write_ns), static_cast<unsigned long long>(send_ns),
                ticker_->ticks.read(), sc_core::sc_time_stamp().to_string().c_str());
    sc_core::sc_stop();
  }

  qptwin::Backend* backend_;
  const Ticker* ticker_;
};

}  // namespace

int sc_main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : ".";
  // The model Backend first: it elaborates the model's platform (NIC slots with their TLM
  // sockets, host memory, fabric), which SystemC allows only before sc_start.
  qptwin::model::ModelOptions options;
  options.profile = "cx6-100g";
  std::string why;
  std::unique_ptr<qptwin::Backend> backend = qptwin::model::MakeModelBackend(options, &why);
  if (!backend) {
    std::fprintf(stderr, "verbs_in_simulation: %s\n", why.c_str());
    return 2;
  }
  Ticker ticker("ticker");
  Driver driver("driver", backend.get(), &ticker);
  sc_core::sc_trace_file* tf = sc_core::sc_create_vcd_trace_file((out + "/verbs_in_simulation").c_str());
  if (!tf) {
    std::fprintf(stderr, "verbs_in_simulation: cannot write %s/verbs_in_simulation.vcd\n", out.c_str());
    return 2;
  }
  sc_core::sc_trace(tf, driver.qp_state_a, "qp_state_a");
  sc_core::sc_trace(tf, driver.qp_state_b, "qp_state_b");
  sc_core::sc_trace(tf, driver.sq_occupancy_a, "sq_occupancy_a");
  sc_core::sc_trace(tf, driver.completions, "completions");
  sc_core::sc_trace(tf, ticker.ticks, "ticks");
  // The NICs' own signals: device k of the Backend is the platform's slot k.
  for (int slot = 0; slot < 2; ++slot) qptwin::model::sim::Platform::Get()->slot(slot).Trace(tf, 1);
  // The first message mdev0 sends (the WRITE): when its last byte left the port, which is
  // when nic0's link_busy falls (the test checks the VCD against this line).
  uint64_t write_left_ns = 0;
  qptwin::model::sim::Platform::SetNetObserver([&](const qptwin::model::sim::NetRecord& r) {
    if (r.src_slot == 0 && write_left_ns == 0) write_left_ns = r.leave_ns;
  });
  sc_core::sc_start();  // the driver stops the simulation when it is done
  sc_core::sc_close_vcd_trace_file(tf);
  qptwin::model::sim::Platform::SetNetObserver({});
  std::printf("verbs_in_simulation: the WRITE's last byte left mdev0's port at %llu ns\n",
              static_cast<unsigned long long>(write_left_ns));
  Check(driver.completions.read() == 3, "three completions seen");
  if (failures == 0) std::printf("verbs_in_simulation: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
