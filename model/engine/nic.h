// One modelled NIC (one port): its objects, the verbs on them, and the transport engines
// (requester, responder, completer) that move data through the World's fabric.
//
// Contract:
//  1. Every verb takes the opening context `ctx`; objects of another context, of another
//     NIC or destroyed ones are not found: EINVAL. Verbs return 0 or a positive errno and
//     validate everything before changing anything.
//  2. Nothing here knows SystemC: time is World::events(), DMA is bus() (host_bus.h).
//  3. Every posted WR completes exactly once (success CQE if signaled, error CQE always,
//     FLUSH_ERR when flushed) unless the QP is reset or destroyed (discarded, R9).
//  4. Files: nic.cc (identity, events, contexts), nic_resources.cc (PD/MR/CQ/SRQ/AH),
//     nic_qp.cc (QP create/modify/query and state effects), nic_post.cc (posting rules),
//     requester.cc, responder.cc, completer.cc (the data path).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/engine/context_cache.h"
#include "model/engine/event_source.h"
#include "model/engine/command_port.h"
#include "model/engine/doorbell_port.h"
#include "model/engine/net_port.h"
#include "model/engine/trace_port.h"
#include "model/engine/host_bus.h"
#include "model/engine/queue_memory.h"
#include "model/engine/memory.h"
#include "model/engine/objects.h"
#include "model/engine/packet.h"
#include "model/engine/window.h"
#include "model/profile.h"
#include "spec/backend.h"

namespace qptwin::model::engine {

class World;

// The CQE opcode of a send-queue WR.
WcOpcode SendWcOpcode(WrOpcode op);
// BIND_MW and LOCAL_INV: run by the requester, no packet (rxe WR_LOCAL_OP_MASK).
inline bool IsLocalOp(WrOpcode op) { return op == WrOpcode::kBindMw || op == WrOpcode::kLocalInv; }


// RC and XRC (both ends): acknowledged, retried, PSN-checked transport.
inline bool IsReliable(QpType t) {
  return t == QpType::kRc || t == QpType::kXrcSend || t == QpType::kXrcRecv;
}
// The transport a QP's packets carry: XRC_SEND and XRC_RECV talk one XRC transport.
inline QpType WireTransport(QpType t) { return t == QpType::kXrcRecv ? QpType::kXrcSend : t; }

class Nic {
 public:
  // How long a post waits for the exchanges it started (Behaviour::post_send_runs_to_completion
  // and post_answers_each_message): rxe's timers are jiffies (>= 1 ms), so they come later.
  static constexpr uint64_t kPostRunNs = 1'000'000;
  static constexpr int kPopulatedGids = 2;  // 0: link-local, 1: RoCE v2 IPv4-mapped

  Nic(World* world, int index);
  ~Nic();

  // ---- Identity ----
  int index() const { return index_; }
  std::string name() const { return "mdev" + std::to_string(index_); }
  uint16_t lid() const;
  DeviceAttr device_attr() const;
  PortAttr port_attr() const;
  bool GidAt(int index, Gid* out) const;
  int default_gid_index() const;
  // The IPv4-mapped GID's index: a UD packet's source, a UD receive's destination.
  int roce_gid_index() const;
  // The destination QPN QP `qpn` is connected to (RC/UC/XRC; a message from outside names
  // only its target, World contract 5), false when there is no such QP.
  bool ConnectedPeer(uint32_t qpn, uint32_t* dest_qpn) const;
  const Profile& profile() const;
  uint32_t NewContext() { return next_ctx_++; }
  void ReleaseContext(uint32_t ctx);  // destroys everything the context created
  // What the device was asked that its profile says the real device faults on (a host
  // kernel oops, e.g. Behaviour::invalidate_free_type2_window_faults), in order, at most
  // kMaxFaults of them. The model answers anyway; a real device would not answer at all.
  static constexpr size_t kMaxFaults = 8;
  const std::vector<std::string>& device_faults() const { return device_faults_; }

