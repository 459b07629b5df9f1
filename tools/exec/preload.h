// The state of the verbs preload (libqptwin_verbs.so): model devices presented as
// libibverbs devices. libibverbs types stay inside tools/exec (like hw/, this is a front end
// over spec/backend.h that speaks verbs).
//
// Contract:
//  1. One Preload per process (Get()): LD_PRELOAD entry points have no other way to reach
//     state. It is made on the first verbs call and never destroyed (the process owns it
//     until exit), so no entry point can race its destruction.
//  2. Every model call and every table below is used on the model thread only (Run(),
//     model_thread.h): entry points convert their arguments there and back. The model
//     thread is the program's first thread to call libibverbs (ModelThread::kCaller), or a
//     thread of its own with QPTWIN_MODEL_THREAD=dedicated. Once the RoCE bridge is active
//     (another process's GID or LID was used: bridge.h), a progress thread runs the model
//     between the program's calls whenever they do not let time pass for 20 us, as a NIC
//     progresses by itself (ModelThread::StartProgress; the SystemC kernel is handed to it
//     and back under the model's lock): programs that spin on memory (ib_write_lat) or
//     sleep in read() are answered. QPTWIN_MODEL_THREAD=caller: never (the model runs only
//     inside verbs calls); one process alone never starts it, so its runs stay
//     deterministic.
//  3. An object is the model's when its context is (IsModel(): its ops.poll_cq is ours);
//     everything else goes to the real libibverbs unchanged (Real(), dlvsym RTLD_NEXT).
//  4. Simulated time passes when the program waits: a poll_cq that finds nothing lets
//     kPollStepNs pass (or less, when a completion arrives first); a blocking
//     ibv_get_cq_event waits in simulated time; with a dedicated model thread, when no verbs
//     call came for 1 ms of wall time and a CQ is armed, it lets kIdleStepNs pass and
//     signals the fds; in either mode, poll() on a set holding a model fd lets simulated
//     time pass between looks (preload_poll.cc). With the RoCE bridge active (bridge.h:
//     another process's GID was used), each of these first asks TimeStep, which drains
//     the bridge's sockets and paces simulated time by wall time.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "spec/backend.h"
#include "tools/exec/model_thread.h"
#include "tools/exec/user_memory.h"

namespace qptwin::exec {

inline constexpr uint64_t kPollStepNs = 1'000;
inline constexpr uint64_t kIdleStepNs = 100'000;
// A blocking wait with the bridge active sleeps this long (wall) on its sockets per look.
inline constexpr uint64_t kBridgeWaitNs = 50'000;
// With a dedicated model thread and the bridge active, the idle pump runs after this much
// wall time without a verbs call (instead of 1 ms).
inline constexpr uint64_t kBridgeIdleNs = 20'000;
// The progress thread (contract 2) looks every kBridgeIdleNs while datagrams come and go,
// backing off to this when nothing happens (a datagram wakes it at once).
inline constexpr uint64_t kProgressMaxPeriodNs = 1'000'000;
// ... and, while the program's own calls keep the model going, to this.
inline constexpr uint64_t kProgressBusyPeriodNs = 200'000;
// A pump of the progress thread steps at most this many bridge slices (bridge.h contract
// 3: kBridgeSliceNs each), enough to catch up with 1 ms of wall time.
inline constexpr uint64_t kBridgeSliceNs = 50'000;
inline constexpr int kPumpSteps = 20;
inline constexpr int kMaxDevices = 16;

struct ModelContext;
class Bridge;

struct ModelPd {
  ibv_pd pd{};
  PdHandle h;
};

struct ModelMr {
  ibv_mr mr{};
  MrHandle h;
  uint8_t* model_addr = nullptr;  // where mr.addr is in the model's buffer
  uint64_t iova = 0;              // what remote peers name (ibv_reg_mr_iova2)
  int access = 0;
};

struct ModelMw {
  ibv_mw mw{};
  MwHandle h;
};

// What a window's rkey opens onto, as bound by a BIND_MW the program posted (recorded at
// the post: a bind that fails leaves the window without that rkey, so the model refuses it).
struct MwTarget {
  uint32_t lkey = 0;  // the region's (looked up when used: it may be gone by then)
  bool zero_based = false;  // remote addresses are offsets from the window's start
};

struct ModelChannel {
  ibv_comp_channel ch{};
  ChannelHandle h;
  ModelContext* mctx = nullptr;
  std::deque<ibv_cq*> events;  // received from the model, not yet taken by get_cq_event
  int armed = 0;               // CQs of this channel with a request outstanding
};

struct ModelCq {
  ibv_cq_ex cq{};  // ibv_cq is its prefix
  CqHandle h;
  ModelContext* mctx = nullptr;
  std::deque<WorkCompletion> pending;  // collected while time passed, not yet polled
  WorkCompletion current;              // ibv_start_poll/next_poll's entry
  bool armed = false;
  unsigned events_unacked = 0;
};

struct ModelSrq {
  ibv_srq srq{};
  SrqHandle h;
};

struct ModelAh {
  ibv_ah ah{};
  AhHandle h;
};

struct ModelXrcd {
  ibv_xrcd xrcd{};
  XrcdHandle h;
  uint64_t inode = 0;  // the file it was opened with (0: none): opens of one file share it
};

struct ModelQp {
  ibv_qp_ex qpx{};  // ibv_qp is its prefix
  QpHandle h;
  ModelContext* mctx = nullptr;
  bool ex = false;
  int peer = -1;  // the model device its address vector reaches (RC/UC: RemoteAddr's keys)
  // The ibv_wr_* batch between wr_start and wr_complete.
  std::vector<SendWr> batch;
  std::vector<std::vector<uint8_t>> inline_data;  // per WR of the batch (wr_set_inline_data)
  bool batch_error = false;
};

struct ModelContext {
  verbs_context vctx{};  // ibv_context is its last member, so it must come first
  int index = 0;         // qptwin<index>
  std::unique_ptr<Device> dev;
  std::map<uint32_t, ModelMr*> by_key;  // lkey (== rkey on the model) -> MR
  std::map<uint32_t, MwTarget> mw_keys;  // a window's rkey (every one it was bound with)
  std::map<uint32_t, ModelQp*> qps;     // handle -> QP (for async events)
  std::map<uint32_t, ModelCq*> cqs;
  std::map<uint32_t, ModelSrq*> srqs;
  std::vector<ModelChannel*> channels;
  std::map<uint64_t, std::pair<XrcdHandle, int>> xrcd_files;  // inode -> domain, opens
  bool xrc = false;  // the device has XRC (an XRCD could be opened at ibv_open_device)
  std::deque<ibv_async_event> async_events;
  // A registered scratch buffer inline data is copied into (the model reads only
  // registered memory; ibv_post_send's inline data may lie anywhere).
  PdHandle scratch_pd;
  MrHandle scratch_mr;
  uint8_t* scratch = nullptr;
  size_t scratch_len = 0;
  uint32_t scratch_lkey = 0;
};

class Preload {
 public:
  static Preload& Get();

