// RDMA into a SystemC user's own memory model at the user's bus addresses
// (model_backend.h ModelRegMrAt, model/engine/memory.h contract 4): a region registered at
// 0x8000'0000 of a DRAM module of the user's has no buffer in the process; a router of the
// user's on each NIC slot's DMA socket (model/sim/platform.h contract 7) and on the host
// CPU's memory socket (contract 11) sends the DRAM's window to the DRAM and everything else
// (the rings, the other regions) to the platform's host memory. A WRITE's data, a READ's
// source, a SEND's payload, a receive's data, an atomic and a post's inline data all cross
// the DRAM's socket at those addresses, and an address nobody answers is the verbs' error
// completion, never a crash. The CPU's router passes no DMI on, so every access of the
// provider's CPU (WQE and receive WQE writes, doorbell records, CQE reads, the consumer
// index) is a transaction it sees, labelled by_cpu (engine/host_bus.h contract 7).
#include <gtest/gtest.h>

#define SC_INCLUDE_DYNAMIC_PROCESSES  // a test spawns a method process
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "model/engine/command_port.h"
#include "model/model_backend.h"
#include "model/sim/platform.h"
#include "spec/qp_state_table.h"
#include "tests/support/support.h"

namespace {

using qptwin::model::sim::DmaExtension;
using qptwin::model::sim::HostCpu;
using qptwin::model::sim::HostMemory;
using qptwin::model::sim::NicSlot;
using qptwin::model::sim::Platform;

constexpr uint64_t kDramBase = 0x8000'0000;
constexpr uint64_t kDramBytes = 1 << 20;
constexpr uint64_t kDramAlias = 0x1'0000;  // [0, kDramAlias) is the DRAM's start too

// The user's memory: 1 MiB at kDramBase; any other address is an address error.
class Dram : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket_tagged<Dram> port[2 * Platform::kSlots];  // DMA, CPU
  std::vector<uint8_t> bytes = std::vector<uint8_t>(kDramBytes);
  std::map<std::string, int> seen;  // transactions by what they were for (DmaExtension)

  explicit Dram(sc_core::sc_module_name name) : sc_module(name) {
    for (int i = 0; i < 2 * Platform::kSlots; ++i) {
      port[i].register_b_transport(this, &Dram::BTransport, i);
    }
  }
  uint8_t* At(uint64_t addr) { return &bytes[addr - kDramBase]; }
  // Non-zero: each receive WQE the NIC reads, and each send WQE header it reads alone (the
  // 112 bytes a flush reads of a WQE it never fetched), shows it wr_id + this (the images'
  // wr_id fields: send_wqe_image.h contract 1, recv_queue.h contract 2). The CPU sees the
  // bytes as they are.
  uint64_t nic_wr_id_offset = 0;
  // Shows the NIC a send WQE declaring this many SGEs (0: as written).
  uint32_t nic_sge_count = 0;
  // Called when the NIC reads a send WQE (a module of the program's that reacts to it).
  std::function<void()> on_nic_wqe_read;

 private:
  void ShowTheNicAnotherWrId(const qptwin::model::engine::DmaTag& tag, uint8_t* data,
                             uint64_t n) {
    using qptwin::model::engine::DmaKind;
    size_t at = 0;
    if (tag.by_cpu) return;
    if (tag.kind == DmaKind::kRecvWqe && n >= 16) {
      at = 8;
    } else if (tag.kind == DmaKind::kSendWqe && n == 112) {
      at = 0;
    } else {
      return;
    }
    uint64_t id = 0;
    std::memcpy(&id, data + at, 8);
    id += nic_wr_id_offset;
    std::memcpy(data + at, &id, 8);
  }

  void BTransport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (const auto* ext = gp.get_extension<DmaExtension>()) {
      ++seen[qptwin::model::engine::ToName(ext->tag.kind)];
    }
    const uint64_t a = gp.get_address();
    const uint64_t n = gp.get_data_length();
    if (a < kDramBase || n > kDramBytes || a - kDramBase > kDramBytes - n) {
      gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    if (gp.is_write()) {
      std::memcpy(At(a), gp.get_data_ptr(), n);
    } else {
      std::memcpy(gp.get_data_ptr(), At(a), n);
      if (const auto* ext = gp.get_extension<DmaExtension>(); ext && nic_wr_id_offset) {
        ShowTheNicAnotherWrId(ext->tag, gp.get_data_ptr(), n);
      }
      const auto* ext = gp.get_extension<DmaExtension>();
      if (ext && !ext->tag.by_cpu && ext->tag.kind == qptwin::model::engine::DmaKind::kSendWqe) {
        if (nic_sge_count && n >= 96) std::memcpy(gp.get_data_ptr() + 92, &nic_sge_count, 4);
        if (on_nic_wqe_read) on_nic_wqe_read();
      }
    }
    delay += sc_core::sc_time(50, sc_core::SC_NS);  // the DRAM's own access time
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

// A NIC slot's DMA or the CPU's accesses for it: [kDramBase, kDramBase + 2 GiB) to the
// DRAM (and [0, kDramAlias) to its start), the rest to host memory. No DMI: every access is a b_transport.
class Router : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Router> in;
  tlm_utils::simple_initiator_socket<Router> to_host;
  tlm_utils::simple_initiator_socket<Router> to_dram;
  static std::map<std::string, int> cpu_seen;  // the CPU's accesses by kind ("W:"/"R:")
  static std::string fail_cpu_writes_of;       // answer the CPU's writes of this kind with an error
  static std::map<std::string, int> to_host_seen;  // what reached the platform's host memory
  static std::string fail_nic_writes_of;  // answer the NIC's next DMA writes of this kind
  static int fail_nic_writes_left;        // ... this many, with an error

  explicit Router(sc_core::sc_module_name name)
      : sc_module(name), in("in"), to_host("to_host"), to_dram("to_dram") {
    in.register_b_transport(this, &Router::BTransport);
  }

 private:
  void BTransport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const auto* ext = gp.get_extension<DmaExtension>();
    if (ext && ext->tag.by_cpu) {
      const std::string kind = qptwin::model::engine::ToName(ext->tag.kind);
      ++cpu_seen[std::string(gp.is_write() ? "W:" : "R:") + kind];
      if (gp.is_write() && kind == fail_cpu_writes_of) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
      }
    }
    if (ext && !ext->tag.by_cpu && gp.is_write() && fail_nic_writes_left > 0 &&
        fail_nic_writes_of == qptwin::model::engine::ToName(ext->tag.kind)) {
      --fail_nic_writes_left;
      gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    const uint64_t a = gp.get_address();
    if (a >= kDramBase && a < kDramBase + (uint64_t{1} << 31)) {
      to_dram->b_transport(gp, delay);
    } else if (a < kDramAlias) {  // the DRAM's first 64 KiB also at bus address 0
      gp.set_address(a + kDramBase);
      to_dram->b_transport(gp, delay);
      gp.set_address(a);
    } else {
      if (ext) ++to_host_seen[qptwin::model::engine::ToName(ext->tag.kind)];
      to_host->b_transport(gp, delay);
    }
  }
};

std::map<std::string, int> Router::cpu_seen;
std::string Router::fail_cpu_writes_of;
std::map<std::string, int> Router::to_host_seen;
std::string Router::fail_nic_writes_of;
int Router::fail_nic_writes_left = 0;

Dram* TheDram() {
  static Dram* dram = new Dram("user_dram");  // built while the platform is elaborated
  return dram;
}

std::vector<std::unique_ptr<Router>>& Routers() {
  static auto* routers = new std::vector<std::unique_ptr<Router>>;
  return *routers;
}

const bool kBound = Platform::SetBinder(
    [](int slot, tlm_utils::simple_initiator_socket<NicSlot>& dma, HostMemory::Socket& memory) {
      Routers().push_back(std::make_unique<Router>(("router" + std::to_string(slot)).c_str()));
      dma.bind(Routers().back()->in);
      Routers().back()->to_host.bind(memory);
      Routers().back()->to_dram.bind(TheDram()->port[slot]);
    });
const bool kCpuBound = Platform::SetCpuBinder(
    [](int slot, HostCpu::Socket& cpu, HostMemory::Socket& memory) {
      Routers().push_back(std::make_unique<Router>(("cpu_router" + std::to_string(slot)).c_str()));
      cpu.bind(Routers().back()->in);
      Routers().back()->to_host.bind(memory);
      Routers().back()->to_dram.bind(TheDram()->port[Platform::kSlots + slot]);
    });

// A region of `s`'s PD at `addr` of the user's bus.
// The CPU's path to the NICs' MMIO (Platform::SetMmioBinder) through a module of the
// program's, whose initiator a driver of its own writes doorbells with (DriverRing).
class MmioPath : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<MmioPath> in;
  tlm_utils::simple_initiator_socket<MmioPath> out;
  explicit MmioPath(sc_core::sc_module_name name) : sc_module(name), in("in"), out("out") {
    in.register_b_transport(this, &MmioPath::BTransport);
  }

 private:
  void BTransport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    out->b_transport(gp, delay);
  }
};

std::vector<std::unique_ptr<MmioPath>>& MmioPaths() {
  static auto* paths = new std::vector<std::unique_ptr<MmioPath>>;
  return *paths;
}

const bool kMmioBound = Platform::SetMmioBinder(
    [](int slot, HostCpu::Socket& cpu, tlm_utils::simple_target_socket<NicSlot>& nic) {
      MmioPaths().push_back(std::make_unique<MmioPath>(("mmio_path" + std::to_string(slot)).c_str()));
      cpu.bind(MmioPaths().back()->in);
      MmioPaths().back()->out.bind(nic);
    });

struct BusRegion {
  qptwin::MrHandle mr;
  uint32_t lkey = 0;
  uint32_t rkey = 0;
};
BusRegion RegisterAt(qptwin::testing::Side& s, uint64_t addr, size_t len) {
  BusRegion r;
  EXPECT_EQ(qptwin::model::ModelRegMrAt(s.dev.get(), s.pd, addr, len, qptwin::access::kAll,
                                        &r.mr, &r.lkey, &r.rkey),
            0);
  return r;
}

// A connected RC pair on cx6-100g; the DRAM's record of transactions starts afresh.
auto Pair() {
  TheDram()->seen.clear();
  Router::cpu_seen.clear();
  Router::to_host_seen.clear();
  qptwin::model::ModelOptions o;
  o.profile = "cx6-100g";
  return qptwin::testing::ConnectedSides(qptwin::model::MakeModelBackend(o));
}

qptwin::WcStatus OneCompletion(qptwin::testing::Side& s, qptwin::CqHandle cq) {
  const auto wc = qptwin::testing::Wait(s, cq, 1);
  EXPECT_EQ(wc.size(), 1u);
  return wc.empty() ? qptwin::WcStatus::kGeneralErr : wc.at(0).status;
}

TEST(UserMemory, AWriteAndAReadMoveTheUsersMemoryAtItsBusAddresses) {
  ASSERT_TRUE(kBound);
  using namespace qptwin::testing;
  auto [be, a, b] = Pair();
  Dram& dram = *TheDram();
  const BusRegion r = RegisterAt(b, kDramBase + 0x1000, 4096);
  for (int i = 0; i < 256; ++i) a.buf[i] = static_cast<uint8_t>(i * 7 + 1);
  qptwin::SendWr w = Wr(1, qptwin::WrOpcode::kRdmaWrite, {a.At(0, 256)});
  w.remote_addr = kDramBase + 0x1000 + 64;
  w.rkey = r.rkey;
  size_t bad = 0;
  ASSERT_EQ(a.dev->PostSend(a.qp, {w}, &bad), 0);
  EXPECT_EQ(OneCompletion(a, a.scq), qptwin::WcStatus::kSuccess);
  EXPECT_EQ(0, std::memcmp(dram.At(kDramBase + 0x1000 + 64), a.buf, 256));
  EXPECT_EQ(dram.seen["WRITE_DATA"], 1);
  // And back: a READ of the DRAM's bytes into the process's region of a.
  for (int i = 0; i < 512; ++i) *dram.At(kDramBase + 0x1800 + i) = static_cast<uint8_t>(255 - i);
  qptwin::SendWr rd = Wr(2, qptwin::WrOpcode::kRdmaRead, {a.At(1024, 512)});
  rd.remote_addr = kDramBase + 0x1800;
  rd.rkey = r.rkey;
  ASSERT_EQ(a.dev->PostSend(a.qp, {rd}, &bad), 0);
  EXPECT_EQ(OneCompletion(a, a.scq), qptwin::WcStatus::kSuccess);
  EXPECT_EQ(0, std::memcmp(a.buf + 1024, dram.At(kDramBase + 0x1800), 512));
  EXPECT_EQ(dram.seen["READ_SOURCE"], 1);
  // The rings stay in the platform's host memory: no WQE or CQE reached the DRAM.
  EXPECT_EQ(dram.seen.count("SEND_WQE") + dram.seen.count("CQE"), 0u);
  EXPECT_EQ(b.dev->DeregMr(r.mr), 0);
}

TEST(UserMemory, ASendFromAndAReceiveIntoTheUsersMemory) {
  ASSERT_TRUE(kBound);
  using namespace qptwin::testing;
  auto [be, a, b] = Pair();
  Dram& dram = *TheDram();
  const BusRegion src = RegisterAt(a, kDramBase + 0x4000, 4096);
  const BusRegion dst = RegisterAt(b, kDramBase + 0x8000, 4096);
  const char msg[] = "from the user's DRAM to the user's DRAM";
  std::memcpy(dram.At(kDramBase + 0x4000), msg, sizeof msg);
  size_t bad = 0;
  ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(7, {qptwin::Sge{kDramBase + 0x8000, 256, dst.lkey}})},
                            &bad),
            0);
  ASSERT_EQ(a.dev->PostSend(a.qp,
                            {Wr(1, qptwin::WrOpcode::kSend,
                                {qptwin::Sge{kDramBase + 0x4000, sizeof msg, src.lkey}})},
                            &bad),
            0);
  EXPECT_EQ(OneCompletion(b, b.rcq), qptwin::WcStatus::kSuccess);
  EXPECT_EQ(OneCompletion(a, a.scq), qptwin::WcStatus::kSuccess);
  EXPECT_EQ(0, std::memcmp(dram.At(kDramBase + 0x8000), msg, sizeof msg));
  EXPECT_EQ(dram.seen["PAYLOAD_READ"], 1);
  EXPECT_EQ(dram.seen["RECV_DATA"], 1);
  // Inline: the post's CPU copy reads the DRAM through the NIC's socket (INLINE_READ).
  const char again[] = "inline";
  std::memcpy(dram.At(kDramBase + 0x4100), again, sizeof again);
  ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(8, {qptwin::Sge{kDramBase + 0x8100, 64, dst.lkey}})},
                            &bad),
            0);
  ASSERT_EQ(a.dev->PostSend(a.qp,
                            {Wr(2, qptwin::WrOpcode::kSend,
                                {qptwin::Sge{kDramBase + 0x4100, sizeof again, src.lkey}},
                                qptwin::send_flag::kSignaled | qptwin::send_flag::kInline)},
                            &bad),
            0);
  EXPECT_EQ(OneCompletion(b, b.rcq), qptwin::WcStatus::kSuccess);
  EXPECT_EQ(OneCompletion(a, a.scq), qptwin::WcStatus::kSuccess);
  EXPECT_EQ(0, std::memcmp(dram.At(kDramBase + 0x8100), again, sizeof again));
  EXPECT_EQ(dram.seen["INLINE_READ"], 1);
  EXPECT_EQ(Router::cpu_seen["R:INLINE_READ"], 1) << "the CPU's read, on the CPU's path";
  EXPECT_EQ(dram.seen["PAYLOAD_READ"], 1) << "inline data is not read again by the NIC";
}

// Every access of the provider's CPU crosses the user's CPU path (no DMI there): one post
// of a receive writes its WQE and the doorbell record; one post of a send writes its WQE
// image; one poll that takes a CQE reads it and writes the consumer index record.
TEST(UserMemory, TheProvidersCpuAccessesCrossTheUsersCpuPath) {
  ASSERT_TRUE(kCpuBound);
  using namespace qptwin::testing;
  auto [be, a, b] = Pair();
  Router::cpu_seen.clear();
  a.buf[0] = 91;
  size_t bad = 0;
  ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(7, {b.At(64, 64)})}, &bad), 0);
  EXPECT_EQ(Router::cpu_seen["W:RECV_WQE"], 1);
  EXPECT_EQ(Router::cpu_seen["W:RECV_DBREC"], 1);
  ASSERT_EQ(a.dev->PostSend(a.qp, {Wr(1, qptwin::WrOpcode::kSend, {a.At(0, 8)})}, &bad), 0);
  EXPECT_EQ(Router::cpu_seen["W:SEND_WQE"], 1);
  EXPECT_EQ(OneCompletion(b, b.rcq), qptwin::WcStatus::kSuccess);
  EXPECT_EQ(OneCompletion(a, a.scq), qptwin::WcStatus::kSuccess);
  EXPECT_EQ(b.buf[64], 91);
  EXPECT_EQ(Router::cpu_seen["R:CQE"], 2);
  EXPECT_EQ(Router::cpu_seen["W:CQ_DBREC"], 2);
  EXPECT_EQ(Router::cpu_seen.size(), 5u);
}

// engine/host_bus.h contract 7: the CPU's write of a send WQE's image fails, so its slot
// holds another image (here the slot's earlier WQE, a 120-byte inline WRITE, longer than
// this one's data): the NIC completes it as a malformed WQE, LOC_QP_OP_ERR, and never
// decodes the stale image as this WQE's.
TEST(UserMemory, AFailedWriteOfAWqeImageIsALocalQpOperationError) {
  ASSERT_TRUE(kCpuBound);
  using namespace qptwin::testing;
  qptwin::model::ModelOptions o;
  o.profile = "cx6-100g";
  SideOptions so;
  so.cap.max_send_wr = 1;  // one slot (rounded up as rxe does): every post reuses it
  so.cap.max_inline_data = 128;
  auto [be, a, b] = ConnectedSides(qptwin::model::MakeModelBackend(o), so);
  Router::cpu_seen.clear();
  const auto inline_write = [&, &a = a, &b = b](uint64_t id, uint32_t len) {
    qptwin::SendWr w = Wr(id, qptwin::WrOpcode::kRdmaWrite, {a.At(0, len)},
                          qptwin::send_flag::kSignaled | qptwin::send_flag::kInline);
    w.remote_addr = b.Addr(0);
    w.rkey = b.rkey;
    size_t bad = 0;
    EXPECT_EQ(a.dev->PostSend(a.qp, {w}, &bad), 0);
    return OneCompletion(a, a.scq);
  };
  for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(inline_write(i, 120), qptwin::WcStatus::kSuccess);
  Router::fail_cpu_writes_of = "SEND_WQE";
  EXPECT_EQ(inline_write(9, 8), qptwin::WcStatus::kLocQpOpErr);
  Router::fail_cpu_writes_of.clear();
  EXPECT_EQ(Router::cpu_seen["W:SEND_WQE"], 5);
}

// platform.h contract 12: a region at an address no module of the user's answers (outside
// the routers' window) reaches the platform's host memory, which does not take it for the
// process's bytes: an error completion, not a crash.
// An 8-byte RDMA WRITE into a region at `addr` of the bus: the writer's completion.
qptwin::WcStatus WriteToRegionAt(uint64_t addr) {
  using namespace qptwin::testing;
  auto [be, a, b] = Pair();
  const BusRegion r = RegisterAt(b, addr, 4096);
  qptwin::SendWr w = Wr(1, qptwin::WrOpcode::kRdmaWrite, {a.At(0, 8)});
  w.remote_addr = addr;
  w.rkey = r.rkey;
  size_t bad = 0;
  EXPECT_EQ(a.dev->PostSend(a.qp, {w}, &bad), 0);
  return OneCompletion(a, a.scq);
}

TEST(UserMemory, ARegionNobodyAnswersIsAnErrorNotACrash) {
  ASSERT_TRUE(kBound);
  EXPECT_EQ(WriteToRegionAt(0x10'0000'0000), qptwin::WcStatus::kRemOpErr);
}

