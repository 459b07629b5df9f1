// The RoCE v2 bridge of the verbs preload (issue 13: several processes): each model device
// of this process owns a UDP socket on an address of its own, 127.10.x.y:4791, and its GID 0
// is ::ffff:127.10.x.y (model_backend.h ModelOptions::ipv4); a QP or AH towards a GID of
// another process sends real RoCE v2 datagrams there (model/engine/roce_codec.h).
//
// Contract:
//  1. Addresses: device i takes the first address from 127.10.0.1 up to 127.10.191.255
//     whose bind() to UDP 4791 succeeds; bind() failing with EADDRINUSE means another
//     process (or device) has it, so the next is tried: two processes never share one, and
//     a process alone gets the same ones every run. The low 16 bits are the LID on an IB
//     profile (unicast LIDs end at 0xbfff). When no socket can be bound (no loopback, or
//     QPTWIN_BRIDGE=off, or 1024 addresses in use: e.g. a kernel rxe holding 0.0.0.0:4791)
//     there is no bridge and the devices keep the model's default GIDs.
//  2. Off until used: nothing is read or paced until the model resolves an address that is
//     not one of its devices (a modify to RTR or an AH towards another process: Activate),
//     or from the start with QPTWIN_BRIDGE=on, or when a verbs call that lets time pass
//     finds a datagram waiting (looked for once per millisecond of wall time: a process
//     that only receives). Until then single-process behaviour (and its determinism) is
//     unchanged: nothing arrives.
//  3. Time, once active: simulated time is paced by wall time. Step(want) first drains the
//     sockets and gives what arrived to the model (delivered at the current simulated time
//     plus the fabric latency), then returns how much simulated time may pass now: up to
//     the wall time elapsed since activation (plus the simulated time of then), so the
//     model never runs ahead of its peer and its timers never fire before their wall time
//     (but for 5 us when datagrams arrived: they are delivered and answered in the same
//     step, not one look later); `want` is not a limit. At most 50 us per call, so that arrivals are
//     drained in between; a model more than 1 ms behind (a program that made no verbs call
//     for a while) resumes 1 ms behind, the rest of that time is skipped. Every verbs call that lets time pass asks Step first. When simulated time has
//     caught up and nothing arrived, Step sleeps on the sockets (up to 20 us, less when a
//     datagram comes) rather than spin: on a loaded machine the peer needs the core.
//     WaitWall sleeps on the sockets for blocking waits.
//  4. Model thread only (preload.h contract 2), but for fds() and WaitReadable; sockets are
//     close-on-exec.
//  6. A program that waits without verbs calls (spins on memory as ib_*_lat do, sleeps in
//     read() on its TCP socket) would stop its model: at activation the preload starts a
//     progress thread that pumps it whenever the program's calls have not for 20 us
//     (preload.h contract 2), woken at once by a datagram (WaitReadable); with
//     QPTWIN_MODEL_THREAD=dedicated the model's own thread pumps it.
//  5. A process that stops calling verbs stops its model: before a QP is destroyed or a
//     device closed, Flush lets the messages already on their way out leave (the last ACK
//     of a program that exits right after its last completion), even ahead of wall time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "model/model_backend.h"
#include "spec/backend.h"

namespace qptwin::exec {

class Bridge : public model::RoceBridge {
 public:
  // nullptr when off (contract 1). `devices` sockets, one per device.
  static std::unique_ptr<Bridge> Make(int devices);
  ~Bridge() override;

  const std::vector<uint32_t>& addresses() const { return ips_; }
  const std::vector<int>& fds() const { return fds_; }  // fixed after Make: any thread
  void Attach(Backend* backend);
  bool active() const { return active_; }
  // Contract 3: drain, inject, and the simulated time that may pass now (`want` when off).
  uint64_t Step(uint64_t want, bool may_sleep = true);
  std::function<void()> on_activate;  // runs once, at activation (model thread)
  // Sleeps up to `ns` of wall time until a datagram is readable (at once when off).
  void WaitWall(uint64_t ns);
  // The same, active or not, from any thread (the progress thread's sleep).
  void WaitReadable(uint64_t ns) const;
  // Contract 5: runs the model until what is on its way out has left (at most 1 ms).
  void Flush();

  void Activate() override;
  void Send(int device, uint32_t dst_ip, const uint8_t* data, size_t len) override;
  uint64_t TranslateRemote(int device, uint32_t rkey, uint64_t va, uint64_t len) override;

 private:
  Bridge() = default;
  size_t Drain();  // datagrams read
  bool Knocked();  // inactive: a datagram is waiting (looked at once per ms)
  uint64_t last_peek_ns_ = 0;

  std::vector<int> fds_;
  std::vector<uint32_t> ips_;
  Backend* backend_ = nullptr;
  bool active_ = false;
  bool force_ = false;  // QPTWIN_BRIDGE=on
  uint64_t wall0_ns_ = 0, sim0_ns_ = 0;
  std::vector<uint8_t> buf_;
};

}  // namespace qptwin::exec
