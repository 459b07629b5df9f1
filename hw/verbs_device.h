// spec::Device over one opened libibverbs context.
//
// Contract and invariants:
//  1. Every verb returns what libibverbs returned: the return value, or errno after a NULL
//     return (EINVAL if a provider failed without setting errno).
//  2. Every handle is looked up in this Device's tables first; an unknown handle gives
//     EINVAL (PollCq: -EINVAL) and no verbs object is touched.
//  3. Destruction releases memory windows (a bound type 2 window holds its QP and region in
//     rxe), QPs, SRQs, XRCDs, AHs, CQs, channels, MRs (then their memory),
//     PDs and the context, in that order (XRC QPs and SRQs before their XRCD); CQ events still unacknowledged are acknowledged first, so
//     ibv_destroy_cq never waits forever.
//  4. Async events are read without a thread: the context's async fd is O_NONBLOCK and is
//     drained (each event mapped to handles and acknowledged at once) by TakeAsyncEvents,
//     WaitForAsyncEvent, QpHistory and before every destroy. AsyncEvent::time_ns is when the
//     event was drained.
//  5. Threading: one thread at a time (spec/backend.h contract 5).
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "hw/convert.h"
#include "hw/handle_table.h"
#include "hw/verbs_backend.h"
#include "spec/backend.h"

namespace qptwin::hw {

// The Backend's clock: nanoseconds since the Backend was created.
struct MonotonicClock {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  uint64_t NowNs() const {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now() - start)
                                     .count());
  }
  // NowNs() + timeout_ns, saturating (a huge timeout means "no deadline", not "expired").
  uint64_t DeadlineAfter(uint64_t timeout_ns) const {
    uint64_t now = NowNs();
    return timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
  }
};

class VerbsDevice : public Device {
 public:
  // Takes ownership of `context` (closed in the destructor).
  VerbsDevice(ibv_context* context, const VerbsOptions& opts, std::shared_ptr<IdSource> ids,
              MonotonicClock clock);
  ~VerbsDevice() override;
  VerbsDevice(const VerbsDevice&) = delete;
  VerbsDevice& operator=(const VerbsDevice&) = delete;

  std::string Name() const override;
  int QueryDevice(DeviceAttr* out) override;
  int QueryPort(uint8_t port_num, PortAttr* out) override;
  int QueryGid(uint8_t port_num, int index, Gid* out) override;
  int DefaultGidIndex(uint8_t port_num, int* index) override;

  int AllocPd(PdHandle* out) override;
  int DeallocPd(PdHandle pd) override;
  int RegMr(PdHandle pd, size_t length, AccessFlags access, MrHandle* out, uint8_t** buf,
            uint32_t* lkey, uint32_t* rkey) override;
  int DeregMr(MrHandle mr) override;
  int ReregMr(MrHandle mr, int flags, PdHandle pd, size_t length, AccessFlags access,
              uint8_t** buf, uint32_t* lkey, uint32_t* rkey) override;  // verbs_device_rereg.cc
  // verbs_device_mw.cc
  int AllocMw(PdHandle pd, MwType type, MwHandle* out, uint32_t* rkey) override;
  int DeallocMw(MwHandle mw) override;
  int BindMw(QpHandle qp, MwHandle mw, const MwBind& bind, uint32_t* rkey) override;

  int CreateCompChannel(ChannelHandle* out) override;
  int DestroyCompChannel(ChannelHandle ch) override;
  int CreateCq(int cqe, ChannelHandle channel, CqHandle* out, int* actual_cqe) override;
  int DestroyCq(CqHandle cq) override;
  int ResizeCq(CqHandle cq, int cqe, int* actual_cqe) override;  // verbs_device_srq_cq.cc
  int PollCq(CqHandle cq, int num_entries, WorkCompletion* wc) override;
  int ReqNotifyCq(CqHandle cq, bool solicited_only) override;
  int GetCqEvent(ChannelHandle ch, uint64_t timeout_ns, CqHandle* cq) override;
  void AckCqEvents(CqHandle cq, unsigned n) override;
  int WaitForCompletions(CqHandle cq, int n, uint64_t timeout_ns,
                         std::vector<WorkCompletion>* out) override;

  int CreateSrq(PdHandle pd, uint32_t max_wr, uint32_t max_sge, SrqHandle* out) override;
  int DestroySrq(SrqHandle srq) override;
  int PostSrqRecv(SrqHandle srq, const std::vector<RecvWr>& wrs, size_t* bad_wr) override;
  int ModifySrq(SrqHandle srq, const SrqAttr& attr, uint32_t mask) override;
  int QuerySrq(SrqHandle srq, SrqAttr* out) override;
  int CreateSrqEx(const SrqInitAttr& init, SrqHandle* out) override;
  int SrqNum(SrqHandle srq, uint32_t* srq_num) override;
  int OpenXrcd(XrcdHandle* out) override;
  int CloseXrcd(XrcdHandle xrcd) override;