TEST(UserMemory, AnAtomicOnTheUsersMemory) {
  ASSERT_TRUE(kBound);
  using namespace qptwin::testing;
  auto [be, a, b] = Pair();
  const BusRegion r = RegisterAt(b, kDramBase + 0xc000, 64);
  uint64_t v = 40;
  std::memcpy(TheDram()->At(kDramBase + 0xc000), &v, 8);
  qptwin::SendWr w = RemoteWr(1, qptwin::WrOpcode::kAtomicFetchAndAdd, a.At(0, 8), b, 0);
  w.remote_addr = kDramBase + 0xc000;
  w.rkey = r.rkey;
  w.compare_add = 2;
  size_t bad = 0;
  ASSERT_EQ(a.dev->PostSend(a.qp, {w}, &bad), 0);
  EXPECT_EQ(OneCompletion(a, a.scq), qptwin::WcStatus::kSuccess);
  uint64_t orig = 0, now = 0;
  std::memcpy(&orig, a.buf, 8);
  std::memcpy(&now, TheDram()->At(kDramBase + 0xc000), 8);
  EXPECT_EQ(orig, 40u);
  EXPECT_EQ(now, 42u);
}

TEST(UserMemory, AnAddressTheUsersMemoryDoesNotAnswerIsAnErrorCompletion) {
  ASSERT_TRUE(kBound);
  // Registered beyond the DRAM's 1 MiB, inside the router's window: the DRAM answers
  // TLM_ADDRESS_ERROR_RESPONSE, the responder NAKs (host_bus.h contract 2).
  EXPECT_EQ(WriteToRegionAt(kDramBase + 0x4000'0000), qptwin::WcStatus::kRemOpErr);
}

TEST(UserMemory, AnInlinePostFromAnAddressTheUsersMemoryDoesNotAnswerIsRefused) {
  ASSERT_TRUE(kBound);
  using namespace qptwin::testing;
  auto [be, a, b] = Pair();
  const BusRegion src = RegisterAt(a, kDramBase + 0x4000'0000, 4096);
  size_t bad = 7;
  EXPECT_EQ(a.dev->PostSend(a.qp,
                            {Wr(1, qptwin::WrOpcode::kSend,
                                {qptwin::Sge{kDramBase + 0x4000'0000, 16, src.lkey}},
                                qptwin::send_flag::kSignaled | qptwin::send_flag::kInline)},
                            &bad),
            EFAULT);
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(TheDram()->seen["INLINE_READ"], 1);
  // Nothing was queued: nothing completes.
  std::vector<qptwin::WorkCompletion> none;
  EXPECT_EQ(a.dev->WaitForCompletions(a.scq, 1, 100'000, &none), ETIMEDOUT);
  EXPECT_TRUE(none.empty());
}

TEST(UserMemory, RegistrationChecks) {
  ASSERT_TRUE(kBound);
  using namespace qptwin::testing;
  auto [be, a, b] = Pair();
  qptwin::MrHandle mr;
  uint32_t lkey = 0, rkey = 0;
  EXPECT_EQ(qptwin::model::ModelRegMrAt(a.dev.get(), a.pd, kDramBase, 0, qptwin::access::kAll,
                                        &mr, &lkey, &rkey),
            EINVAL);
  EXPECT_EQ(qptwin::model::ModelRegMrAt(a.dev.get(), a.pd, ~uint64_t{0} - 10, 4096,
                                        qptwin::access::kAll, &mr, &lkey, &rkey),
            EINVAL);
  // REMOTE_WRITE without LOCAL_WRITE, as ibv_reg_mr(3).
  EXPECT_EQ(qptwin::model::ModelRegMrAt(a.dev.get(), a.pd, kDramBase, 64,
                                        qptwin::access::kRemoteWrite, &mr, &lkey, &rkey),
            EINVAL);
  EXPECT_EQ(qptwin::model::ModelRegMrAt(a.dev.get(), qptwin::PdHandle{999}, kDramBase, 64,
                                        qptwin::access::kAll, &mr, &lkey, &rkey),
            EINVAL);
  // Held to RegMr's 64 GiB (its translations and pinning cost are counted alike).
  EXPECT_EQ(qptwin::model::ModelRegMrAt(a.dev.get(), a.pd, kDramBase, size_t{1} << 40,
                                        qptwin::access::kAll, &mr, &lkey, &rkey),
            ENOMEM);
  ASSERT_EQ(qptwin::model::ModelRegMrAt(a.dev.get(), a.pd, kDramBase, 64, qptwin::access::kAll,
                                        &mr, &lkey, &rkey),
            0);
  EXPECT_NE(lkey, a.lkey);
  // A rereg may change its access, and hands back no buffer; a new translation could not
  // name an address.
  uint8_t* buf = a.buf;
  EXPECT_EQ(a.dev->ReregMr(mr, qptwin::rereg_flag::kChangeAccess, a.pd, 0,
                           qptwin::access::kLocalWrite, &buf, &lkey, &rkey),
            0);
  EXPECT_EQ(buf, nullptr);
  EXPECT_EQ(a.dev->ReregMr(mr, qptwin::rereg_flag::kChangeTranslation, a.pd, 4096,
                           qptwin::access::kAll, &buf, &lkey, &rkey),
            EINVAL);
  EXPECT_EQ(a.dev->DeregMr(mr), 0);
}

// platform.h contract 12 with engine/host_bus.h contract 8: host memory keeps off a bus
// region's addresses only while the region is registered. Here the region lies over b's own
// buffer (process memory, which the routers send to host memory): while it is registered a
// WRITE into b's ordinary region at those addresses is refused; once it is deregistered
// (and after its device went, for a region never deregistered) the same WRITE lands.
TEST(UserMemory, HostMemoryKeepsOffABusRegionOnlyWhileItIsRegistered) {
  ASSERT_TRUE(kBound);
  using namespace qptwin::testing;
  const HostMemory& host = Platform::Get()->memory();
  {
    auto [be, a, b] = Pair();
    const BusRegion over_b = RegisterAt(b, b.Addr(0), 4096);
    const BusRegion again = RegisterAt(a, b.Addr(0), 4096);  // the same range, twice
    EXPECT_TRUE(host.IsBusOnly(b.Addr(64), 64));
    size_t bad = 0;
    ASSERT_EQ(a.dev->PostSend(a.qp, {WriteWr(a, b, 1, 0, 64)}, &bad), 0);
    EXPECT_EQ(OneCompletion(a, a.scq), qptwin::WcStatus::kRemOpErr) << "b's bytes are off";
    EXPECT_EQ(b.dev->DeregMr(over_b.mr), 0);
    EXPECT_TRUE(host.IsBusOnly(b.Addr(64), 64)) << "still held by the other registration";
    EXPECT_EQ(a.dev->DeregMr(again.mr), 0);
    EXPECT_FALSE(host.IsBusOnly(b.Addr(64), 64));
  }
  uint64_t window = 0;
  {
    auto [be, a, b] = Pair();
    const BusRegion never_deregistered = RegisterAt(b, b.Addr(0), 4096);
    (void)never_deregistered;
    window = b.Addr(0);
    EXPECT_TRUE(host.IsBusOnly(window, 4096));
    // A queue memory window stays held while a queue made in it lives.
    ASSERT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), kDramBase + 0x3'0000, 0x1'0000), 0);
    qptwin::CqHandle cq;
    int actual = 0;
    ASSERT_EQ(a.dev->CreateCq(16, {}, &cq, &actual), 0);
    ASSERT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), 0, 0), 0);
    EXPECT_TRUE(host.IsBusOnly(kDramBase + 0x3'0000, 64)) << "the CQ's ring is there";
    ASSERT_EQ(a.dev->DestroyCq(cq), 0);
    EXPECT_FALSE(host.IsBusOnly(kDramBase + 0x3'0000, 0x1'0000));
  }
  EXPECT_FALSE(host.IsBusOnly(window, 4096)) << "the region went with its device";
}

// ---- Queue memory (model_backend.h ModelQueueMemoryAt, engine/queue_memory.h) ----------

constexpr uint64_t kQueuesA = kDramBase + 0x8'0000;  // 256 KiB of queues per device
constexpr uint64_t kQueuesB = kDramBase + 0xc'0000;
constexpr uint64_t kQueueBytes = 0x4'0000;
const char* const kRingKinds[] = {"SEND_WQE", "RECV_WQE", "CQE", "RECV_DBREC", "CQ_DBREC"};

// A connected RC pair on cx6-100g whose queues (CQs, QPs) live in the DRAM.
qptwin::testing::SidePair PairWithQueuesInDram(const qptwin::testing::SideOptions& so = {}) {
  using namespace qptwin::testing;
  TheDram()->seen.clear();
  Router::cpu_seen.clear();
  Router::to_host_seen.clear();
  qptwin::model::ModelOptions o;
  o.profile = "cx6-100g";
  SidePair p;
  p.be = qptwin::model::MakeModelBackend(o);
  std::unique_ptr<qptwin::Device> d0, d1;
  EXPECT_EQ(p.be->OpenDevice("mdev0", &d0), 0);
  EXPECT_EQ(p.be->OpenDevice("mdev1", &d1), 0);
  EXPECT_EQ(qptwin::model::ModelQueueMemoryAt(d0.get(), kQueuesA, kQueueBytes), 0);
  EXPECT_EQ(qptwin::model::ModelQueueMemoryAt(d1.get(), kQueuesB, kQueueBytes), 0);
  p.a = MakeSideOn(std::move(d0), so);
  p.b = MakeSideOn(std::move(d1), so);
  Connect(p.a, p.b);
  return p;
}

// Every ring access (the NIC's and the CPU's) went to the DRAM, none to host memory.
void ExpectRingsOnlyInDram(const char* what) {
  for (const char* k : kRingKinds) {
    EXPECT_EQ(Router::to_host_seen.count(k), 0u) << what << ": " << k << " reached host memory";
  }
}

TEST(QueueMemory, TheRingsAndRecordsLiveInTheUsersMemory) {
  ASSERT_TRUE(kBound && kCpuBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  Dram& dram = *TheDram();
  dram.seen.clear();
  Router::cpu_seen.clear();
  for (int i = 0; i < 64; ++i) a.buf[i] = static_cast<uint8_t>(3 * i + 1);
  size_t bad = 0;
  ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(7, {b.At(1024, 64)})}, &bad), 0);
  ASSERT_EQ(a.dev->PostSend(a.qp, {Wr(1, qptwin::WrOpcode::kSend, {a.At(0, 64)})}, &bad), 0);
  EXPECT_EQ(OneCompletion(b, b.rcq), qptwin::WcStatus::kSuccess);
  EXPECT_EQ(OneCompletion(a, a.scq), qptwin::WcStatus::kSuccess);
  EXPECT_EQ(0, std::memcmp(b.buf + 1024, a.buf, 64));
  ASSERT_EQ(a.dev->PostSend(a.qp, {WriteWr(a, b, 2, 0, 64)}, &bad), 0);
  EXPECT_EQ(OneCompletion(a, a.scq), qptwin::WcStatus::kSuccess);
  EXPECT_EQ(0, std::memcmp(b.buf, a.buf, 64));
  // The NIC fetched its WQEs and wrote its CQEs in the DRAM; the CPU wrote the WQEs and
  // records and read the CQEs there (each CPU access crosses the DRAM's CPU port too).
  EXPECT_EQ(Router::cpu_seen["W:SEND_WQE"], 2);
  EXPECT_EQ(Router::cpu_seen["W:RECV_WQE"], 1);
  EXPECT_EQ(Router::cpu_seen["W:RECV_DBREC"], 1);
  EXPECT_EQ(Router::cpu_seen["R:CQE"], 3);
  EXPECT_EQ(Router::cpu_seen["W:CQ_DBREC"], 3);
  EXPECT_EQ(dram.seen["SEND_WQE"], 2 + 2) << "two CPU writes, two NIC fetches";
  EXPECT_EQ(dram.seen["RECV_WQE"], 1 + 1);
  EXPECT_GE(dram.seen["RECV_DBREC"], 1 + 1);
  EXPECT_EQ(dram.seen["CQE"], 3 + 3) << "three NIC writes, three CPU reads";
  ExpectRingsOnlyInDram("send, receive, write");
  // The CQE the NIC wrote for the WRITE is in a's CQ ring, inside a's window: wr_id 2.
  bool found = false;
  for (uint64_t at = kQueuesA; at < kQueuesA + kQueueBytes && !found; at += 64) {
    uint64_t id = 0;
    std::memcpy(&id, dram.At(at), 8);
    found = id == 2 && dram.At(at)[33] == static_cast<uint8_t>(qptwin::WcOpcode::kRdmaWrite);
  }
  EXPECT_TRUE(found) << "the WRITE's CQE in the DRAM window of mdev0";
}

TEST(QueueMemory, AFlushAndAResizeKeepTheirEntriesInTheUsersMemory) {
  ASSERT_TRUE(kBound && kCpuBound);
  using namespace qptwin::testing;
  SideOptions so;
  so.one_cq = true;
  auto [be, a, b] = PairWithQueuesInDram(so);
  size_t bad = 0;
  for (uint64_t i = 0; i < 5; ++i) {
    ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(100 + i, {b.At(64 * i, 64)})}, &bad), 0);
  }
  // Three completions wait in b's CQ while it grows (ibv_resize_cq): the CPU moves them.
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(a.dev->PostSend(a.qp, {Wr(i, qptwin::WrOpcode::kSend, {a.At(0, 8)})}, &bad), 0);
    EXPECT_EQ(OneCompletion(a, a.scq), qptwin::WcStatus::kSuccess);
  }
  int actual = 0;
  ASSERT_EQ(b.dev->ResizeCq(b.scq, 200, &actual), 0);
  EXPECT_GE(actual, 200);
  // Then b's QP goes to ERR: its two receives left are flushed into the resized CQ.
  qptwin::QpAttr err;
  err.qp_state = qptwin::QpState::kErr;
  ASSERT_EQ(b.dev->ModifyQp(b.qp, err, qptwin::attr::kState), 0);
  const auto wc = Wait(b, b.scq, 5);
  ASSERT_EQ(wc.size(), 5u);
  for (uint64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(wc[i].wr_id, 100 + i);
    EXPECT_EQ(wc[i].status,
              i < 3 ? qptwin::WcStatus::kSuccess : qptwin::WcStatus::kWrFlushErr);
  }
  ExpectRingsOnlyInDram("resize and flush");
}

// An SRQ on b (max_wr, max_sge), and a QP on it (b2) connected to a plain QP of a's (a2, of
// `send_wr` send WRs).
struct SrqSides {
  qptwin::SrqHandle srq;
  qptwin::testing::Side a2, b2;
};
SrqSides OnAnSrq(qptwin::testing::Side& a, qptwin::testing::Side& b, uint32_t max_wr,
                 uint32_t max_sge, uint32_t send_wr) {
  using namespace qptwin::testing;
  SrqSides out;
  EXPECT_EQ(b.dev->CreateSrq(b.pd, max_wr, max_sge, &out.srq), 0);
  qptwin::QpInitAttr init;
  init.qp_type = qptwin::QpType::kRc;
  init.send_cq = b.scq;
  init.recv_cq = b.rcq;
  init.srq = out.srq;
  init.pd = b.pd;
  init.cap = qptwin::QpCap{4, 0, 1, 0, 0};
  out.b2 = SiblingQp(b, init);
  qptwin::QpInitAttr plain = init;
  plain.send_cq = a.scq;
  plain.recv_cq = a.rcq;
  plain.srq = {};
  plain.pd = a.pd;
  plain.cap = qptwin::QpCap{send_wr, 4, 1, 1, 0};
  out.a2 = SiblingQp(a, plain);
  Connect(out.a2, out.b2);
  return out;
}

TEST(QueueMemory, AnSrqInTheUsersMemoryGrows) {
  ASSERT_TRUE(kBound && kCpuBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  auto [srq, a2, b2] = OnAnSrq(a, b, 4, 2, 4);
  size_t bad = 0;
  for (uint64_t i = 0; i < 3; ++i) {
    ASSERT_EQ(b.dev->PostSrqRecv(srq, {Rwr(50 + i, {b.At(2048 + 64 * i, 64)})}, &bad), 0);
  }
  qptwin::SrqAttr grow;
  grow.max_wr = 64;
  ASSERT_EQ(b.dev->ModifySrq(srq, grow, qptwin::srq_attr::kMaxWr), 0);
  for (uint64_t i = 3; i < 40; ++i) {
    ASSERT_EQ(b.dev->PostSrqRecv(srq, {Rwr(50 + i, {b.At(2048 + 64 * (i % 16), 64)})}, &bad), 0);
  }
  for (uint64_t i = 0; i < 3; ++i) {
    a.buf[4096 + i] = static_cast<uint8_t>(0xa0 + i);
    ASSERT_EQ(a2.dev->PostSend(a2.qp, {Wr(i, qptwin::WrOpcode::kSend, {a2.At(4096 + i, 1)})},
                               &bad),
              0);
    const auto wc = Wait(b2, b2.rcq, 1);
    ASSERT_EQ(wc.size(), 1u);
    EXPECT_EQ(wc[0].wr_id, 50 + i) << "the receives posted before the resize come first";
    EXPECT_EQ(b.buf[2048 + 64 * i], 0xa0 + i);
  }
  ExpectRingsOnlyInDram("SRQ");
  ASSERT_EQ(b2.dev->DestroyQp(b2.qp), 0);
  ASSERT_EQ(b.dev->DestroySrq(srq), 0);
}

TEST(QueueMemory, ACreateThatFindsNoRoomIsEnomemAndADestroyGivesItBack) {
  ASSERT_TRUE(kBound);
  using namespace qptwin::testing;
  auto [be, a, b] = Pair();
  // 64 KiB: CQs of 256 CQEs take 16 KiB and a record line each, so three fit.
  ASSERT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), kDramBase + 0x2'0000, 0x1'0000), 0);
  std::vector<qptwin::CqHandle> cqs(4);
  int actual = 0;
  for (int i = 0; i < 3; ++i) ASSERT_EQ(a.dev->CreateCq(256, {}, &cqs[i], &actual), 0) << i;
  EXPECT_EQ(a.dev->CreateCq(256, {}, &cqs[3], &actual), ENOMEM);
  EXPECT_EQ(a.dev->ResizeCq(cqs[0], 1024, &actual), ENOMEM) << "the CQ as it was";
  ASSERT_EQ(a.dev->DestroyCq(cqs[1]), 0);
  EXPECT_EQ(a.dev->CreateCq(256, {}, &cqs[3], &actual), 0);
  // A QP whose rings do not fit takes no number.
  qptwin::QpInitAttr init;
  init.qp_type = qptwin::QpType::kRc;
  init.send_cq = a.scq;
  init.recv_cq = a.rcq;
  init.pd = a.pd;
  init.cap = qptwin::QpCap{1024, 1024, 4, 4, 0};
  qptwin::QpHandle qp;
  qptwin::QpCap cap;
  EXPECT_EQ(a.dev->CreateQp(init, &qp, &cap), ENOMEM);
  // Length 0: the next queues are this process's memory again.
  ASSERT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), 0, 0), 0);
  ASSERT_EQ(a.dev->CreateQp(init, &qp, &cap), 0);
  EXPECT_EQ(a.dev->DestroyQp(qp), 0);
  for (int i : {0, 2, 3}) EXPECT_EQ(a.dev->DestroyCq(cqs[i]), 0);
  EXPECT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), ~uint64_t{0} - 10, 4096), EINVAL);
  EXPECT_EQ(qptwin::model::ModelQueueMemoryAt(nullptr, kDramBase, 4096), EINVAL);
}

