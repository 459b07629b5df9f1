// Properties of the parser over generated texts: it never crashes, and it either accepts
// a text or names a line that exists in it.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "spec/scenario/parser.h"

namespace qptwin::scenario {
namespace {

// Words that make near-valid scenarios likely, plus noise.
const std::vector<std::string>& Vocabulary() {
  static const auto* words = new std::vector<std::string>{
      "device", "pd", "mr", "cq", "srq", "qp", "modify", "query", "post_send", "post_recv",
      "poll", "events", "fill", "check", "destroy", "advance", "d", "p", "m", "c", "a", "b",
      "pd=p", "len=64", "type=RC", "type=UD", "send_cq=c", "recv_cq=c", "state=INIT",
      "state=RTS", "dest=a", "wr_id=1", "op=SEND", "sge=m:0:8", "remote=m:0", "n=2",
      "expect=ok", "expect=EINVAL", "expect=SUCCESS,WR_FLUSH_ERR", "expect=RTS", "0", "8",
      "0xff", "=", "==", "#", ":", ",", "x=", "=y", "\t", "\n", "\n", "\n", "\r\n", "\xff"};
  return *words;
}

RC_GTEST_PROP(ParserProperty, NeverCrashesAndNamesARealLine, ()) {
  auto picks = *rc::gen::container<std::vector<size_t>>(
      rc::gen::inRange<size_t>(0, Vocabulary().size()));
  std::string text;
  for (size_t i : picks) {
    text += Vocabulary()[i];
    text += ' ';
  }
  Scenario sc;
  ParseError err;
  if (ParseScenario(text, &sc, &err)) {
    for (const Command& c : sc.commands) RC_ASSERT(c.line >= 1);
  } else {
    int lines = 1;
    for (char ch : text) lines += ch == '\n';
    RC_ASSERT(err.line >= 1);
    RC_ASSERT(err.line <= lines);
    RC_ASSERT(!err.message.empty());
  }
}

RC_GTEST_PROP(ParserProperty, ArbitraryBytesNeverCrash, (const std::string& text)) {
  Scenario sc;
  ParseError err;
  (void)ParseScenario(text, &sc, &err);
}

}  // namespace
}  // namespace qptwin::scenario
