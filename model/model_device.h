// The Device of spec/backend.h over one engine::Nic: handle translation, and the waits
// that let simulated time run. One ModelDevice is one opened context on its NIC.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/engine/nic.h"
#include "model/engine/world.h"
#include "spec/backend.h"

namespace qptwin::model {

struct SendRing;  // model_backend.h
struct RecvRing;
struct CqRing;

// The longest single wait or Advance the model performs (2^50 ns, about 13 days).
inline constexpr uint64_t kMaxWaitNs = uint64_t{1} << 50;

class ModelDevice : public Device {
 public:
  ModelDevice(std::shared_ptr<engine::World> world, int nic_index);
  ~ModelDevice() override;

  std::string Name() const override;
  int QueryDevice(DeviceAttr* out) override;
  int QueryPort(uint8_t port_num, PortAttr* out) override;
  int QueryGid(uint8_t port_num, int index, Gid* out) override;
  int DefaultGidIndex(uint8_t port_num, int* index) override;

  int AllocPd(PdHandle* out) override;
  int DeallocPd(PdHandle pd) override;
  // model_backend.h ModelQueueMemoryAt: the device's new queues' rings at bus addresses.
  int SetQueueMemory(uint64_t addr, uint64_t length);  // EINVAL for a range that wraps
  bool HasQueueMemory();  // the device's new queues take their rings from a window
  // model_backend.h ModelSendRing.
  int SendRingOf(QpHandle qp, SendRing* out);
  int RecvRingOf(QpHandle qp, RecvRing* out);  // model_backend.h ModelRecvRing
  int CqRingOf(CqHandle cq, CqRing* out);       // model_backend.h ModelCqRing
  int SrqRingOf(SrqHandle srq, RecvRing* out);  // model_backend.h ModelSrqRing
  int SetCqEvent(CqHandle cq, uint64_t addr, uint32_t data);  // model_backend.h ModelCqEvent
  // model_backend.h ModelRegMrAt: a region at a bus address of the platform's.
  int RegMrAt(PdHandle pd, uint64_t addr, size_t length, AccessFlags access, MrHandle* out,
              uint32_t* lkey, uint32_t* rkey);
  int RegMr(PdHandle pd, size_t length, AccessFlags access, MrHandle* out, uint8_t** buf,
            uint32_t* lkey, uint32_t* rkey) override;
  int DeregMr(MrHandle mr) override;
  int ReregMr(MrHandle mr, int flags, PdHandle pd, size_t length, AccessFlags access,
              uint8_t** buf, uint32_t* lkey, uint32_t* rkey) override;
  int AllocMw(PdHandle pd, MwType type, MwHandle* out, uint32_t* rkey) override;
  int DeallocMw(MwHandle mw) override;
  int BindMw(QpHandle qp, MwHandle mw, const MwBind& bind, uint32_t* rkey) override;

  int CreateCompChannel(ChannelHandle* out) override;
  int DestroyCompChannel(ChannelHandle ch) override;
  int CreateCq(int cqe, ChannelHandle channel, CqHandle* out, int* actual_cqe) override;
  int DestroyCq(CqHandle cq) override;
  int ResizeCq(CqHandle cq, int cqe, int* actual_cqe) override;
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
  int QpHistorySince(QpHandle qp, size_t first, std::vector<StateChange>* out) override;
  bool HistoryIsComplete() const override { return true; }
  uint64_t HistoryVersion() const override { return nic_->history_version(); }
  int LocalConnectionInfo(QpHandle qp, ConnectionInfo* out) override;
  int UseHostThread(int thread, uint64_t* free_ns) override;

 // The driver's commands (driver_commands.h) reach the engine beside the verbs: the NIC and
  // this context's number there.
  engine::Nic* engine_nic() const { return nic_; }
  uint32_t context() const { return ctx_; }

 private:
  uint64_t Deadline(uint64_t timeout_ns) const;
  // Runs simulated time until this device's host thread is free (posting, polling and
  // control verbs it did occupy it: timing.h). Called first by every wait.
  void CatchUpHost();
  // The NIC, for a verb the program calls: the program runs only when its CPU is free of the
  // device's softirq work (held flushes: engine::World::HoldTickFlush) (the observers, the
  // history and the async events, call nic_ directly).
  engine::Nic* Host() {
    if (world_->has_held_work()) SettleHeldWork();
    return nic_;
  }
  void SettleHeldWork();

  std::shared_ptr<engine::World> world_;
  engine::Nic* nic_;
  uint32_t ctx_;
};

}  // namespace qptwin::model
