// The threading contract (spec/backend.h, contract 5): model Backends belong to the thread
// that made the first one; another thread gets nullptr and EPERM, never a race or an abort.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <thread>
#include <vector>

#include "model/model_backend.h"
#include "spec/backend.h"

namespace qptwin::model {
namespace {

TEST(ModelThreads, AnotherThreadGetsNullptrAndEpermAndTheOwnerCarriesOn) {
  // This (gtest's) thread makes the first model Backend of the process: it owns the kernel.
  std::unique_ptr<Backend> be = MakeModelBackend(ModelOptions{});
  ASSERT_NE(be, nullptr);
  std::unique_ptr<Device> dev;
  ASSERT_EQ(be->OpenDevice("", &dev), 0);
  PdHandle pd;
  ASSERT_EQ(dev->AllocPd(&pd), 0);
  CqHandle cq;
  ASSERT_EQ(dev->CreateCq(4, ChannelHandle{}, &cq, nullptr), 0);
  be->Advance(1000);
  const uint64_t now = be->NowNs();

  std::string why;
  bool made = true;
  int open_rc = 0, pd_rc = 0, poll_rc = 0, dealloc_rc = 0;
  size_t devices = 1;
  uint64_t other_now = 1;
  std::thread other([&] {
    made = MakeModelBackend(ModelOptions{}, &why) != nullptr;
    std::unique_ptr<Device> d2;
    open_rc = be->OpenDevice("", &d2);
    devices = be->ListDevices().size();
    be->Advance(5000);  // does nothing here
    other_now = be->NowNs();
    PdHandle p2;
    pd_rc = dev->AllocPd(&p2);
    WorkCompletion wc[1];
    poll_rc = dev->PollCq(cq, 1, wc);
    dealloc_rc = dev->DeallocPd(pd);
  });
  other.join();

  EXPECT_FALSE(made);
  EXPECT_NE(why.find("thread"), std::string::npos) << why;
  EXPECT_EQ(open_rc, EPERM);
  EXPECT_EQ(devices, 0u);
  EXPECT_EQ(other_now, 0u);
  EXPECT_EQ(pd_rc, EPERM);
  EXPECT_EQ(poll_rc, -EPERM);
  EXPECT_EQ(dealloc_rc, EPERM);

  // Nothing changed for the owner: same time, the PD still there, the CQ empty.
  EXPECT_EQ(be->NowNs(), now);
  WorkCompletion wc[1];
  EXPECT_EQ(dev->PollCq(cq, 1, wc), 0);
  EXPECT_EQ(dev->DestroyCq(cq), 0);
  EXPECT_EQ(dev->DeallocPd(pd), 0);
  be->Advance(1000);
  EXPECT_EQ(be->NowNs(), now + 1000);
}

// The race: two threads each making and running their own model Backend. One of
// them gets nullptr at once; neither aborts (this used to race in sc_start and abort with
// SystemC's E554 one run in 20).
TEST(ModelThreads, TwoThreadsEachWithABackendNeverRaceTheKernel) {
  std::vector<int> outcome(2, -1);
  auto run = [&](int i) {
    std::unique_ptr<Backend> b = MakeModelBackend(ModelOptions{});
    if (!b) {
      outcome[i] = 0;
      return;
    }
    for (int k = 0; k < 200; ++k) b->Advance(100);
    outcome[i] = b->NowNs() == 20000 ? 1 : 2;
  };
  std::thread t1(run, 0), t2(run, 1);
  t1.join();
  t2.join();
  // Both threads are new: the kernel already belongs to gtest's thread (first test), so
  // both are refused; run alone on this thread, the same code gets a Backend.
  EXPECT_EQ(outcome[0], 0);
  EXPECT_EQ(outcome[1], 0);
  run(0);
  EXPECT_EQ(outcome[0], 1);
}

}  // namespace
}  // namespace qptwin::model
