#include "model/profile.h"

namespace qptwin::model {
namespace {

// Linux Soft-RoCE: caps and behaviour from spec/device_description.cc ("rxe").
Profile MakeRxe() {
  Profile p = ProfileOf("rxe", "Linux Soft-RoCE (rxe): RoCE v2, RC/UC/UD, no SQE, active MTU 1024",
                        "rxe");
  // Soft-RoCE is a software device: per-message CPU work dominates. Timing is NOT claimed
  // for rxe (it depends on the host CPU); these values keep scenarios' times readable.
  p.timing.link = LinkTiming{WireFormat::kRoceV2, 10, 500, 0, 0};
  p.timing.nic.tx_latency_ns = 2000;  // rxe_requester + rxe_xmit_packet on a CPU
  p.timing.nic.ack_ns = 500;          // rxe_responder -> send_ack
  p.timing.nic.serial_processing = true;
  // rxe's retrans_timer and rnr_nak_timer are timer_list timers in jiffies; Debian 12's
  // kernel has CONFIG_HZ=250.
  p.timing.nic.timer_tick_ns = 4'000'000;
  // retry_first_write_send's 2^24 - 2 steps took 0.85-0.95 s in tools/rxe-vm (row 127).
  p.timing.nic.retry_skip_ps_per_packet = 54'000;
  // Control verbs are system calls into the rxe driver (ib_uverbs): estimates of the order
  // measured for software verbs (a few us per command, pinning pages for reg_mr).
  p.timing.control = ControlTiming{5'000, 10'000, 3'000, 5'000, 5'000, 250};
  // rxe_pool.c __rxe_cleanup: wait_for_completion_timeout(msecs_to_jiffies(50000)) (row 131).
  p.timing.control.destroy_qp_bound_mw_wait_ns = 50'000'000'000;
  return p;
}

// IBTA behaviour on an InfiniBand port: SQE for UC/UD send errors, XRC (IBTA 9.8),
// COMM_EST, a 100 Gb/s link.
Profile MakeIbta() {
  Profile p = ProfileOf("ibta", "IBTA reference behaviour: InfiniBand link, SQE for UC/UD send errors",
                        "ibta");
  // An EDR-like 4x link (100 Gb/s of data after 64b/66b), timing illustrative only.
  p.timing.link = LinkTiming{WireFormat::kInfiniBand, 100, 300, 0, 0};
  p.timing.nic.tx_latency_ns = 300;
  p.timing.nic.ack_ns = 100;
  p.timing.nic.serial_processing = false;
  return p;
}

const std::vector<Profile>& AllProfiles() {
  static const std::vector<Profile> kProfiles = {MakeRxe(), MakeIbta(), MakeCx6Profile(),
                                                 MakeCx6DcProfile()};
  return kProfiles;
}

}  // namespace

const Profile* FindProfile(const std::string& name) {
  for (const Profile& p : AllProfiles()) {
    if (EqualsIgnoreCase(p.name, name)) return &p;
  }
  return nullptr;
}

std::vector<std::string> KnownProfileNames() {
  std::vector<std::string> out;
  for (const Profile& p : AllProfiles()) out.push_back(p.name);
  return out;
}


Profile ProfileOf(const std::string& name, const std::string& description,
                  const std::string& device) {
  const DeviceDescription* d = FindDeviceDescription(device);
  Profile p;
  p.name = name;
  p.description = description;
  p.device_name = d->name;
  p.device = d->device;
  p.port = d->port;
  p.behaviour = d->behaviour();
  return p;
}

}  // namespace qptwin::model
