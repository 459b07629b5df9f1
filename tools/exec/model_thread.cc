#include "tools/exec/model_thread.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace qptwin::exec {
namespace {

// How long each side spins before it sleeps: longer than one simulated verbs call takes,
// short enough that an idle program costs no CPU.
constexpr uint64_t kSpinNs = 50'000;

// The progress thread counts as needed while one of its pumps moved something this
// recently (ProgressLoop).
constexpr uint64_t kUsefulNs = 10'000'000;

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

void CpuRelax() { __builtin_ia32_pause(); }

// Sleeps while *word == expected (at most timeout_ns when > 0).
void FutexWait(std::atomic<uint32_t>* word, uint32_t expected, uint64_t timeout_ns) {
  timespec ts{static_cast<time_t>(timeout_ns / 1'000'000'000u),
              static_cast<long>(timeout_ns % 1'000'000'000u)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected,
          timeout_ns > 0 ? &ts : nullptr, nullptr, 0);
}

void FutexWake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, 1, nullptr,
          nullptr, 0);
}

// Spins until pred() or kSpinNs passed; true when pred() held.
template <typename Pred>
bool SpinFor(Pred pred) {
  const uint64_t until = NowNs() + kSpinNs;
  for (int i = 0;; ++i) {
    if (pred()) return true;
    CpuRelax();
    if ((i & 63) == 63 && NowNs() > until) return pred();
  }
}

// The ModelThread the fork handlers look after (the preload has one per process).
std::atomic<ModelThread*> forked_instance{nullptr};

}  // namespace

void ModelThread::PrepareFork() {
  ModelThread* t = forked_instance.load();
  if (!t) return;
  t->forking_on_owner_ = std::this_thread::get_id() == t->owner_;
  // The progress thread does not exist in the child: it must not hold the model's lock
  // (and be inside the model) at the fork. Not when this thread is inside a call itself.
  const bool inside = t->forking_on_owner_ ? t->in_call_
                                           : t->holder_.load() == std::this_thread::get_id();
  t->locked_for_fork_ = t->progress_running() && getpid() == t->progress_pid_ && !inside;
  if (t->locked_for_fork_) t->model_mu_.lock();
}

void ModelThread::ParentAfterFork() {
  ModelThread* t = forked_instance.load();
  if (t && t->locked_for_fork_) t->model_mu_.unlock();
}

void ModelThread::ChildAfterFork() {
  ModelThread* t = forked_instance.load();
  if (!t) return;
  if (t->locked_for_fork_) t->model_mu_.unlock();
  // The forking thread is the child's only thread: if it owned the model, it still does,
  // without a progress thread (contract 4).
  t->progress_running_.store(false);
  if (t->mode_ == Mode::kCaller && t->forking_on_owner_) t->owner_pid_ = getpid();
}

void ModelThread::StopProgressAtExit() {
  if (ModelThread* t = forked_instance.load()) t->StopProgress();
}

ModelThread::ModelThread(Mode mode, std::function<void()> idle, uint64_t idle_period_ns)
    : mode_(mode), idle_(std::move(idle)), idle_period_ns_(idle_period_ns), owner_pid_(getpid()) {
  static std::once_flag handlers;
  std::call_once(handlers, [] {
    pthread_atfork(&ModelThread::PrepareFork, &ModelThread::ParentAfterFork,
                   &ModelThread::ChildAfterFork);
  });
  ModelThread* none = nullptr;
  forked_instance.compare_exchange_strong(none, this);
  if (mode_ == Mode::kCaller) {
    owner_ = std::this_thread::get_id();
    return;
  }
  thread_ = std::thread([this] { Loop(); });
  owner_ = thread_.get_id();
}

ModelThread::~ModelThread() {
  StopProgress();
  ModelThread* self = this;
  forked_instance.compare_exchange_strong(self, nullptr);
  if (mode_ == Mode::kCaller) return;
  if (getpid() != owner_pid_) {  // a forked child: the thread does not exist here
    thread_.detach();
    return;
  }
  Run([this] { stop_.store(true); });
  thread_.join();
}

void ModelThread::DrainForeign() {
  if (foreign_count_.load(std::memory_order_acquire) == 0) return;
  std::unique_lock<std::mutex> lock(foreign_mu_);
  while (!foreign_.empty()) {
    Request* r = foreign_.front();
    foreign_.pop_front();
    foreign_count_.fetch_sub(1, std::memory_order_relaxed);
    lock.unlock();
    r->tramp(r->arg);
    lock.lock();
    r->done = true;
    foreign_done_.notify_all();
  }
}

bool ModelThread::RunRaw(void (*tramp)(void*), void* arg) {
  if (getpid() != owner_pid_) {  // a forked child without the model thread (contract 4)
    tramp(arg);
    return false;
  }
  const std::thread::id me = std::this_thread::get_id();
  if (me == holder_.load(std::memory_order_relaxed)) {  // the progress thread, in its turn
    tramp(arg);
    return true;
  }
  if (me == owner_) {
    if (mode_ == Mode::kCaller && !in_call_) {
      std::lock_guard<std::mutex> lock(model_mu_);
      in_call_ = true;
      DrainForeign();
      tramp(arg);
      DrainForeign();
      in_call_ = false;
    } else {
      tramp(arg);
    }
    return true;
  }
  if (mode_ == Mode::kDedicated) return RunDedicated(tramp, arg);
  Request r{tramp, arg};
  std::unique_lock<std::mutex> lock(foreign_mu_);
  foreign_.push_back(&r);
  foreign_count_.fetch_add(1, std::memory_order_release);
  foreign_done_.wait(lock, [&] { return r.done; });
  return true;
}