  // ---- Resources (nic_resources.cc) ----
  int AllocPd(uint32_t ctx, uint32_t* out);
  int DeallocPd(uint32_t ctx, uint32_t pd);
  int RegMr(uint32_t ctx, uint32_t pd, size_t length, AccessFlags access, Mr** out);
  // memory.h contract 4: a region at bus address `addr` of the platform, with no buffer of
  // this process; RegMr's checks and cost, EINVAL for a zero length or one that wraps the
  // address space.
  int RegMrAt(uint32_t ctx, uint32_t pd, uint64_t addr, size_t length, AccessFlags access,
              Mr** out);
  int DeregMr(uint32_t ctx, uint32_t mr);
  // queue_memory.h: from now on this device's new CQs, QPs and SRQs keep their rings and
  // records in [addr, addr + length) of the platform's bus addresses (the caller checked
  // the range); length 0 goes back to this process's memory. Queues made before keep theirs.
  // The same window again (also one set before and still holding queues) takes it back,
  // its blocks known; EBUSY for one that overlaps another device's current window, or a
  // window of any device of this world whose blocks are still in use. The window is the
  // device's (the NIC's), not an opened context's: it stays across a close and an open.
  // A context's QP, for what a program's own driver needs of it (model_backend.h
  // ModelSendRing); null when there is none.
  const Qp* QpOf(uint32_t ctx, uint32_t qp) { return FindQp(ctx, qp); }
  const Srq* SrqOf(uint32_t ctx, uint32_t srq) { return FindSrq(ctx, srq); }
  int SetQueueMemory(uint64_t addr, uint64_t length);
  bool has_queue_memory() const { return queue_arena_ != nullptr; }
  // A queue made now would be in this process's memory, which the NIC's bus does not
  // reach (a program's own NIC module without a window): its create is EINVAL, as a
  // command's without a window (command_port.h contract 3).
  bool QueuesUnreachable() const { return !queue_arena_ && !bus_->ReachesProcessMemory(); }
  // Whether [addr, addr + length) conflicts with a window of this device (SetQueueMemory's
  // rules; `other_device`: asked for another device of the world).
  bool QueueMemoryInUse(uint64_t addr, uint64_t length, bool other_device) const;
  int ReregMr(uint32_t ctx, uint32_t mr, int flags, uint32_t pd, size_t length,
              AccessFlags access, Mr** out);  // nic_rereg.cc
  // nic_mw.cc: memory windows (spec/backend.h, Memory windows).
  int AllocMw(uint32_t ctx, uint32_t pd, MwType type, uint32_t* out, uint32_t* rkey);
  int DeallocMw(uint32_t ctx, uint32_t mw);
  int BindMw(uint32_t ctx, uint32_t qp, uint32_t mw, const MwBind& bind, uint32_t* rkey);
  int CreateChannel(uint32_t ctx, uint32_t* out);
  int DestroyChannel(uint32_t ctx, uint32_t ch);
  int CreateCq(uint32_t ctx, int cqe, uint32_t channel, uint32_t* out, int* actual);
  int DestroyCq(uint32_t ctx, uint32_t cq);
  int PollCq(uint32_t ctx, uint32_t cq, int n, WorkCompletion* wc);  // n or -errno
  int ReqNotifyCq(uint32_t ctx, uint32_t cq, bool solicited_only);
  Channel* FindChannel(uint32_t ctx, uint32_t ch);
  Cq* FindCq(uint32_t ctx, uint32_t cq);
  int AckCqEvents(uint32_t ctx, uint32_t cq, unsigned n);
  // cq.h contract 8 (model_backend.h ModelCqEvent): the interrupt a driver's arm of CQ `cq`
  // writes. EINVAL: no such CQ, or its ring is this process's memory.
  int SetCqEvent(uint32_t ctx, uint32_t cq, uint64_t addr, uint32_t data);
  // cq.h contract 8: a driver's arm of CQ number `cqn` (its handle) through the slot's MMIO
  // (model/sim/platform.h contract 8); an arm the CQ cannot take is an ignored ring.
  void OnCqArm(uint32_t cqn, uint32_t ci, bool solicited_only);
  // nic_eq.cc: a driver's event queue (command_port.h kCreateEq). Context ctx's
  // asynchronous events, as they are raised, are written into a ring of EQEs in queue
  // memory (kEqeBytes each: 0 ibv_event_type u32, 8 the object's number u64 by `number`, 16
  // the time in ns u64, 31 the owner bit ((n / slots) & 1) ^ 1 for the n-th written), while
  // the ring has room by the consumer index of the driver's last arm; the others wait, in
  // order, for room (and TakeEvents still takes them); an EQE whose write fails is not
  // written: its event waits too. The ring is cleared when the queue is made (EIO when that
  // fails). An arm (OnEqArm, an MMIO write)
  // asks for one interrupt: written (kEqEvent) after the next EQE, or at once when EQEs
  // wait untaken. One queue per context; EBUSY for a second, EINVAL without queue memory,
  // ENOMEM when no block fits, EINVAL for entries outside [1, kMaxEqEntries].
  static constexpr uint32_t kEqeBytes = 32;
  static constexpr uint32_t kMaxEqEntries = 1u << 16;
  struct EqSpec {
    uint32_t entries = 0;  // rounded up to a power of two
    bool has_irq = false;
    uint64_t irq_addr = 0;
    uint32_t irq_value = 0;
    std::function<uint64_t(const AsyncEvent&)> number;  // the EQE's object number
  };
  int CreateEq(uint32_t ctx, EqSpec spec, uint32_t* eqn, uint64_t* addr, uint32_t* slots);
  int DestroyEq(uint32_t ctx, uint32_t eqn);
  // The driver's arm of event queue `eqn`: the EQEs it took (modulo 2^24) since the queue
  // was made. An arm the queue cannot take (no such queue, more taken than written) is an
  // ignored ring.
  void OnEqArm(uint32_t eqn, uint32_t ci);
  int CreateSrq(uint32_t ctx, uint32_t pd, uint32_t max_wr, uint32_t max_sge, uint32_t* out);
  int DestroySrq(uint32_t ctx, uint32_t srq);
  // nic_srq_cq.cc: ibv_modify_srq, ibv_query_srq, ibv_resize_cq as rxe does them.
  int ModifySrq(uint32_t ctx, uint32_t srq, const SrqAttr& attr, uint32_t mask);
  int QuerySrq(uint32_t ctx, uint32_t srq, SrqAttr* out);
  int ResizeCq(uint32_t ctx, uint32_t cq, int cqe, int* actual);
  int PostSrqRecv(uint32_t ctx, uint32_t srq, const std::vector<RecvWr>& wrs, size_t* bad);
  int CreateSrqEx(uint32_t ctx, const SrqInitAttr& init, uint32_t* out);
  int SrqNum(uint32_t ctx, uint32_t srq, uint32_t* srqn);
  int OpenXrcd(uint32_t ctx, uint32_t* out);
  int CloseXrcd(uint32_t ctx, uint32_t xrcd);
  int CreateAh(uint32_t ctx, uint32_t pd, const AhAttr& attr, uint32_t* out);
  int DestroyAh(uint32_t ctx, uint32_t ah);

  // ---- QPs (nic_qp.cc, nic_post.cc) ----
  int CreateQp(uint32_t ctx, const QpInitAttr& init, uint32_t* out, QpCap* actual);
  int DestroyQp(uint32_t ctx, uint32_t qp);
  int QpNum(uint32_t ctx, uint32_t qp, uint32_t* qpn);
  int ModifyQp(uint32_t ctx, uint32_t qp, const QpAttr& attr, AttrMask mask);
  int QueryQp(uint32_t ctx, uint32_t qp, QpAttr* attr, QpInitAttr* init);
  int PostSend(uint32_t ctx, uint32_t qp, const std::vector<SendWr>& wrs, size_t* bad);
  int PostRecv(uint32_t ctx, uint32_t qp, const std::vector<RecvWr>& wrs, size_t* bad);
  int History(uint32_t ctx, uint32_t qp, size_t first, std::vector<StateChange>* out);
  // Grows with every QP state change recorded in a history (Device::HistoryVersion).
  uint64_t history_version() const { return history_version_; }

