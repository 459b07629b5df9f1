// The engine's NICs in a VCD (model/sim/platform.h contract 10): a port's link_busy is 1
// through every message it sends, also when messages go back to back (their whole-ns ends
// overlap by rounding). The binary's only test: sc_trace must come before the process's
// first sc_start.
#include <gtest/gtest.h>

#include <systemc>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "model/model_backend.h"
#include "model/sim/platform.h"
#include "tests/support/support.h"

namespace qptwin::testing {
namespace {

using model::sim::NetRecord;
using model::sim::Platform;

// The value changes of the VCD variable `name` in scope `scope` (time -> value, in order).
std::map<uint64_t, std::string> Changes(const std::string& path, const std::string& scope,
                                        const std::string& name) {
  std::ifstream in(path);
  std::string line, id, in_scope;
  std::map<uint64_t, std::string> out;
  uint64_t t = 0;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string w;
    words >> w;
    if (w == "$scope") {
      words >> w >> in_scope;
    } else if (w == "$var" && id.empty() && in_scope == scope) {
      std::string type, width, vid, vname;
      words >> width >> width >> vid >> vname;
      if (vname == name) id = vid;
    } else if (!w.empty() && w[0] == '#') {
      t = std::stoull(w.substr(1));
    } else if (!id.empty() && w.size() == 1 + id.size() && w.substr(1) == id) {
      out[t] = w.substr(0, 1);
    }
  }
  return out;
}

std::string ValueAt(const std::map<uint64_t, std::string>& changes, uint64_t t) {
  auto it = changes.upper_bound(t);
  return it == changes.begin() ? "" : std::prev(it)->second;
}

TEST(LinkBusyVcd, TheLinkIsBusyThroughEveryMessageOfABurst) {
  model::ModelOptions o;
  o.profile = "cx6-100g";
  auto be = model::MakeModelBackend(o);  // elaborates the platform; no sc_start yet
  ASSERT_NE(be, nullptr);
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string base = std::string(dir ? dir : "/tmp") + "/link_busy";
  sc_core::sc_trace_file* tf = sc_core::sc_create_vcd_trace_file(base.c_str());
  ASSERT_NE(tf, nullptr);
  Platform::Get()->slot(0).Trace(tf, 1);
  std::vector<uint64_t> left;  // when each message of slot 0 left the port (its last ns)
  Platform::SetNetObserver([&](const NetRecord& r) {
    if (r.src_slot == 0) left.push_back(r.leave_ns);
  });
  auto [b, x, y] = ConnectedSides(std::move(be));
  std::vector<SendWr> burst;
  for (uint64_t i = 0; i < 6; ++i) burst.push_back(WriteWr(x, y, i, i * 512, 512));
  size_t bad = 0;
  ASSERT_EQ(x.dev->PostSend(x.qp, burst, &bad), 0);
  EXPECT_EQ(Wait(x, x.scq, 6).size(), 6u);
  b->Advance(1000);
  Platform::SetNetObserver({});
  sc_core::sc_close_vcd_trace_file(tf);
  ASSERT_EQ(left.size(), 6u);
  const auto busy = Changes(base + ".vcd", "nic0", "link_busy");
  ASSERT_FALSE(busy.empty());
  // The Backend was made at SystemC time 0, so the engine's times are the VCD's.
  for (uint64_t t : left) {
    EXPECT_EQ(ValueAt(busy, t - 1), "1") << "link_busy is 0 in the last ns of the message that left at " << t;
  }
  EXPECT_EQ(ValueAt(busy, left.back()), "0") << "idle after the burst";
}

}  // namespace
}  // namespace qptwin::testing