bool ModelThread::RunDedicated(void (*tramp)(void*), void* arg) {
  std::lock_guard<std::mutex> lock(caller_mu_);
  tramp_ = tramp;
  arg_ = arg;
  const uint32_t n = requested_.load(std::memory_order_relaxed) + 1;
  requested_.store(n, std::memory_order_seq_cst);
  if (server_sleeping_.load(std::memory_order_seq_cst)) FutexWake(&requested_);
  auto finished = [&] { return done_.load(std::memory_order_acquire) == n; };
  if (!SpinFor(finished)) {
    caller_sleeping_.store(true, std::memory_order_seq_cst);
    for (uint32_t d; (d = done_.load(std::memory_order_seq_cst)) != n;) FutexWait(&done_, d, 0);
    caller_sleeping_.store(false, std::memory_order_relaxed);
  }
  return true;
}

bool ModelThread::StartProgress(Progress progress) {
  if (mode_ != Mode::kCaller || progress_running() || getpid() != owner_pid_) return false;
  progress_ = std::move(progress);
  progress_stop_.store(false);
  progress_pid_ = getpid();
  progress_running_.store(true, std::memory_order_release);
  progress_thread_ = std::thread([this] { ProgressLoop(); });
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { atexit(&ModelThread::StopProgressAtExit); });
  return true;
}

void ModelThread::StopProgress() {
  if (!progress_thread_.joinable()) return;
  if (getpid() != progress_pid_) {  // a forked child: the thread does not exist here
    progress_thread_.detach();
    return;
  }
  if (std::this_thread::get_id() == progress_thread_.get_id()) return;
  progress_stop_.store(true);
  progress_thread_.join();
  progress_running_.store(false);
}

void ModelThread::ProgressLoop() {
  (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);  // periods of 20 us: no 50 us slack
  const std::thread::id me = std::this_thread::get_id();
  uint64_t idle_period = progress_.period_ns;  // between looks while the owner is away
  uint64_t busy_period = progress_.period_ns;  // while the owner keeps the model going
  uint64_t last_useful_ns = 0;                 // when a pump last moved anything
  bool busy = false;
  while (!progress_stop_.load(std::memory_order_relaxed)) {
    if (busy || !progress_.wait) {
      // The owner runs the model itself: look again later, not on input (which it
      // drains; `wait` would return at once, again and again).
      const timespec ts{static_cast<time_t>(busy_period / 1'000'000'000),
                        static_cast<long>(busy_period % 1'000'000'000)};
      nanosleep(&ts, nullptr);
    } else {
      progress_.wait(idle_period);
    }
    // Busy: the owner let the model progress less than period_ns ago, or is inside a
    // call. Then look less and less often (contract 5): up to busy_max_ns while the
    // program alternates (its pauses needed this thread in the last kUsefulNs), else up
    // to max_period_ns (a program that polls all the time needs it only when it stops).
    const uint64_t now = NowNs();
    const uint64_t quiet = now - last_note_ns_.load(std::memory_order_relaxed);
    std::unique_lock<std::mutex> lock(model_mu_, std::defer_lock);
    busy = quiet < progress_.period_ns || !lock.try_lock();
    if (busy) {
      const bool needed = now - last_useful_ns < kUsefulNs;
      busy_period = std::min(busy_period * 2,
                             needed ? progress_.busy_max_ns : progress_.max_period_ns);
      continue;
    }
    holder_.store(me, std::memory_order_relaxed);
    if (progress_.move) progress_.move(owner_, me);
    DrainForeign();
    const bool active = progress_.pump && progress_.pump();
    if (progress_.move) progress_.move(me, owner_);
    holder_.store(std::thread::id(), std::memory_order_relaxed);
    lock.unlock();
    busy_period = progress_.period_ns;
    idle_period = active ? progress_.period_ns : std::min(idle_period * 2, progress_.max_period_ns);
    if (active) last_useful_ns = NowNs();
  }
}

void ModelThread::NoteProgress() { last_note_ns_.store(NowNs(), std::memory_order_relaxed); }

void ModelThread::Loop() {
  // Short idle periods (the RoCE bridge's) should not be stretched by the default 50 us
  // timer slack; this is the model's own thread.
  (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  uint32_t seen = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    auto arrived = [&] { return requested_.load(std::memory_order_acquire) != seen; };
    if (!SpinFor(arrived)) {
      server_sleeping_.store(true, std::memory_order_seq_cst);
      const uint64_t start = NowNs();
      const uint64_t period = idle_period_ns_.load(std::memory_order_relaxed);
      while (!arrived() && NowNs() - start < period) {
        FutexWait(&requested_, seen, period);
      }
      server_sleeping_.store(false, std::memory_order_relaxed);
      if (!arrived()) {
        if (idle_) idle_();
        continue;
      }
    }
    const uint32_t n = requested_.load(std::memory_order_acquire);
    tramp_(arg_);
    seen = n;
    done_.store(n, std::memory_order_seq_cst);
    if (caller_sleeping_.load(std::memory_order_seq_cst)) FutexWake(&done_);
  }
}

}  // namespace qptwin::exec
