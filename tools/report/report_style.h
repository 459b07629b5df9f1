// The report page's inline CSS and JS (report_html.h). No external resources.
#pragma once

namespace qptwin::report {

inline constexpr char kReportCss[] = R"css(
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #222; background: #fafafa; }
nav { position: sticky; top: 0; background: #263238; color: #eee; padding: 6px 16px; z-index: 2; }
nav a { color: #cfe8ff; margin-right: 14px; text-decoration: none; }
nav select { margin-left: 4px; }
main { padding: 8px 20px 40px; max-width: 1400px; }
h1 { font-size: 20px; margin: 10px 0 4px; }
h2 { font-size: 17px; border-bottom: 1px solid #ccc; padding-bottom: 2px; margin-top: 26px; }
section#summary.pass h1::before { content: "\2714  "; color: #2e7d32; }
section#summary.fail h1::before { content: "\2718  "; color: #c62828; }
.failures li { color: #c62828; }
.hint { color: #555; font-size: 13px; }
.scroll { overflow-x: auto; }
figure.diagram { display: inline-block; vertical-align: top; margin: 6px 18px 12px 0;
  background: #fff; border: 1px solid #ddd; padding: 6px; max-width: 100%; }
figure.diagram svg { max-width: 640px; height: auto; }
figcaption { font-size: 13px; margin-top: 4px; }
.qp-path { font-family: ui-monospace, monospace; }
.missing { color: #c62828; }
table { border-collapse: collapse; margin: 10px 0; font-size: 13px; background: #fff; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: left; white-space: nowrap; }
th { background: #eceff1; }
td.bad { color: #c62828; font-weight: 600; }
tr.selected td { background: #fff59d; }
svg.timeline { background: #fff; border: 1px solid #ddd; font: 11px ui-monospace, monospace; }
svg.timeline .col-bg { fill: #fff; stroke: #f0f0f0; }
svg.timeline .col:nth-child(even) .col-bg { fill: #f7f7f7; }
svg.timeline .col-bg.col-fail { fill: #ffebee; }
svg.timeline .col-label { fill: #777; font-size: 9px; }
svg.timeline .lane-label { font-weight: 700; fill: #263238; }
svg.timeline .wr-label { fill: #444; }
svg.timeline .state-name { fill: #111; font-size: 10px; pointer-events: none; }
svg.timeline .state-band { stroke: #fff; }
.wqe-ok { fill: #66bb6a; background: #66bb6a; }
.wqe-err { fill: #e53935; background: #e53935; }
.wqe-flush { fill: #9e9e9e; background: #9e9e9e; }
.wqe-implicit { fill: #c5e1a5; background: #c5e1a5; }
.wqe-gone { fill: #e0e0e0; background: #e0e0e0; stroke: #999; stroke-dasharray: 2 2; }
.wqe-open { fill: #fff; background: #fff; stroke: #fb8c00; stroke-dasharray: 3 2; }
circle.cqe { stroke: #222; stroke-width: 1; }
.key { padding: 0 5px; border: 1px solid #999; border-radius: 3px; font-size: 12px; color: #111; }
.key.wqe-err { color: #fff; }
ol.steps { font-size: 13px; padding-left: 0; list-style: none; }
ol.steps > li { padding: 3px 6px; border-bottom: 1px solid #eee; }
ol.steps > li.failed { background: #ffebee; }
ol.steps > li.selected { background: #fff59d; }
.time { color: #777; font-family: ui-monospace, monospace; display: inline-block; min-width: 9em; }
.line { color: #1565c0; font-weight: 600; display: inline-block; min-width: 3em; }
code { background: #eef; padding: 0 3px; }
.result { font-family: ui-monospace, monospace; }
.note { color: #666; }
ul.why { margin: 2px 0 2px 12.5em; padding-left: 14px; color: #37474f; }
ul.why li.failure { color: #c62828; font-weight: 600; }
.hidden { display: none; }
)css";

inline constexpr char kReportJs[] = R"js(
(function () {
  'use strict';
  var qps = {};
  document.querySelectorAll('[data-qp]').forEach(function (el) {
    if (el.dataset.qp) qps[el.dataset.qp] = true;
  });
  var select = document.getElementById('qp-filter');
  Object.keys(qps).sort().forEach(function (q) {
    var o = document.createElement('option');
    o.value = q; o.textContent = q; select.appendChild(o);
  });
  select.addEventListener('change', function () {
    var q = select.value;
    document.querySelectorAll('tr[data-qp], g.lane').forEach(function (el) {
      el.classList.toggle('hidden', q !== '' && el.dataset.qp !== q);
    });
  });
  function selectStep(line) {
    document.querySelectorAll('.selected').forEach(function (el) { el.classList.remove('selected'); });
    var li = document.getElementById('L' + line);
    if (li) { li.classList.add('selected'); li.scrollIntoView({block: 'center'}); }
  }
  document.querySelectorAll('tr.wqe-row, tr.event-row').forEach(function (tr) {
    tr.addEventListener('click', function () {
      var line = tr.dataset.line || (tr.children[1].textContent || '').replace('L', '');
      selectStep(line);
      tr.classList.add('selected');
    });
  });
  var cqes = document.querySelectorAll('tr.ev-cqe').length;
  var states = document.querySelectorAll('tr.ev-state').length;
  var steps = document.querySelectorAll('ol.steps > li').length;
  document.getElementById('js-summary').textContent =
      cqes + ' CQEs and ' + states + ' state changes over ' + steps +
      ' narrated steps; click a table row to find its step, filter by QP above.';
  document.body.dataset.js = 'ready';
})();
)js";

}  // namespace qptwin::report
