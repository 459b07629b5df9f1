// The model's side of a driver's commands (engine/command_port.h, issue 12 step (c)): each
// command is the verb behind it on one context of the device, opened for the driver at its
// first command; the driver names its objects by the numbers the NIC answered.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "model/engine/command_port.h"
#include "model/engine/world.h"
#include "spec/backend.h"

namespace qptwin::model {

class ModelDevice;

class DriverCommands : public engine::CommandTarget {
 public:
  DriverCommands(std::shared_ptr<engine::World> world, int nic_index);
  ~DriverCommands() override;
  // Inside a model call (model/sim/platform.h contract 13).
  int Command(uint32_t op, const uint64_t in[engine::command::kWords],
              uint64_t out[engine::command::kWords]) override;
  bool open() const override { return !closed_.load(); }
  // Its Backend went off the kernel's thread: it is leaked with the World, and takes no
  // command again.
  void Close() { closed_.store(true); }
  bool has_context() const { return dev_ != nullptr; }  // a command has run

 private:
  int Run(engine::command::Op op, const uint64_t* in, uint64_t* out);
  int CreateCq(const uint64_t* in, uint64_t* out);
  int CreateQp(const uint64_t* in, uint64_t* out);
  int CreateXrcRecvQp(const uint64_t* in, uint64_t* out);  // kCreateQp of an XRC_RECV QP
  int ModifyQp(const uint64_t* in);
  // Contract 4 (engine/command_port.h): RoCE's address vector to the GID in two words.
  int RoceAddress(uint64_t gid_lo, uint64_t gid_hi, AhAttr* out);
  int SrqAnswer(SrqHandle srq, uint64_t* out);  // kCreateSrq's answers
  int CqAnswer(CqHandle cq, uint64_t* out);      // kCreateCq's answers
  int GetEvent(uint64_t* out);
  int CreateEq(const uint64_t* in, uint64_t* out);
  // An event's object by the driver's number for it (kGetEvent's out1, an EQE's number).
  uint64_t NumberOf(const AsyncEvent& e) const;
  template <typename H>
  static bool Find(const std::map<uint64_t, H>& m, uint64_t n, H* h);
  // The object numbered n in m, by the verb `destroy`; EINVAL for no such number.
  template <typename H>
  int Destroy(std::map<uint64_t, H>& m, uint64_t n, int (ModelDevice::*destroy)(H));

  std::shared_ptr<engine::World> world_;
  int nic_index_;
  std::unique_ptr<ModelDevice> dev_;  // the driver's context, opened at its first command
  uint64_t next_pd_ = 1;
  std::map<uint64_t, PdHandle> pds_;  // by PD number
  std::map<uint64_t, MrHandle> mrs_;  // by lkey
  std::map<uint64_t, CqHandle> cqs_;  // by CQ number
  std::map<uint64_t, QpHandle> qps_;  // by QP number
  uint64_t next_srq_ = 1;
  std::map<uint64_t, SrqHandle> srqs_;  // by SRQ number
  std::map<uint64_t, AhHandle> ahs_;    // by AH number (its handle)
  std::map<uint64_t, MwHandle> mws_;    // by MW number (its handle)
  uint64_t next_xrcd_ = 1;
  std::map<uint64_t, XrcdHandle> xrcds_;  // by XRCD number
  std::atomic<bool> closed_{false};
  uint32_t eqn_ = 0;  // the context's event queue (kCreateEq), or 0
};

}  // namespace qptwin::model
