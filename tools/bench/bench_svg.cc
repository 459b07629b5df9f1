#include "tools/bench/bench_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace qptwin::bench {
namespace {

constexpr double kW = 720, kH = 420, kLeft = 80, kRight = 170, kTop = 40, kBottom = 60;
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b"};

std::string Num(double v) {
  char b[32];
  if (std::fabs(v) >= 1e6 || (std::fabs(v) < 1e-2 && v != 0)) {
    std::snprintf(b, sizeof b, "%.3g", v);
  } else {
    std::snprintf(b, sizeof b, "%.6g", v);
  }
  return b;
}

std::string Escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '<') o += "&lt;";
    else if (ch == '>') o += "&gt;";
    else if (ch == '&') o += "&amp;";
    else o += ch;
  }
  return o;
}

std::string SizeLabel(double v) {
  if (v >= 1048576) return Num(v / 1048576) + "M";
  if (v >= 1024) return Num(v / 1024) + "K";
  return Num(v);
}

}  // namespace

std::string RenderSvg(const Chart& c) {
  double x0 = 1e300, x1 = -1e300, y1 = 0;
  for (const Series& s : c.series) {
    for (auto [x, y] : s.points) {
      double xv = c.log_x ? std::log2(std::max(x, 1e-9)) : x;
      x0 = std::min(x0, xv);
      x1 = std::max(x1, xv);
      y1 = std::max(y1, y);
    }
  }
  if (x0 > x1) x0 = 0, x1 = 1;
  if (x1 == x0) x1 = x0 + 1;
  if (y1 <= 0) y1 = 1;
  y1 *= 1.1;
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  auto px = [&](double x) {
    double xv = c.log_x ? std::log2(std::max(x, 1e-9)) : x;
    return kLeft + (xv - x0) / (x1 - x0) * pw;
  };
  auto py = [&](double y) { return kTop + ph - y / y1 * ph; };
  std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(kW) +
                  "\" height=\"" + Num(kH) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  o += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o += "<text x=\"" + Num(kW / 2) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">" +
       Escape(c.title) + "</text>\n";
  o += "<rect x=\"" + Num(kLeft) + "\" y=\"" + Num(kTop) + "\" width=\"" + Num(pw) +
       "\" height=\"" + Num(ph) + "\" fill=\"none\" stroke=\"#444\"/>\n";
  for (int i = 0; i <= 5; ++i) {  // y grid
    double y = y1 * i / 5;
    o += "<line x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft + pw) + "\" y1=\"" + Num(py(y)) +
         "\" y2=\"" + Num(py(y)) + "\" stroke=\"#ddd\"/>\n";
    o += "<text x=\"" + Num(kLeft - 6) + "\" y=\"" + Num(py(y) + 4) +
         "\" text-anchor=\"end\">" + Num(y) + "</text>\n";
  }
  int ticks = c.log_x ? static_cast<int>(x1 - x0) : 5;
  int stride = std::max(1, ticks / 12);
  for (int i = 0; i <= ticks; i += stride) {  // x ticks
    double xv = x0 + (x1 - x0) * i / std::max(1, ticks);
    double x = c.log_x ? std::exp2(xv) : xv;
    double sx = kLeft + (xv - x0) / (x1 - x0) * pw;
    o += "<text x=\"" + Num(sx) + "\" y=\"" + Num(kTop + ph + 16) + "\" text-anchor=\"middle\">" +
         (c.log_x ? SizeLabel(x) : Num(x)) + "</text>\n";
  }
  o += "<text x=\"" + Num(kLeft + pw / 2) + "\" y=\"" + Num(kH - 18) +
       "\" text-anchor=\"middle\">" + Escape(c.x_label) + "</text>\n";
  o += "<text transform=\"translate(18," + Num(kTop + ph / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + Escape(c.y_label) + "</text>\n";
  for (size_t s = 0; s < c.series.size(); ++s) {
    const char* color = kColors[s % 6];
    std::string pts;
    for (auto [x, y] : c.series[s].points) pts += Num(px(x)) + "," + Num(py(y)) + " ";
    o += "<polyline fill=\"none\" stroke=\"" + std::string(color) +
         "\" stroke-width=\"2\" points=\"" + pts + "\"/>\n";
    for (auto [x, y] : c.series[s].points) {
      o += "<circle cx=\"" + Num(px(x)) + "\" cy=\"" + Num(py(y)) + "\" r=\"2.5\" fill=\"" +
           color + "\"/>\n";
    }
    double ly = kTop + 14 + 18 * static_cast<double>(s);
    o += "<line x1=\"" + Num(kW - kRight + 12) + "\" x2=\"" + Num(kW - kRight + 32) + "\" y1=\"" +
         Num(ly) + "\" y2=\"" + Num(ly) + "\" stroke=\"" + color + "\" stroke-width=\"2\"/>\n";
    o += "<text x=\"" + Num(kW - kRight + 36) + "\" y=\"" + Num(ly + 4) + "\">" +
         Escape(c.series[s].name) + "</text>\n";
  }
  o += "</svg>\n";
  return o;
}

}  // namespace qptwin::bench
