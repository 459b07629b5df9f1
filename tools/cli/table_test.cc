#include <gtest/gtest.h>

#include "tools/cli/commands.h"
#include "tools/cli/table_render.h"
#include "tools/cli/test_util.h"

namespace qptwin::cli {
namespace {

Outcome Table(const Args& args) { return RunWith(RunTable, args); }

// A small strict JSON syntax checker (objects, arrays, strings without escapes, literals):
// enough to prove the table's JSON parses.
class JsonChecker {
 public:
  explicit JsonChecker(std::string_view s) : s_(s) {}
  bool Valid() {
    bool ok = Value();
    Space();
    return ok && i_ == s_.size();
  }

 private:
  void Space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool Eat(char c) {
    Space();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  bool String() {
    if (!Eat('"')) return false;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\' || static_cast<unsigned char>(s_[i_]) < 0x20) return false;
      ++i_;
    }
    return Eat('"');
  }
  bool Value() {
    Space();
    if (i_ == s_.size()) return false;
    if (s_[i_] == '"') return String();
    if (Eat('[')) {
      if (Eat(']')) return true;
      do {
        if (!Value()) return false;
      } while (Eat(','));
      return Eat(']');
    }
    if (Eat('{')) {
      if (Eat('}')) return true;
      do {
        if (!String() || !Eat(':') || !Value()) return false;
      } while (Eat(','));
      return Eat('}');
    }
    for (std::string_view lit : {"true", "false", "null"}) {
      if (s_.substr(i_, lit.size()) == lit) return i_ += lit.size(), true;
    }
    return false;
  }
  std::string_view s_;
  size_t i_ = 0;
};

TEST(JsonChecker, RejectsBrokenJson) {
  EXPECT_FALSE(JsonChecker(R"({"a" ["x"]})").Valid());
  EXPECT_FALSE(JsonChecker(R"({"a": ["x",]})").Valid());
  EXPECT_FALSE(JsonChecker(R"({"a": ["x"])").Valid());
  EXPECT_TRUE(JsonChecker(R"({"a": ["x", "y"], "b": []})").Valid());
}

TEST(Table, JsonParsesAndListsEveryTypeAndValidPair) {
  const Outcome o = Table({"--format", "json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_TRUE(JsonChecker(o.out).Valid()) << o.out;
  for (QpType t : TableQpTypes()) {
    EXPECT_NE(o.out.find("\"" + std::string(ToName(t)) + "\": ["), std::string::npos) << ToName(t);
  }
  // 22 valid pairs per type in the kernel table, 8 types.
  size_t entries = 0;
  for (size_t at = 0; (at = o.out.find("{\"from\"", at)) != std::string::npos; ++at) ++entries;
  EXPECT_EQ(entries, 22u * 8u);
  EXPECT_NE(o.out.find(R"({"from": "RESET", "to": "INIT", "required": ["ACCESS_FLAGS","PKEY_INDEX","PORT"], "optional": []})"),
            std::string::npos);
}

TEST(Table, TextForUdHasAlignedRowsWithRequiredAndOptional) {
  const Outcome o = Table({"--type", "ud"});
  ASSERT_EQ(o.code, kExitOk);
  EXPECT_NE(o.out.find("\nUD\n  FROM   TO     REQUIRED"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  RESET  INIT   PKEY_INDEX|PORT|QKEY"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  RTR    RTS    SQ_PSN"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("\nRC\n"), std::string::npos);  // only the asked type
}

TEST(Table, TextSaysWhichTypesNeverEnterSqe) {
  EXPECT_NE(Table({"--type", "RC"}).out.find("\nRC (never in SQE"), std::string::npos);
  EXPECT_EQ(Table({"--type", "UC"}).out.find("never in SQE"), std::string::npos);
}

TEST(Table, MarkdownHasAHeaderPerType) {
  const Outcome o = Table({"--format", "markdown", "--type", "XRC_RECV"});
  ASSERT_EQ(o.code, kExitOk);
  EXPECT_EQ(o.out.rfind("### XRC_RECV\n\n| from | to | required | optional |\n|---|---|---|---|\n", 0),
            0u)
      << o.out;
  EXPECT_NE(o.out.find("| RTR | RTS | TIMEOUT, SQ_PSN | "), std::string::npos) << o.out;
}

TEST(Table, BadInputNamesTheChoices) {
  EXPECT_TRUE(IsBadInput(Table({"--format", "yaml"}), "(valid: text, markdown, json)"));
  EXPECT_TRUE(IsBadInput(Table({"--type", "RD"}), "valid: RC, UC, UD"));
  EXPECT_TRUE(IsBadInput(Table({"extra"}), "unexpected argument 'extra'"));
}

TEST(TableRender, AttrNamesInBitOrder) {
  EXPECT_EQ(AttrNames(attr::kPort | attr::kState | (1u << 22)),
            (std::vector<std::string>{"STATE", "PORT", "BIT22"}));
}

}  // namespace
}  // namespace qptwin::cli
