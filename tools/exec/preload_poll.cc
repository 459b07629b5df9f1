// poll(2) on a model device's comp channel fd or async fd. Those eventfds become readable
// only when the model has an event, and the model's time passes only inside verbs calls
// (preload.h contract 4): a program asleep in poll() on them would wait for ever. So poll()
// on a set with such an fd lets simulated time pass in kIdleStepNs steps between
// non-blocking looks at the set, until an fd is ready or the program's timeout (wall time)
// has passed. Sets without model fds go to the real poll() unchanged.
#include <dlfcn.h>
#include <poll.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "tools/exec/preload.h"

namespace qptwin::exec {
namespace {

// The model fds, without a lock: any thread's poll() looks here first (no model call, so a
// poll() of a thread that has nothing to do with verbs never waits for the model thread).
constexpr int kMaxModelFds = 1024;
std::atomic<int> model_fds[kMaxModelFds];
std::atomic<bool> fds_ready{false};
std::atomic<int> fds_used{0};  // slots [0, fds_used) may hold an fd: poll() looks no further

void InitFds() {
  if (fds_ready.load(std::memory_order_acquire)) return;
  static std::once_flag once;
  std::call_once(once, [] {
    for (auto& f : model_fds) f.store(-1, std::memory_order_relaxed);
    fds_ready.store(true, std::memory_order_release);
  });
}

uint64_t WallMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1'000'000;
}

}  // namespace

void RegisterModelFd(int fd) {
  InitFds();
  for (int i = 0; i < kMaxModelFds; ++i) {
    int none = -1;
    if (!model_fds[i].compare_exchange_strong(none, fd)) continue;
    int used = fds_used.load();
    while (used < i + 1 && !fds_used.compare_exchange_weak(used, i + 1)) {
    }
    return;
  }  // beyond kMaxModelFds: poll() on it does not let time pass (ibv_get_cq_event still does)
}

void UnregisterModelFd(int fd) {
  if (!fds_ready.load(std::memory_order_acquire)) return;
  for (auto& f : model_fds) {
    int mine = fd;
    if (f.compare_exchange_strong(mine, -1)) return;
  }
}

bool IsModelFd(int fd) {
  if (fd < 0 || !fds_ready.load(std::memory_order_acquire)) return false;
  const int used = fds_used.load(std::memory_order_acquire);
  for (int i = 0; i < used; ++i) {
    if (model_fds[i].load(std::memory_order_relaxed) == fd) return true;
  }
  return false;
}

}  // namespace qptwin::exec

extern "C" int poll(pollfd* fds, nfds_t n, int timeout_ms) {
  using Fn = int (*)(pollfd*, nfds_t, int);
  static const auto real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "poll"));
  bool model = false;
  for (nfds_t i = 0; i < n && !model; ++i) model = qptwin::exec::IsModelFd(fds[i].fd);
  if (!model || timeout_ms == 0) return real(fds, n, timeout_ms);
  const uint64_t start = qptwin::exec::WallMs();
  for (;;) {
    const int r = real(fds, n, 0);
    if (r != 0) return r;
    if (timeout_ms > 0 && qptwin::exec::WallMs() - start >= static_cast<uint64_t>(timeout_ms)) {
      return 0;
    }
    qptwin::exec::Preload& p = qptwin::exec::Preload::Get();
    p.WaitWall(qptwin::exec::kBridgeWaitNs);
    p.Run([&] {
      p.backend()->Advance(p.TimeStep(qptwin::exec::kIdleStepNs));
      p.HarvestAll();
    });
  }
}

// _FORTIFY_SOURCE's poll() (bits/poll2.h) calls __poll_chk when it cannot prove nfds
// constant (at -O1, e.g. --config=asan, even poll(&pfd, 1, t) does), and glibc's __poll_chk
// calls its internal __poll: no interposed poll (ours, ASan's) would see the call. So the
// preload has it too: glibc's bounds check (an overlong set goes to glibc's, which aborts),
// then the poll above (through a pointer: no fortify wrapper in between).
extern "C" int __poll_chk(pollfd* fds, nfds_t n, int timeout_ms, size_t fds_len) {
  if (fds_len / sizeof(*fds) < n) {
    using Fn = int (*)(pollfd*, nfds_t, int, size_t);
    static const auto real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "__poll_chk"));
    return real(fds, n, timeout_ms, fds_len);
  }
  int (*const ours)(pollfd*, nfds_t, int) = &poll;
  return ours(fds, n, timeout_ms);
}
