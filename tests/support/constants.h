// Constants every suite shares (header only, no dependencies: the conformance suite uses it
// without linking the model).
#pragma once

#include <cstdint>

namespace qptwin::testing {

inline constexpr uint64_t kMs = 1'000'000ull;
inline constexpr uint64_t kSecond = 1'000'000'000ull;
inline constexpr uint32_t kQkey = 0x11111111;  // = BringUpParams::qkey (spec/bring_up.h)

}  // namespace qptwin::testing
