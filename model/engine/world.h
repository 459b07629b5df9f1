// A world: the NICs of one Backend, the fabric that connects their ports, and one clock.
//
// Contract:
//  1. Handles are unique across the world (so a handle of another device is never found).
//  2. Transmit() models a message's way out of a NIC and over the fabric (timing.h): the
//     payload's DMA read (one PCIe read channel per NIC), the send engine (tx_pkt_ns per
//     packet; one engine for everything with serial_processing), the port (one packet at
//     a time, every packet with its own headers, wire.h, exact in ps), cables, switches and
//     the far NIC's rx_latency_ns; loss is per packet (deterministic from the seed). A lost
//     message is simply never delivered.
//  3. Everything is single-threaded; sources run only inside the clock's AdvanceBy/RunUntil
//     (event_queue.h). The clock is given to the World (model_backend: a sim::ScClock) and
//     outlives every source of the World.
//  4. Pending events do not grow with QPs or WRs in flight: each port's messages on their way
//     to the far NIC are one EventFifo (a port sends in order, so they arrive in order), and
//     the CQE-visible marks are one more; each holds one wake-up in the EventQueue.
//  5. External port (issue 13, several processes): with SetExternalPort, a global address
//     (GID) no NIC of this World has resolves to an external id (>= nic_count(), one per
//     GID); Transmit to it hands the message to the port when its last byte leaves
//     (ExternalPort::Send, from the event loop), and Inject delivers a message that came
//     from outside to a local NIC at Now() + FabricLatencyNs(). Without a port nothing
//     changes: unknown addresses resolve to -1 and their messages are dropped. On IB, an
//     unknown LID (no GRH) is the IPv4-mapped GID of <our addresses' /16>.<LID>.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <unordered_map>
#include <vector>

#include "model/engine/event_queue.h"
#include "model/engine/event_source.h"
#include "model/engine/net_port.h"
#include "model/engine/packet.h"
#include "model/profile.h"
#include "model/wire.h"

namespace qptwin::model::engine {

class Nic;
struct Qp;

class World {
 public:
  World(const Profile& profile, int devices, double loss_rate, uint64_t seed,
        std::unique_ptr<EventQueue> clock);
  ~World();

  EventQueue& events() { return *clock_; }
  const Profile& profile() const { return profile_; }
  int nic_count() const { return static_cast<int>(nics_.size()); }
  Nic* nic(int i) { return nics_[i].get(); }
  uint32_t NewHandle() { return next_handle_++; }

  // The device whose port has this address (GID on RoCE, LID on IB), an external id
  // (contract 5), or -1.
  int ResolveAddress(const AhAttr& ah) const;

  // Contract 5. The port outlives the World (or is reset to nullptr first).
  class ExternalPort {
   public:
    virtual ~ExternalPort() = default;
    // The first address outside this World was resolved (a QP or AH reaches it).
    virtual void Activate() = 0;
    // `pkt` (from local NIC pkt.src_nic) leaves for `dgid` now, cut at `mtu_bytes`.
    virtual void Send(const Packet& pkt, const Gid& dgid, uint32_t mtu_bytes) = 0;
  };
  void SetExternalPort(ExternalPort* port) { external_ = port; }
  bool IsExternal(int id) const { return id >= nic_count(); }
  // The id of an address outside the World (made on first use; Activate on the first).
  int ExternalId(const Gid& gid) const;
  const Gid& ExternalGid(int id) const { return externals_[id - nic_count()]; }
  // A message from outside for local NIC pkt.dst_nic (pkt.src_nic: its sender's external
  // id), delivered at Now() + FabricLatencyNs(). False (dropped) for a bad dst_nic.
  bool Inject(Packet pkt);
  // Messages transmitted to external ids that have not left yet.
  size_t outgoing() const;
  // Per local NIC: the IPv4 address of its RoCE port (host order; 0: the default GIDs).
  // Set before any GID is read.
  void SetIpv4(const std::vector<uint32_t>& ips) { ipv4_ = ips; }
  uint32_t ipv4(int nic) const { return nic < static_cast<int>(ipv4_.size()) ? ipv4_[nic] : 0; }