  // ---- Async events ----
  std::vector<AsyncEvent> TakeEvents(uint32_t ctx);
  // The context's oldest event not taken (false: none), and the events `of` names dropped.
  bool TakeOldestEvent(uint32_t ctx, AsyncEvent* out);
  void DropEvents(uint32_t ctx, const std::function<bool(const AsyncEvent&)>& of);
  bool HasEvent(uint32_t ctx, EventType type, uint32_t qp) const;

  // ---- Data path: a message arrives from the fabric ----
  void Receive(Packet&& pkt);
  // Work the send engine still has queued: requesters kicked, UC/UD messages not yet done
  // (the timers are not work: World::ExchangesSettled).
  bool SendEngineBusy() const { return !ready_.empty() || !sent_.empty(); }

  // ---- The host threads of this NIC (timing.h contract 4: HostTiming, ControlTiming) ----
  // Occupies the current host thread for `ns` from max(now, when it is free); returns when
  // it is free again.
  uint64_t ChargeHost(uint64_t ns);
  uint64_t host_free_ns() const { return host_free_ns_[host_thread_]; }
  // The simulated host thread that makes the calls that follow (0 at start; thread k's
  // clock starts idle at its first use). At most kMaxHostThreads.
  static constexpr int kMaxHostThreads = 4096;
  bool SelectHostThread(int thread);

  // ---- Context caches (nic_cache.cc; timing.h contract 5) ----
  const ContextCache& cache() const { return cache_; }

  // ---- DMA (host_bus.h) ----
  // Every payload byte moves through `bus` (never null; it outlives the Nic). Default: the
  // DirectBus; model_backend gives each device its platform slot's TLM-2.0 initiator
  // (model/sim/platform.h).
  void SetHostBus(HostBus* bus) { bus_ = bus; }
  // The provider's CPU accesses (host_bus.h contract 7); never null, outlives the Nic.
  void SetCpuBus(HostBus* bus) { cpu_ = bus; }
  // Posts ring their doorbells through `port` (doorbell_port.h; never null, it outlives the
  // Nic). Default: DirectDoorbell; model_backend gives each device its platform slot, whose
  // TLM-2.0 MMIO target socket the ring crosses.
  // doorbell_port.h contract 6: the port names this NIC for its driver's rings meanwhile.
  void SetDoorbellPort(DoorbellPort* port);
  // command_port.h contract 2: where a driver's commands to this NIC go (nullptr: none).
  void SetCommandTarget(CommandTarget* target) { commands_ = target; }
  CommandTarget* command_target() const { return commands_; }
  // Rings of a program's own driver the NIC ignored (doorbell_port.h contract 6).
  uint64_t ignored_rings() const { return ignored_rings_; }
  // The NIC's messages leave through `port` (net_port.h; never null, it outlives the NIC).
  void SetNetPort(NetPort* port) { net_ = port; }
  // Changes a tracer draws (trace_port.h; null: none, the default; it outlives the NIC).
  void SetTracePort(TracePort* port) { trace_ = port; }
  TracePort* tracing() const { return trace_ && trace_->on ? trace_ : nullptr; }
  // World::RunHeldWork: a flush DeferFlushToTickEnd held back.
  void RunHeldFlush(Qp& qp);
  // The latest deadline in [from, to] of a live transport timer of a QP other than
  // `except` (0: none).
  uint64_t LastTransportTimerIn(uint64_t from, uint64_t to, const Qp* except) const;
  NetPort& net_port() { return *net_; }
  // doorbell_port.h contract 1: the NIC's side of a ring. `extra_ns`: contract 3.
  void OnDoorbell(const DoorbellWrite& db, uint64_t extra_ns);
  HostBus& bus() const { return *bus_; }
  // The bus, told what the transfers that follow are (host_bus.h contract 6).
  HostBus& Dma(DmaKind kind, uint32_t qpn) const;
  // The CPU's bus, told what the accesses that follow are (host_bus.h contract 7).
  HostBus& Cpu(DmaKind kind, uint32_t qpn) const;

 private:
  Qp* FindQp(uint32_t ctx, uint32_t qp);
  Srq* FindSrq(uint32_t ctx, uint32_t srq);
  Ah* FindAh(uint32_t ctx, uint32_t ah);
  int CreateXrcRecvQp(uint32_t ctx, const QpInitAttr& init, uint32_t* out, QpCap* actual);
  uint32_t PathMtuBytes(const Qp& qp) const;
  // Every SGE (length > 0) lies in a region registered on some device of the world, whatever
  // its key or PD: the memory the model can read inline data from (nic_post.cc).
  bool InlineSourceReadable(const std::vector<Sge>& sges) const;
  // Some SGE lies in a region at a bus address of any NIC of the world (memory.h 4).
  bool InlineFromBusAddress(const std::vector<Sge>& sges) const;
  void StoredView(const Qp& qp, QpAttr* attr) const;  // query_qp_stored_view (nic_qp.cc)

