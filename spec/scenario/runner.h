// Executes a parsed Scenario on any Backend (spec/backend.h) and records what happened:
// one Step per command, each with its outcomes (the canonical transcript's lines) and the
// expectation failures.
//
// Contract:
//  1. The runner never depends on which backend it drives; it sees only backend.h.
//  2. Every command runs, even after a failure (later lines may still tell something);
//     commands on objects whose creation failed pass null handles and get the backend's
//     EINVAL.
//  3. Devices are opened in `device` line order: the k-th line opens ListDevices()[k], or
//     the last listed device when there are fewer (hw: the same device again).
//  4. Times are Backend::NowNs() relative to the start of Run().
//  5. Threading: one Runner per thread; the Backend must not be used by others meanwhile.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <memory_resource>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "spec/backend.h"
#include "spec/scenario/accounting.h"
#include "spec/scenario/command.h"
#include "spec/scenario/trace.h"

namespace qptwin::scenario {

// One line of the canonical transcript.
struct Outcome {
  enum class Kind : uint8_t { kOk, kError, kState, kWc, kPolled, kEvent, kMismatch, kAttrs };
  Kind kind = Kind::kOk;
  int err = 0;                      // kError: positive errno
  QpState state = QpState::kReset;  // kState
  WorkCompletion wc;                // kWc
  std::string qp;                   // kWc: the QP's scenario name
  std::string wr_opcode;            // kWc: the opcode of the WR it was charged to ("RECV", ...)
  std::string src_qp;               // kWc: src_qp named canonically (a QP's name, or "0")
  std::string invalidated;          // kWc with WITH_INV: the MR/MW whose rkey was invalidated
  int count = 0;                    // kPolled
  EventType event = EventType::kQpFatal;  // kEvent
  std::string object;               // kEvent: "qp=a", "cq=c", "srq=s" or "port=1"
  uint64_t offset = 0;              // kMismatch: first differing offset
  uint8_t got = 0, want = 0;        // kMismatch
  std::string text;                 // kAttrs: "qp_attr cur_state=RTS ..." (runner_query.cc)
};

struct Step {
  int line = 0;
  std::string text;  // the command as written
  uint64_t start_ns = 0, end_ns = 0;
  std::vector<Outcome> outcomes;
  std::string note;                  // narration detail (Judge reason, caps granted, bad_wr)
  std::vector<std::string> failures;  // failed expectations, "expected X, got Y"
  std::vector<std::string> why;       // narration: what changed and which rule decided
  std::vector<QpView> qps;            // every live QP after the step
};

struct RunResult {
  std::vector<Step> steps;
  RunTrace trace;
  int FailureCount() const;
};

struct RunOptions {
  // false: the run keeps no trace (RunTrace stays empty and WR slots are reused), so memory
  // is bounded by the WRs outstanding and the objects, not by the scenario's length.
  bool keep_trace = true;
  // false: no narration (Step::text, note, why and qps stay empty): what a caller that
  // only compares outcomes (the differential fuzzer) needs. The outcomes, failures, trace
  // and the calls made to the backend are the same either way.
  bool narrate = true;
  // Simulated host time before each command but `advance` (Backend::Advance): what a
  // program's own code and the verb's way into the kernel take on a slow host (rxe in an
  // emulated VM: 0.2-3 ms a command, measured in tools/rxe-vm), during which the device's
  // timers run. For a model backend; a real host spends its own. 0: commands take no time.
  uint64_t host_ns = 0;
};

class Runner {
 public:
  explicit Runner(Backend* backend);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  RunResult Run(const Scenario& scenario, RunOptions options = {});
  // The same one command at a time (a streamed scenario): Start, Next per command, Finish.
  void Start(RunOptions options = {});
  Step Next(const Command& c);
  // The same into *step, reset first (its vectors keep their capacity): a caller that
  // consumes each step at once (the differential fuzzer) allocates no Step per command.
  void Next(const Command& c, Step* step);
  RunTrace Finish();

