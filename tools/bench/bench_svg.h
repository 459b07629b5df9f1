// Plain SVG line charts for `qptwin bench --plot` (no plotting library needed).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace qptwin::bench {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x > 0 when log_x
};

struct Chart {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;  // log2 axis (sizes, depths)
  std::vector<Series> series;
};

// A self-contained <svg> document; empty series draw an empty frame.
std::string RenderSvg(const Chart& c);

}  // namespace qptwin::bench