  // State effects (nic_qp.cc).
  void SetState(Qp& qp, QpState to, const std::string& cause);
  // `defer_flush`: the state now, the flush when Receive has handled the response that
  // carries responder_flush_after (Behaviour::loopback_response_before_responder_flush).
  void EnterError(Qp& qp, const std::string& cause, bool defer_flush = false);
  void FlushOnError(Qp& qp);
  // FlushOnError's first part: what the requester had not reached, the WRs the flush takes
  // back, and (FlushesRqFirst) the failed WQE's CQE. Once per flush (Qp::flush_begun).
  void BeginFlush(Qp& qp);
  bool FlushesRqFirst(const Qp& qp) const;
  void EnterSqe(Qp& qp, const std::string& cause);
  void FlushSq(Qp& qp);
  // Behaviour::requester_walks_one_wqe_in_error (nic_qp.cc): the WQEs from `from` on that
  // are not done become Qp::unwalked; one requester run in ERR takes the oldest; WRs a post
  // queued in ERR are flushed, and that post's run takes one; leaving ERR (not to RESET)
  // puts the unwalked ahead of the queue as ghosts; a stopped requester takes one per post.
  void NoteUnwalked(Qp& qp, size_t from);
  void WalkOneInError(Qp& qp);
  void FlushPostedInError(Qp& qp, size_t from);
  // rxe's completer run in ERR (a response, the transport timer): every queued WQE flushed.
  void CompleterRunsInError(Qp& qp);
  // rxe's completer run in RESET (the transport timer): every queued WQE consumed without a
  // CQE; the requester's index stays, so after RTS they go out again as ghosts.
  void CompleterRunsInReset(Qp& qp);
  // rxe's requester run in ERR that no post started (the RNR timer): it takes one WQE and,
  // if there was one, the completer it runs flushes every queued WQE.
  void RequesterRunsInError(Qp& qp);
  void ResumeUnwalked(Qp& qp);
  // A post while stale WQEs (ghosts) wait ahead of the requester: WQEs that go round the
  // send ring onto their slots (nic_qp.cc).
  void OverwriteStaleSlots(Qp& qp, size_t first_posted);
  // The index of rxe's consumer head among qp.sq[0, end): the first WQE that is neither a
  // ghost (its slot lies before the consumer index) nor done; `end` (at most the queue's
  // size) when there is none.
  static size_t ConsumerHead(const Qp& qp, size_t end = SIZE_MAX);
  // Whether the first WQE the program posted and not yet retired is stuck (never sent).
  bool HeadStuck(const Qp& qp) const;
  // With ghosts ahead (they lie before rxe's consumer index), whether the WQE at the consumer
  // index is missing or not sent yet: rxe_comp.c get_wqe then drops a response (COMPST_DONE).
  bool ConsumerHeadUnsent(const Qp& qp) const;
  // A retry takes the requester back to the consumer index: nothing is stuck any more.
  void ClearStuck(Qp& qp);
  void WalkStopped(Qp& qp);
  void FlushRq(Qp& qp);
  void ResetQueues(Qp& qp);
  // trace_port.h contract 2: the QP's queue counts to the tracer, when on and changed.
  void NoteQueues(Qp& qp) {
    if (trace_ && trace_->on) ReportQueues(qp);
  }
  void ReportQueues(Qp& qp);
  // Reports the QP's queue counts when the scope ends (a function that moves WQEs).
  class QueuesNote {
   public:
    QueuesNote(Nic& nic, Qp& qp) : nic_(nic), qp_(qp) {}
    ~QueuesNote() { nic_.NoteQueues(qp_); }
    QueuesNote(const QueuesNote&) = delete;
    QueuesNote& operator=(const QueuesNote&) = delete;

   private:
    Nic& nic_;
    Qp& qp_;
  };
  void CheckDrained(Qp& qp);
  // Pushes a CQE; on overflow raises CQ_ERR and moves `qp` to ERR (R13, R14), except a
  // requester's CQE (`from_completer`: a successful send-queue CQE, or a ring slot's stale
  // status) under Behaviour::send_cq_overrun_keeps_qp, whose loss leaves the QP as it is.
  // The CQE is visible cqe_ns after max(now, ready_ns) (ready_ns: a WQE re-fetch first).
  bool PushCqe(Qp& qp, Cq& cq, const WorkCompletion& wc, bool solicited, uint64_t ready_ns = 0,
               bool from_completer = false);
  void RaiseQpEvent(const Qp& qp, EventType type);
  // wc_flags of a successful send-queue CQE (Behaviour::send_wc_with_imm).
  uint32_t SendWcFlags(WrOpcode op) const;
  void RaiseEvent(uint32_t ctx, AsyncEvent ev);

  // Memory windows on the data path (nic_mw.cc). The bytes a remote request may touch
  // through `rkey` (a region's or a window's), or nullptr: an rkey violation.
  uint8_t* RemoteBytes(const Qp& qp, uint32_t rkey, uint32_t pd, uint64_t addr, uint64_t len,
                       AccessFlags need);
  // BIND_MW and LOCAL_INV run in the requester (rxe_req.c rxe_do_local_ops): the status.
  WcStatus RunLocalOp(Qp& qp, const SendWqe& w);
  // A BIND_MW WR being posted: the window's rkey it names, and the program's rkey for a
  // type 2 window afterwards (window.h contract 4).
  void NoteBindPosted(uint32_t ctx, const SendWr& wr, SendWqe* w);