  template <typename Fn>
  bool Run(Fn&& fn) {
    return thread_->Run(std::forward<Fn>(fn));
  }

  Backend* backend() { return backend_.get(); }
  const std::string& profile() const { return profile_; }
  int devices() const { return devices_; }
  const std::string& error() const { return error_; }
  ibv_device* device(int i) { return &device_[i]; }
  int DeviceIndex(const ibv_device* d) const;
  UserMemory& memory() { return memory_; }
  std::vector<ModelContext*>& contexts() { return contexts_; }
  // Moves events the model has for armed CQs and async events onto the fds (eventfds).
  void Harvest(ModelContext* mctx);
  void HarvestAll();
  // The RoCE bridge (bridge.h), nullptr when off.
  Bridge* bridge() { return bridge_.get(); }
  // Contract 4: the simulated time a waiting call may let pass now, `want` without an
  // active bridge (model thread).
  uint64_t TimeStep(uint64_t want);
  // Sleeps up to `ns` of wall time for a datagram when the bridge is active (any thread).
  void WaitWall(uint64_t ns);
  // Lets the messages on their way out of the process leave (bridge.h contract 5).
  void FlushBridge();

 private:
  Preload();
  void Idle();
  void StartProgress();  // contract 2, at the bridge's activation
  bool Pump();           // the progress thread's turn: true when datagrams came or went

  std::string profile_;
  int devices_ = 2;
  std::string error_;  // why the model could not be made ("" when it could)
  ibv_device device_[kMaxDevices]{};
  std::unique_ptr<Backend> backend_;
  UserMemory memory_;
  std::vector<ModelContext*> contexts_;
  std::unique_ptr<ModelThread> thread_;
  std::unique_ptr<Bridge> bridge_;
};

// True when ctx is a model context (its ops are ours).
bool IsModel(const ibv_context* ctx);
inline ModelContext* Ctx(ibv_context* ctx) {
  return reinterpret_cast<ModelContext*>(reinterpret_cast<char*>(ctx) -
                                         offsetof(verbs_context, context));
}
template <typename T, typename V>
T* Model(V* v) {
  return reinterpret_cast<T*>(v);
}

// The real libibverbs function `name` (default version), or nullptr.
void* RealSymbol(const char* name, const char* version);
template <typename Fn>
Fn Real(Fn, const char* name, const char* version = "IBVERBS_1.1") {
  static_assert(sizeof(Fn) == sizeof(void*));
  return reinterpret_cast<Fn>(RealSymbol(name, version));
}

// Sets errno and returns nullptr, for the entry points that return objects.
template <typename T>
T* Fail(int err) {
  errno = err;
  return nullptr;
}

// The comp channel and async fds of model contexts, for poll() (preload_poll.cc).
void RegisterModelFd(int fd);
void UnregisterModelFd(int fd);
bool IsModelFd(int fd);

// Fills the context's ops tables (defined with the data path).
void InstallOps(ModelContext* mctx);

}  // namespace qptwin::exec
