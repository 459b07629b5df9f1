// Rendering dot text with Graphviz's `dot` program, run as a subprocess.
#pragma once

#include <optional>
#include <string>

namespace qptwin::cli {

// The path of `dot` on PATH, or nullopt.
std::optional<std::string> FindDot();

// The message for a missing `dot` (names the package to install); one line, no newline.
std::string DotMissingMessage();

// `dot -Tsvg` of the given text; nullopt with *error set if dot is missing or fails.
std::optional<std::string> RenderSvg(const std::string& dot_text, std::string* error);

}  // namespace qptwin::cli
