// Echoing user input safely: every message that quotes a token, a path or a line passes it
// through EscapeControl, so a terminal never receives raw ESC, NUL or other control bytes.
#pragma once

#include <string>
#include <string_view>

namespace qptwin::cli {

// Control bytes (0x00..0x1f, 0x7f) as C escapes: "\x1b", "\x00", "\t", "\n", so the result
// is always one line. Other bytes (UTF-8 included) are unchanged, so escaping twice is the
// same as escaping once.
std::string EscapeControl(std::string_view text);

}  // namespace qptwin::cli
