#include "tools/exec/bridge.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tools/exec/datapath.h"

namespace qptwin::exec {
namespace {

constexpr uint32_t kFirstIp = 0x7f0a0001;  // 127.10.0.1
constexpr uint32_t kLastIp = 0x7f0abfff;   // 127.10.191.255: LIDs stay unicast (contract 1)
// Addresses tried per process before giving up: a host whose kernel holds UDP 4791 on
// every address (a kernel rxe or RoCE NIC driver) refuses them all.
constexpr int kMaxTries = 1024;
constexpr uint16_t kPort = 4791;
constexpr size_t kMaxDatagram = 9216;
constexpr int kBatch = 32;
constexpr uint64_t kStepSleepNs = 20'000;
constexpr uint64_t kMaxLagNs = 1'000'000;
constexpr uint64_t kSliceNs = kBridgeSliceNs;
constexpr uint64_t kPeekPeriodNs = 1'000'000;
// How far simulated time may run ahead of wall time to answer what just arrived: the rxe
// profile's fabric latency and responder work are ~1-3 us (model/profile.cc).
constexpr uint64_t kArrivalLeadNs = 5'000;


uint64_t WallNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec);
}

sockaddr_in Addr(uint32_t ip, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(ip);
  return a;
}

// A socket bound to ip:4791, -1 with errno when bind() failed.
int Bind(uint32_t ip) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a = Addr(ip, kPort);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    const int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  // DF and IP ID 0 on an unconnected socket: the IPv4 header the ICRC assumes (roce_codec.h).
  const int pmtu = IP_PMTUDISC_DO;
  (void)setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
  // Room for bursts (a full send queue of MTU packets); the kernel caps it at rmem_max
  // unless FORCE is allowed.
  const int buf = 8 << 20;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) != 0) {
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
  }
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) != 0) {
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  }
  return fd;
}

}  // namespace

std::unique_ptr<Bridge> Bridge::Make(int devices) {
  const char* mode = getenv("QPTWIN_BRIDGE");
  if (mode != nullptr && std::strcmp(mode, "off") == 0) return nullptr;
  std::unique_ptr<Bridge> b(new Bridge());
  b->force_ = mode != nullptr && std::strcmp(mode, "on") == 0;
  uint32_t ip = kFirstIp;
  int tries = 0;
  for (int i = 0; i < devices; ++i) {
    int fd = -1;
    for (; ip <= kLastIp && fd < 0 && tries < kMaxTries; ++ip, ++tries) {
      if ((ip & 0xff) == 0) continue;  // x.y.z.0: skip, for readability
      fd = Bind(ip);
      if (fd < 0 && errno != EADDRINUSE) {
        // No loopback here (e.g. a network namespace without lo): no bridge at all.
        if (b->force_) {
          std::fprintf(stderr, "qptwin preload: QPTWIN_BRIDGE=on, but bind(127.10.0.x:4791): %s\n",
                       std::strerror(errno));
        }
        return nullptr;
      }
      if (fd >= 0) b->ips_.push_back(ip);
    }
    if (fd < 0) return nullptr;  // every address taken
    b->fds_.push_back(fd);
  }
  b->buf_.resize(size_t{kBatch} * kMaxDatagram);
  return b;
}

Bridge::~Bridge() {
  for (int fd : fds_) close(fd);
}

void Bridge::Attach(Backend* backend) {
  backend_ = backend;
  const char* trace = getenv("QPTWIN_BRIDGE_STATS");
  if (trace != nullptr && *trace == '1') {
    static Backend* traced = nullptr;  // the process's one backend (preload.h contract 1)
    traced = backend;
    atexit([] {
      const model::RoceCounters c = model::ModelRoceCounters(traced);
      std::fprintf(stderr,
                   "qptwin bridge: %llu datagrams sent (%llu messages), %llu received (%llu "
                   "messages), %llu rejected, %llu unroutable; simulated %.6f s\n",
                   (unsigned long long)c.datagrams_sent, (unsigned long long)c.messages_sent,
                   (unsigned long long)c.datagrams_received,
                   (unsigned long long)c.messages_received,
                   (unsigned long long)c.datagrams_rejected, (unsigned long long)c.unroutable,
                   traced->NowNs() / 1e9);
    });
  }
  (void)model::AttachRoceBridge(backend, this);
  if (force_) Activate();
}