// Review findings, each failed before its fix. A queue made in a block another queue used,
// or a QP reset with receives posted, starts empty: the record a driver clears at create
// says so, and a reset does not leave the old count for the NIC to read as new receives
// (before: a segfault on an empty ring, or a phantom receive).
enum class Before { kReset, kReuse, kFlushThenReset };
std::vector<uint64_t> ReceiveAfter(bool placed, Before before) {
  using namespace qptwin::testing;
  auto p = placed ? PairWithQueuesInDram() : [] {
    qptwin::model::ModelOptions o;
    o.profile = "cx6-100g";
    return ConnectedSides(qptwin::model::MakeModelBackend(o));
  }();
  Side& a = p.a;
  Side& b = p.b;
  size_t bad = 0;
  Side recv = b, send = a;
  std::vector<uint64_t> out;
  if (before == Before::kReuse) {
    Side gone = SiblingQp(b, b.Init(16, 16, 1));
    EXPECT_EQ(ToInit(gone), 0);
    EXPECT_EQ(gone.dev->PostRecv(gone.qp, {Rwr(1, {b.At(0, 64)}), Rwr(2, {b.At(64, 64)})}, &bad), 0);
    EXPECT_EQ(gone.dev->DestroyQp(gone.qp), 0);
    recv = SiblingQp(b, b.Init(16, 16, 1));  // first fit: the destroyed QP's blocks
    send = SiblingQp(a, a.Init(16, 16, 1));
    Connect(send, recv);
  } else {
    EXPECT_EQ(b.dev->PostRecv(b.qp, {Rwr(1, {b.At(0, 64)}), Rwr(2, {b.At(64, 64)})}, &bad), 0);
    qptwin::QpAttr r;
    if (before == Before::kFlushThenReset) {
      r.qp_state = qptwin::QpState::kErr;
      EXPECT_EQ(b.dev->ModifyQp(b.qp, r, qptwin::attr::kState), 0);
      for (const auto& wc : Wait(b, b.rcq, 2)) out.push_back(wc.wr_id * 100 + int(wc.status));
    }
    r.qp_state = qptwin::QpState::kReset;
    EXPECT_EQ(b.dev->ModifyQp(b.qp, r, qptwin::attr::kState), 0);
    EXPECT_EQ(ToInit(b), 0);
    EXPECT_EQ(ToRtr(b, a), 0);
    EXPECT_EQ(ToRts(b), 0);
  }
  EXPECT_EQ(send.dev->PostSend(send.qp, {Wr(5, qptwin::WrOpcode::kSend, {a.At(0, 8)})}, &bad), 0);
  p.be->Advance(100'000);  // the SEND finds no receive (RNR) and comes again
  EXPECT_EQ(recv.dev->PostRecv(recv.qp, {Rwr(9, {b.At(128, 64)})}, &bad), 0);
  for (const auto& wc : Wait(recv, recv.rcq, 1)) out.push_back(wc.wr_id * 100 + int(wc.status));
  for (const auto& wc : Wait(send, send.scq, 1)) out.push_back(wc.wr_id * 100 + int(wc.status));
  return out;
}

TEST(QueueMemory, AQueueMadeInAUsedBlockOrResetStartsEmpty) {
  ASSERT_TRUE(kBound && kCpuBound);
  const std::vector<uint64_t> expected{900, 500};  // receive 9 takes SEND 5; both succeed
  for (Before before : {Before::kReset, Before::kReuse}) {
    EXPECT_EQ(ReceiveAfter(false, before), expected) << "process memory, " << int(before);
    EXPECT_EQ(ReceiveAfter(true, before), expected) << "queue memory, " << int(before);
  }
  // Flushed (ERR: receives 1 and 2 complete WR_FLUSH_ERR), then reset (before: a segfault
  // in queue memory, the flushed receives still counted as posted).
  const std::vector<uint64_t> flushed{105, 205, 900, 500};
  EXPECT_EQ(ReceiveAfter(false, Before::kFlushThenReset), flushed);
  EXPECT_EQ(ReceiveAfter(true, Before::kFlushThenReset), flushed);
}

// A CQ of 4 filled, one polled, two more completions: the second overruns (CQ_ERR) in
// queue memory as in process memory (before: the provider's count stayed 0 in queue
// memory, so the overrun went unseen and a CQE was written over).
std::string CqOverrun(bool placed, bool fail_record_writes = false) {
  using namespace qptwin::testing;
  SidePair p = placed ? PairWithQueuesInDram() : ConnectedSides([] {
    qptwin::model::ModelOptions o;
    o.profile = "cx6-100g";
    return qptwin::model::MakeModelBackend(o);
  }());
  Side& a = p.a;
  Side& b = p.b;
  qptwin::CqHandle cq;
  int depth = 0;
  EXPECT_EQ(a.dev->CreateCq(4, {}, &cq, &depth), 0);
  if (fail_record_writes) Router::fail_cpu_writes_of = "CQ_DBREC";  // after its record's 0
  qptwin::QpInitAttr init = a.Init(16, 16, 1);
  init.send_cq = cq;
  Side a2 = SiblingQp(a, init);
  Side b2 = SiblingQp(b, b.Init(16, 16, 1));
  Connect(a2, b2);
  size_t bad = 0;
  std::string out = "depth " + std::to_string(depth) + ":";
  uint64_t id = 0;
  for (int i = 0; i < depth; ++i) {
    EXPECT_EQ(a2.dev->PostSend(a2.qp, {WriteWr(a2, b2, id++, 0, 8)}, &bad), 0);
    p.be->Advance(200'000);
  }
  qptwin::WorkCompletion wc[32];
  int n = a.dev->PollCq(cq, 1, wc);
  out += " polled " + std::to_string(n) + ";";
  for (int i = 0; i < 2; ++i) {
    (void)a2.dev->PostSend(a2.qp, {WriteWr(a2, b2, id++, 0, 8)}, &bad);
    p.be->Advance(200'000);
  }
  n = a.dev->PollCq(cq, 32, wc);
  out += " then " + std::to_string(n) + ":";
  for (int i = 0; i < n; ++i) {
    out += " " + std::to_string(wc[i].wr_id) + "/" + std::to_string(int(wc[i].status));
  }
  for (const auto& e : a.dev->TakeAsyncEvents()) out += " event " + std::to_string(int(e.type));
  Router::fail_cpu_writes_of.clear();
  return out;
}

TEST(QueueMemory, ACqOverrunInQueueMemoryIsTheSameAsInProcessMemory) {
  ASSERT_TRUE(kBound && kCpuBound);
  const std::string in_process = CqOverrun(false);
  EXPECT_NE(in_process.find("event"), std::string::npos) << in_process;
  EXPECT_EQ(CqOverrun(true), in_process);
  // The consumer record's writes fail: the provider keeps its own count either way, so the
  // NIC, reading a stale record, sees the CQ full one CQE early (as mlx5's would), and both
  // memories agree (before: in process memory the count was the record itself).
  const std::string stale = CqOverrun(false, true);
  EXPECT_EQ(CqOverrun(true, true), stale);
  EXPECT_NE(stale, in_process);
}

// A window at bus address 0 (a DRAM at 0): its first block's first slot is address 0
// (before: taken for "does not fit", so the first WQE was LOC_QP_OP_ERR).
TEST(QueueMemory, AWindowAtBusAddressZero) {
  ASSERT_TRUE(kBound && kCpuBound);
  using namespace qptwin::testing;
  auto [be, a, b] = Pair();
  ASSERT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), 0, kDramAlias), 0);
  Side a2 = SiblingQp(a, a.Init(16, 16, 1));  // its send ring is the window's first block
  ASSERT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), 0, 0), 0);
  Side b2 = SiblingQp(b, b.Init(16, 16, 1));
  Connect(a2, b2);
  size_t bad = 0;
  ASSERT_EQ(a2.dev->PostSend(a2.qp, {WriteWr(a2, b2, 1, 0, 8)}, &bad), 0);
  ASSERT_EQ(a2.dev->PostSend(a2.qp, {WriteWr(a2, b2, 2, 0, 8)}, &bad), 0);
  const auto wc = Wait(a2, a2.scq, 2);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, qptwin::WcStatus::kSuccess);
  EXPECT_EQ(wc[1].status, qptwin::WcStatus::kSuccess);
}

// No two live queues share a byte: the same window again changes nothing, an overlapping
// one is EBUSY while a queue holds a block there, on this device or another (before: a
// second arena over the same window gave c2 c1's block).
TEST(QueueMemory, WindowsOfLiveQueuesDoNotOverlap) {
  ASSERT_TRUE(kBound && kCpuBound);
  using namespace qptwin::testing;
  auto [be, a, b] = Pair();
  const uint64_t w = kDramBase + 0x2'0000;
  ASSERT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), w, 0x1'0000), 0);
  qptwin::CqHandle c1, c2;
  int depth = 0;
  ASSERT_EQ(a.dev->CreateCq(16, {}, &c1, &depth), 0);
  EXPECT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), w, 0x1'0000), 0);
  ASSERT_EQ(a.dev->CreateCq(16, {}, &c2, &depth), 0);
  EXPECT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), w + 0x8000, 0x1'0000), EBUSY);
  EXPECT_EQ(qptwin::model::ModelQueueMemoryAt(b.dev.get(), w - 0x100, 0x200), EBUSY);
  ASSERT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), 0, 0), 0);
  qptwin::QpInitAttr i1 = a.Init(16, 16, 1), i2 = a.Init(16, 16, 1);
  i1.send_cq = c1;
  i2.send_cq = c2;
  Side a1 = SiblingQp(a, i1), a2 = SiblingQp(a, i2);
  Side b1 = SiblingQp(b, b.Init(16, 16, 1)), b2 = SiblingQp(b, b.Init(16, 16, 1));
  Connect(a1, b1);
  Connect(a2, b2);
  size_t bad = 0;
  ASSERT_EQ(a1.dev->PostSend(a1.qp, {WriteWr(a1, b1, 111, 0, 8)}, &bad), 0);
  ASSERT_EQ(a2.dev->PostSend(a2.qp, {WriteWr(a2, b2, 222, 0, 8)}, &bad), 0);
  be->Advance(2'000'000);
  qptwin::WorkCompletion wc;
  ASSERT_EQ(a.dev->PollCq(c1, 1, &wc), 1);
  EXPECT_EQ(wc.wr_id, 111u);
  ASSERT_EQ(a.dev->PollCq(c2, 1, &wc), 1);
  EXPECT_EQ(wc.wr_id, 222u);
  // Once the queues there are gone the window may be given again, overlapping or not.
  ASSERT_EQ(a1.dev->DestroyQp(a1.qp), 0);
  ASSERT_EQ(a2.dev->DestroyQp(a2.qp), 0);
  ASSERT_EQ(a.dev->DestroyCq(c1), 0);
  ASSERT_EQ(a.dev->DestroyCq(c2), 0);
  EXPECT_EQ(qptwin::model::ModelQueueMemoryAt(b.dev.get(), w - 0x100, 0x200), 0);
}

// In process memory a flushed receive queue is a fresh one, as before queue memory: a
// 1-SGE receive posted after a 4-SGE one was flushed is fetched as 32 bytes, not 80.
TEST(QueueMemory, AFlushInProcessMemoryLeavesAFreshQueue) {
  using namespace qptwin::testing;
  std::vector<uint64_t> lens;
  ASSERT_TRUE(qptwin::model::SetModelDmaObserver([&](const qptwin::model::DmaTransfer& t) {
    if (std::string(t.kind) == "RECV_WQE") lens.push_back(t.bytes);
  }));
  auto [be, a, b] = Pair();
  size_t bad = 0;
  ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(1, {b.At(0, 8), b.At(8, 8), b.At(16, 8), b.At(24, 8)})},
                            &bad),
            0);
  qptwin::QpAttr e;
  e.qp_state = qptwin::QpState::kErr;
  ASSERT_EQ(b.dev->ModifyQp(b.qp, e, qptwin::attr::kState), 0);
  (void)Wait(b, b.rcq, 1);
  e.qp_state = qptwin::QpState::kReset;
  ASSERT_EQ(b.dev->ModifyQp(b.qp, e, qptwin::attr::kState), 0);
  ASSERT_EQ(ToInit(b), 0);
  ASSERT_EQ(ToRtr(b, a), 0);
  ASSERT_EQ(ToRts(b), 0);
  ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(2, {b.At(0, 8)})}, &bad), 0);
  ASSERT_EQ(a.dev->PostSend(a.qp, {Wr(5, qptwin::WrOpcode::kSend, {a.At(0, 8)})}, &bad), 0);
  (void)Wait(b, b.rcq, 1);
  qptwin::model::SetModelDmaObserver({});
  ASSERT_FALSE(lens.empty());
  EXPECT_EQ(lens.back(), 32u);
}

// Step (b): a flush is the NIC's walk of the rings in the user's memory. The wr_ids of the
// flushed receives, and of SENDs posted in ERR (which the NIC never fetched), come from the
// WQE images it reads there: the DRAM shows the NIC other wr_ids than the provider wrote.
TEST(QueueMemory, AFlushTakesTheWrIdsFromTheImagesInTheUsersMemory) {
  ASSERT_TRUE(kBound && kCpuBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  Dram& dram = *TheDram();
  size_t bad = 0;
  for (uint64_t i = 0; i < 3; ++i) {
    ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(100 + i, {b.At(64 * i, 64)})}, &bad), 0);
  }
  qptwin::QpAttr err;
  err.qp_state = qptwin::QpState::kErr;
  dram.nic_wr_id_offset = 1000;
  dram.seen.clear();
  ASSERT_EQ(b.dev->ModifyQp(b.qp, err, qptwin::attr::kState), 0);
  EXPECT_EQ(dram.seen["RECV_WQE"], 3) << "one read of each slot";
  EXPECT_GE(dram.seen["RECV_DBREC"], 1) << "the producer from the record";
  auto wc = Wait(b, b.rcq, 3);
  ASSERT_EQ(wc.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(wc[i].wr_id, 1100 + i);
    EXPECT_EQ(wc[i].status, qptwin::WcStatus::kWrFlushErr);
  }
  ASSERT_EQ(a.dev->ModifyQp(a.qp, err, qptwin::attr::kState), 0);
  ASSERT_EQ(a.dev->PostSend(a.qp,
                            {Wr(7, qptwin::WrOpcode::kSend, {a.At(0, 8)}),
                             Wr(8, qptwin::WrOpcode::kSend, {a.At(8, 8)})},
                            &bad),
            0);
  wc = Wait(a, a.scq, 2);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].wr_id, 1007u);
  EXPECT_EQ(wc[1].wr_id, 1008u);
  EXPECT_EQ(wc[1].status, qptwin::WcStatus::kWrFlushErr);
  dram.nic_wr_id_offset = 0;
  ExpectRingsOnlyInDram("flushes");
}

// ---- A driver of the program's own (engine/doorbell_port.h contract 6) -----------------

// A send WQE as model/engine/send_wqe_image.h lays it out, written by the test's "driver"
// straight into the DRAM (its own memory), with no verbs call.
struct DriverWqe {
  uint64_t wr_id = 0;
  qptwin::WrOpcode opcode = qptwin::WrOpcode::kRdmaWrite;
  uint32_t opcode_value = ~0u;  // when not ~0: this raw value instead of `opcode`
  uint32_t flags = qptwin::send_flag::kSignaled;
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  qptwin::Sge sge;
  uint32_t sges = 1;
  uint32_t ah = 0, remote_qpn = 0, remote_qkey = 0;  // a UD send's (header bytes 64, 68, 72)
  uint32_t remote_srqn = 0;                           // an XRC_SEND's (header byte 76)
  // A BIND_MW's (header bytes 32, 40, 80, 84, 88): the range, the window's current rkey, the
  // region's number (kRegMr's out2) and the window's access; `rkey` is the new rkey.
  uint64_t bind_addr = 0, bind_length = 0;
  uint32_t mw_rkey = 0, bind_mr = 0, bind_access = 0;
};

template <typename T>
void PutLe(uint8_t* at, T v) {
  std::memcpy(at, &v, sizeof v);
}

// Writes `w` as WQE number `index` of `ring` and returns the producer after it.
uint32_t DriverWrite(const qptwin::model::SendRing& ring, uint32_t index, const DriverWqe& w) {
  uint8_t* slot = TheDram()->At(ring.addr + uint64_t{index % ring.slots} * ring.stride);
  std::memset(slot, 0, ring.stride);
  PutLe<uint64_t>(slot + 0, w.wr_id);
  PutLe<uint64_t>(slot + 8, w.remote_addr);
  PutLe<uint32_t>(slot + 48, w.opcode_value != ~0u ? w.opcode_value
                                                   : static_cast<uint32_t>(w.opcode));
  PutLe<uint32_t>(slot + 52, w.flags);
  PutLe<uint32_t>(slot + 60, w.rkey);
  PutLe<uint32_t>(slot + 64, w.ah);
  PutLe<uint32_t>(slot + 68, w.remote_qpn);
  PutLe<uint32_t>(slot + 72, w.remote_qkey);
  PutLe<uint32_t>(slot + 76, w.remote_srqn);
  PutLe<uint64_t>(slot + 32, w.bind_addr);
  PutLe<uint64_t>(slot + 40, w.bind_length);
  PutLe<uint32_t>(slot + 80, w.mw_rkey);
  PutLe<uint32_t>(slot + 84, w.bind_mr);
  PutLe<uint32_t>(slot + 88, w.bind_access);
  PutLe<uint32_t>(slot + 92, w.sges);
  PutLe<uint32_t>(slot + 100, index + 1);  // send_wqe_image.h contract 4
  if (w.sges == 1) {
    PutLe<uint64_t>(slot + 112, w.sge.addr);
    PutLe<uint32_t>(slot + 120, w.sge.length);
    PutLe<uint32_t>(slot + 124, w.sge.lkey);
  }
  return index + 1;
}

// The driver's access of `len` bytes at `offset` of the slot's MMIO, from the program's own
// initiator on the CPU's MMIO path, no extension on the payload.
tlm::tlm_response_status DriverMmio(int slot, tlm::tlm_command command, uint64_t offset,
                                    uint8_t* data, unsigned len) {
  tlm::tlm_generic_payload gp;
  gp.set_command(command);
  gp.set_address(offset);
  gp.set_data_ptr(data);
  gp.set_data_length(len);
  gp.set_streaming_width(len);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  MmioPaths().at(slot)->out->b_transport(gp, delay);
  return gp.get_response_status();
}

// The same, an 8-byte write.
tlm::tlm_response_status DriverMmioWrite(int slot, uint64_t offset, uint64_t value) {
  uint8_t word[8];
  PutLe<uint64_t>(word, value);
  return DriverMmio(slot, tlm::TLM_WRITE_COMMAND, offset, word, 8);
}

// The driver's doorbell: the QP number, then the producer.
tlm::tlm_response_status DriverRing(int slot, uint32_t qpn, uint32_t producer) {
  return DriverMmioWrite(slot, NicSlot::kDoorbellOffset, uint64_t{qpn} | (uint64_t{producer} << 32));
}

// The send ring of `s`'s QP (ModelSendRing).
qptwin::model::SendRing SendRingOf(const qptwin::testing::Side& s) {
  qptwin::model::SendRing ring;
  EXPECT_EQ(qptwin::model::ModelSendRing(s.dev.get(), s.qp, &ring), 0);
  return ring;
}

// A signaled 8-byte WRITE from a's region at 0 into b's at 0.
DriverWqe EightByteWrite(const qptwin::testing::Side& a, const qptwin::testing::Side& b,
                         uint64_t wr_id) {
  DriverWqe w;
  w.wr_id = wr_id;
  w.remote_addr = b.Addr(0);
  w.rkey = b.rkey;
  w.sge = a.At(0, 8);
  return w;
}

// The driver rings `ring` up to `producer`; one CQE follows on a's send CQ.
void ExpectRingCompletes(qptwin::testing::Side& a, const qptwin::model::SendRing& ring,
                         uint32_t producer, uint64_t wr_id, qptwin::WcStatus status) {
  EXPECT_EQ(DriverRing(0, ring.qpn, producer), tlm::TLM_OK_RESPONSE);
  const auto wc = qptwin::testing::Wait(a, a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, wr_id);
  EXPECT_EQ(wc[0].status, status);
}