  // The WQEs the NIC has not fetched, sq[first..]: the provider writes their images into
  // their slots of qp.sq_buf and rings (doorbell_port.h); the NIC fetches them (OnDoorbell:
  // whole slots, one DMA read or two where they wrap the ring; by_mmio: the one WQE comes
  // with the doorbell, BlueFlame) and takes the WR and inline data from what it fetched
  // (send_wqe_image.h contract 3; nic_post.cc).
  size_t FirstUnfetched(const Qp& qp) const;
  // The provider writes a WQE's image at its post (every accepted WR, in ERR and below RTS
  // too): sq[first..], this post's WRs, once (PostSend calls it on each of its exits).
  void WriteWqeImages(Qp& qp, size_t first);
  // host_ns: when the post's work on the host's CPU ends (doorbell_port.h contract 3).
  void RingDoorbell(Qp& qp, uint64_t host_ns);
  void FetchWqes(Qp& qp, size_t first, const DoorbellWrite& db, uint64_t extra_ns);
  // doorbell_port.h contract 6: a ring `count` WQEs past the provider's posts (a program's
  // own driver wrote them): the NIC makes them from their slots, or ignores the ring.
  void OnDriverDoorbell(Qp& qp, uint32_t count, const DoorbellWrite& db, uint64_t extra_ns);
  // Contract 6: a driver's fetched WQE against the posting rules (false: malformed), and
  // what the provider would have added (UD: the AH at the post).
  bool AdoptRingWqe(const Qp& qp, SendWqe& w);
  // cq.h contract 8: the NIC's interrupt write for `cq` (its DMA, tagged kCqEvent).
  void WriteCqEvent(const Cq& cq, uint32_t qpn);
  // The bus address of slot `slot` of the send ring, laid out at the first post (large
  // enough for `image_bytes`) into *at; false for a ring in queue memory it does not fit
  // (queue_memory.h contract 2: such a ring never grows).
  bool SqSlot(Qp& qp, uint32_t slot, size_t image_bytes, uint64_t* at);
  // queue_memory.h contract 2: the bytes of a QP's send ring in queue memory.
  static uint64_t SqStride(const QpCap& cap);
  // The bytes the NIC reads of WQE w's slot when a read ends there: its image's size, or
  // the whole slot for a driver's WQE (its size is known once read).
  size_t SlotBytesRead(const Qp& qp, const SendWqe& w) const;
  // The NIC's DMA read of the slots of sq[first..first+n), consecutive, into `out` (slot k
  // of the run at k * sq_stride); false when it failed.
  bool ReadSqSlots(Qp& qp, size_t first, size_t n, uint8_t* out);
  // A resend of sq[index]: the NIC reads its slot again and works from what it read; false
  // (the WQE as it was) when the read failed.
  bool RereadWqe(Qp& qp, size_t index);
  // Decodes sq WQE `w` from its image (`bytes` of it readable) and takes its facts; false
  // (malformed) when the image declares more than that, names no WR's opcode, or an inline
  // WQE's bytes are not its length; a driver's WQE also against the posting rules.
  bool TakeImage(const Qp& qp, SendWqe& w, const uint8_t* image, size_t bytes);
  // Step (b): a fetched WQE's length, inline flag and signaled flag from its image.
  void TakeFactsFromImage(const Qp& qp, SendWqe& w);
  // Step (b): the wr_id of a WQE the NIC never fetched (posted in ERR or below RTS), which
  // a flush completes: the NIC reads its slot's image (the header, one DMA read); the
  // provider's record stands in where the slot holds no image of this post.
  uint64_t UnfetchedWrId(Qp& qp, const SendWqe& w);

  // Requester (requester.cc).
  enum class ReqStep { kGetWqe, kCheckLimits, kCheckLocal, kTransmit, kDone };
  // A post's doorbell: Kick, or the requester at once (Behaviour::post_runs_requester),
  // each message answered before the next leaves (Behaviour::post_answers_each_message).
  void Doorbell(Qp& qp);
  void Kick(Qp& qp);
  // Runs until nothing more can be sent, or (one_message) until one message has left:
  // returns whether one did.
  bool RunRequester(Qp& qp, bool one_message = false);
  ReqStep ReqGetWqe(Qp& qp);
  ReqStep ReqCheckLimits(Qp& qp);
  ReqStep ReqCheckLocal(Qp& qp, Payload* payload);
  ReqStep ReqTransmit(Qp& qp, Payload* payload);
  void ArmTimer(Qp& qp);
  // When a timer of `delay_ns` armed now expires: now + delay_ns, or on the host kernel's
  // tick (NicTiming::timer_tick_ns; the delay in ticks rounded down, or up with round_up).
  uint64_t KernelTimerAt(uint64_t delay_ns, bool round_up);
  // The tick a timer of `delay_ns` armed at `from_ns` fires at (timer_tick_ns != 0), and the
  // time it runs then, by the order of arming (one call per timer queued).
  uint64_t KernelBucket(uint64_t from_ns, uint64_t delay_ns, bool round_up) const;
  uint64_t KernelBucketTime(uint64_t bucket);
  static constexpr uint64_t kTimerOrderNs = 20'000;  // one bucket's timers, one by one
  static constexpr uint64_t kMaxTimerRank = 10;
  // The tick a KernelTimerAt time belongs to (the time itself without ticks).
  uint64_t KernelTick(uint64_t at) const;
  // The transport timer is no longer needed (all acknowledged, ERR, RESET, ...): stopped,
  // unless it runs out anyway (Behaviour::retrans_timer_runs_out).
  void StopTimer(Qp& qp);
  void ScheduleTimer(Qp& qp, uint64_t at);
  void OnTimeout(Qp& qp);
  // The completer's timeout run: the first outstanding WQE is retried, or fails
  // RETRY_EXC_ERR when retry_cnt is used up.
  void CompleterTimedOut(Qp& qp);
  // Whether the requester stopped at a fence on the unstarted WQE right behind `head`.
  bool StoppedAtFenceBehind(const Qp& qp, size_t head) const;
  // Whether the requester waits at a LOCAL_INV fenced only by the head at `head` (RTS).
  bool ParkedAtInvalidateFence(const Qp& qp, size_t head) const;
  // The head retired with an error runs that LOCAL_INV before the QP goes to ERR.
  void RunFencedInvalidate(Qp& qp);
  // In SQD the head retired with an error lets the requester, stopped at a fence right
  // behind it, find the send queue drained (SQ_DRAINED) before the QP goes to ERR.
  void DrainAtFence(Qp& qp, size_t head);
  // A completer run without a response (a local operation, a WR failed locally, SQD's
  // drain) takes a stale_timeout (Behaviour::retrans_timer_runs_out).
  void TakeStaleTimeout(Qp& qp);
  // A retry is due: where the requester has stopped (RequesterStopped) it never comes, and
  // the QP waits, retry_stalled, until it leaves RTS/SQD.
  bool StallRetry(Qp& qp);
  // A retry_cnt retry is left: counted (false: none left, the WR ends with RETRY_EXC_ERR).
  bool TakeRetry(Qp& qp);
  // A WQE the requester has taken is not done yet.
  bool Outstanding(const Qp& qp) const;
  void TakeRdAtomicRes(Qp& qp, const Qp::RdAtomicRes& res);
  Qp::RdAtomicRes* FindRdAtomicRes(Qp& qp, uint32_t psn);
  void SendUnreliableDone(Qp& qp, uint64_t serial, uint64_t at);
  // The engine's sources (event_source.h): one wake-up each in the World's EventQueue,
  // however many QPs have work, timers or WQEs in flight.
  struct SentWqe {  // UC/UD: done when its last byte has left the port
    std::weak_ptr<Qp> qp;
    uint64_t serial;
  };
  struct QpTimer {  // the transport timer event of a QP, for `at`
    std::weak_ptr<Qp> qp;
    uint64_t at;
  };
  void RunReady(std::weak_ptr<Qp>& qp);
  void RunSent(SentWqe& sent);
  void RunTimer(QpTimer& timer);
  void RunRnrWait(std::weak_ptr<Qp>& qp);  // the RNR timer of a QP has expired
  // A retry skip loop has ended: the flush and the requester run that waited for it.
  void EndSkipLoop(std::weak_ptr<Qp>& qp);
  // True (and the requester's run kept for the loop's end) while a skip loop runs.
  bool WaitsForSkipLoop(Qp& qp);
  // Behaviour::retry_reruns_local_ops: `w` is a local operation the requester has run and, sent
  // back by a retry, will run again from its slot.
  bool RerunsFromStaleSlot(const SendWqe& w) const;
  // After a message the requester (not a post's) sent: true when it stops until the answer
  // has been handled (CompleteWqe kicks it; answer_waits_ at the latest), because the next
  // WQE is such a local operation.
  bool RerunWaitsForAnswer(Qp& qp);

