// The verbs-level model inside a SystemC user's own simulation (model/sim/sc_clock.h
// contract 8): this sc_main calls sc_start itself, and a thread process per host is that
// host's driver. The drivers make verbs calls on one model Backend (the engine: the QP
// state machine, the transport, the profile's timing, every DMA through the platform's TLM
// sockets); a call that waits (WaitForCompletions) waits with SystemC's wait(), so the
// program's other processes (the other host's driver, a ticker) run meanwhile, on the one
// scheduler.
//
//   verbs_in_simulation [OUT_DIR]   writes OUT_DIR/verbs_in_simulation.vcd (default: .)
//
// What it does, on two cx6-100g NICs (mdev0, mdev1) through the platform's fabric:
//  - host A: an RC RDMA WRITE of 4 KiB from mdev0 into mdev1's region, then a SEND of 1 KiB;
//    host B: a receive posted on mdev1, waited for while A waits for its WRITE (two threads
//    inside the model's waits at once); the data is checked byte for byte;
//  - a ticker process wakes every 100 ns meanwhile (the proof that the model's waits are
//    SystemC's: it counts the simulated time host A waited for the WRITE);
//  - the VCD holds the NICs' own signals (model/sim/platform.h contract 10: each port's
//    link_busy, and per QP its number, state, send and receive queue occupancy, at the
//    engine's times), the drivers' view (QP states as it queried them, its send queue's
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

// The two hosts' software: a thread per host (SC_THREADs of one module), each making the
// verbs calls of its host; host A sets up both sides (one program owns the Backend).
class Drivers : public sc_core::sc_module {
 public:
  sc_core::sc_signal<int> qp_state_a{"qp_state_a"}, qp_state_b{"qp_state_b"};
  sc_core::sc_signal<int> sq_occupancy_a{"sq_occupancy_a"};
  sc_core::sc_signal<int, sc_core::SC_MANY_WRITERS> completions{"completions"};  // both hosts

  SC_HAS_PROCESS(Drivers);
  Drivers(sc_core::sc_module_name name, qptwin::Backend* backend, const Ticker* ticker)
      : sc_module(name), backend_(backend), ticker_(ticker) {
    SC_THREAD(HostA);
    SC_THREAD(HostB);
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

  void Done() {
    if (++done_ == 2) sc_core::sc_stop();
  }

  void HostA() {
    using namespace qptwin;
    Check(Open("mdev0", &a_) && Open("mdev1", &b_), "open both devices and make their objects");
    if (failures) return sc_core::sc_stop();
    qp_state_a.write(StateOf(a_));
    qp_state_b.write(StateOf(b_));
    Check(ConnectPair(*a_.dev, a_.qp, *b_.dev, b_.qp, BringUpParams{}) == 0, "both QPs to RTS");
    qp_state_a.write(StateOf(a_));
    qp_state_b.write(StateOf(b_));
    connected_ = true;
    connected_event_.notify();
    size_t bad = 0;

    // An RDMA WRITE of 4 KiB: a's bytes 0..4095 into b's region at 0. Host B's thread
    // waits for its receive meanwhile: two threads wait inside the model at once.
    for (size_t i = 0; i < 4096; ++i) a_.buf[i] = static_cast<uint8_t>(i * 7 + 1);
    SendWr write;
    write.wr_id = 1;
    write.opcode = WrOpcode::kRdmaWrite;
    write.send_flags = send_flag::kSignaled;
    write.sg_list = {{a_.Addr(0), 4096, a_.lkey}};
    write.remote_addr = b_.Addr(0);
    write.rkey = b_.rkey;
    const uint64_t posted_at = KernelNs();
    const int ticks_before = ticker_->ticks.read();
    Check(a_.dev->PostSend(a_.qp, {write}, &bad) == 0, "post the WRITE");
    sq_occupancy_a.write(1);
    Check(WaitOne(a_, 1, WcOpcode::kRdmaWrite), "the WRITE completes successfully");
    sq_occupancy_a.write(0);
    const uint64_t write_ns = KernelNs() - posted_at;
    Check(std::memcmp(a_.buf, b_.buf, 4096) == 0, "the WRITE's 4096 bytes are in b's region");
    Check(backend_->NowNs() == KernelNs(),
          "the model's time is SystemC's after the wait (" + std::to_string(backend_->NowNs()) +
              " vs " + std::to_string(KernelNs()) + " ns)");
    // The ticker ran while the driver waited: one tick per 100 ns of SystemC time.
    const int ticked = ticker_->ticks.read() - ticks_before;
    Check(write_ns > 0 && ticked >= static_cast<int>(write_ns / 100) - 1 &&
              ticked <= static_cast<int>(write_ns / 100) + 1,
          "the ticker ticked " + std::to_string(ticked) + " times in " +
              std::to_string(write_ns) + " ns");

    // A SEND of 1 KiB into the receive host B posted (at offset 8192 of its region).
    if (!receive_posted_) sc_core::wait(receive_posted_event_);
    for (size_t i = 0; i < 1024; ++i) a_.buf[16384 + i] = static_cast<uint8_t>(0xA5 ^ i);
    SendWr send;
    send.wr_id = 3;
    send.opcode = WrOpcode::kSend;
    send.send_flags = send_flag::kSignaled;
    send.sg_list = {{a_.Addr(16384), 1024, a_.lkey}};
    const uint64_t sent_at = KernelNs();
    Check(a_.dev->PostSend(a_.qp, {send}, &bad) == 0, "post the SEND");
    sq_occupancy_a.write(1);
    Check(WaitOne(a_, 3, WcOpcode::kSend), "the SEND completes successfully");
    sq_occupancy_a.write(0);
    std::printf("verbs_in_simulation: RC WRITE 4096 B completed %llu ns after its post, SEND 1024 B "
                "%llu ns; %d ticks of 100 ns; SystemC time %s\n",
                static_cast<unsigned long long>(write_ns),
                static_cast<unsigned long long>(KernelNs() - sent_at), ticker_->ticks.read(),
                sc_core::sc_time_stamp().to_string().c_str());
    Done();
  }

  void HostB() {
    using namespace qptwin;
    if (!connected_) sc_core::wait(connected_event_);
    RecvWr recv;
    recv.wr_id = 2;
    recv.sg_list = {{b_.Addr(8192), 1024, b_.lkey}};
    size_t bad = 0;
    Check(b_.dev->PostRecv(b_.qp, {recv}, &bad) == 0, "post the receive");
    receive_posted_ = true;
    receive_posted_event_.notify();
    Check(WaitOne(b_, 2, WcOpcode::kRecv), "the receive completes successfully");
    Check(std::memcmp(a_.buf + 16384, b_.buf + 8192, 1024) == 0,
          "the SEND's 1024 bytes are in the receive's buffer");
    Done();
  }

  qptwin::Backend* backend_;
  const Ticker* ticker_;
  Side a_, b_;
  bool connected_ = false, receive_posted_ = false;
  sc_core::sc_event connected_event_, receive_posted_event_;
  int done_ = 0;
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
  Drivers driver("drivers", backend.get(), &ticker);
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
  sc_core::sc_start();  // the drivers stop the simulation when both are done
  sc_core::sc_close_vcd_trace_file(tf);
  qptwin::model::sim::Platform::SetNetObserver({});
  std::printf("verbs_in_simulation: the WRITE's last byte left mdev0's port at %llu ns\n",
              static_cast<unsigned long long>(write_left_ns));
  Check(driver.completions.read() == 3, "three completions seen");
  if (failures == 0) std::printf("verbs_in_simulation: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