 private:
  struct Object {
    ObjectKind kind = ObjectKind::kPd;
    int device = -1;  // index into devices_
    uint32_t handle = 0;
    std::string pd;  // mr, srq, qp: the PD's name
    // MR
    uint8_t* buf = nullptr;
    uint64_t len = 0;
    uint32_t lkey = 0, rkey = 0;  // MW: rkey only (the program's copy, runner_mw.cc)
    // MW: where the window was last bound (remote=MW:OFF counts from there; a ZERO_BASED
    // window's OFF is the offset itself)
    uint64_t window_addr = 0;
    bool zero_based = false;
    // QP
    QpType type = QpType::kRc;
    uint8_t port = 1;
    uint32_t qkey = 0;
    uint32_t qp_num = 0;
    bool destroyed = false;
    // Canonical names of QP numbers (runner_query.cc): the peer last given by modify
    // dest=/av=/dest_qpn=, and the UD QPs that posted to this one with ah=.
    std::string peer;
    std::vector<std::string> ud_senders;
    // Tracing (runner_trace.cc): caps, CQs, outstanding WRs (accounting.h; SRQ: rq).
    QpInitAttr init;
    std::string send_cq, recv_cq, srq;
    WrQueue sq, rq;
    size_t history_seen = 0;
    uint64_t history_version = 0;  // the device's HistoryVersion() when last looked at
    QpState state = QpState::kReset;
    bool busy = false;  // in busy_
  };

  void NextInto(const Command& c, Step* fresh);  // Next into a default-constructed Step
  // Control path (runner.cc). Each returns 0 or the errno of the verb it called.
  int Execute(const Command& c, Step* step);
  int OpenDevice(const Command& c, Step* step);
  int Create(const Command& c, Step* step);
  int CreateQp(const Command& c, Step* step);
  int Modify(const Command& c, Step* step);
  int Query(const Command& c, Step* step);
  // Queries and canonical names (runner_query.cc).
  int QueryDevice(const Command& c, Step* step);
  int QueryPort(const Command& c, Step* step);
  int QuerySrq(const Command& c, Step* step);
  void AddAttrs(std::string text, Step* step);
  // Channels, SRQ changes, CQ sizes (runner_events.cc).
  int CreateChannel(const Command& c, Step* step);
  int ReqNotify(const Command& c, Step* step);
  int GetCqEvent(const Command& c, Step* step);
  int AckCqEvents(const Command& c, Step* step);
  int ModifySrq(const Command& c, Step* step);
  int ResizeCq(const Command& c, Step* step);
  int ReregMr(const Command& c, Step* step);
  // Memory windows (runner_mw.cc).
  int AllocMw(const Command& c, Step* step);
  int BindMw(const Command& c, Step* step);
  // A post_send's window fields: BIND_MW's window and region, LOCAL_INV/SEND_WITH_INV's
  // rkey, and remote=MW:OFF; after the post, the window's rkey and place (NoteBindPosted).
  void ResolveWindowFields(const Command& c, SendWr* wr);
  void NoteBindPosted(const Command& c, const SendWr& wr);
  // The name of QP number `qp_num` as seen from QP `local` (src_qp of its CQE, its
  // dest_qp_num): its peer or a UD sender first; "0" for 0; "qpn:N" when none is ours.
  std::string QpNumName(const Object& local, uint32_t qp_num) const;
  // The scenario name of a GID: the device whose default GID it is (local's peer first).
  std::string GidName(const Object& local, const Gid& gid);
  std::string KeyName(int device, uint32_t rkey) const;  // an MR by rkey, else "key:N"
  std::string HandleName(ObjectKind kind, int device, uint32_t handle) const;
  int Destroy(const Command& c, Step* step);
  void CheckExpectation(const Command& c, int ret, Step* step);
  // Data path (runner_datapath.cc).
  int PostSend(const Command& c, Step* step);
  int PostRecv(const Command& c, Step* step);
  int Poll(const Command& c, Step* step);
  int Events(const Command& c, Step* step);
  int FillOrCheck(const Command& c, Step* step);
  std::vector<Sge> ResolveSges(const std::vector<SgeRef>& refs);
  int AddressHandleTo(const Object& sender, const std::string& target, AhHandle* ah);
  // Tracing (runner_trace.cc).
  void RecordPosts(const Command& c, size_t posted, uint64_t now_ns);
  void RecordCompletion(const std::string& cq, Outcome* o, const Step& step);
  void EndQueues(Object* o, Wqe::End end, const Step& step);
  WrLedger ledger_{nullptr};
  // After the step's command ran and step->end_ns was taken (its `now`).
  void ObserveStates(const Command& c, int ret, Step* step);
  // Every live QP (keep_trace) or, streaming, the busy ones and the command's QP: a quiet
  // QP's view is its creation view (RESET/INIT, queues empty) until a command names it.
  std::vector<QpView> Views(const std::string& named);
  QpView ViewOf(const std::string& name, const Object& o) const;
  // RESET or INIT, nothing queued, no SRQ: nothing but a command naming the QP can change
  // its state or its queues (a QP below RTR neither sends nor takes requests).
  bool Quiet(const Object& o) const;
  // A QP's entry in qps_ (entries are never erased, so their addresses are stable).
  using QpEntry = std::pair<const std::string, Object*>;
  struct ByName {
    bool operator()(const QpEntry* a, const QpEntry* b) const {
      return NameLess::Less(a->first, b->first);
    }
  };
  // The QPs to look at after a step: busy_ and `named` (when a QP), in name order (in
  // watched_, reused from step to step).
  const std::vector<QpEntry*>& Watched(const std::string& named);