  // Completer (completer.cc).
  void HandleResponse(Qp& qp, Packet& pkt);
  void CompleteWqe(Qp& qp, size_t index, WcStatus status);
  void FailWqe(Qp& qp, size_t index, WcStatus status, const std::string& cause);
  // The requester's WQE at sq_next failed a local check (Behaviour::local_error_completes_in_order).
  void FailLocally(Qp& qp, WcStatus status, const std::string& cause);
  // A WQE failed locally waits behind outstanding ones and the device's requester stops
  // there: no retry is sent (Behaviour::local_error_stops_retries).
  bool RequesterStopped(const Qp& qp) const;
  // A retry drops the ghosts before `index` (Behaviour::requester_walks_one_wqe_in_error) and
  // returns where `index` is then.
  size_t DropGhosts(Qp& qp, size_t index);
  void RetryAfterErr(Qp& qp);
  // Reports a retired WQE's completion (DrainSq); kQpFailed when its local error moved the QP
  // out of RTS/SQD, kQpChanged when the CQE (an overrun) did.
  enum class Retired { kOk, kQpChanged, kQpFailed };
  Retired RetireWqe(Qp& qp, SendWqe& w);
  // Behaviour::send_slot_keeps_status: the status a retiring WQE reports (its slot's last
  // written one where it finished normally), and the record of a status written into a slot.
  WcStatus SlotStatusAtRetire(Qp& qp, SendWqe& w);
  void NoteSlotStatus(Qp& qp, uint32_t slot, WcStatus status);
  SendSlot* SlotToWrite(Qp& qp, uint32_t slot);  // nullptr where slots keep nothing
  // A WQE written into its slot (a post, or a stale WQE taken up again) takes over the
  // READ/atomic credit the slot kept (SendSlot::rd_credit; rxe: wqe->has_rd_atomic).
  void TakeSlotCredit(Qp& qp, SendWqe& w);
  void GhostLeaves(Qp& qp, SendWqe& g);
  // ERR, or SQE for UC/UD where the device has it (R8, IBTA C10-38), after a send error.
  void EnterSendError(Qp& qp, const std::string& cause);
  void DrainSq(Qp& qp);
  // Acknowledged progress: retry_cnt and rnr_retry count again (rxe_comp.c reset_retry_counters).
  void ResetRetries(Qp& qp);
  // A WQE leaves the send queue (or is retired as a ghost): its READ/atomic credit comes
  // back, or is lost (Behaviour::failed_rd_atomic_keeps_credit) unless it succeeded.
  void ReturnRdCredit(Qp& qp, SendWqe& w);
  // A fatal NAK of packet `psn` ends what the requester sends (post_send_runs_to_completion).
  void StopAtNak(Qp& qp, size_t index, uint32_t psn);
  void OnRnrNak(Qp& qp, size_t index, uint32_t psn, uint8_t timer);
  void GoBackTo(Qp& qp, size_t index);
  // A retry from WQE `index` in SQD where the device does not resend then (true: handled).
  bool UnsendInSqd(Qp& qp, size_t index);
  // Behaviour::nak_behind_head_hits_head: the index of the head WQE a NAK that matched no
  // WQE's PSNs answers (its PSN between comp.psn and the head's first PSN), else `sent`.
  size_t NakBehindHead(const Qp& qp, const Packet& pkt, size_t sent) const;
  // RTS -> SQD revives a requester a local error stopped with a retry held back
  // (Behaviour::local_error_stops_retries): the retry runs now.
  void RetryStalledInSqd(Qp& qp);
  // The PSN a retry from WQE `index` starts at (rxe's comp.psn), and the requester's PSN set
  // back to it (Behaviour::retry_rewinds_sq_psn).
  uint32_t RetryPsn(const Qp& qp, size_t index) const;
  void AdvanceCompPsn(Qp& qp, uint32_t psn);
  void RebasePsns(Qp& qp, size_t index, uint32_t psn);
  // The requester steps through `skipped_packets` of a retried WQE's data first
  // (NicTiming::retry_skip_ps_per_packet): it, and the host, are busy until that ends.
  void BusyRequesterFor(Qp& qp, uint32_t skipped_packets);
  void RewindPsn(Qp& qp, size_t index);