void Bridge::Activate() {
  if (active_) return;
  active_ = true;
  if (on_activate) on_activate();
  wall0_ns_ = WallNs();
  sim0_ns_ = backend_ ? backend_->NowNs() : 0;
}

void Bridge::Send(int device, uint32_t dst_ip, const uint8_t* data, size_t len) {
  if (device < 0 || device >= static_cast<int>(fds_.size())) return;
  sockaddr_in to = Addr(dst_ip, kPort);
  // A full socket buffer or no listener: the datagram is lost, as on a wire.
  (void)sendto(fds_[device], data, len, 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
}

uint64_t Bridge::TranslateRemote(int device, uint32_t rkey, uint64_t va, uint64_t len) {
  return RemoteAddr(device, rkey, va, len);
}

size_t Bridge::Drain() {
  size_t got = 0;
  mmsghdr msgs[kBatch];
  iovec iov[kBatch];
  sockaddr_in from[kBatch];
  for (size_t dev = 0; dev < fds_.size(); ++dev) {
    for (;;) {
      for (int i = 0; i < kBatch; ++i) {
        iov[i] = iovec{buf_.data() + size_t(i) * kMaxDatagram, kMaxDatagram};
        msgs[i] = mmsghdr{};
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = &from[i];
        msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
      }
      const int n = recvmmsg(fds_[dev], msgs, kBatch, MSG_DONTWAIT, nullptr);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
      for (int i = 0; i < n; ++i) {
        if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) continue;  // larger than any packet
        (void)model::InjectRoceDatagram(backend_, static_cast<int>(dev),
                                        ntohl(from[i].sin_addr.s_addr), ntohs(from[i].sin_port),
                                        static_cast<const uint8_t*>(iov[i].iov_base),
                                        msgs[i].msg_len);
      }
      if (n < kBatch) break;
    }
  }
  return got;
}

void Bridge::Flush() {
  if (active_ && backend_) (void)model::FlushRoce(backend_, 1'000'000);
}

bool Bridge::Knocked() {
  // At most once per millisecond of wall time: one clock read per call otherwise.
  const uint64_t wall = WallNs();
  if (wall - last_peek_ns_ < kPeekPeriodNs) return false;
  last_peek_ns_ = wall;
  uint8_t b;
  for (int fd : fds_) {
    if (recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) >= 0) return true;
  }
  return false;
}

uint64_t Bridge::Step(uint64_t want, bool may_sleep) {
  if (!backend_) return want;
  if (!active_) {
    // A process that only receives (a UD server that never makes an AH) resolves no
    // address outside: the first datagram that arrives turns the bridge on (contract 2).
    if (!Knocked()) return want;
    Activate();
  }
  uint64_t allowed = 0;
  for (int look = 0; look < 2; ++look) {
    const size_t got = Drain();
    const uint64_t now = backend_->NowNs();
    const uint64_t wall = WallNs();
    uint64_t target = sim0_ns_ + (wall - wall0_ns_);
    if (target > now + kMaxLagNs) {
      // The program made no verbs call for a while: the model was stopped, as a NIC
      // would not be. Its time does not replay that in one go (nothing could be drained
      // meanwhile): it resumes kMaxLagNs behind wall time; timers fire late, never early.
      wall0_ns_ += target - (now + kMaxLagNs);
      target = now + kMaxLagNs;
    }
    allowed = target > now ? std::min(target - now, kSliceNs) : 0;
    // Datagrams came: let them be delivered and answered now, up to kArrivalLeadNs ahead
    // of wall time, rather than one look later (contract 3).
    if (got > 0 && target + kArrivalLeadNs > now + allowed) {
      allowed = std::min(target + kArrivalLeadNs - now, kSliceNs);
    }
    if (allowed > 0 || got > 0 || look == 1 || !may_sleep) break;
    // Caught up with wall time and nothing came: sleep until a datagram does (or a little
    // wall time passed), instead of spinning against the peer for a core (contract 3).
    WaitWall(kStepSleepNs);
  }
  return allowed;
}

void Bridge::WaitWall(uint64_t ns) {
  if (active_) WaitReadable(ns);
}

void Bridge::WaitReadable(uint64_t ns) const {
  if (fds_.empty()) return;
  pollfd p[16];
  const size_t n = std::min<size_t>(fds_.size(), 16);
  for (size_t i = 0; i < n; ++i) p[i] = pollfd{fds_[i], POLLIN, 0};
  timespec t{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  (void)ppoll(p, n, &t, nullptr);
}

}  // namespace qptwin::exec
