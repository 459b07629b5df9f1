// read(2) on a blocking socket while the RoCE bridge is active (bridge.h). A program that
// waits for its peer over TCP (perftest's servers sit in read() while the client writes
// into their memory; ibv_*_pingpong's final exchange) makes no verbs call, so its model
// would stop: no ACKs, no READ responses, and the peer's retransmissions run out. So such a
// read() waits in short steps, letting the model answer what arrives between them, until
// the socket is readable. Without an active bridge, off the model's thread, in a forked
// child and for anything but a blocking socket, read() is the real one (one atomic load
// more while no bridge is active).
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tools/exec/bridge.h"
#include "tools/exec/preload.h"

extern "C" ssize_t read(int fd, void* buf, size_t count) {
  using Fn = ssize_t (*)(int, void*, size_t);
  static const auto real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "read"));
  if (!qptwin::exec::BridgeActive() || count == 0) return real(fd, buf, count);
  // Only the model's own thread pumps here: another thread's Run() could wait for the
  // owner (model_thread.h contract 2), and a dedicated model thread pumps itself.
  qptwin::exec::Preload& p = qptwin::exec::Preload::Get();
  if (!p.OnModelThread()) return real(fd, buf, count);
  struct stat st;
  const int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || (fl & O_NONBLOCK) || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
    return real(fd, buf, count);
  }
  // The socket and the bridge's: a datagram wakes the model at once.
  pollfd pfd[17];
  nfds_t n = 1;
  pfd[0] = pollfd{fd, POLLIN, 0};
  for (int s : p.bridge()->fds()) {
    if (n < 17) pfd[n++] = pollfd{s, POLLIN, 0};
  }
  for (;;) {
    const timespec step{0, static_cast<long>(qptwin::exec::kBridgeWaitNs)};
    pfd[0].revents = 0;
    if (ppoll(pfd, n, &step, nullptr) < 0 || pfd[0].revents != 0) return real(fd, buf, count);
    p.Run([&] {
      if (p.backend()) p.backend()->Advance(p.TimeStep(qptwin::exec::kIdleStepNs));
      p.HarvestAll();
    });
  }
}