  int CreateAh(PdHandle pd, const AhAttr& attr, AhHandle* out) override;
  int DestroyAh(AhHandle ah) override;

  int CreateQp(const QpInitAttr& init, QpHandle* out, QpCap* actual) override;
  int DestroyQp(QpHandle qp) override;
  int QpNum(QpHandle qp, uint32_t* qp_num) override;
  int ModifyQp(QpHandle qp, const QpAttr& attr, AttrMask mask) override;
  int QueryQp(QpHandle qp, QpAttr* attr, QpInitAttr* init) override;
  int PostSend(QpHandle qp, const std::vector<SendWr>& wrs, size_t* bad_wr) override;
  int PostRecv(QpHandle qp, const std::vector<RecvWr>& wrs, size_t* bad_wr) override;

  std::vector<AsyncEvent> TakeAsyncEvents() override;
  int WaitForAsyncEvent(EventType type, QpHandle qp, uint64_t timeout_ns) override;

  int QpHistory(QpHandle qp, std::vector<StateChange>* out) override;
  int LocalConnectionInfo(QpHandle qp, ConnectionInfo* out) override;

 private:
  struct PdEntry {
    ibv_pd* pd = nullptr;
  };
  struct MrEntry {
    ibv_mr* mr = nullptr;
    void* buf = nullptr;
  };
  struct MwEntry {
    ibv_mw* mw = nullptr;
    PdHandle pd;
  };
  struct ChannelEntry {
    ibv_comp_channel* channel = nullptr;
  };
  struct CqEntry {
    ibv_cq* cq = nullptr;
    unsigned unacked_events = 0;  // got by GetCqEvent, not yet acknowledged
  };
  struct SrqEntry {
    ibv_srq* srq = nullptr;
  };
  struct AhEntry {
    ibv_ah* ah = nullptr;
  };
  struct XrcdEntry {
    ibv_xrcd* xrcd = nullptr;
  };
  struct QpEntry {
    ibv_qp* qp = nullptr;
    QpInitAttr init;  // as created (handles), caps as granted
    uint8_t port_num = 1;
    QpState last_state = QpState::kReset;  // the last state recorded in history
    std::vector<StateChange> history;
  };

  // verbs_device_qp.cc
  int CreateXrcQp(const QpInitAttr& init, QpHandle* out, QpCap* actual);
  void RecordState(QpEntry* q, QpState to, const std::string& cause);
  // Queries the QP's state; a state different from the last recorded one is recorded as a
  // device transition with `cause`. Returns the current state (last_state on query failure).
  QpState ObserveState(QpEntry* q, const std::string& cause);
  void ObserveAfterErrorCompletion(uint32_t qp_num, WcStatus status);

  // verbs_device_events.cc
  void DrainAsyncEvents();
  AsyncEvent ToAsyncEvent(const ibv_async_event& ev);
  QpHandle FindQpHandle(const ibv_qp* qp) const;
  CqHandle FindCqHandle(const ibv_cq* cq) const;
  SrqHandle FindSrqHandle(const ibv_srq* srq) const;

  // verbs_device_mw.cc: the window and region of every BIND_MW WR (EINVAL, *usable lowered
  // to the first that does not resolve); after a post, the type 2 windows' rkeys.
  int ResolveBinds(const std::vector<SendWr>& wrs, std::vector<BindTarget>* out, size_t* usable);
  void NoteBindsPosted(const std::vector<SendWr>& wrs, size_t posted);

  void ReleaseAll();
  int ProbeMaxInlineData();

  ibv_context* context_;
  std::string name_;
  VerbsOptions opts_;
  MonotonicClock clock_;
  std::unordered_map<uint8_t, int> gid_index_cache_;
  int max_inline_data_ = -1;  // probed once by QueryDevice

  HandleTable<PdTag, PdEntry> pds_;
  HandleTable<MrTag, MrEntry> mrs_;
  HandleTable<MwTag, MwEntry> mws_;
  HandleTable<ChannelTag, ChannelEntry> channels_;
  HandleTable<CqTag, CqEntry> cqs_;
  HandleTable<SrqTag, SrqEntry> srqs_;
  HandleTable<AhTag, AhEntry> ahs_;
  HandleTable<XrcdTag, XrcdEntry> xrcds_;
  HandleTable<QpTag, QpEntry> qps_;

  std::deque<AsyncEvent> async_events_;
};

// errno after a verbs call returned NULL or -1 (EINVAL if the provider left it 0).
int LastErrno();

}  // namespace qptwin::hw
