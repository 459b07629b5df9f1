#include "model/thread_checked_device.h"

#include <cerrno>

#include "model/sim/kernel.h"

namespace qptwin::model {
namespace {

class ThreadCheckedDevice : public Device {
 public:
  explicit ThreadCheckedDevice(std::unique_ptr<Device> d) : d_(std::move(d)) {}
  // Releasing the device's objects is a call like any other: on another thread the
  // device (and with it its Backend's world) is deliberately leaked rather than freed
  // while the kernel's thread may be using that world.
  ~ThreadCheckedDevice() override {
    const sim::ModelCall call;  // kernel.h contract 7: also a destroy waits for its turn
    if (!call.ok()) (void)d_.release();
  }

  std::string Name() const override { return d_->Name(); }
  int QueryDevice(DeviceAttr* out) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->QueryDevice(out);
  }
  int QueryPort(uint8_t port_num, PortAttr* out) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->QueryPort(port_num, out);
  }
  int QueryGid(uint8_t port_num, int index, Gid* out) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->QueryGid(port_num, index, out);
  }
  int DefaultGidIndex(uint8_t port_num, int* index) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->DefaultGidIndex(port_num, index);
  }
  int AllocPd(PdHandle* out) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->AllocPd(out);
  }
  int DeallocPd(PdHandle pd) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->DeallocPd(pd);
  }
  int RegMr(PdHandle pd, size_t length, AccessFlags access, MrHandle* out, uint8_t** buf, uint32_t* lkey, uint32_t* rkey) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->RegMr(pd, length, access, out, buf, lkey, rkey);
  }
  int DeregMr(MrHandle mr) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->DeregMr(mr);
  }
  int ReregMr(MrHandle mr, int flags, PdHandle pd, size_t length, AccessFlags access,
              uint8_t** buf, uint32_t* lkey, uint32_t* rkey) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->ReregMr(mr, flags, pd, length, access, buf, lkey, rkey);
  }
  int AllocMw(PdHandle pd, MwType type, MwHandle* out, uint32_t* rkey) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->AllocMw(pd, type, out, rkey);
  }
  int DeallocMw(MwHandle mw) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->DeallocMw(mw);
  }
  int BindMw(QpHandle qp, MwHandle mw, const MwBind& bind, uint32_t* rkey) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->BindMw(qp, mw, bind, rkey);
  }
  int CreateCompChannel(ChannelHandle* out) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->CreateCompChannel(out);
  }
  int DestroyCompChannel(ChannelHandle ch) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->DestroyCompChannel(ch);
  }
  int CreateCq(int cqe, ChannelHandle channel, CqHandle* out, int* actual_cqe) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->CreateCq(cqe, channel, out, actual_cqe);
  }
  int DestroyCq(CqHandle cq) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->DestroyCq(cq);
  }
  int ResizeCq(CqHandle cq, int cqe, int* actual_cqe) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->ResizeCq(cq, cqe, actual_cqe);
  }
  int PollCq(CqHandle cq, int num_entries, WorkCompletion* wc) override {
    const sim::ModelCall call;
    if (!call.ok()) return -EPERM;
    return d_->PollCq(cq, num_entries, wc);
  }
  int ReqNotifyCq(CqHandle cq, bool solicited_only) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->ReqNotifyCq(cq, solicited_only);
  }
  int GetCqEvent(ChannelHandle ch, uint64_t timeout_ns, CqHandle* cq) override {
    const sim::ModelCall call{sim::ModelCall::Kind::kWait};
    if (!call.ok()) return EPERM;
    return d_->GetCqEvent(ch, timeout_ns, cq);
  }
  void AckCqEvents(CqHandle cq, unsigned n) override {
    const sim::ModelCall call;
    if (!call.ok()) return;
    d_->AckCqEvents(cq, n);
  }
  int WaitForCompletions(CqHandle cq, int n, uint64_t timeout_ns, std::vector<WorkCompletion>* out) override {
    const sim::ModelCall call{sim::ModelCall::Kind::kWait};
    if (!call.ok()) return EPERM;
    return d_->WaitForCompletions(cq, n, timeout_ns, out);
  }
  int CreateSrq(PdHandle pd, uint32_t max_wr, uint32_t max_sge, SrqHandle* out) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->CreateSrq(pd, max_wr, max_sge, out);
  }
  int DestroySrq(SrqHandle srq) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->DestroySrq(srq);
  }
  int PostSrqRecv(SrqHandle srq, const std::vector<RecvWr>& wrs, size_t* bad_wr) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->PostSrqRecv(srq, wrs, bad_wr);
  }
  int ModifySrq(SrqHandle srq, const SrqAttr& attr, uint32_t mask) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->ModifySrq(srq, attr, mask);
  }
  int QuerySrq(SrqHandle srq, SrqAttr* out) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->QuerySrq(srq, out);
  }
  int CreateSrqEx(const SrqInitAttr& init, SrqHandle* out) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->CreateSrqEx(init, out);
  }
  int SrqNum(SrqHandle srq, uint32_t* srq_num) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->SrqNum(srq, srq_num);
  }
  int OpenXrcd(XrcdHandle* out) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->OpenXrcd(out);
  }
  int CloseXrcd(XrcdHandle xrcd) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->CloseXrcd(xrcd);
  }
  int CreateAh(PdHandle pd, const AhAttr& attr, AhHandle* out) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->CreateAh(pd, attr, out);
  }
  int DestroyAh(AhHandle ah) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->DestroyAh(ah);
  }
  int CreateQp(const QpInitAttr& init, QpHandle* out, QpCap* actual) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->CreateQp(init, out, actual);
  }
  int DestroyQp(QpHandle qp) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->DestroyQp(qp);
  }
  int QpNum(QpHandle qp, uint32_t* qp_num) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->QpNum(qp, qp_num);
  }
  int ModifyQp(QpHandle qp, const QpAttr& attr, AttrMask mask) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->ModifyQp(qp, attr, mask);
  }
  int QueryQp(QpHandle qp, QpAttr* attr, QpInitAttr* init) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->QueryQp(qp, attr, init);
  }
  int PostSend(QpHandle qp, const std::vector<SendWr>& wrs, size_t* bad_wr) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->PostSend(qp, wrs, bad_wr);
  }
  int PostRecv(QpHandle qp, const std::vector<RecvWr>& wrs, size_t* bad_wr) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->PostRecv(qp, wrs, bad_wr);
  }
  std::vector<AsyncEvent> TakeAsyncEvents() override {
    const sim::ModelCall call;
    if (!call.ok()) return {};
    return d_->TakeAsyncEvents();
  }
  int WaitForAsyncEvent(EventType type, QpHandle qp, uint64_t timeout_ns) override {
    const sim::ModelCall call{sim::ModelCall::Kind::kWait};
    if (!call.ok()) return EPERM;
    return d_->WaitForAsyncEvent(type, qp, timeout_ns);
  }
  int QpHistory(QpHandle qp, std::vector<StateChange>* out) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->QpHistory(qp, out);
  }
  int QpHistorySince(QpHandle qp, size_t first, std::vector<StateChange>* out) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->QpHistorySince(qp, first, out);
  }
  bool HistoryIsComplete() const override { return d_->HistoryIsComplete(); }
  uint64_t HistoryVersion() const override {
    const sim::ModelCall call;
    return call.ok() ? d_->HistoryVersion() : 0;
  }
  int LocalConnectionInfo(QpHandle qp, ConnectionInfo* out) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->LocalConnectionInfo(qp, out);
  }
  int UseHostThread(int thread, uint64_t* free_ns) override {
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    return d_->UseHostThread(thread, free_ns);
  }

  Device* inner() const { return d_.get(); }

 private:
  std::unique_ptr<Device> d_;
};

}  // namespace

std::unique_ptr<Device> CheckThread(std::unique_ptr<Device> device) {
  return std::make_unique<ThreadCheckedDevice>(std::move(device));
}

Device* Unchecked(Device* device) {
  auto* checked = dynamic_cast<ThreadCheckedDevice*>(device);
  return checked ? checked->inner() : device;
}

}  // namespace qptwin::model