  // Responder (responder.cc).
  enum class RespStep { kCheckState, kCheckPsn, kCheckXrcSrq, kCheckOp, kExecute, kDone };
  void HandleRequest(Qp& qp, Packet& pkt);
  RespStep RespCheckState(Qp& qp, const Packet& pkt);
  RespStep RespCheckPsn(Qp& qp, const Packet& pkt);
  RespStep RespCheckXrcSrq(Qp& qp, const Packet& pkt);
  // The SRQ, CQ and PD a request to `qp` uses: its own, or the XRC SRQ's (XRC_RECV).
  Srq* RecvSrq(const Qp& qp) const;
  Cq& RecvCq(Qp& qp);
  uint32_t ResponderPd(const Qp& qp) const;
  RespStep RespCheckOp(Qp& qp, const Packet& pkt);
  RespStep RespExecute(Qp& qp, Packet& pkt);
  // Takes the oldest receive the NIC sees (recv_queue.h contract 5: the doorbell record read
  // when needed), its WQE fetched through the bus (contract 3); *fetch_failed (if given)
  // when that DMA failed. Only while HandleRequest runs, as PeekRecv.
  bool TakeRecv(Qp& qp, RecvWr* out, bool* fetch_failed = nullptr);
  // After a receive WR was taken from `srq`: SRQ_LIMIT_REACHED once below its armed limit.
  void CheckSrqLimit(Srq& srq);
  // When the transfers of the request being handled are done (now, plus the extra time
  // the bus took for them): a receive's CQE is written after its data (host_bus.h 3).
  // Only while HandleRequest runs (it reads request_delay_mark_).
  uint64_t RequestTransfersDone() const;
  // PushCqe of a receive's CQE to RecvCq(qp), visible after RequestTransfersDone(). Only
  // while HandleRequest runs.
  bool PushRecvCqe(Qp& qp, const WorkCompletion& wc, bool solicited) {
    return PushCqe(qp, RecvCq(qp), wc, solicited, RequestTransfersDone());
  }
  // Whether the NIC sees a receive for `qp` (its SRQ's or its own), without taking it.
  bool PeekRecv(Qp& qp);
  bool ReceiveReady(Qp& qp, RecvQueue& q);
  // Behaviour::write_imm_receive_at_last_packet: a resent WRITE_WITH_IMM whose packets before
  // epsn were executed, and the header of its last packet (for the RNR NAK).
  bool ResumesWriteImm(const Qp& qp, const Packet& pkt) const;
  static Packet LastPacketOf(const Packet& pkt);
  void ReceiveSendLike(Qp& qp, Packet& pkt);
  void Deliver(Packet&& pkt);  // Receive without the loopback sender's completion
  // SEND_WITH_INV at the responder (nic_mw.cc rules): false when the rkey could not be
  // invalidated (the receive's error CQE is pushed and the QP is in ERR).
  bool InvalidateForSend(Qp& qp, const Packet& pkt, WorkCompletion* wc);
  // Invalidates window `rkey` for QP `qp` (a LOCAL_INV or a SEND_WITH_INV, `how`): the
  // verbs' error, and device_faults() gets the invalidate when the profile says it faults.
  int InvalidateWindow(const Qp& qp, uint32_t rkey, const char* how);
  void RespondError(Qp& qp, const Packet& pkt, NakCode code, EventType event);
  // A responder DMA of the request's data failed (host_bus.h contract 2): RC/XRC NAK remote
  // operational error and ERR; UC and UD drop the message.
  void ResponderDmaFailed(Qp& qp, const Packet& pkt);
  // `ready_ns`: when the response can start (READ data / atomic result fetched by DMA).
  void SendResponse(const Qp& qp, const Packet& req, Packet resp, uint64_t ready_ns = 0,
                    uint64_t dma_bytes = 0);
  // `may_defer_flush`: the responder is failing; true when DeferFlushTo marked the ACK.
  bool SendAck(const Qp& qp, const Packet& req, bool may_defer_flush = false);
  // Marks a response of a failing responder for the deferred flush where the profile says
  // so and the requester is on this device (never with loss: the response must arrive).
  bool DeferFlushTo(Packet& resp, const Packet& req) const;

  // Context caches (nic_cache.cc): when the contexts a step needs are on chip (`ready_ns`
  // if every lookup hits). The send engine: QPC, the WQE, the local keys and pages of a
  // payload it reads. The responder: QPC, the remote key and pages of a WRITE/READ/ATOMIC.
  uint64_t SendContextsReady(const Qp& qp, const SendWqe& w, uint64_t ready_ns);
  uint64_t RequestContextsReady(const Qp& qp, const Packet& pkt);
  void PrefetchWqe(const Qp& qp, const SendWqe& w);  // the doorbell's WQE fetch fills the cache
  // The completer retires a WQE: on a reliable QP a successful WQE is looked up again (the
  // ACK or response is matched to it and its CQE built from it), read again if it was
  // evicted while outstanding. When its CQE may be written.
  uint64_t RetireWqeReady(const Qp& qp, const SendWqe& w, bool look_up);
  // Control verbs write the contexts they create through the cache (firmware): a new QP's
  // QPC, a new region's MPT entry and (up to the MTT's capacity) its translations.
  void InstallQpContext(const Qp& qp);
  // RegMr and RegMrAt (at: the bus address, or null for a buffer of this process).
  int RegisterMr(uint32_t ctx, uint32_t pd, const uint64_t* at, size_t length,
                 AccessFlags access, Mr** out);
  void InstallMrContexts(const Mr& mr);
  // When `misses` context reads issued on a fetch unit (its free time in *unit_free_ns,
  // `overlap` reads in flight) are back: timing.h contract 5.
  uint64_t FetchMisses(uint64_t ready_ns, uint32_t misses, uint64_t bytes, uint32_t overlap,
                       uint64_t* unit_free_ns);