TEST(DriverPosts, AWriteADriverPutsInTheRingAndRingsRunsWithoutAVerbsPost) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  Dram& dram = *TheDram();
  qptwin::model::SendRing ring = SendRingOf(a);
  EXPECT_GE(ring.addr, kQueuesA);
  EXPECT_LT(ring.addr, kQueuesA + kQueueBytes);
  EXPECT_EQ(ring.qpn, a.qpn);
  EXPECT_EQ(ring.producer, 0u);
  for (int i = 0; i < 256; ++i) a.buf[i] = static_cast<uint8_t>(7 * i + 3);
  // Two WRITEs, one ring: the NIC fetches both from the DRAM and runs them.
  uint32_t p = ring.producer;
  for (uint64_t k = 0; k < 2; ++k) {
    DriverWqe w;
    w.wr_id = 500 + k;
    w.remote_addr = b.Addr(128 * k);
    w.rkey = b.rkey;
    w.sge = a.At(128 * k, 128);
    p = DriverWrite(ring, p, w);
  }
  dram.seen.clear();
  Router::cpu_seen.clear();
  EXPECT_EQ(DriverRing(0, ring.qpn, p), tlm::TLM_OK_RESPONSE);
  auto wc = Wait(a, a.scq, 2);
  ASSERT_EQ(wc.size(), 2u);
  for (uint64_t k = 0; k < 2; ++k) {
    EXPECT_EQ(wc[k].wr_id, 500 + k);
    EXPECT_EQ(wc[k].status, qptwin::WcStatus::kSuccess);
    EXPECT_EQ(wc[k].opcode, qptwin::WcOpcode::kRdmaWrite);
    EXPECT_EQ(wc[k].byte_len, 128u);
  }
  EXPECT_EQ(0, std::memcmp(b.buf, a.buf, 256));
  EXPECT_EQ(dram.seen["SEND_WQE"], 1) << "the NIC's one fetch of both slots";
  EXPECT_EQ(Router::cpu_seen["W:SEND_WQE"], 0) << "no provider wrote a WQE";
  // The verbs' own post goes on from the driver's producer, and the ring says so.
  size_t bad = 0;
  ASSERT_EQ(a.dev->PostSend(a.qp, {WriteWr(a, b, 9, 256, 64)}, &bad), 0);
  EXPECT_EQ(OneCompletion(a, a.scq), qptwin::WcStatus::kSuccess);
  ASSERT_EQ(qptwin::model::ModelSendRing(a.dev.get(), a.qp, &ring), 0);
  EXPECT_EQ(ring.producer, 3u);
  ExpectRingsOnlyInDram("driver");
}

// The newest Backend alive takes a driver's doorbell: a gone Backend's Device may keep its
// NIC on the slot (before, the ring went to that NIC, which has no such QP, and was lost).
TEST(DriverPosts, ADoorbellGoesToTheNewestBackendAlive) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  auto [be, a, b] = PairWithQueuesInDram();
  std::unique_ptr<qptwin::Device> kept;
  {
    auto newer = qptwin::model::MakeModelBackend({});
    ASSERT_NE(newer, nullptr);
    ASSERT_EQ(newer->OpenDevice("", &kept), 0);
  }
  const qptwin::model::SendRing ring = SendRingOf(a);
  ExpectRingCompletes(a, ring, DriverWrite(ring, ring.producer, EightByteWrite(a, b, 61)), 61,
                      qptwin::WcStatus::kSuccess);
}

TEST(DriverPosts, AMalformedDriverWqeIsALocalQpOperationErrorAndTheRestIsFlushed) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  qptwin::model::SendRing ring = SendRingOf(a);
  DriverWqe bad_op;
  bad_op.wr_id = 77;
  bad_op.opcode_value = 99;  // no such opcode
  bad_op.sge = a.At(0, 8);
  DriverWqe next = EightByteWrite(a, b, 78);
  uint32_t p = DriverWrite(ring, ring.producer, bad_op);
  p = DriverWrite(ring, p, next);
  EXPECT_EQ(DriverRing(0, ring.qpn, p), tlm::TLM_OK_RESPONSE);
  auto wc = Wait(a, a.scq, 2);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].wr_id, 77u);
  EXPECT_EQ(wc[0].status, qptwin::WcStatus::kLocQpOpErr);
  EXPECT_EQ(wc[1].wr_id, 78u);
  EXPECT_EQ(wc[1].status, qptwin::WcStatus::kWrFlushErr);
  // In ERR a driver's WQE is flushed as a post's is; its header names its wr_id.
  DriverWqe late = next;
  late.wr_id = 79;
  p = DriverWrite(ring, p, late);
  EXPECT_EQ(DriverRing(0, ring.qpn, p), tlm::TLM_OK_RESPONSE);
  wc = Wait(a, a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 79u);
  EXPECT_EQ(wc[0].status, qptwin::WcStatus::kWrFlushErr);
}

// A driver's receive n into a receive ring (a QP's or an SRQ's): u32 SGE count, u64 wr_id
// at byte 8, one SGE at 16, then the new producer into the record.
void DriverRecv(const qptwin::model::RecvRing& ring, uint32_t n, uint64_t wr_id, qptwin::Sge sge) {
  uint8_t* slot = TheDram()->At(ring.addr + uint64_t{n % ring.slots} * ring.stride);
  std::memset(slot, 0, ring.stride);
  PutLe<uint32_t>(slot, 1);
  PutLe<uint64_t>(slot + 8, wr_id);
  PutLe<uint64_t>(slot + 16, sge.addr);
  PutLe<uint32_t>(slot + 24, sge.length);
  PutLe<uint32_t>(slot + 28, sge.lkey);
  PutLe<uint32_t>(TheDram()->At(ring.record), n + 1);
}

TEST(DriverPosts, ReceivesADriverPutsInTheRingAreTakenAndFlushedWithTheirWrIds) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  qptwin::model::RecvRing ring;
  ASSERT_EQ(qptwin::model::ModelRecvRing(b.dev.get(), b.qp, &ring), 0);
  EXPECT_GE(ring.addr, kQueuesB);
  EXPECT_LT(ring.record, kQueuesB + kQueueBytes);
  EXPECT_EQ(ring.producer, 0u);
  DriverRecv(ring, 0, 900, b.At(512, 64));
  DriverRecv(ring, 1, 901, b.At(640, 64));
  for (int i = 0; i < 64; ++i) a.buf[i] = static_cast<uint8_t>(5 * i + 2);
  size_t bad = 0;
  ASSERT_EQ(a.dev->PostSend(a.qp, {Wr(3, qptwin::WrOpcode::kSend, {a.At(0, 64)})}, &bad), 0);
  EXPECT_EQ(OneCompletion(a, a.scq), qptwin::WcStatus::kSuccess);
  auto wc = Wait(b, b.rcq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 900u);
  EXPECT_EQ(wc[0].status, qptwin::WcStatus::kSuccess);
  EXPECT_EQ(wc[0].byte_len, 64u);
  EXPECT_EQ(0, std::memcmp(b.buf + 512, a.buf, 64));
  EXPECT_EQ(Router::cpu_seen["W:RECV_WQE"], 0) << "no provider wrote a receive";
  // The move to ERR flushes the driver's second receive, by the wr_id its image holds.
  qptwin::QpAttr err;
  err.qp_state = qptwin::QpState::kErr;
  ASSERT_EQ(b.dev->ModifyQp(b.qp, err, qptwin::attr::kState), 0);
  wc = Wait(b, b.rcq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 901u);
  EXPECT_EQ(wc[0].status, qptwin::WcStatus::kWrFlushErr);
  ExpectRingsOnlyInDram("driver receives");
}

// An SRQ's ring: the driver's receives are taken by the QP on it, and its limit counts them
// (one SRQ_LIMIT_REACHED when fewer than the limit are left).
TEST(DriverPosts, ReceivesADriverPutsInAnSrqsRingAreTakenAndCountTowardsItsLimit) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  auto [srq, a2, b2] = OnAnSrq(a, b, 8, 1, 4);
  qptwin::model::RecvRing ring;
  ASSERT_EQ(qptwin::model::ModelSrqRing(b.dev.get(), srq, &ring), 0);
  EXPECT_GE(ring.addr, kQueuesB);
  EXPECT_LT(ring.record, kQueuesB + kQueueBytes);
  EXPECT_GE(ring.slots, 8u);
  EXPECT_EQ(ring.producer, 0u);
  qptwin::model::RecvRing none;
  EXPECT_EQ(qptwin::model::ModelSrqRing(b.dev.get(), qptwin::SrqHandle{srq.id + 100}, &none), ENOENT);
  for (uint32_t n = 0; n < 4; ++n) DriverRecv(ring, n, 700 + n, b.At(1024 + 64 * n, 64));
  qptwin::SrqAttr limit;
  limit.srq_limit = 2;
  ASSERT_EQ(b.dev->ModifySrq(srq, limit, qptwin::srq_attr::kLimit), 0);
  (void)b.dev->TakeAsyncEvents();
  Router::cpu_seen.clear();
  size_t bad = 0;
  auto send = [&](uint64_t i) {
    a.buf[4096 + i] = static_cast<uint8_t>(0xc0 + i);
    ASSERT_EQ(a2.dev->PostSend(a2.qp, {Wr(i, qptwin::WrOpcode::kSend, {a2.At(4096 + i, 1)})}, &bad), 0);
    const auto wc = Wait(b2, b2.rcq, 1);
    ASSERT_EQ(wc.size(), 1u);
    EXPECT_EQ(wc[0].status, qptwin::WcStatus::kSuccess);
    EXPECT_EQ(wc[0].wr_id, 700 + i);
    EXPECT_EQ(b.buf[1024 + 64 * i], 0xc0 + i);
  };
  send(0);
  send(1);  // 2 left: not below the limit
  EXPECT_EQ(b.dev->WaitForAsyncEvent(qptwin::EventType::kSrqLimitReached, {}, kSecond / 100), ETIMEDOUT);
  send(2);  // 1 left: below it
  ASSERT_EQ(b.dev->WaitForAsyncEvent(qptwin::EventType::kSrqLimitReached, {}, kSecond / 100), 0);
  int events = 0;
  for (const qptwin::AsyncEvent& ev : b.dev->TakeAsyncEvents()) {
    if (ev.type == qptwin::EventType::kSrqLimitReached && ev.srq == srq) ++events;
  }
  EXPECT_EQ(events, 1);
  send(3);
  EXPECT_EQ(Router::cpu_seen["W:RECV_WQE"], 0) << "no provider wrote a receive";
  ExpectRingsOnlyInDram("driver SRQ receives");
  ASSERT_EQ(b2.dev->DestroyQp(b2.qp), 0);
  ASSERT_EQ(b.dev->DestroySrq(srq), 0);
}

