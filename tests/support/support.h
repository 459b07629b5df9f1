// Test support shared by every suite (model/, hw/, tests/, tools/): one way to make a
// backend and one message when it cannot run here, a QP with its PD, CQs and MR (Side), its
// bring-up through spec/bring_up.h, and the WR and wait helpers.
//
// Contract:
//  1. Linking //tests/support:support links //model/sim:test_main, the sc_main that runs
//     GoogleTest (libsystemc.so exports main(), so a binary without it can silently run
//     zero tests). A test using it depends on "@gtest", never on "@gtest//:gtest_main".
//  2. MakeBackend() only reports (nullptr and *why); MakeBackendOrSkip() says the one
//     message, "<name> unavailable: <why>": a skip where the backend cannot run on this
//     machine (hw without a device), a failure where it must (a model profile).
//  3. Functions returning int return 0 or errno and never assert. MakeSide, SiblingQp,
//     Connect and Wait assert through GoogleTest (EXPECT/ASSERT) and return what they got.
//  4. Bring-up goes through spec/bring_up.h: the masks are the table's minimum masks, only
//     the values (kSideParams, or the arguments) are chosen here.
//  5. Single-threaded, as the backends (backend.h contract 5).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model_backend.h"
#include "spec/backend.h"
#include "spec/bring_up.h"
#include "tests/support/constants.h"

namespace qptwin::testing {

// ---- Backends -------------------------------------------------------------------------------

// Which backend a test runs on: a model profile or the real device.
struct BackendChoice {
  std::string name;   // "model_rxe", "model_ibta", "hw": test names and messages
  bool hw = false;
  model::ModelOptions model;  // when !hw
};

BackendChoice ModelChoice(const std::string& profile = "rxe");
BackendChoice HwChoice();  // the first device ibv_get_device_list finds

// The backend, or nullptr with *why (an unknown profile; no RDMA device).
std::unique_ptr<Backend> MakeBackend(const BackendChoice& choice, std::string* why);
// As MakeBackend, reporting a nullptr as contract 2 says. In SetUp():
//   backend_ = MakeBackendOrSkip(choice); if (!backend_) return;
std::unique_ptr<Backend> MakeBackendOrSkip(const BackendChoice& choice);
// The one message of contract 2, for a backend that was made but cannot be used (a device
// listed that does not open). Skips or fails the running test.
void ReportUnavailable(const BackendChoice& choice, const std::string& why);

// A model backend of the rxe profile with loss injection (contract: model_backend.h).
std::unique_ptr<Backend> RxeModel(double loss = 0, uint64_t seed = 1);

// ---- A QP with its PD, CQs and MR ---------------------------------------------------------

struct Side {
  std::shared_ptr<Device> dev;  // shared by the Sides of QPs on one opened device
  PdHandle pd;
  CqHandle scq;
  CqHandle rcq;  // == scq with SideOptions::one_cq
  QpHandle qp;   // none with SideOptions::create_qp false
  MrHandle mr;
  uint8_t* buf = nullptr;
  uint32_t lkey = 0;
  uint32_t rkey = 0;
  uint32_t qpn = 0;
  QpType type = QpType::kRc;
  QpCap cap;  // as granted by the device

  uint64_t Addr(size_t off = 0) const { return reinterpret_cast<uint64_t>(buf) + off; }
  Sge At(size_t off, uint32_t len) const { return Sge{Addr(off), len, lkey}; }
  // A QP template on this side's PD and CQs, `max_sge` SGEs per queue.
  QpInitAttr Init(uint32_t max_send_wr = 64, uint32_t max_recv_wr = 64, uint32_t max_sge = 1,
                  QpType qp_type = QpType::kRc) const;
};

struct SideOptions {
  QpType type = QpType::kRc;
  QpCap cap{16, 16, 4, 4, 64};
  size_t buf_len = 8192;
  AccessFlags mr_access = access::kAll;
  int cq_depth = 64;
  bool sq_sig_all = false;
  bool one_cq = false;     // send and receive completions on one CQ
  bool create_qp = true;   // false: PD, CQ(s) and MR only
};

// The Side on an opened device (with `pd` given, on that PD): 0 or the first errno, with
// what was created so far in *out (released with the Device).
[[nodiscard]] int CreateSide(std::shared_ptr<Device> dev, const SideOptions& o, PdHandle pd,
                             Side* out);
// Opens `dev_name` of `be` ("" = the first device) and creates the Side on it.
Side MakeSide(Backend& be, const std::string& dev_name, const SideOptions& o = {});
// A Side on an already opened device; with `pd` given, the Side uses that PD.
Side MakeSideOn(std::shared_ptr<Device> dev, const SideOptions& o = {}, PdHandle pd = {});
// Another QP on the same opened device as `base` (sharing its PD, CQs and MR).
Side SiblingQp(const Side& base, const QpInitAttr& init);

// Two Sides on "mdev0" and "mdev1" of a model backend, connected (Connect below):
//   auto [be, a, b] = ConnectedSides(RxeModel());
struct SidePair {
  std::unique_ptr<Backend> be;
  Side a;
  Side b;
};
SidePair ConnectedSides(std::unique_ptr<Backend> be, const SideOptions& o = {});

// ---- Bring-up ---------------------------------------------------------------------------------

// The values the Sides' bring-up uses: spec defaults but PSN 100, min_rnr_timer 1
// (0.01 ms), four outstanding READ/atomics each way.
BringUpParams SideParams();

// One step on its minimum mask (spec ModifyOnMinimumMask): RESET->INIT, INIT->RTR
// towards `peer`, RTR->RTS. 0 or errno.
[[nodiscard]] int ToInit(Side& s, AccessFlags qp_access = access::kAll, uint32_t qkey = kQkey);
[[nodiscard]] int ToRtr(Side& s, const Side& peer, uint8_t min_rnr_timer = 1,
                        Mtu mtu = Mtu::k1024);
[[nodiscard]] int ToRts(Side& s, uint8_t timeout = 14, uint8_t retry_cnt = 7,
                        uint8_t rnr_retry = 7);
[[nodiscard]] int StepTo(Side& s, const Side* peer, QpState next, const BringUpParams& p);

// Both QPs to RTS, each towards the other (spec ConnectPair).
void Connect(Side& a, Side& b, AccessFlags access = access::kAll);
void Connect(Side& a, Side& b, const BringUpParams& params);

// ---- Work requests and completions ------------------------------------------------------

SendWr Wr(uint64_t id, WrOpcode op, std::vector<Sge> sges,
          SendFlags flags = send_flag::kSignaled);
RecvWr Rwr(uint64_t id, std::vector<Sge> sges);
// An RDMA WRITE of `len` bytes from `from` at `off` to `to` at the same offset.
SendWr WriteWr(const Side& from, const Side& to, uint64_t id, size_t off, uint32_t len,
               bool signaled = true);

// A WR of `op` (RDMA or atomic) from `local` to `to`'s buffer at `remote_off`.
SendWr RemoteWr(uint64_t id, WrOpcode op, Sge local, const Side& to, size_t remote_off,
                SendFlags flags = send_flag::kSignaled);

// Waits for `n` completions on `cq` (EXPECTs that they came) and returns what came.
std::vector<WorkCompletion> Wait(Side& s, CqHandle cq, int n, uint64_t timeout_ns = kSecond);
QpState StateOf(Side& s);

}  // namespace qptwin::testing