  World* world_;
  int index_;
  EventFifo<std::weak_ptr<Qp>> ready_;  // the send engine's ready list, in kick order
  EventFifo<SentWqe> sent_;             // in the order their last bytes leave
  EventTimers<QpTimer> timers_;
  EventTimers<std::weak_ptr<Qp>> rnr_waits_;  // RNR NAK timers (completer.cc)
  // The ends of retry skip loops (BusyRequesterFor): apart from ready_, so that a loop does
  // not count as the send engine's work (SendEngineBusy) while the host goes on.
  EventTimers<std::weak_ptr<Qp>> skip_loops_;
  EventTimers<std::weak_ptr<Qp>> answer_waits_;  // RerunWaitsForAnswer's latest resumption
  uint32_t next_ctx_ = 1;
  uint64_t history_version_ = 0;  // history_version()
  uint32_t next_qpn_ = 17;  // rxe: RXE_MIN_QP_INDEX = 16; QP0/QP1 are reserved
  uint32_t next_srqn_ = 1;  // SRQ numbers (ibv_get_srq_num), a namespace of their own
  std::vector<uint64_t> host_free_ns_ = std::vector<uint64_t>(1, 0);  // per host thread
  size_t host_thread_ = 0;
  ContextCache cache_;
  std::vector<PortAttr> ports_one_;   // ModifyQp's port list, kept: no allocation per modify
  uint64_t fetch_free_ns_ = 0;        // the context-fetch unit (timing.h contract 5)
  uint64_t wqe_fetch_free_ns_ = 0;    // the WQE re-fetch unit, when it has its own
  uint64_t request_contexts_ns_ = 0;  // the request being handled: its contexts are on chip
  uint64_t request_delay_mark_ = 0;  // bus delay_total() when the request's handling began
  // The receive queue whose doorbell record this request read and found without a receive.
  const RecvQueue* no_receive_in_ = nullptr;
  // ReqCheckLocal to ReqTransmit: the extra target time of the message's WQE re-read and
  // payload read (host_bus.h contract 3).
  uint64_t transfers_delay_ns_ = 0;
  TracePort* trace_ = nullptr;  // SetTracePort
  // A resized queue's new block (queue_memory.h contract 2): from the current window, else
  // from `own`, the queue's.
  bool TakeResizedBlock(const std::shared_ptr<QueueArena>& own, uint64_t bytes, QueueBlock* out);
  std::shared_ptr<QueueArena> queue_arena_;  // queue_memory.h; null: this process's memory
  std::vector<std::weak_ptr<QueueArena>> old_arenas_;  // windows queues may still hold
  std::vector<uint8_t> bf_image_;            // a BlueFlame image read from queue memory
  uint64_t ignored_rings_ = 0;
  // nic_eq.cc: the drivers' event queues, by context.
  struct Eq {
    uint32_t eqn = 0;
    QueueBlock block;
    uint32_t slots = 0;
    uint32_t produced = 0;  // EQEs written
    uint32_t consumer = 0;  // EQEs the driver took, by its last arm
    bool armed = false;
    EqSpec spec;
  };
  void DrainEq(uint32_t ctx, Eq& eq);
  std::map<uint32_t, Eq> eqs_;
  uint32_t next_eqn_ = 1;
  std::vector<uint8_t> wqe_fetch_;  // FetchWqes' and RereadWqe's buffer on the NIC side
  SerializationMemo wqe_fetch_ps_;  // the doorbell's WQE fetch at the PCIe rate
  bool in_post_ = false;             // Doorbell's requester run (Packet::sent_by_post)
  // The QP whose post runs the event loop for its answers (Behaviour::post_answers_each_message):
  // its requester runs from Doorbell's loop, one message at a time, not from RunReady.
  const Qp* posting_ = nullptr;
  bool in_retry_response_ = false;   // Receive: a response to a request not from a post (FlushOnError)
  bool defer_requester_flush_ = false;  // Receive: Packet::responder_flush_first
  bool OnlyTheHeadIsDone(const Qp& qp) const;
  // A transport timer's expiry is running (RunTimer -> OnTimeout): see DeferFlushToTickEnd.
  bool in_timer_expiry_ = false;
  // Linux runs every timer of a tick in its softirq first (rxe: each schedules its QP's
  // completer tasklet); the flush tasklets a failing completer schedules (rxe_qp_error) run
  // after all of them. So a flush caused by a timer's expiry waits while another transport
  // timer of the same tick is still due (on any NIC of the World), and the error's own CQE
  // is written at once (measured: probe timer-tick-flush-order, 3 of 3; seed 20261244
  // sequence 11265). Behaviour::tick_timers_complete_before_flushes, with ticks
  // (NicTiming::timer_tick_ns).
  bool DeferFlushToTickEnd(Qp& qp);
  // The latest deadline of another transport timer of this tick still due (0: none).
  uint64_t LastOtherTimerThisTick(const Qp* except) const;
  void FinishTickFlushes();

  std::map<uint32_t, Pd> pds_;
  MrTable mrs_;
  HostBus* bus_ = &DirectBus::Instance();
  HostBus* cpu_ = &DirectBus::Instance();
  DoorbellPort* doorbell_ = &DirectDoorbell::Instance();
  CommandTarget* commands_ = nullptr;
  NetPort* net_ = &DirectFabric::Instance();
  MwTable mws_;
  std::vector<std::string> device_faults_;  // device_faults()
  std::map<uint32_t, Channel> channels_;
  std::map<uint32_t, std::shared_ptr<Cq>> cqs_;
  std::map<uint32_t, std::shared_ptr<Srq>> srqs_;
  std::map<uint32_t, Xrcd> xrcds_;
  std::map<uint32_t, Ah> ahs_;
  // Looked up per post and per packet: hashed, O(1) however many QPs (issue 15).
  std::unordered_map<uint32_t, std::shared_ptr<Qp>> qps_;  // by handle
  std::unordered_map<uint32_t, Qp*> by_qpn_;
  std::map<uint32_t, std::vector<AsyncEvent>> events_;  // by context
};

}  // namespace qptwin::model::engine
