#include "spec/differential/generator.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "spec/scenario/parser.h"

namespace qptwin::differential {
namespace {

constexpr int kSeeds = 3000;

TEST(Generator, EveryScenarioParses) {
  for (uint64_t n = 0; n < kSeeds; ++n) {
    const std::string text = GenerateScenario(SequenceSeed(7, n));
    scenario::Scenario sc;
    scenario::ParseError error;
    ASSERT_TRUE(scenario::ParseScenario(text, &sc, &error))
        << "sequence " << n << ": " << error.ToString() << "\n" << text;
    ASSERT_GE(sc.device_lines, 1);
  }
}

TEST(Generator, SameSeedSameScenario) {
  EXPECT_EQ(GenerateScenario(42), GenerateScenario(42));
  EXPECT_NE(GenerateScenario(42), GenerateScenario(43));
  EXPECT_NE(SequenceSeed(1, 0), SequenceSeed(1, 1));
  EXPECT_NE(SequenceSeed(1, 0), SequenceSeed(2, 0));
}

TEST(Generator, BoundedLengthAndPolls) {
  GeneratorOptions o;
  o.actions = 10;
  o.poll_ms = 7;
  for (uint64_t n = 0; n < 500; ++n) {
    const std::string text = GenerateScenario(SequenceSeed(3, n), o);
    size_t lines = 0;
    for (char c : text) lines += c == '\n';
    EXPECT_LT(lines, 200u) << text;
    EXPECT_EQ(text.find("timeout_ms=1000"), std::string::npos);
    for (size_t p = text.find("timeout_ms="); p != std::string::npos;
         p = text.find("timeout_ms=", p + 1)) {
      EXPECT_TRUE(text.compare(p, 12, "timeout_ms=7") == 0 ||
                  text.compare(p, 12, "timeout_ms=0") == 0)
          << text.substr(p, 20);
    }
  }
}

// Over a few thousand seeds the generator reaches every part of the surface it promises.
TEST(Generator, CoversTheSurface) {
  std::string all;
  for (uint64_t n = 0; n < kSeeds; ++n) all += GenerateScenario(SequenceSeed(11, n));
  for (const char* piece :
       {"type=RC", "type=UC", "type=UD", "device d1", "srq=s0", "post_recv s0", "op=SEND ",
        "op=SEND_IMM", "op=WRITE ", "op=WRITE_IMM", "op=READ", "op=CMP_SWP", "op=FETCH_ADD",
        "imm=", "flags=SIGNALED", "INLINE", "SOLICITED", "FENCE", "sq_sig_all=1", "count=",
        ",m0:",  // a second SGE
        "sge=x0", "sge=f0", "sge=n0:200:100", "remote=n", "remote=f0", "remote=x0",
        "destroy x0", "destroy q", "destroy c", "destroy s0", "destroy p", "state=SQD",
        "en_sqd_async_notify=1", "events wait=SQ_DRAINED", "state=RESET", "state=ERR",
        "retry_cnt=8", "pkey_index=9", "port=2", "max_dest_rd_atomic=0", "max_rd_atomic=0",
        "rnr_retry=0", "rnr_retry=7", "cqe=3", "query q", "query_device dev=d", "query_port dev=d", "port=2", "query_srq s0", "check m", "fill m", "advance us=",
        "max_inline=64", "ah=q", "channel h", "channel=h", "req_notify c", "solicited=1",
        "get_cq_event h", "ack_cq_events c", "resize_cq c", "modify_srq s0 srq_limit=",
        "modify_srq s0 max_wr=",
        // memory windows (generator_mw.cc)
        "alloc_mw w", "type=1", "type=2", "pd=pf0 type=", "MW_BIND", "bind_mw q",
        "op=BIND_MW mw=w", ":0 access=", "bind=m0:", "bind=f0:", "ZERO_BASED", "access=0",
        "remote=w", "op=LOCAL_INV inv=w", "op=LOCAL_INV inv=m", "op=SEND_WITH_INV",
        "inv=x0", "dealloc_mw w", "destroy w", "destroy b0_"}) {
    EXPECT_NE(all.find(piece), std::string::npos) << "never generated: " << piece;
  }
  EXPECT_EQ(all.find("XRC"), std::string::npos);  // rxe has no XRC
}

// Contract 6: an invalidation of a type 2 window's rkey comes only after a BIND_MW of it
// posted since its allocation and since the last invalidation naming it (rxe 6.1 oopses
// when it invalidates a FREE window).
TEST(Generator, InvalidatesAType2WindowOnlyAfterABindSinceTheLastInvalidation) {
  int checked = 0;
  for (uint64_t n = 0; n < kSeeds; ++n) {
    const std::string text = GenerateScenario(SequenceSeed(17, n));
    std::map<std::string, bool> armed;  // type 2 windows: a bind posted since alloc/inv
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      const std::string line = text.substr(start, end - start);
      start = end + 1;
      auto value = [&line](const std::string& key) {
        const size_t p = line.find(" " + key + "=");
        if (p == std::string::npos) return std::string();
        const size_t b = p + key.size() + 2;
        return line.substr(b, line.find(' ', b) - b);
      };
      if (line.rfind("alloc_mw ", 0) == 0 && line.find("type=2") != std::string::npos) {
        armed[line.substr(9, line.find(' ', 9) - 9)] = false;
      } else if (line.rfind("dealloc_mw ", 0) == 0 || line.rfind("destroy w", 0) == 0) {
        armed.erase(line.substr(line.find(' ') + 1));  // its index is freed: a bad key now
      } else if (line.find("op=BIND_MW") != std::string::npos) {
        const std::string mw = value("mw");
        if (armed.count(mw)) armed[mw] = true;
      } else if (line.find(" inv=") != std::string::npos) {
        const std::string mw = value("inv");
        if (!armed.count(mw)) continue;
        EXPECT_TRUE(armed[mw]) << "sequence " << n << ": " << line << "\n" << text;
        armed[mw] = false;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
}

// Some scenarios create a pair of QPs after others have posted work (create in any order).
TEST(Generator, CreatesQpsWhileOthersAreInUse) {
  int late = 0;
  for (uint64_t n = 0; n < kSeeds; ++n) {
    const std::string text = GenerateScenario(SequenceSeed(13, n));
    const size_t post = text.find("\npost_");
    if (post != std::string::npos && text.find("\nqp ", post) != std::string::npos) ++late;
  }
  EXPECT_GT(late, 0);
}

}  // namespace
}  // namespace qptwin::differential