  Device* DeviceOf(const Object& o);
  Object& Obj(const std::string& name) { return objects_[name]; }
  std::string QpName(int device, uint32_t qp_num) const;
  std::string EventObject(int device, const AsyncEvent& ev) const;
  // The address vector reaching QP `target` from a QP of `sender` (on its port).
  int AddressTo(const Object& sender, const std::string& target, AhAttr* ah,
                uint32_t* qp_num);

  Backend* backend_;
  RunOptions options_;
  RunTrace run_trace_;
  RunTrace* trace_ = &run_trace_;  // of the run in progress
  std::vector<size_t> free_wqes_;  // !keep_trace: slots of ended WRs to reuse
  std::vector<QpView> before_;     // the QPs after the previous step
  uint64_t start_ns_ = 0;
  int devices_opened_ = 0;
  std::vector<std::unique_ptr<Device>> devices_;
  // The objects' and QPs' map nodes come from arena_, freed all at once with the runner
  // (entries are never erased): a run makes and drops some 40 of them, which malloc's
  // per-size caches do not hold.
  std::pmr::monotonic_buffer_resource arena_{16 * 1024};
  std::pmr::map<std::string, Object, NameLess> objects_{&arena_};
  // The QPs of objects_ (per-step work is per QP).
  std::pmr::map<std::string, Object*, NameLess> qps_{&arena_};
  // Live QPs that are not Quiet(), in name order: a step looks only at these. A sorted
  // vector: a step already costs O(busy QPs), and it copies into watched_ without a walk.
  std::vector<QpEntry*> busy_;
  std::vector<QpEntry*> watched_;
  std::vector<StateChange> history_;  // ObserveStates' scratch
  void SetBusy(QpEntry* qp, bool busy);
  // UD address handles, by (sender's PD name, target QP name).
  std::map<std::pair<std::string, std::string>, uint32_t> ahs_;
  // query_port: bad_pkey_cntr and qkey_viol_cntr at the first query, by (device, port).
  std::map<std::pair<int, uint8_t>, std::pair<uint32_t, uint32_t>> port_counters_;
};

}  // namespace qptwin::scenario
