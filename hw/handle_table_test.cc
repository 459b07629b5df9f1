#include "hw/handle_table.h"

#include <gtest/gtest.h>

namespace qptwin::hw {
namespace {

using IntTable = HandleTable<QpTag, int>;

TEST(HandleTable, FindsWhatWasAddedUntilRemoved) {
  IntTable t(std::make_shared<IdSource>());
  QpHandle h = t.Add(42);
  ASSERT_TRUE(h);
  ASSERT_NE(t.Find(h), nullptr);
  EXPECT_EQ(*t.Find(h), 42);
  EXPECT_TRUE(t.Remove(h));
  EXPECT_EQ(t.Find(h), nullptr);
  EXPECT_FALSE(t.Remove(h));
}

TEST(HandleTable, NullHandleIsNeverFound) {
  IntTable t(std::make_shared<IdSource>());
  (void)t.Add(1);
  EXPECT_EQ(t.Find(QpHandle{}), nullptr);
}

TEST(HandleTable, IdsAreNotReused) {
  IntTable t(std::make_shared<IdSource>());
  QpHandle a = t.Add(1);
  ASSERT_TRUE(t.Remove(a));
  QpHandle b = t.Add(2);
  EXPECT_NE(a, b);
  EXPECT_EQ(t.Find(a), nullptr);
}

TEST(HandleTable, HandleOfAnotherTableSharingIdsIsForeign) {
  auto ids = std::make_shared<IdSource>();
  IntTable device_a(ids);
  IntTable device_b(ids);
  QpHandle from_a = device_a.Add(1);
  (void)device_b.Add(2);
  EXPECT_EQ(device_b.Find(from_a), nullptr);
}

TEST(HandleTable, NewestFirstReversesCreationOrder) {
  IntTable t(std::make_shared<IdSource>());
  QpHandle a = t.Add(1);
  QpHandle b = t.Add(2);
  QpHandle c = t.Add(3);
  ASSERT_TRUE(t.Remove(b));
  std::vector<QpHandle> order = t.NewestFirst();
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0], c);
  EXPECT_EQ(order[1], a);
}

}  // namespace
}  // namespace qptwin::hw