TEST(DriverPosts, RingsTheNicCannotTakeAreIgnoredNotACrash) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  qptwin::model::SendRing ring = SendRingOf(a);
  // More WQEs than the ring holds, an SGE count past the slot, a slot never written, and
  // a QP number nobody has: nothing runs, or the WQE fails alone.
  EXPECT_EQ(DriverRing(0, ring.qpn, ring.producer + ring.slots + 1), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(DriverRing(0, 0xabcdef, 1), tlm::TLM_OK_RESPONSE);
  std::vector<qptwin::WorkCompletion> none;
  EXPECT_EQ(a.dev->WaitForCompletions(a.scq, 1, 100'000, &none), ETIMEDOUT);
  EXPECT_TRUE(none.empty()) << "100 us: no completion";
  DriverWqe huge;
  huge.wr_id = 61;
  huge.sges = 1'000'000;  // declares far more than its slot
  const uint32_t p = DriverWrite(ring, ring.producer, huge);
  ExpectRingCompletes(a, ring, p, 61, qptwin::WcStatus::kLocQpOpErr);
  // A ring that names nothing new does nothing.
  EXPECT_EQ(DriverRing(0, ring.qpn, p), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(a.dev->WaitForCompletions(a.scq, 1, 100'000, &none), ETIMEDOUT);
  // A QP whose ring is the process's memory has no ring a driver could write.
  auto plain = Pair();
  EXPECT_EQ(qptwin::model::ModelSendRing(plain.a.dev.get(), plain.a.qp, &ring), EINVAL);
  qptwin::model::RecvRing rring;
  EXPECT_EQ(qptwin::model::ModelRecvRing(plain.b.dev.get(), plain.b.qp, &rring), EINVAL);
  qptwin::model::CqRing cring;
  EXPECT_EQ(qptwin::model::ModelCqRing(plain.a.dev.get(), plain.a.scq, &cring), EINVAL);
}

// A helper's review of the driver's path: images that do not hold together, a ring from
// inside the NIC's own DMA, and a provider's image changed under the NIC.
TEST(DriverPosts, WqesThatDoNotHoldTogetherFailAlone) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  qptwin::model::SendRing ring = SendRingOf(a);
  // An inline SEND whose SGE says 64 bytes and whose inline bytes are 16.
  DriverWqe w;
  w.wr_id = 31;
  w.opcode = qptwin::WrOpcode::kSend;
  w.flags |= qptwin::send_flag::kInline;
  w.sge = a.At(0, 64);
  const uint32_t p = DriverWrite(ring, ring.producer, w);
  PutLe<uint32_t>(TheDram()->At(ring.addr) + 96, 16);
  ExpectRingCompletes(a, ring, p, 31, qptwin::WcStatus::kLocQpOpErr);
}

TEST(DriverPosts, AnOpcodeBeyondAByteIsNoOpcode) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  qptwin::model::SendRing ring = SendRingOf(a);
  DriverWqe w;
  w.wr_id = 32;
  w.opcode_value = 0x102;  // SEND's 2 in its low byte
  w.sge = a.At(0, 8);
  const uint32_t p = DriverWrite(ring, ring.producer, w);
  ExpectRingCompletes(a, ring, p, 32, qptwin::WcStatus::kLocQpOpErr);
}

TEST(DriverPosts, ARingFromInsideTheNicsOwnDmaIsRefused) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  qptwin::model::SendRing ring = SendRingOf(a);
  DriverWqe w = EightByteWrite(a, b, 33);
  const uint32_t p = DriverWrite(ring, ring.producer, w);
  const uint32_t second = DriverWrite(ring, p, w);
  std::vector<tlm::tlm_response_status> nested;
  TheDram()->on_nic_wqe_read = [&] { nested.push_back(DriverRing(0, ring.qpn, second)); };
  EXPECT_EQ(DriverRing(0, ring.qpn, p), tlm::TLM_OK_RESPONSE);
  TheDram()->on_nic_wqe_read = nullptr;
  ASSERT_EQ(nested.size(), 1u) << "the NIC read the first WQE once";
  EXPECT_EQ(nested[0], tlm::TLM_GENERIC_ERROR_RESPONSE) << "the engine is on the stack";
  auto wc = Wait(a, a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, qptwin::WcStatus::kSuccess);
  // Rung again from outside, the second one runs.
  EXPECT_EQ(DriverRing(0, ring.qpn, second), tlm::TLM_OK_RESPONSE);
  wc = Wait(a, a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, qptwin::WcStatus::kSuccess);
}

// A second review: a method process's ring, and one from inside its own ring's DMA (the
// method's model call holds no turn; the engine is on the stack all the same).
TEST(DriverPosts, ARingFromInsideAMethodsOwnRingIsRefused) {
  if (sc_core::sc_get_status() != sc_core::SC_RUNNING) {
    GTEST_SKIP() << "a method process rings: runs in user_memory_in_simulation_test";
  }
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  qptwin::model::SendRing ring = SendRingOf(a);
  DriverWqe w = EightByteWrite(a, b, 35);
  const uint32_t p = DriverWrite(ring, ring.producer, w);
  const uint32_t second = DriverWrite(ring, p, w);
  std::vector<tlm::tlm_response_status> nested;
  tlm::tlm_response_status outer = tlm::TLM_INCOMPLETE_RESPONSE;
  bool rang = false;
  TheDram()->on_nic_wqe_read = [&] { nested.push_back(DriverRing(0, ring.qpn, second)); };
  sc_core::sc_event go;
  sc_core::sc_spawn_options o;
  o.spawn_method();
  o.dont_initialize();
  o.set_sensitivity(&go);
  sc_core::sc_spawn([&] {
    if (rang) return;
    outer = DriverRing(0, ring.qpn, p);
    rang = true;
  }, "method_driver", &o);
  go.notify(sc_core::SC_ZERO_TIME);
  for (int i = 0; i < 100 && !rang; ++i) sc_core::wait(1, sc_core::SC_NS);
  TheDram()->on_nic_wqe_read = nullptr;
  ASSERT_TRUE(rang);
  EXPECT_EQ(outer, tlm::TLM_OK_RESPONSE);
  ASSERT_EQ(nested.size(), 1u);
  EXPECT_EQ(nested[0], tlm::TLM_GENERIC_ERROR_RESPONSE) << "the engine is on the stack";
  auto wc = Wait(a, a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, qptwin::WcStatus::kSuccess);
  // A later ring from outside works: no call was left counted.
  EXPECT_EQ(DriverRing(0, ring.qpn, second), tlm::TLM_OK_RESPONSE);
  wc = Wait(a, a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, qptwin::WcStatus::kSuccess);
}

TEST(DriverPosts, AProvidersImageThatDeclaresMoreThanItsSlotIsMalformed) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  TheDram()->nic_sge_count = 100'000;
  size_t bad = 0;
  ASSERT_EQ(a.dev->PostSend(a.qp, {WriteWr(a, b, 34, 0, 8)}, &bad), 0);
  TheDram()->nic_sge_count = 0;
  auto wc = Wait(a, a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 34u);
  EXPECT_EQ(wc[0].status, qptwin::WcStatus::kLocQpOpErr);
}

// a's send ring and its send CQ's ring, as a driver of the test's own takes them.
struct DriverRings {
  qptwin::model::SendRing sq;
  qptwin::model::CqRing cq;
};
DriverRings DriverRingsOf(const qptwin::testing::Side& a) {
  DriverRings r;
  EXPECT_EQ(qptwin::model::ModelSendRing(a.dev.get(), a.qp, &r.sq), 0);
  EXPECT_EQ(qptwin::model::ModelCqRing(a.dev.get(), a.scq, &r.cq), 0);
  return r;
}

// The wr_id of CQE `slot` of the ring at `addr` in the DRAM (engine/cq.h contract 5: bytes
// 0-7).
uint64_t CqeWrId(uint64_t addr, uint32_t slot) {
  uint64_t wr_id = 0;
  std::memcpy(&wr_id, TheDram()->At(addr + uint64_t{slot} * 64), 8);
  return wr_id;
}

TEST(DriverPosts, ADriverPollsItsOwnCqByTheOwnerByteAndRoundTheRing) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  auto [ring, cq] = DriverRingsOf(a);
  EXPECT_GE(cq.addr, kQueuesA);
  EXPECT_EQ(cq.slots, 64u) << "the CQ's depth";
  // Ten rounds of 12 WRITEs (120 CQEs through a 64-entry ring): each round the driver
  // writes the WQEs, rings once, lets 100 us pass, then takes the CQEs whose owner byte
  // says this pass and writes its consumer count into the record.
  uint32_t p = ring.producer;
  uint32_t ci = 0;
  uint64_t next_id = 1000;
  for (int round = 0; round < 10; ++round) {
    for (int k = 0; k < 12; ++k) {
      DriverWqe w;
      w.wr_id = 1000 + 12 * round + k;
      w.remote_addr = b.Addr(8 * k);
      w.rkey = b.rkey;
      w.sge = a.At(8 * k, 8);
      p = DriverWrite(ring, p, w);
    }
    ASSERT_EQ(DriverRing(0, ring.qpn, p), tlm::TLM_OK_RESPONSE);
    be->Advance(100'000);
    for (;;) {
      const uint8_t* cqe = TheDram()->At(cq.addr + uint64_t{ci % cq.slots} * 64);
      if (cqe[63] != (((ci / cq.slots) & 1) ^ 1)) break;  // not this pass's: none new
      EXPECT_EQ(CqeWrId(cq.addr, ci % cq.slots), next_id++);
      EXPECT_EQ(cqe[32], static_cast<uint8_t>(qptwin::WcStatus::kSuccess)) << "CQE " << ci;
      ++ci;
    }
    PutLe<uint32_t>(TheDram()->At(cq.record), ci);
    ASSERT_EQ(ci, 12u * (round + 1)) << "round " << round;
  }
  qptwin::QpAttr attr;
  qptwin::QpInitAttr init;
  ASSERT_EQ(a.dev->QueryQp(a.qp, &attr, &init), 0);
  EXPECT_EQ(attr.qp_state, qptwin::QpState::kRts) << "no overrun";
}

// The driver's CQ arm (8 bytes at the slot's arm offset): CQ number, consumer index,
// solicited-only (bit 56).
tlm::tlm_response_status DriverArm(int slot, uint32_t cqn, uint32_t ci, bool solicited_only) {
  return DriverMmioWrite(slot, NicSlot::kCqArmOffset,
                         uint64_t{cqn} | (uint64_t{ci & 0xffffff} << 32) |
                             (uint64_t{solicited_only} << 56));
}

// A driver's interrupts (engine/cq.h contract 8): an armed CQ writes its event once, at the
// next CQE or at once when the ring holds CQEs the driver has not taken; a solicited-only
// arm waits for a solicited or error CQE; arms the NIC cannot take are ignored.
TEST(DriverPosts, AnArmedCqWritesItsInterruptOncePerArm) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  auto [ring, cq] = DriverRingsOf(a);
  constexpr uint64_t kEventAt = kDramBase + 0x7'f000;  // the driver's MSI-X address
  constexpr uint32_t kVector = 0xfee0'0042;
  uint8_t* event = TheDram()->At(kEventAt);
  std::memset(event, 0, 4);
  Dram& dram = *TheDram();
  auto events = [&] { return dram.seen["CQ_EVENT"]; };
  auto take_event = [&] {
    uint32_t v = 0;
    std::memcpy(&v, event, 4);
    std::memset(event, 0, 4);
    return v;
  };
  // Arms the NIC cannot take: no event named yet, no such CQ.
  EXPECT_EQ(DriverArm(0, cq.cqn, 0, false), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(DriverArm(0, cq.cqn + 1000, 0, false), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(qptwin::model::ModelCqEvent(a.dev.get(), qptwin::CqHandle{a.scq.id + 1000}, kEventAt,
                                        kVector),
            ENOENT);
  ASSERT_EQ(qptwin::model::ModelCqEvent(a.dev.get(), a.scq, kEventAt, kVector), 0);
  uint32_t p = ring.producer;
  uint64_t id = 2000;
  auto write = [&] {
    p = DriverWrite(ring, p, EightByteWrite(a, b, id++));
    ASSERT_EQ(DriverRing(0, ring.qpn, p), tlm::TLM_OK_RESPONSE);
    be->Advance(50'000);
  };
  write();  // CQE 0: the arms before were ignored
  EXPECT_EQ(events(), 0);
  // Armed with the driver's consumer index at 0 while CQE 0 waits: the event at once.
  EXPECT_EQ(DriverArm(0, cq.cqn, 0, false), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(events(), 1);
  EXPECT_EQ(take_event(), kVector);
  write();  // CQE 1: not armed
  EXPECT_EQ(events(), 1);
  // The driver took both: armed, the next CQE raises it, once.
  EXPECT_EQ(DriverArm(0, cq.cqn, 2, false), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(events(), 1);
  write();  // CQE 2
  EXPECT_EQ(events(), 2);
  EXPECT_EQ(take_event(), kVector);
  write();  // CQE 3: the arm was spent
  EXPECT_EQ(events(), 2);
  // Solicited-only: a WRITE's plain CQE does not raise it (nor do CQEs not taken), an
  // error CQE does.
  EXPECT_EQ(DriverArm(0, cq.cqn, 0, true), tlm::TLM_OK_RESPONSE);
  write();  // CQE 4
  EXPECT_EQ(events(), 2);
  DriverWqe bad = EightByteWrite(a, b, id++);
  bad.rkey ^= 0x5a5a;  // the responder refuses it: REM_ACCESS_ERR
  p = DriverWrite(ring, p, bad);
  ASSERT_EQ(DriverRing(0, ring.qpn, p), tlm::TLM_OK_RESPONSE);
  be->Advance(50'000);
  EXPECT_EQ(events(), 3);
  EXPECT_EQ(take_event(), kVector);
  const uint8_t* cqe5 = TheDram()->At(cq.addr + 5 * 64);
  EXPECT_EQ(cqe5[32], static_cast<uint8_t>(qptwin::WcStatus::kRemAccessErr));
  // A CQ whose ring is this process's memory has no driver's event.
  qptwin::CqHandle plain;
  ASSERT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), 0, 0), 0);
  int actual = 0;
  ASSERT_EQ(a.dev->CreateCq(8, {}, &plain, &actual), 0);
  EXPECT_EQ(qptwin::model::ModelCqEvent(a.dev.get(), plain, kEventAt, kVector), EINVAL);
  ASSERT_EQ(a.dev->DestroyCq(plain), 0);
}

// A resize of a CQ a driver polls (cq.h contract 7): the CQEs it took stay taken (before,
// they came back at the new ring's front, and an arm fired at once for them), the rest
// move to the front, and owner byte, record and arm count from 0 again.
TEST(DriverPosts, AResizeOfADriversCqMovesOnlyWhatItHasNotTaken) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  auto [ring, cq] = DriverRingsOf(a);
  Dram& dram = *TheDram();
  constexpr uint64_t kEventAt = kDramBase + 0x7'f000;
  ASSERT_EQ(qptwin::model::ModelCqEvent(a.dev.get(), a.scq, kEventAt, 0x42), 0);
  uint32_t p = ring.producer;
  for (uint64_t id = 0; id < 3; ++id) p = DriverWrite(ring, p, EightByteWrite(a, b, 3000 + id));
  ASSERT_EQ(DriverRing(0, ring.qpn, p), tlm::TLM_OK_RESPONSE);
  be->Advance(100'000);
  for (uint32_t k = 0; k < 3; ++k) {
    EXPECT_EQ(dram.At(cq.addr + k * 64)[63], 1);
    EXPECT_EQ(CqeWrId(cq.addr, k), 3000 + k);
  }
  PutLe<uint32_t>(dram.At(cq.record), 2);  // the driver took two
  int actual = 0;
  ASSERT_EQ(a.dev->ResizeCq(a.scq, 200, &actual), 0);
  qptwin::model::CqRing moved;
  ASSERT_EQ(qptwin::model::ModelCqRing(a.dev.get(), a.scq, &moved), 0);
  EXPECT_NE(moved.addr, cq.addr);
  EXPECT_EQ(moved.cqn, cq.cqn);
  EXPECT_EQ(CqeWrId(moved.addr, 0), 3002u) << "only the CQE not taken moved";
  EXPECT_EQ(dram.At(moved.addr)[63], 1);
  EXPECT_NE(dram.At(moved.addr + 64)[63], 1) << "nothing else";
  uint32_t record = 0;
  std::memcpy(&record, dram.At(moved.record), 4);
  EXPECT_EQ(record, 0u) << "the count starts again";
  const int before = dram.seen["CQ_EVENT"];
  EXPECT_EQ(DriverArm(0, moved.cqn, 0, false), tlm::TLM_OK_RESPONSE);  // CQE 0 waits
  EXPECT_EQ(dram.seen["CQ_EVENT"], before + 1);
  PutLe<uint32_t>(dram.At(moved.record), 1);  // took it
  EXPECT_EQ(DriverArm(0, moved.cqn, 1, false), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(dram.seen["CQ_EVENT"], before + 1);
  p = DriverWrite(ring, p, EightByteWrite(a, b, 3003));
  ASSERT_EQ(DriverRing(0, ring.qpn, p), tlm::TLM_OK_RESPONSE);
  be->Advance(100'000);
  EXPECT_EQ(dram.seen["CQ_EVENT"], before + 2);
  EXPECT_EQ(CqeWrId(moved.addr, 1), 3003u);
  EXPECT_EQ(dram.At(moved.addr + 64)[63], 1);
}

// A resize of an SRQ with a driver's receives outstanding moves them too, each to its slot
// (receive n in slot n mod slots), and refuses a ring too small for them (before: the NIC
// then read slots nobody wrote, and the QP went to ERR).
TEST(DriverPosts, AResizeOfAnSrqMovesTheDriversReceivesToo) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  using namespace qptwin::testing;
  auto [be, a, b] = PairWithQueuesInDram();
  auto [srq, a2, b2] = OnAnSrq(a, b, 8, 1, 8);
  qptwin::model::RecvRing ring;
  ASSERT_EQ(qptwin::model::ModelSrqRing(b.dev.get(), srq, &ring), 0);
  for (uint32_t n = 0; n < 4; ++n) DriverRecv(ring, n, 700 + n, b.At(1024 + 64 * n, 64));
  size_t bad = 0;
  auto send = [&](uint64_t i, uint64_t want) {
    a.buf[4096 + i] = static_cast<uint8_t>(0xd0 + i);
    ASSERT_EQ(a2.dev->PostSend(a2.qp, {Wr(i, qptwin::WrOpcode::kSend, {a2.At(4096 + i, 1)})}, &bad), 0);
    const auto wc = Wait(b2, b2.rcq, 1);
    ASSERT_EQ(wc.size(), 1u);
    EXPECT_EQ(wc[0].status, qptwin::WcStatus::kSuccess);
    EXPECT_EQ(wc[0].wr_id, want);
  };
  send(0, 700);
  qptwin::SrqAttr grow;
  grow.max_wr = 64;
  ASSERT_EQ(b.dev->ModifySrq(srq, grow, qptwin::srq_attr::kMaxWr), 0);
  qptwin::model::RecvRing moved;
  ASSERT_EQ(qptwin::model::ModelSrqRing(b.dev.get(), srq, &moved), 0);
  EXPECT_NE(moved.addr, ring.addr);
  EXPECT_EQ(moved.producer, 4u) << "the producer goes on";
  send(1, 701);
  DriverRecv(moved, 4, 704, b.At(1024 + 64 * 4, 64));  // slot 4 of the new ring
  qptwin::SrqAttr shrink;
  shrink.max_wr = 1;
  EXPECT_EQ(b.dev->ModifySrq(srq, shrink, qptwin::srq_attr::kMaxWr), EINVAL)
      << "three of the driver's receives are outstanding";
  send(2, 702);
  send(3, 703);
  send(4, 704);
  ASSERT_EQ(b2.dev->DestroyQp(b2.qp), 0);
  ASSERT_EQ(b.dev->DestroySrq(srq), 0);
}

// Windows are the device's: two devices may not name overlapping windows even before either
// has a queue there (before: both got the same bytes); a window set again after another
// one, while queues still hold blocks in it, is taken back; a window ending at the top of
// the address space is held like any other (before: its end wrapped to 0).
TEST(QueueMemory, WindowsAreTheDevicesAndMayEndAtTheTopOfTheAddressSpace) {
  ASSERT_TRUE(kBound && kCpuBound);
  using namespace qptwin::testing;
  auto [be, a, b] = Pair();
  const uint64_t w = kDramBase + 0x2'0000;
  ASSERT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), w, 0x1'0000), 0);
  EXPECT_EQ(qptwin::model::ModelQueueMemoryAt(b.dev.get(), w, 0x1'0000), EBUSY);
  qptwin::CqHandle c1, c2;
  int depth = 0;
  ASSERT_EQ(a.dev->CreateCq(16, {}, &c1, &depth), 0);
  ASSERT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), 0, 0), 0);
  ASSERT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), w, 0x1'0000), 0);
  ASSERT_EQ(a.dev->CreateCq(16, {}, &c2, &depth), 0);  // its block is not c1's
  ASSERT_EQ(a.dev->DestroyCq(c1), 0);
  ASSERT_EQ(a.dev->DestroyCq(c2), 0);
  ASSERT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), 0, 0), 0);
  const HostMemory& host = Platform::Get()->memory();
  const uint64_t top = ~uint64_t{0} - 0xffff;  // [2^64 - 64 KiB, 2^64)
  ASSERT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), top, 0x1'0000), 0);
  ASSERT_EQ(a.dev->CreateCq(16, {}, &c1, &depth), 0);  // host memory refuses its record
  EXPECT_TRUE(host.IsBusOnly(top, 64));
  EXPECT_TRUE(host.IsBusOnly(~uint64_t{0}, 1));
  EXPECT_EQ(qptwin::model::ModelQueueMemoryAt(b.dev.get(), top + 0x100, 0x100), EBUSY);
  ASSERT_EQ(a.dev->DestroyCq(c1), 0);
  ASSERT_EQ(qptwin::model::ModelQueueMemoryAt(a.dev.get(), 0, 0), 0);
  EXPECT_FALSE(host.IsBusOnly(top, 0x1'0000));
  // A rereg of a bus region's access keeps it held.
  const BusRegion r = RegisterAt(a, kDramBase + 0x5'0000, 4096);
  uint8_t* buf = nullptr;
  uint32_t lkey = 0, rkey = 0;
  EXPECT_EQ(a.dev->ReregMr(r.mr, qptwin::rereg_flag::kChangeAccess, a.pd, 0,
                           qptwin::access::kLocalWrite, &buf, &lkey, &rkey),
            0);
  EXPECT_TRUE(host.IsBusOnly(kDramBase + 0x5'0000, 4096));
  EXPECT_EQ(a.dev->DeregMr(r.mr), 0);
  EXPECT_FALSE(host.IsBusOnly(kDramBase + 0x5'0000, 4096));
}


// ---- A driver's commands (engine/command_port.h; model/sim/platform.h contract 13) -------

namespace cmd = qptwin::model::engine::command;

// A slot's command mailbox as a driver sees it: CMD_IN writes (all eight: the registers keep
// the last command's), the CMD_OP write, CMD_STATUS and CMD_OUT reads, each an MMIO access.
struct Mailbox {
  int slot = 0;
  uint64_t out[cmd::kWords] = {};
  uint32_t Run(cmd::Op op, const std::vector<uint64_t>& in = {}) {
    for (size_t i = 0; i < cmd::kWords; ++i) {
      EXPECT_EQ(DriverMmioWrite(slot, cmd::kInOffset + 8 * i, i < in.size() ? in[i] : 0),
                tlm::TLM_OK_RESPONSE);
    }
    uint8_t word[8] = {};
    PutLe<uint32_t>(word, static_cast<uint32_t>(op));
    EXPECT_EQ(DriverMmio(slot, tlm::TLM_WRITE_COMMAND, cmd::kOpOffset, word, 4),
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(DriverMmio(slot, tlm::TLM_READ_COMMAND, cmd::kStatusOffset, word, 4),
              tlm::TLM_OK_RESPONSE);
    uint32_t status = 0;
    std::memcpy(&status, word, 4);
    for (int i = 0; i < cmd::kWords; ++i) {
      EXPECT_EQ(DriverMmio(slot, tlm::TLM_READ_COMMAND, cmd::kOutOffset + 8 * i, word, 8),
                tlm::TLM_OK_RESPONSE);
      std::memcpy(&out[i], word, 8);
    }
    return status;
  }
};

// What a driver keeps of its set-up, all of it from the NIC's answers.
struct CommandSide {
  Mailbox mb;
  uint64_t gid[2] = {};
  uint64_t pd = 0, region = 0;
  uint32_t lkey = 0, rkey = 0;
  qptwin::model::CqRing cq;
  qptwin::model::SendRing sq;
  qptwin::model::RecvRing rq;  // the QP's, or its SRQ's
  uint64_t srq = 0;            // the SRQ's number, when on one
};

// Where a driver puts a queue itself: a window of just that queue's buffer before its
// create (0: the side's shared window).
struct Placement {
  uint64_t cq = 0;
  uint64_t qp = 0, qp_bytes = 0;
};
constexpr uint64_t kCq64Bytes = 64 * 64 + 64;  // 64 CQEs, then the record's 64 bytes

// Queue memory, the port's GID, a PD, a 4 KiB region at `region`, a 64-entry CQ and an RC
// QP on it (on an SRQ of 8 receives, when `srq`), by commands alone.
CommandSide SetUpByCommands(int slot, uint64_t queues, uint64_t region, bool srq = false,
                            const Placement& at = {}) {
  CommandSide s;
  s.mb.slot = slot;
  s.region = region;
  EXPECT_EQ(s.mb.Run(cmd::Op::kQueueMemory, {queues, kQueueBytes}), 0u);
  EXPECT_EQ(s.mb.Run(cmd::Op::kQueryPort, {1}), 0u);
  s.gid[0] = s.mb.out[0];
  s.gid[1] = s.mb.out[1];
  EXPECT_EQ(s.mb.out[3] & 0xff, static_cast<uint64_t>(qptwin::PortState::kActive));
  EXPECT_EQ(s.mb.Run(cmd::Op::kAllocPd), 0u);
  s.pd = s.mb.out[0];
  EXPECT_EQ(s.mb.Run(cmd::Op::kRegMr, {s.pd, region, 4096, qptwin::access::kAll}), 0u);
  s.lkey = static_cast<uint32_t>(s.mb.out[0]);
  s.rkey = static_cast<uint32_t>(s.mb.out[1]);
  if (at.cq) {
    EXPECT_EQ(s.mb.Run(cmd::Op::kQueueMemory, {at.cq, kCq64Bytes}), 0u);
  }
  EXPECT_EQ(s.mb.Run(cmd::Op::kCreateCq, {64, 0, 0, 0}), 0u);
  s.cq.cqn = static_cast<uint32_t>(s.mb.out[0]);
  s.cq.addr = s.mb.out[1];
  s.cq.record = s.mb.out[2];
  s.cq.slots = static_cast<uint32_t>(s.mb.out[3]);
  const uint64_t cqs = uint64_t{s.cq.cqn} | uint64_t{s.cq.cqn} << 32;
  if (srq) {
    EXPECT_EQ(s.mb.Run(cmd::Op::kCreateSrq, {s.pd, 8, 1}), 0u);
    s.srq = s.mb.out[0];
    s.rq.addr = s.mb.out[1];
    s.rq.record = s.mb.out[2];
    s.rq.slots = static_cast<uint32_t>(s.mb.out[3]);
    s.rq.stride = static_cast<uint32_t>(s.mb.out[3] >> 32);
    EXPECT_GE(s.mb.out[4], 8u) << "max_wr granted";
  }
  if (at.qp) {
    EXPECT_EQ(s.mb.Run(cmd::Op::kQueueMemory, {at.qp, at.qp_bytes}), 0u);
  }
  EXPECT_EQ(s.mb.Run(cmd::Op::kCreateQp,
                     {static_cast<uint64_t>(qptwin::QpType::kRc), s.pd, cqs, 16 | uint64_t{16} << 32,
                      1 | 1 << 16, srq ? s.srq | uint64_t{1} << 32 : 0}),
            0u);
  s.sq.qpn = static_cast<uint32_t>(s.mb.out[0]);
  s.sq.addr = s.mb.out[1];
  s.sq.slots = static_cast<uint32_t>(s.mb.out[2]);
  s.sq.stride = static_cast<uint32_t>(s.mb.out[2] >> 32);
  if (srq) {
    EXPECT_EQ(s.mb.out[3] | s.mb.out[4] | s.mb.out[5], 0u) << "no receive ring of its own";
  } else {
    s.rq.addr = s.mb.out[3];
    s.rq.record = s.mb.out[4];
    s.rq.slots = static_cast<uint32_t>(s.mb.out[5]);
    s.rq.stride = static_cast<uint32_t>(s.mb.out[5] >> 32);
  }
  EXPECT_GE(s.mb.out[6] & 0xffffffffu, 16u) << "max_send_wr granted";
  return s;
}

// One MODIFY_QP of `s`'s QP (or QP `qpn` of s's) from `cur` to `next` towards `peer`, on the
// table's minimum mask.
uint32_t StepByCommand(CommandSide& s, const CommandSide& peer, qptwin::QpState cur,
                       qptwin::QpState next, uint64_t qpn = 0,
                       qptwin::QpType type = qptwin::QpType::kRc, uint64_t dest_qpn = 0) {
  using qptwin::QpState;
  const qptwin::AttrMask mask = qptwin::MinimumMask(type, cur, next);
  const uint64_t in2 = static_cast<uint64_t>(next) |
                       static_cast<uint64_t>(qptwin::Mtu::k1024) << 16 | uint64_t{1} << 24 |
                       uint64_t{14} << 48 | uint64_t{12} << 56;
  const uint64_t in5 = uint64_t{qptwin::access::kAll} | uint64_t{7} << 32 | uint64_t{7} << 40 |
                       uint64_t{1} << 48 | uint64_t{1} << 56;
  return s.mb.Run(cmd::Op::kModifyQp, {qpn ? qpn : s.sq.qpn, mask, in2,
                                       dest_qpn ? dest_qpn : peer.sq.qpn,
                                       0x100 | uint64_t{0x100} << 32, in5, peer.gid[0],
                                       peer.gid[1]});
}

// Another RC QP of `s`'s on its SRQ (4 send WRs), moved to INIT: its number (0: failed).
uint64_t SrqQpInInit(CommandSide& s, const CommandSide& peer) {
  const uint64_t cqs = uint64_t{s.cq.cqn} | uint64_t{s.cq.cqn} << 32;
  if (s.mb.Run(cmd::Op::kCreateQp, {static_cast<uint64_t>(qptwin::QpType::kRc), s.pd, cqs, 4, 1,
                                    s.srq | uint64_t{1} << 32}) != 0) {
    return 0;
  }
  const uint64_t qpn = s.mb.out[0];
  return StepByCommand(s, peer, qptwin::QpState::kReset, qptwin::QpState::kInit, qpn) == 0 ? qpn
                                                                                           : 0;
}

// QP `qpn` of `s`'s to `state` (a move the table allows on the state alone: ERR, RESET).
uint32_t ToStateByCommand(CommandSide& s, uint64_t qpn, qptwin::QpState state) {
  return s.mb.Run(cmd::Op::kModifyQp, {qpn, qptwin::attr::kState, static_cast<uint64_t>(state)});
}

// QP `qpn` of `s`'s to ERR.
uint32_t ToErrByCommand(CommandSide& s, uint64_t qpn) {
  return ToStateByCommand(s, qpn, qptwin::QpState::kErr);
}

void ConnectByCommands(CommandSide& s, const CommandSide& peer) {
  using qptwin::QpState;
  EXPECT_EQ(StepByCommand(s, peer, QpState::kReset, QpState::kInit), 0u);
  EXPECT_EQ(StepByCommand(s, peer, QpState::kInit, QpState::kRtr), 0u);
  EXPECT_EQ(StepByCommand(s, peer, QpState::kRtr, QpState::kRts), 0u);
}

constexpr uint64_t kCmdRegionA = kDramBase + 0x4'0000;
constexpr uint64_t kCmdRegionB = kDramBase + 0x5'0000;

// Two cx6-100g NICs set up and connected by commands alone (b's QP on an SRQ when asked).
struct CommandPair {
  std::unique_ptr<qptwin::Backend> be;
  CommandSide a, b;
};
CommandPair ConnectedByCommands(bool b_on_srq = false) {
  qptwin::model::ModelOptions o;
  o.profile = "cx6-100g";
  CommandPair p;
  p.be = qptwin::model::MakeModelBackend(o);
  EXPECT_NE(p.be, nullptr);
  p.a = SetUpByCommands(0, kQueuesA, kCmdRegionA);
  p.b = SetUpByCommands(1, kQueuesB, kCmdRegionB, b_on_srq);
  ConnectByCommands(p.a, p.b);
  ConnectByCommands(p.b, p.a);
  return p;
}

// The wr_id of the CQE at `addr` (model/engine/cq.h contract 5), once byte 63 says it is
// the ring's first pass; ~0 if it is not there.
uint64_t FirstPassCqeWrId(uint64_t addr) {
  return TheDram()->At(addr)[63] == 1 ? CqeWrId(addr, 0) : ~uint64_t{0};
}

TEST(DriverCommands, ADriverSetsUpConnectsAndWritesWithNoVerbsCall) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  auto [be, a, b] = ConnectedByCommands();
  EXPECT_GE(a.sq.addr, kQueuesA);
  EXPECT_LT(a.sq.addr, kQueuesA + kQueueBytes);
  EXPECT_GE(a.cq.addr, kQueuesA);
  EXPECT_EQ(a.cq.slots, 64u);
  EXPECT_NE(a.gid[0] | a.gid[1], b.gid[0] | b.gid[1]) << "each port its own GID";
  ASSERT_EQ(a.mb.Run(cmd::Op::kQueryQp, {a.sq.qpn}), 0u);
  EXPECT_EQ(a.mb.out[0], static_cast<uint64_t>(qptwin::QpState::kRts));
  EXPECT_EQ(a.mb.out[3], b.sq.qpn) << "its peer";
  // The data path, the driver's own: a WQE in the ring, one doorbell, the CQE by its owner.
  for (int i = 0; i < 64; ++i) TheDram()->At(a.region)[i] = static_cast<uint8_t>(5 * i + 1);
  DriverWqe w;
  w.wr_id = 4242;
  w.remote_addr = b.region + 256;
  w.rkey = b.rkey;
  w.sge = {a.region, 64, a.lkey};
  const uint32_t p = DriverWrite(a.sq, 0, w);
  ASSERT_EQ(DriverRing(0, a.sq.qpn, p), tlm::TLM_OK_RESPONSE);
  be->Advance(100'000);
  EXPECT_EQ(FirstPassCqeWrId(a.cq.addr), 4242u);
  EXPECT_EQ(TheDram()->At(a.cq.addr)[32], static_cast<uint8_t>(qptwin::WcStatus::kSuccess));
  EXPECT_EQ(0, std::memcmp(TheDram()->At(b.region + 256), TheDram()->At(a.region), 64));
  // Everything goes again by command; a number gone is EINVAL.
  for (CommandSide* s : {&a, &b}) {
    EXPECT_EQ(s->mb.Run(cmd::Op::kDestroyQp, {s->sq.qpn}), 0u);
    EXPECT_EQ(s->mb.Run(cmd::Op::kDestroyQp, {s->sq.qpn}), static_cast<uint32_t>(EINVAL));
    EXPECT_EQ(s->mb.Run(cmd::Op::kDestroyCq, {s->cq.cqn}), 0u);
    EXPECT_EQ(s->mb.Run(cmd::Op::kDeregMr, {s->lkey}), 0u);
    EXPECT_EQ(s->mb.Run(cmd::Op::kDeallocPd, {s->pd}), 0u);
  }
}

// command_port.h contract 3: a driver that allocated a buffer for each queue names it as
// the window just before the create (mlx5's drivers pass each queue's own buffer): the
// ring starts there, a QP's receive ring and record follow its send ring, as a CQ's record
// follows its CQEs; a buffer too small makes nothing.
TEST(DriverCommands, EachQueueGoesIntoTheBufferItsDriverNamed) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  constexpr uint64_t kCqAt = kDramBase + 0x6'0000;
  constexpr uint64_t kQpAt = kDramBase + 0x6'4000;
  constexpr uint64_t kQpBytes = 0x4000;
  qptwin::model::ModelOptions o;
  o.profile = "cx6-100g";
  auto be = qptwin::model::MakeModelBackend(o);
  ASSERT_NE(be, nullptr);
  CommandSide a = SetUpByCommands(0, kQueuesA, kCmdRegionA, false, {kCqAt, kQpAt, kQpBytes});
  CommandSide b = SetUpByCommands(1, kQueuesB, kCmdRegionB);
  EXPECT_EQ(a.cq.addr, kCqAt);
  EXPECT_EQ(a.cq.record, kCqAt + 64 * 64) << "the record after the CQEs";
  EXPECT_EQ(a.sq.addr, kQpAt);
  const uint64_t sq_bytes = uint64_t{a.sq.slots} * a.sq.stride;
  EXPECT_EQ(a.rq.addr, kQpAt + (sq_bytes + 63) / 64 * 64) << "the receive ring after the send ring";
  EXPECT_EQ(a.rq.record, a.rq.addr + (uint64_t{a.rq.slots} * a.rq.stride + 63) / 64 * 64);
  EXPECT_LE(a.rq.record + 64, kQpAt + kQpBytes);
  // A buffer that overlaps a live queue's is EBUSY; one without room for the record is
  // ENOMEM, and the create makes nothing.
  EXPECT_EQ(a.mb.Run(cmd::Op::kQueueMemory, {kCqAt + 64, kCq64Bytes}),
            static_cast<uint32_t>(EBUSY));
  ASSERT_EQ(a.mb.Run(cmd::Op::kQueueMemory, {kDramBase + 0x6'2000, 64 * 64}), 0u);
  EXPECT_EQ(a.mb.Run(cmd::Op::kCreateCq, {64, 0, 0, 0}), static_cast<uint32_t>(ENOMEM));
  EXPECT_EQ(a.mb.out[0] | a.mb.out[1], 0u);
  // The data path runs on the queues where a's driver put them: the CQE is at kCqAt.
  ConnectByCommands(a, b);
  ConnectByCommands(b, a);
  for (int i = 0; i < 64; ++i) TheDram()->At(a.region)[i] = static_cast<uint8_t>(3 * i + 7);
  DriverWqe w;
  w.wr_id = 6161;
  w.remote_addr = b.region + 128;
  w.rkey = b.rkey;
  w.sge = {a.region, 64, a.lkey};
  ASSERT_EQ(DriverRing(0, a.sq.qpn, DriverWrite(a.sq, 0, w)), tlm::TLM_OK_RESPONSE);
  be->Advance(100'000);
  EXPECT_EQ(FirstPassCqeWrId(kCqAt), 6161u);
  EXPECT_EQ(0, std::memcmp(TheDram()->At(b.region + 128), TheDram()->At(a.region), 64));
  // A resize goes into the buffer named for it; naming a buffer whose queue lives on makes
  // it current again, the next queue after that one.
  constexpr uint64_t kResizedAt = kDramBase + 0x6'9000;
  ASSERT_EQ(a.mb.Run(cmd::Op::kQueueMemory, {kResizedAt, 128 * 64 + 64}), 0u);
  ASSERT_EQ(a.mb.Run(cmd::Op::kResizeCq, {a.cq.cqn, 128}), 0u);
  EXPECT_EQ(a.mb.out[1], kResizedAt);
  EXPECT_EQ(a.mb.out[2], kResizedAt + 128 * 64);
  EXPECT_EQ(a.mb.out[3], 128u);
  ASSERT_EQ(a.mb.Run(cmd::Op::kQueueMemory, {kQpAt, kQpBytes}), 0u);
  ASSERT_EQ(a.mb.Run(cmd::Op::kCreateCq, {16, 0, 0, 0}), 0u);
  EXPECT_EQ(a.mb.out[1], a.rq.record + 64) << "after the QP's rings and record";
  ASSERT_EQ(a.mb.Run(cmd::Op::kDestroyCq, {a.mb.out[0]}), 0u);
  // Its buffer free again, the driver may give it to the next queue.
  ASSERT_EQ(a.mb.Run(cmd::Op::kDestroyQp, {a.sq.qpn}), 0u);
  ASSERT_EQ(a.mb.Run(cmd::Op::kDestroyCq, {a.cq.cqn}), 0u);
  ASSERT_EQ(a.mb.Run(cmd::Op::kQueueMemory, {kCqAt + 64, kCq64Bytes}), 0u);
  ASSERT_EQ(a.mb.Run(cmd::Op::kCreateCq, {64, 0, 0, 0}), 0u);
  EXPECT_EQ(a.mb.out[1], kCqAt + 64);
}

TEST(DriverCommands, ASendLandsInAnSrqsReceiveAndTheQueuesResizeByCommand) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  auto [be, a, b] = ConnectedByCommands(/*b_on_srq=*/true);
  ASSERT_GE(b.rq.addr, kQueuesB);
  // B's driver arms the SRQ's limit at 2 and puts three receives in its ring; A's sends 64
  // bytes into the first, then into the second.
  ASSERT_EQ(b.mb.Run(cmd::Op::kModifySrq, {b.srq, qptwin::srq_attr::kLimit, 0, 2}), 0u);
  for (uint32_t n = 0; n < 3; ++n) DriverRecv(b.rq, n, 77 + n, {b.region + 512 + 64 * n, 64, b.lkey});
  for (int i = 0; i < 64; ++i) TheDram()->At(a.region)[i] = static_cast<uint8_t>(3 * i + 9);
  DriverWqe w;
  w.wr_id = 5;
  w.opcode = qptwin::WrOpcode::kSend;
  w.sge = {a.region, 64, a.lkey};
  ASSERT_EQ(DriverRing(0, a.sq.qpn, DriverWrite(a.sq, 0, w)), tlm::TLM_OK_RESPONSE);
  be->Advance(100'000);
  EXPECT_EQ(FirstPassCqeWrId(b.cq.addr), 77u) << "the receive's CQE";
  const uint8_t* cqe = TheDram()->At(b.cq.addr);
  EXPECT_EQ(cqe[32], static_cast<uint8_t>(qptwin::WcStatus::kSuccess));
  EXPECT_EQ(cqe[33], static_cast<uint8_t>(qptwin::WcOpcode::kRecv));
  EXPECT_EQ(0, std::memcmp(TheDram()->At(b.region + 512), TheDram()->At(a.region), 64));
  EXPECT_EQ(b.mb.Run(cmd::Op::kGetEvent), static_cast<uint32_t>(EAGAIN)) << "two left: no event";
  ASSERT_EQ(DriverRing(0, a.sq.qpn, DriverWrite(a.sq, 1, w)), tlm::TLM_OK_RESPONSE);
  be->Advance(100'000);
  EXPECT_EQ(FirstPassCqeWrId(b.cq.addr + 64), 78u);
  ASSERT_EQ(b.mb.Run(cmd::Op::kGetEvent), 0u) << "one left, under the limit";
  EXPECT_EQ(b.mb.out[0], static_cast<uint64_t>(qptwin::EventType::kSrqLimitReached));
  EXPECT_EQ(b.mb.out[1], b.srq);
  EXPECT_EQ(b.mb.Run(cmd::Op::kGetEvent), static_cast<uint32_t>(EAGAIN)) << "taken once";
  // RESIZE_CQ: a new ring, the CQE B's driver has not taken at its front.
  ASSERT_EQ(b.mb.Run(cmd::Op::kResizeCq, {b.cq.cqn, 200}), 0u);
  EXPECT_EQ(b.mb.out[0], b.cq.cqn);
  EXPECT_GE(b.mb.out[3], 200u);
  EXPECT_NE(b.mb.out[1], b.cq.addr) << "placed anew";
  EXPECT_EQ(FirstPassCqeWrId(b.mb.out[1]), 77u);
  // The SRQ grows (ibv_modify_srq max_wr).
  ASSERT_EQ(b.mb.Run(cmd::Op::kModifySrq, {b.srq, qptwin::srq_attr::kMaxWr, 32, 0}), 0u);
  EXPECT_EQ(b.mb.out[0], b.srq);
  EXPECT_GE(b.mb.out[4], 32u);
  EXPECT_NE(b.mb.out[1], 0u);
  // Two QPs on the SRQ go to ERR (each raises LAST_WQE_REACHED); one is destroyed before
  // its event is taken, and its event goes with it (as uverbs' release of its events).
  const uint64_t second = SrqQpInInit(b, a);
  ASSERT_NE(second, 0u);
  ASSERT_EQ(ToErrByCommand(b, second), 0u);
  ASSERT_EQ(ToErrByCommand(b, b.sq.qpn), 0u);
  ASSERT_EQ(b.mb.Run(cmd::Op::kDestroyQp, {second}), 0u);
  ASSERT_EQ(b.mb.Run(cmd::Op::kGetEvent), 0u);
  EXPECT_EQ(b.mb.out[0], static_cast<uint64_t>(qptwin::EventType::kQpLastWqeReached));
  EXPECT_EQ(b.mb.out[1], b.sq.qpn) << "the QP still there";
  EXPECT_EQ(b.mb.Run(cmd::Op::kGetEvent), static_cast<uint32_t>(EAGAIN)) << "none of the other";
  // An SRQ a QP uses stays; then it goes.
  EXPECT_EQ(b.mb.Run(cmd::Op::kDestroySrq, {b.srq}), static_cast<uint32_t>(EBUSY));
  EXPECT_EQ(b.mb.Run(cmd::Op::kDestroyQp, {b.sq.qpn}), 0u);
  EXPECT_EQ(b.mb.Run(cmd::Op::kDestroySrq, {b.srq}), 0u);
  EXPECT_EQ(b.mb.Run(cmd::Op::kDestroySrq, {b.srq}), static_cast<uint32_t>(EINVAL));
}

// A UD QP of `s`'s, on its CQ, to RTS by commands (UD's minimum masks, Q_Key kUdQkey).
constexpr uint32_t kUdQkey = 0x1111'1111;
void UdQpByCommands(CommandSide& s, qptwin::model::SendRing* sq, qptwin::model::RecvRing* rq) {
  using qptwin::QpState;
  const uint64_t cqs = uint64_t{s.cq.cqn} | uint64_t{s.cq.cqn} << 32;
  ASSERT_EQ(s.mb.Run(cmd::Op::kCreateQp, {static_cast<uint64_t>(qptwin::QpType::kUd), s.pd, cqs,
                                          8 | uint64_t{8} << 32, 1 | 1 << 16}),
            0u);
  sq->qpn = static_cast<uint32_t>(s.mb.out[0]);
  sq->addr = s.mb.out[1];
  sq->slots = static_cast<uint32_t>(s.mb.out[2]);
  sq->stride = static_cast<uint32_t>(s.mb.out[2] >> 32);
  rq->addr = s.mb.out[3];
  rq->record = s.mb.out[4];
  rq->slots = static_cast<uint32_t>(s.mb.out[5]);
  rq->stride = static_cast<uint32_t>(s.mb.out[5] >> 32);
  const QpState path[] = {QpState::kReset, QpState::kInit, QpState::kRtr, QpState::kRts};
  for (int i = 0; i + 1 < 4; ++i) {
    const qptwin::AttrMask mask = qptwin::MinimumMask(qptwin::QpType::kUd, path[i], path[i + 1]);
    ASSERT_EQ(s.mb.Run(cmd::Op::kModifyQp, {sq->qpn, mask,
                                            static_cast<uint64_t>(path[i + 1]) | uint64_t{1} << 24,
                                            uint64_t{kUdQkey} << 32, uint64_t{0x200} << 32}),
              0u)
        << "UD to " << static_cast<int>(path[i + 1]);
  }
}

// UD by commands: CREATE_AH to the peer's GID, and a driver's UD SEND naming it (with the
// remote QPN and Q_Key) lands in the peer's receive behind its 40-byte network header.
TEST(DriverCommands, AUdSendNamesTheAddressHandleACommandMade) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  auto [be, a, b] = ConnectedByCommands();
  qptwin::model::SendRing a_sq, b_sq;
  qptwin::model::RecvRing a_rq, b_rq;
  UdQpByCommands(a, &a_sq, &a_rq);
  UdQpByCommands(b, &b_sq, &b_rq);
  ASSERT_NE(b_rq.addr, 0u);
  EXPECT_EQ(a.mb.Run(cmd::Op::kCreateAh, {a.pd + 99, b.gid[0], b.gid[1]}),
            static_cast<uint32_t>(EINVAL))
      << "no such PD";
  ASSERT_EQ(a.mb.Run(cmd::Op::kCreateAh, {a.pd, b.gid[0], b.gid[1]}), 0u);
  const uint64_t ah = a.mb.out[0];
  EXPECT_NE(ah, 0u);
  DriverRecv(b_rq, 0, 55, {b.region + 1024, 40 + 64, b.lkey});
  for (int i = 0; i < 64; ++i) TheDram()->At(a.region)[i] = static_cast<uint8_t>(7 * i + 3);
  DriverWqe w;
  w.wr_id = 66;
  w.opcode = qptwin::WrOpcode::kSend;
  w.sge = {a.region, 64, a.lkey};
  w.ah = static_cast<uint32_t>(ah);
  w.remote_qpn = b_sq.qpn;
  w.remote_qkey = kUdQkey;
  ASSERT_EQ(DriverRing(0, a_sq.qpn, DriverWrite(a_sq, 0, w)), tlm::TLM_OK_RESPONSE);
  be->Advance(100'000);
  EXPECT_EQ(FirstPassCqeWrId(a.cq.addr), 66u) << "the SEND's CQE";
  EXPECT_EQ(TheDram()->At(a.cq.addr)[32], static_cast<uint8_t>(qptwin::WcStatus::kSuccess));
  ASSERT_EQ(FirstPassCqeWrId(b.cq.addr), 55u) << "the receive's CQE";
  const uint8_t* cqe = TheDram()->At(b.cq.addr);
  EXPECT_EQ(cqe[32], static_cast<uint8_t>(qptwin::WcStatus::kSuccess));
  uint32_t byte_len = 0, src_qp = 0;
  std::memcpy(&byte_len, cqe + 8, 4);
  std::memcpy(&src_qp, cqe + 20, 4);
  EXPECT_EQ(byte_len, 40u + 64u) << "the network header and the payload";
  EXPECT_EQ(src_qp, a_sq.qpn);
  EXPECT_EQ(0, std::memcmp(TheDram()->At(b.region + 1024 + 40), TheDram()->At(a.region), 64));
  EXPECT_EQ(a.mb.Run(cmd::Op::kDestroyAh, {ah}), 0u);
  EXPECT_EQ(a.mb.Run(cmd::Op::kDestroyAh, {ah}), static_cast<uint32_t>(EINVAL));
}

// A BIND_MW WQE (send_wqe_image.h) binding the window of `old_rkey` to 512 bytes at `addr` of
// the region numbered `mr` for REMOTE_WRITE; its new rkey (`rkey`) is the window's with the
// next key byte.
DriverWqe BindWqe(uint64_t wr_id, uint32_t old_rkey, uint32_t mr, uint64_t addr) {
  DriverWqe bind;
  bind.wr_id = wr_id;
  bind.opcode = qptwin::WrOpcode::kBindMw;
  bind.sges = 0;
  bind.rkey = (old_rkey & ~0xffu) | ((old_rkey + 1) & 0xffu);
  bind.mw_rkey = old_rkey;
  bind.bind_mr = mr;
  bind.bind_addr = addr;
  bind.bind_length = 512;
  bind.bind_access = qptwin::access::kRemoteWrite;
  return bind;
}

// Memory windows by command (engine/command_port.h kAllocMw): b's driver allocates a type 2
// window, binds it to 512 bytes of a region with MW_BIND by a BIND_MW WQE in its own send
// ring, and a's driver WRITEs through the window's new rkey; a WRITE past the window's end
// is refused (REM_ACCESS_ERR). Then DEALLOC_MW; a type 1 window; the commands' errors.
TEST(DriverCommands, ADriverBindsAWindowItAllocatedAndAPeerWritesThroughIt) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  auto [be, a, b] = ConnectedByCommands();
  ASSERT_EQ(b.mb.Run(cmd::Op::kRegMr, {b.pd, b.region, 4096,
                                      qptwin::access::kAll | qptwin::access::kMwBind}),
            0u);
  const uint64_t bindable = b.mb.out[2];
  EXPECT_NE(bindable, 0u) << "the region's number for a BIND_MW";
  EXPECT_EQ(b.mb.Run(cmd::Op::kAllocMw, {b.pd + 99, 2}), static_cast<uint32_t>(EINVAL))
      << "no such PD";
  EXPECT_EQ(b.mb.Run(cmd::Op::kAllocMw, {b.pd, 3}), static_cast<uint32_t>(EINVAL)) << "type 3";
  ASSERT_EQ(b.mb.Run(cmd::Op::kAllocMw, {b.pd, 2}), 0u);
  const uint64_t mw = b.mb.out[0];
  const auto old_rkey = static_cast<uint32_t>(b.mb.out[1]);
  const DriverWqe bind = BindWqe(70, old_rkey, static_cast<uint32_t>(bindable), b.region + 1024);
  const uint32_t new_rkey = bind.rkey;
  ASSERT_EQ(DriverRing(1, b.sq.qpn, DriverWrite(b.sq, 0, bind)), tlm::TLM_OK_RESPONSE);
  be->Advance(100'000);
  ASSERT_EQ(FirstPassCqeWrId(b.cq.addr), 70u) << "the bind's CQE";
  EXPECT_EQ(TheDram()->At(b.cq.addr)[32], static_cast<uint8_t>(qptwin::WcStatus::kSuccess));
  EXPECT_EQ(TheDram()->At(b.cq.addr)[33], static_cast<uint8_t>(qptwin::WcOpcode::kBindMw));
  for (int i = 0; i < 64; ++i) TheDram()->At(a.region)[i] = static_cast<uint8_t>(3 * i + 9);
  DriverWqe w;
  w.wr_id = 71;
  w.remote_addr = b.region + 1024 + 448;  // the window's last 64 bytes
  w.rkey = new_rkey;
  w.sge = {a.region, 64, a.lkey};
  uint32_t p = DriverWrite(a.sq, 0, w);
  ASSERT_EQ(DriverRing(0, a.sq.qpn, p), tlm::TLM_OK_RESPONSE);
  be->Advance(100'000);
  ASSERT_EQ(FirstPassCqeWrId(a.cq.addr), 71u);
  EXPECT_EQ(TheDram()->At(a.cq.addr)[32], static_cast<uint8_t>(qptwin::WcStatus::kSuccess));
  EXPECT_EQ(0, std::memcmp(TheDram()->At(b.region + 1024 + 448), TheDram()->At(a.region), 64));
  // Then, each on QPs reset and connected again (a refused WRITE takes both to ERR): the old
  // rkey, past the window's end, and after DEALLOC_MW; each refused, the memory untouched.
  for (int i = 0; i < 64; ++i) TheDram()->At(a.region)[i] = 0xa5;
  const uint8_t before = TheDram()->At(b.region + 1024 + 480)[0];
  struct Refused {
    uint32_t rkey;
    uint64_t offset;
    bool dealloc_first;
  };
  const Refused cases[] = {{old_rkey, 448, false}, {new_rkey, 480, false}, {new_rkey, 0, true}};
  uint64_t id = 72;
  for (const Refused& c : cases) {
    SCOPED_TRACE(id);
    if (c.dealloc_first) {
      EXPECT_EQ(b.mb.Run(cmd::Op::kDeallocMw, {mw}), 0u) << "a bound window goes too";
      EXPECT_EQ(b.mb.Run(cmd::Op::kDeallocMw, {mw}), static_cast<uint32_t>(EINVAL));
    }
    ASSERT_EQ(ToErrByCommand(a, a.sq.qpn), 0u);
    ASSERT_EQ(ToStateByCommand(b, b.sq.qpn, qptwin::QpState::kReset), 0u);
    ASSERT_EQ(ToStateByCommand(a, a.sq.qpn, qptwin::QpState::kReset), 0u);
    ConnectByCommands(a, b);
    ConnectByCommands(b, a);
    w.wr_id = id;
    w.rkey = c.rkey;
    w.remote_addr = b.region + 1024 + c.offset;
    p = DriverWrite(a.sq, p, w);  // a RESET keeps the ring's indices (nic_qp.cc ResetQueues)
    ASSERT_EQ(DriverRing(0, a.sq.qpn, p), tlm::TLM_OK_RESPONSE);
    be->Advance(100'000);
    const uint64_t cqe = a.cq.addr + (id - 71) * 64;
    EXPECT_EQ(CqeWrId(cqe, 0), id);
    EXPECT_EQ(TheDram()->At(cqe)[32], static_cast<uint8_t>(qptwin::WcStatus::kRemAccessErr));
    ++id;
  }
  EXPECT_EQ(TheDram()->At(b.region + 1024 + 480)[0], before) << "nothing was written";
  EXPECT_NE(TheDram()->At(b.region + 1024)[0], 0xa5);
  ASSERT_EQ(b.mb.Run(cmd::Op::kAllocMw, {b.pd, 1}), 0u);
  EXPECT_NE(b.mb.out[1], 0u) << "a type 1 window's rkey";
  EXPECT_EQ(b.mb.Run(cmd::Op::kDeallocMw, {b.mb.out[0]}), 0u);
}

// XRC by command (engine/command_port.h kOpenXrcd, kCreateSrq's in3, kCreateQp's XRC
// types): b's driver opens an XRC domain, makes an XRC SRQ completing on its CQ and an
// XRC_RECV QP in the domain; a's driver makes an XRC_SEND QP, connects both, and SENDs to
// the SRQ by its number on the wire. The receive b's driver put in the SRQ's ring takes it.
TEST(DriverCommands, AnXrcSendByCommandsLandsInTheTargetsXrcSrq) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  using qptwin::QpState;
  using qptwin::QpType;
  auto [be, a, b] = ConnectedByCommands();
  ASSERT_EQ(b.mb.Run(cmd::Op::kOpenXrcd), 0u);
  const uint64_t xrcd = b.mb.out[0];
  // The SRQ's receives complete on a CQ of their own, not the one b's RC QP uses.
  ASSERT_EQ(b.mb.Run(cmd::Op::kCreateCq, {16, 0, 0, 0}), 0u);
  const uint64_t srq_cqn = b.mb.out[0];
  const uint64_t srq_cq = b.mb.out[1];
  EXPECT_EQ(b.mb.Run(cmd::Op::kCreateXrcSrq, {b.pd, 8, 1, xrcd + 9, srq_cqn}),
            static_cast<uint32_t>(EINVAL))
      << "no such XRCD";
  EXPECT_EQ(b.mb.Run(cmd::Op::kCreateXrcSrq, {b.pd, 8, 1, xrcd, srq_cqn + 99}),
            static_cast<uint32_t>(EINVAL))
      << "no such CQ";
  ASSERT_EQ(b.mb.Run(cmd::Op::kCreateXrcSrq, {b.pd, 8, 1, xrcd, srq_cqn}), 0u);
  const uint64_t srq = b.mb.out[0];
  qptwin::model::RecvRing srq_ring;
  srq_ring.addr = b.mb.out[1];
  srq_ring.record = b.mb.out[2];
  srq_ring.slots = static_cast<uint32_t>(b.mb.out[3]);
  srq_ring.stride = static_cast<uint32_t>(b.mb.out[3] >> 32);
  const auto srqn = static_cast<uint32_t>(b.mb.out[5]);
  EXPECT_NE(srqn, 0u) << "the SRQ's number on the wire";
  ASSERT_EQ(b.mb.Run(cmd::Op::kCreateQp,
                     {static_cast<uint64_t>(QpType::kXrcRecv), 0, 0, 0, 0, 0, xrcd}),
            0u);
  const uint64_t tgt = b.mb.out[0];
  EXPECT_EQ(b.mb.out[1], 0u) << "no send ring";
  ASSERT_EQ(a.mb.Run(cmd::Op::kCreateQp, {static_cast<uint64_t>(QpType::kXrcSend), a.pd,
                                          a.cq.cqn, 16, 1, 0}),
            0u);
  qptwin::model::SendRing ini;
  ini.qpn = static_cast<uint32_t>(a.mb.out[0]);
  ini.addr = a.mb.out[1];
  ini.slots = static_cast<uint32_t>(a.mb.out[2]);
  ini.stride = static_cast<uint32_t>(a.mb.out[2] >> 32);
  EXPECT_EQ(a.mb.out[3], 0u) << "no receive ring";
  EXPECT_EQ(a.mb.Run(cmd::Op::kCreateQp, {static_cast<uint64_t>(QpType::kXrcSend), a.pd,
                                          a.cq.cqn | uint64_t{0xdead} << 32, 16, 1, 0}),
            static_cast<uint32_t>(EINVAL))
      << "a receive CQ that is no CQ (0 is none)";
  const QpState path[] = {QpState::kReset, QpState::kInit, QpState::kRtr, QpState::kRts};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(StepByCommand(a, b, path[i], path[i + 1], ini.qpn, QpType::kXrcSend, tgt), 0u);
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(StepByCommand(b, a, path[i], path[i + 1], tgt, QpType::kXrcRecv, ini.qpn), 0u);
  }
  DriverRecv(srq_ring, 0, 88, {b.region + 2048, 256, b.lkey});
  for (int i = 0; i < 64; ++i) TheDram()->At(a.region)[i] = static_cast<uint8_t>(11 * i + 5);
  DriverWqe w;
  w.wr_id = 87;
  w.opcode = qptwin::WrOpcode::kSend;
  w.sge = {a.region, 64, a.lkey};
  w.remote_srqn = srqn;
  ASSERT_EQ(DriverRing(0, ini.qpn, DriverWrite(ini, 0, w)), tlm::TLM_OK_RESPONSE);
  be->Advance(100'000);
  EXPECT_EQ(FirstPassCqeWrId(a.cq.addr), 87u) << "the SEND's CQE";
  EXPECT_EQ(TheDram()->At(a.cq.addr)[32], static_cast<uint8_t>(qptwin::WcStatus::kSuccess));
  ASSERT_EQ(FirstPassCqeWrId(srq_cq), 88u) << "the SRQ's receive, on the SRQ's CQ";
  EXPECT_EQ(TheDram()->At(srq_cq)[32], static_cast<uint8_t>(qptwin::WcStatus::kSuccess));
  EXPECT_NE(FirstPassCqeWrId(b.cq.addr), 88u) << "not on the CQ of b's RC QP";
  EXPECT_EQ(0, std::memcmp(TheDram()->At(b.region + 2048), TheDram()->At(a.region), 64));
  EXPECT_EQ(b.mb.Run(cmd::Op::kCloseXrcd, {xrcd}), static_cast<uint32_t>(EBUSY)) << "in use";
  EXPECT_EQ(b.mb.Run(cmd::Op::kDestroyQp, {tgt}), 0u);
  EXPECT_EQ(b.mb.Run(cmd::Op::kCloseXrcd, {xrcd}), static_cast<uint32_t>(EBUSY))
      << "the SRQ alone keeps it";
  EXPECT_EQ(b.mb.Run(cmd::Op::kDestroySrq, {srq}), 0u);
  EXPECT_EQ(b.mb.Run(cmd::Op::kCloseXrcd, {xrcd}), 0u);
  EXPECT_EQ(b.mb.Run(cmd::Op::kCloseXrcd, {xrcd}), static_cast<uint32_t>(EINVAL));
}

// CMD_IN registers keep their values (command_port.h contract 1): a driver that writes only
// CREATE_SRQ's in0..in2 after a REG_MR (in3: its access flags) gets a basic SRQ (found by a
// review: a first version read in3 as an XRC domain and answered EINVAL; XRC SRQs have
// their own op, kCreateXrcSrq).
TEST(DriverCommands, ACreateSrqReadsOnlyItsThreeInputs) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  auto [be, a, b] = ConnectedByCommands();
  ASSERT_EQ(b.mb.Run(cmd::Op::kRegMr, {b.pd, b.region + 0x1000, 4096, qptwin::access::kAll}), 0u);
  ASSERT_EQ(DriverMmioWrite(1, cmd::kInOffset + 0, b.pd), tlm::TLM_OK_RESPONSE);
  ASSERT_EQ(DriverMmioWrite(1, cmd::kInOffset + 8, 8), tlm::TLM_OK_RESPONSE);
  ASSERT_EQ(DriverMmioWrite(1, cmd::kInOffset + 16, 1), tlm::TLM_OK_RESPONSE);
  uint8_t word[8] = {};
  PutLe<uint32_t>(word, static_cast<uint32_t>(cmd::Op::kCreateSrq));
  ASSERT_EQ(DriverMmio(1, tlm::TLM_WRITE_COMMAND, cmd::kOpOffset, word, 4), tlm::TLM_OK_RESPONSE);
  ASSERT_EQ(DriverMmio(1, tlm::TLM_READ_COMMAND, cmd::kStatusOffset, word, 4), tlm::TLM_OK_RESPONSE);
  uint32_t status = 0;
  std::memcpy(&status, word, 4);
  EXPECT_EQ(status, 0u) << "the stale in3 (REG_MR's access flags) is not read";
}

// A driver's BIND_MW WQE names the region by a number (header byte 84). The number of another
// context's region on the same NIC (a verbs program's) fails the bind (MW_BIND_ERR), as the
// verbs post refuses it (nic_post.cc bind_resolved: mr->ctx == ctx); found by a review: a
// first version bound it, and a peer's WRITE landed in that program's buffer.
TEST(DriverCommands, ADriverCannotBindAWindowToAnotherContextsRegion) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  auto [be, a, b] = ConnectedByCommands();
  std::unique_ptr<qptwin::Device> opened;
  ASSERT_EQ(be->OpenDevice("mdev1", &opened), 0);  // b's NIC, another context
  qptwin::PdHandle vpd;
  ASSERT_EQ(opened->AllocPd(&vpd), 0);
  qptwin::MrHandle vmr;
  uint8_t* vbuf = nullptr;
  uint32_t vl = 0, vr = 0;
  ASSERT_EQ(opened->RegMr(vpd, 4096, qptwin::access::kAll | qptwin::access::kMwBind, &vmr, &vbuf,
                          &vl, &vr),
            0);
  std::memset(vbuf, 0, 4096);
  ASSERT_EQ(b.mb.Run(cmd::Op::kAllocMw, {b.pd, 2}), 0u);
  const auto old_rkey = static_cast<uint32_t>(b.mb.out[1]);
  // Not the driver's region.
  const DriverWqe bind = BindWqe(70, old_rkey, vmr.id, reinterpret_cast<uint64_t>(vbuf));
  const uint32_t new_rkey = bind.rkey;
  ASSERT_EQ(DriverRing(1, b.sq.qpn, DriverWrite(b.sq, 0, bind)), tlm::TLM_OK_RESPONSE);
  be->Advance(100'000);
  ASSERT_EQ(FirstPassCqeWrId(b.cq.addr), 70u);
  EXPECT_EQ(TheDram()->At(b.cq.addr)[32], static_cast<uint8_t>(qptwin::WcStatus::kMwBindErr))
      << "bound to another context's region";
  for (int i = 0; i < 64; ++i) TheDram()->At(a.region)[i] = 0x5a;
  DriverWqe w;
  w.wr_id = 71;
  w.remote_addr = reinterpret_cast<uint64_t>(vbuf);
  w.rkey = new_rkey;
  w.sge = {a.region, 64, a.lkey};
  ASSERT_EQ(DriverRing(0, a.sq.qpn, DriverWrite(a.sq, 0, w)), tlm::TLM_OK_RESPONSE);
  be->Advance(100'000);
  EXPECT_NE(vbuf[0], 0x5a) << "a peer wrote into another program's region";
}

// An EQE of a driver's event queue (engine/command_port.h kCreateEq): type, number, owner.
struct Eqe {
  uint32_t type = 0;
  uint64_t number = 0;
  uint8_t owner = 0xff;
};
Eqe EqeAt(uint64_t ring, uint32_t slot) {
  const uint8_t* at = TheDram()->At(ring + 32 * uint64_t{slot});
  Eqe e;
  std::memcpy(&e.type, at, 4);
  std::memcpy(&e.number, at + 8, 8);
  e.owner = at[31];
  return e;
}

// A driver's event queue: events written into its ring in the DRAM as they are raised,
// while it has room by the driver's last arm (the others wait in order), one interrupt per
// arm; GET_EVENT then has nothing; one queue per context; after DESTROY_EQ, GET_EVENT again.
TEST(DriverCommands, EventsGoIntoTheDriversEventQueueWithAnInterruptPerArm) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  auto [be, a, b] = ConnectedByCommands(/*b_on_srq=*/true);
  constexpr uint64_t kIrqAt = kDramBase + 0x7'e000;  // the driver's MSI-X address
  constexpr uint32_t kVector = 0xfee0'0077;
  Dram& dram = *TheDram();
  const int eqes_before = dram.seen["EQE"];
  auto interrupts = [&] { return dram.seen["EQ_EVENT"]; };
  const int irq_before = interrupts();
  ASSERT_EQ(b.mb.Run(cmd::Op::kCreateEq, {2, kIrqAt, kVector, 1}), 0u);
  const uint64_t eqn = b.mb.out[0], ring = b.mb.out[1];
  EXPECT_NE(eqn, 0u);
  EXPECT_GE(ring, kQueuesB) << "a block of the window";
  EXPECT_LT(ring, kQueuesB + kQueueBytes);
  ASSERT_EQ(b.mb.out[2], 2u);
  std::memset(TheDram()->At(ring), 0xee, 64);
  EXPECT_EQ(b.mb.Run(cmd::Op::kCreateEq, {2, kIrqAt, kVector, 1}), static_cast<uint32_t>(EBUSY));
  EXPECT_EQ(b.mb.Run(cmd::Op::kCreateEq, {0, 0, 0, 0}), static_cast<uint32_t>(EINVAL));
  auto arm = [&](uint32_t ci) {
    EXPECT_EQ(DriverMmioWrite(1, NicSlot::kEqArmOffset, eqn | uint64_t{ci} << 32),
              tlm::TLM_OK_RESPONSE);
  };
  // SRQ_LIMIT_REACHED (as in the SRQ test): EQE 0, no interrupt (not armed).
  ASSERT_EQ(b.mb.Run(cmd::Op::kModifySrq, {b.srq, qptwin::srq_attr::kLimit, 0, 2}), 0u);
  for (uint32_t n = 0; n < 3; ++n) DriverRecv(b.rq, n, 90 + n, {b.region + 64 * n, 64, b.lkey});
  DriverWqe w;
  w.opcode = qptwin::WrOpcode::kSend;
  w.sge = {a.region, 64, a.lkey};
  for (uint32_t i = 0; i < 2; ++i) {
    w.wr_id = 10 + i;
    ASSERT_EQ(DriverRing(0, a.sq.qpn, DriverWrite(a.sq, i, w)), tlm::TLM_OK_RESPONSE);
    be->Advance(100'000);
  }
  Eqe e = EqeAt(ring, 0);
  EXPECT_EQ(e.type, static_cast<uint32_t>(qptwin::EventType::kSrqLimitReached));
  EXPECT_EQ(e.number, b.srq);
  EXPECT_EQ(e.owner, 1) << "the ring's first pass";
  EXPECT_EQ(dram.seen["EQE"] - eqes_before, 1 + 1) << "the ring's clearing, then EQE 0";
  EXPECT_EQ(interrupts() - irq_before, 0) << "not armed";
  EXPECT_EQ(b.mb.Run(cmd::Op::kGetEvent), static_cast<uint32_t>(EAGAIN)) << "it is in the queue";
  // Armed while EQE 0 waits untaken: the interrupt at once, its value at its address.
  std::memset(TheDram()->At(kIrqAt), 0, 4);
  arm(0);
  EXPECT_EQ(interrupts() - irq_before, 1);
  uint32_t v = 0;
  std::memcpy(&v, TheDram()->At(kIrqAt), 4);
  EXPECT_EQ(v, kVector);
  arm(0);
  EXPECT_EQ(interrupts() - irq_before, 2) << "once per arm";
  arm(5);  // more taken than written: ignored
  // Two QPs on the SRQ go to ERR (LAST_WQE_REACHED each), the driver not having taken EQE
  // 0: the first fills the ring's other slot, the second waits for room (no arm: no
  // interrupt).
  const uint64_t second = SrqQpInInit(b, a);
  ASSERT_NE(second, 0u);
  ASSERT_EQ(ToErrByCommand(b, b.sq.qpn), 0u);
  ASSERT_EQ(ToErrByCommand(b, second), 0u);
  be->Advance(10'000);
  e = EqeAt(ring, 1);
  EXPECT_EQ(e.type, static_cast<uint32_t>(qptwin::EventType::kQpLastWqeReached));
  EXPECT_EQ(e.number, b.sq.qpn);
  EXPECT_EQ(e.owner, 1);
  EXPECT_EQ(interrupts() - irq_before, 2) << "not armed";
  EXPECT_EQ(EqeAt(ring, 0).type, static_cast<uint32_t>(qptwin::EventType::kSrqLimitReached))
      << "slot 0 still holds EQE 0: no room for the second";
  // The driver took EQEs 0 and 1 and arms: room, so the waiting event goes in (the ring's
  // second pass), and the arm's interrupt after it.
  arm(2);
  e = EqeAt(ring, 0);
  EXPECT_EQ(e.type, static_cast<uint32_t>(qptwin::EventType::kQpLastWqeReached));
  EXPECT_EQ(e.number, second);
  EXPECT_EQ(e.owner, 0) << "the second pass";
  EXPECT_EQ(interrupts() - irq_before, 3);
  EXPECT_EQ(b.mb.Run(cmd::Op::kGetEvent), static_cast<uint32_t>(EAGAIN));
  // Without the queue, GET_EVENT again; a queue may be made anew.
  ASSERT_EQ(b.mb.Run(cmd::Op::kDestroyEq, {eqn}), 0u);
  EXPECT_EQ(b.mb.Run(cmd::Op::kDestroyEq, {eqn}), static_cast<uint32_t>(EINVAL));
  const uint64_t third = SrqQpInInit(b, a);
  ASSERT_NE(third, 0u);
  ASSERT_EQ(ToErrByCommand(b, third), 0u);
  ASSERT_EQ(b.mb.Run(cmd::Op::kGetEvent), 0u);
  EXPECT_EQ(b.mb.out[0], static_cast<uint64_t>(qptwin::EventType::kQpLastWqeReached));
  EXPECT_EQ(b.mb.out[1], third);
  EXPECT_EQ(dram.seen["EQE"] - eqes_before, 1 + 3);
  ASSERT_EQ(b.mb.Run(cmd::Op::kCreateEq, {8, 0, 0, 0}), 0u);
  EXPECT_NE(b.mb.out[0], eqn) << "a new number";
}

// A review's cases. An event queue made again lands in its predecessor's block (first
// fit) and writes an event that waited at once, before the driver knows the address: the
// NIC clears the ring first, so the old queue's first-pass EQEs do not look new.
TEST(DriverCommands, AnEventQueueMadeAgainShowsNoStaleEqes) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  auto [be, a, b] = ConnectedByCommands(/*b_on_srq=*/true);
  ASSERT_EQ(b.mb.Run(cmd::Op::kCreateEq, {2, 0, 0, 0}), 0u);
  const uint64_t eqn = b.mb.out[0], ring = b.mb.out[1];
  const uint64_t second = SrqQpInInit(b, a), third = SrqQpInInit(b, a);
  ASSERT_NE(second, 0u);
  ASSERT_NE(third, 0u);
  ASSERT_EQ(ToErrByCommand(b, b.sq.qpn), 0u);  // LAST_WQE_REACHED: slot 0
  ASSERT_EQ(ToErrByCommand(b, second), 0u);    // slot 1
  ASSERT_EQ(EqeAt(ring, 1).owner, 1);
  ASSERT_EQ(EqeAt(ring, 1).number, second);
  ASSERT_EQ(b.mb.Run(cmd::Op::kDestroyEq, {eqn}), 0u);
  ASSERT_EQ(ToErrByCommand(b, third), 0u);  // waits: no queue
  ASSERT_EQ(b.mb.Run(cmd::Op::kCreateEq, {2, 0, 0, 0}), 0u);
  const uint64_t ring2 = b.mb.out[1];
  EXPECT_EQ(ring2, ring) << "first fit: the old block";
  EXPECT_EQ(EqeAt(ring2, 0).number, third) << "written at CREATE_EQ";
  EXPECT_EQ(EqeAt(ring2, 0).owner, 1);
  const Eqe stale = EqeAt(ring2, 1);
  EXPECT_EQ(stale.owner, 0) << "a stale EQE: type " << stale.type << " number " << stale.number;
}

// An EQE whose DMA write fails is not written: its event waits (no gap in the ring, no
// interrupt for it) and goes in, in order, with the next event.
TEST(DriverCommands, AnEqeWhoseWriteFailsWaitsAndGoesInWithTheNext) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  auto [be, a, b] = ConnectedByCommands(/*b_on_srq=*/true);
  constexpr uint64_t kIrqAt = kDramBase + 0x7'e000;
  Dram& dram = *TheDram();
  ASSERT_EQ(b.mb.Run(cmd::Op::kCreateEq, {4, kIrqAt, 0x77, 1}), 0u);
  const uint64_t eqn = b.mb.out[0], ring = b.mb.out[1];
  ASSERT_EQ(DriverMmioWrite(1, NicSlot::kEqArmOffset, eqn), tlm::TLM_OK_RESPONSE);
  const int irq_before = dram.seen["EQ_EVENT"];
  const uint64_t second = SrqQpInInit(b, a);
  ASSERT_NE(second, 0u);
  Router::fail_nic_writes_of = "EQE";
  Router::fail_nic_writes_left = 1;
  ASSERT_EQ(ToErrByCommand(b, b.sq.qpn), 0u);  // its EQE's write fails
  EXPECT_EQ(Router::fail_nic_writes_left, 0);
  Router::fail_nic_writes_of.clear();
  EXPECT_EQ(EqeAt(ring, 0).owner, 0) << "nothing written";
  EXPECT_EQ(dram.seen["EQ_EVENT"] - irq_before, 0) << "no interrupt for nothing";
  ASSERT_EQ(ToErrByCommand(b, second), 0u);
  EXPECT_EQ(EqeAt(ring, 0).number, b.sq.qpn) << "the event that waited, first";
  EXPECT_EQ(EqeAt(ring, 0).owner, 1);
  EXPECT_EQ(EqeAt(ring, 1).number, second);
  EXPECT_EQ(dram.seen["EQ_EVENT"] - irq_before, 1);
  EXPECT_EQ(b.mb.Run(cmd::Op::kGetEvent), static_cast<uint32_t>(EAGAIN));
}

TEST(DriverCommands, ACommandFailsWithTheVerbsErrnoAndAnswersNothing) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  qptwin::model::ModelOptions o;
  o.profile = "rxe";
  auto be = qptwin::model::MakeModelBackend(o);
  ASSERT_NE(be, nullptr);
  Mailbox mb;
  EXPECT_EQ(mb.Run(static_cast<cmd::Op>(99)), static_cast<uint32_t>(EOPNOTSUPP));
  ASSERT_EQ(mb.Run(cmd::Op::kAllocPd), 0u);
  const uint64_t pd = mb.out[0];
  EXPECT_NE(pd, 0u);
  // Without queue memory a CQ cannot be a driver's (contract 3), nor an event queue.
  EXPECT_EQ(mb.Run(cmd::Op::kCreateCq, {16, 0, 0, 0}), static_cast<uint32_t>(EINVAL));
  for (uint64_t w : mb.out) EXPECT_EQ(w, 0u) << "a failed command answers nothing";
  EXPECT_EQ(mb.Run(cmd::Op::kCreateEq, {4, 0, 0, 0}), static_cast<uint32_t>(EINVAL));
  ASSERT_EQ(mb.Run(cmd::Op::kQueueMemory, {kQueuesA, kQueueBytes}), 0u);
  // ibv_create_cq's own limit: more CQEs than the device's max_cqe.
  EXPECT_EQ(mb.Run(cmd::Op::kCreateCq, {uint64_t{1} << 30, 0, 0, 0}), static_cast<uint32_t>(EINVAL));
  ASSERT_EQ(mb.Run(cmd::Op::kCreateCq, {16, 0, 0, 0}), 0u);
  const uint64_t cq = mb.out[0];
  EXPECT_EQ(mb.Run(cmd::Op::kCreateQp, {static_cast<uint64_t>(qptwin::QpType::kRc), pd + 7,
                                        cq | cq << 32, 4 | uint64_t{4} << 32, 1 | 1 << 16}),
            static_cast<uint32_t>(EINVAL))
      << "no such PD";
  ASSERT_EQ(mb.Run(cmd::Op::kCreateQp, {static_cast<uint64_t>(qptwin::QpType::kRc), pd,
                                        cq | cq << 32, 4 | uint64_t{4} << 32, 1 | 1 << 16}),
            0u);
  const uint64_t qpn = mb.out[0];
  // RESET -> RTS is not in ib_modify_qp_is_ok's table: EINVAL, the QP as it was.
  EXPECT_EQ(mb.Run(cmd::Op::kModifyQp,
                   {qpn, qptwin::attr::kState, static_cast<uint64_t>(qptwin::QpState::kRts)}),
            static_cast<uint32_t>(EINVAL));
  ASSERT_EQ(mb.Run(cmd::Op::kQueryQp, {qpn}), 0u);
  EXPECT_EQ(mb.out[0], static_cast<uint64_t>(qptwin::QpState::kReset));
  // The PD and the CQ are in use.
  EXPECT_EQ(mb.Run(cmd::Op::kDeallocPd, {pd}), static_cast<uint32_t>(EBUSY));
  EXPECT_EQ(mb.Run(cmd::Op::kDestroyCq, {cq}), static_cast<uint32_t>(EBUSY));
  EXPECT_EQ(mb.Run(cmd::Op::kDestroyQp, {qpn}), 0u);
  EXPECT_EQ(mb.Run(cmd::Op::kDestroyCq, {cq}), 0u);
  EXPECT_EQ(mb.Run(cmd::Op::kDeallocPd, {pd}), 0u);
  EXPECT_EQ(mb.Run(cmd::Op::kDeregMr, {12345}), static_cast<uint32_t>(EINVAL)) << "no such key";
}

TEST(DriverCommands, AWindowThatWrapsTheBusIsEinvalAsThroughTheApi) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  auto be = qptwin::model::MakeModelBackend({});
  ASSERT_NE(be, nullptr);
  std::unique_ptr<qptwin::Device> d;
  ASSERT_EQ(be->OpenDevice("mdev1", &d), 0);
  const uint64_t base = 0xffff'ffff'ffff'0000u, len = 0x10'0000;
  EXPECT_EQ(qptwin::model::ModelQueueMemoryAt(d.get(), base, len), EINVAL);
  Mailbox mb;
  EXPECT_EQ(mb.Run(cmd::Op::kQueueMemory, {base, len}), static_cast<uint32_t>(EINVAL));
  // (Before, the command took it, and a CQ's record wrapped into this process's memory.)
  EXPECT_EQ(mb.Run(cmd::Op::kCreateCq, {2048, 0, 0, 0}), static_cast<uint32_t>(EINVAL));
}

TEST(DriverCommands, AQpWithNoReceiveQueueAnswersNoReceiveRing) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  auto be = qptwin::model::MakeModelBackend({});
  ASSERT_NE(be, nullptr);
  Mailbox mb;
  ASSERT_EQ(mb.Run(cmd::Op::kAllocPd), 0u);
  const uint64_t pd = mb.out[0];
  ASSERT_EQ(mb.Run(cmd::Op::kQueueMemory, {kQueuesA, kQueueBytes}), 0u);
  ASSERT_EQ(mb.Run(cmd::Op::kCreateCq, {16, 0, 0, 0}), 0u);
  const uint64_t cq = mb.out[0];
  // max_recv_wr 0, as ibv_create_qp allows.
  ASSERT_EQ(mb.Run(cmd::Op::kCreateQp,
                   {static_cast<uint64_t>(qptwin::QpType::kRc), pd, cq | cq << 32, 4, 1}),
            0u);
  EXPECT_NE(mb.out[1], 0u) << "its send ring";
  EXPECT_EQ(mb.out[3] | mb.out[4] | mb.out[5], 0u) << "no receive ring";
}

TEST(DriverCommands, TheOlderBackendTakesCommandsWhenTheNewerGoes) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  auto older = qptwin::model::MakeModelBackend({});
  ASSERT_NE(older, nullptr);
  Mailbox mb;
  ASSERT_EQ(mb.Run(cmd::Op::kAllocPd), 0u);
  EXPECT_EQ(mb.out[0], 1u) << "the older's first PD";
  std::unique_ptr<qptwin::Device> kept;
  {
    auto newer = qptwin::model::MakeModelBackend({});
    ASSERT_NE(newer, nullptr);
    ASSERT_EQ(newer->OpenDevice("", &kept), 0);
    ASSERT_EQ(mb.Run(cmd::Op::kAllocPd), 0u);
    EXPECT_EQ(mb.out[0], 1u) << "the newer's first PD";
  }
  // A Device of the newer keeps its NIC on the slot; the older is the newest alive.
  ASSERT_EQ(mb.Run(cmd::Op::kAllocPd), 0u);
  EXPECT_EQ(mb.out[0], 2u) << "the older's second PD";
  kept.reset();
  ASSERT_EQ(mb.Run(cmd::Op::kAllocPd), 0u);
  EXPECT_EQ(mb.out[0], 3u);
}

// What a scope allocates and leaks on purpose, on its own thread (LeakSanitizer's
// allocations are per thread).
struct LeaksOnPurpose {
#if defined(__SANITIZE_ADDRESS__)
  __lsan::ScopedDisabler disabler;
#endif
};

TEST(DriverCommands, NoCommandReachesABackendDestroyedOffTheKernelsThread) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  {
    // Its World is leaked on purpose (spec/backend.h contract 5): not for LeakSanitizer to
    // report, on either thread.
    [[maybe_unused]] const LeaksOnPurpose here;
    auto be = qptwin::model::MakeModelBackend({});
    ASSERT_NE(be, nullptr);
    std::thread([&] {
      [[maybe_unused]] const LeaksOnPurpose there;
      be.reset();
    }).join();
  }
  uint8_t word[8] = {};
  PutLe<uint32_t>(word, static_cast<uint32_t>(cmd::Op::kAllocPd));
  EXPECT_EQ(DriverMmio(0, tlm::TLM_WRITE_COMMAND, cmd::kOpOffset, word, 4),
            tlm::TLM_GENERIC_ERROR_RESPONSE);
}

TEST(DriverCommands, TheMailboxAnswersOnlyTheAccessesItHas) {
  ASSERT_TRUE(kBound && kCpuBound && kMmioBound);
  uint8_t word[8] = {};
  {
    auto be = qptwin::model::MakeModelBackend({});
    ASSERT_NE(be, nullptr);
    // CMD_IN keeps what was written, in 8 or in two 4-byte halves.
    ASSERT_EQ(DriverMmioWrite(0, cmd::kInOffset + 8, 0x1122334455667788u), tlm::TLM_OK_RESPONSE);
    PutLe<uint32_t>(word, 0xaabbccddu);
    ASSERT_EQ(DriverMmio(0, tlm::TLM_WRITE_COMMAND, cmd::kInOffset + 12, word, 4),
              tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(DriverMmio(0, tlm::TLM_READ_COMMAND, cmd::kInOffset + 8, word, 8),
              tlm::TLM_OK_RESPONSE);
    uint64_t v = 0;
    std::memcpy(&v, word, 8);
    EXPECT_EQ(v, 0xaabbccdd55667788u);
    // What the block does not have.
    EXPECT_EQ(DriverMmio(0, tlm::TLM_READ_COMMAND, cmd::kOpOffset, word, 4),
              tlm::TLM_ADDRESS_ERROR_RESPONSE) << "CMD_OP is written";
    EXPECT_EQ(DriverMmio(0, tlm::TLM_WRITE_COMMAND, cmd::kStatusOffset, word, 4),
              tlm::TLM_ADDRESS_ERROR_RESPONSE) << "CMD_STATUS is read";
    EXPECT_EQ(DriverMmio(0, tlm::TLM_WRITE_COMMAND, cmd::kOutOffset, word, 8),
              tlm::TLM_ADDRESS_ERROR_RESPONSE) << "CMD_OUT is read";
    EXPECT_EQ(DriverMmio(0, tlm::TLM_READ_COMMAND, cmd::kInOffset + 2, word, 2),
              tlm::TLM_BURST_ERROR_RESPONSE);
    EXPECT_EQ(DriverMmio(0, tlm::TLM_READ_COMMAND, cmd::kInOffset + 4, word, 8),
              tlm::TLM_BURST_ERROR_RESPONSE) << "unaligned";
  }
  // No Backend alive: no NIC runs a command.
  PutLe<uint32_t>(word, static_cast<uint32_t>(cmd::Op::kAllocPd));
  EXPECT_EQ(DriverMmio(0, tlm::TLM_WRITE_COMMAND, cmd::kOpOffset, word, 4),
            tlm::TLM_GENERIC_ERROR_RESPONSE);
}

}  // namespace