  // Sends `pkt` from its src_nic: its WQE/request is ready at `ready_ns` (never before
  // now), `dma_bytes` of payload are then read over PCIe, and the pipeline takes
  // `proc_ns` before the first byte leaves. Returns the time (ns, rounded up) the last byte
  // leaves the port. Delivery (if not lost) calls Nic::Receive at the far end.
  uint64_t Transmit(Packet&& pkt, uint64_t ready_ns, uint64_t proc_ns, uint64_t dma_bytes,
                    uint32_t mtu_bytes);
  // One-way latency from the last byte leaving a port to the far NIC acting on it, through
  // the profile's fabric (net_port.h contract 3).
  uint64_t FabricLatencyNs() const;
  // net_port.h contract 2: a message's last byte reached pkt.dst_nic's port at `at_ns`; the
  // NIC receives it rx_latency_ns later. Dropped when either end is not a NIC of this World.
  void Arrive(Packet&& pkt, uint64_t at_ns);
  // Lets waiters look at time `t` (a CQE becomes visible then): RunUntil stops there. Marks
  // at one time are one mark (a second would run nothing).
  void WakeAt(uint64_t t);
  // Messages on their way and wake-ups held by the World's sources (contract 4; tests).
  size_t in_flight() const;
  // No message on its way, no requester waiting to run, no CQE not yet visible: every
  // exchange started so far has been answered (pending timers may still fire later).
  bool ExchangesSettled() const;
  // The host's program cannot run before `until_ns` (NicTiming::retry_skip_ps_per_packet: a
  // loop in softirq context on its CPU); its waits end no earlier (ModelBackend::Advance,
  // ModelDevice's waits). host_stall_end_ns() is the latest such time (0: none).
  void StallHost(uint64_t until_ns) { host_stall_end_ns_ = std::max(host_stall_end_ns_, until_ns); }
  uint64_t host_stall_end_ns() const { return host_stall_end_ns_; }
  // The same loop beside the program until its `wakes`-th wake-up from now (HostWakes):
  // the scheduler may put it on the CPU the softirq holds, which looks idle (timing.h
  // NicTiming::retry_skip_host_joins_at). A loop that starts while one is pending moves
  // the end on and keeps the count.
  void StallHostAtWake(uint64_t until_ns, int wakes);
  // The program woke up (the end of an Advance, or of a poll's or an event's wait that
  // waited; with `--host-us` each command's host time is an Advance too): a stall pending
  // at this wake-up begins (StallHost) when its loop has not ended.
  void HostWakes();
  // Runs the clock to the end of a host stall still under way.
  void WaitOutHostStall();
  // A context read of `bytes` (timing.h contract 5) on `nic`'s PCIe read channel, from
  // `at_ns` or when the channel is free: returns when its bytes have crossed (ns, rounded up).
  uint64_t OccupyDmaRead(int nic, uint64_t at_ns, uint64_t bytes);

  // Flushes held back to the end of a tick's timers (Nic::DeferFlushToTickEnd), in order.
  void HoldTickFlush(Nic* nic, std::weak_ptr<Qp> qp) {
    ++tick_holds_;
    held_work_.push_back(HeldWork{nic, std::move(qp), nullptr});
  }
  // How many flushes were ever held (a wait can tell whether a hold began while it ran).
  uint64_t tick_holds() const { return tick_holds_; }
  // A READ request that reached `nic`'s responder while flushes are held waits behind them,
  // and so does any request behind it to the same QP (Nic::Receive): rxe_resp_queue_pkt
  // schedules the responder tasklet for a READ, or while req_pkts holds another request.
  void HoldTickPacket(Nic* nic, Packet&& pkt) {
    held_work_.push_back(HeldWork{nic, {}, std::make_unique<Packet>(std::move(pkt))});
  }
  bool has_held_work() const { return !held_work_.empty(); }
  // A request to `nic`'s QP `qpn` is held (the requests behind it wait too: rxe queues a
  // request behind another in req_pkts, in PSN order).
  bool HasHeldPacketFor(const Nic* nic, uint32_t qpn) const;
  // Runs the held work in the order it was held.
  void RunHeldWork();

  // The host kernel's timers (NicTiming::timer_tick_ns) that fire at `tick`: returns how many
  // were armed for it before (one bucket's timers fire latest-armed first).
  uint32_t ArmTimerAtTick(uint64_t tick);

  bool lossless() const { return loss_rate_ <= 0; }
  uint64_t packets_sent() const { return packets_sent_; }
  uint64_t packets_lost() const { return packets_lost_; }
  uint64_t messages_sent() const { return messages_sent_; }
  uint64_t wire_bytes() const { return wire_bytes_; }

 private:
  bool Lose();

  std::unordered_map<uint64_t, uint32_t> timers_per_tick_;
  struct HeldWork {
    Nic* nic;
    std::weak_ptr<Qp> qp;         // a held flush, or
    std::unique_ptr<Packet> pkt;  // a held READ request
  };
  std::vector<HeldWork> held_work_;
  uint64_t tick_holds_ = 0;
  uint64_t host_stall_end_ns_ = 0;
  uint64_t pending_stall_end_ns_ = 0;  // StallHostAtWake (0: none)
  int pending_stall_wakes_ = 0;

  const Profile profile_;  // a copy: a backend may change its cache setting (ModelOptions)
  std::unique_ptr<EventQueue> clock_;  // first: destroyed after every source
  std::vector<std::unique_ptr<Nic>> nics_;
  struct Port {
    uint64_t tx_free_ps = 0;      // the port's last byte so far
    uint64_t dma_free_ps = 0;     // the PCIe read channel
    uint64_t engine_free_ns = 0;  // the send engine (or the one engine: serial_processing)
  };
  std::vector<Port> ports_;
  struct Delivery {  // to nic(pkt.dst_nic): no pointer of its own (issue 15: bytes per WR)
    Packet pkt;
  };
  std::vector<std::unique_ptr<EventFifo<Delivery>>> links_;  // by source port
  EventFifo<char> marks_;
  struct Outgoing {  // to the external port (contract 5)
    Packet pkt;
    uint32_t mtu = 0;
  };
  std::vector<std::unique_ptr<EventFifo<Outgoing>>> outgoing_;  // by source port
  EventFifo<Delivery> inbound_;
  ExternalPort* external_ = nullptr;
  mutable std::vector<Gid> externals_;  // external id - nic_count() -> GID
  std::vector<uint32_t> ipv4_;
  double loss_rate_;
  // Seeded on the first draw (Lose() with a loss rate): the same numbers as seeded in the
  // constructor, without seeding 2.5 KB of state for every World that never draws (a
  // fuzzer makes thousands of Worlds a second, all lossless).
  uint64_t seed_;
  std::optional<std::mt19937_64> rng_;
  uint32_t next_handle_ = 1;
  uint64_t packets_sent_ = 0;
  uint64_t packets_lost_ = 0;
  uint64_t messages_sent_ = 0;
  uint64_t wire_bytes_ = 0;
  // The last WireOf of each wire op (Transmit): a stream repeats its sizes, and WireOf
  // walks every packet of the message.
  struct WireMemo {
    uint64_t payload = 0;
    uint32_t mtu = 0;
    bool ext = false;
    bool ud = false;
    bool valid = false;
    MessageWire wire;
  };
  WireMemo wire_memo_[kNumWireOps];
  SerializationMemo serialization_;  // the PCIe channel's and the link's
  const MessageWire& WireOfCached(WireOp op, uint64_t payload, uint32_t mtu, bool ext, bool ud);
};

}  // namespace qptwin::model::engine
