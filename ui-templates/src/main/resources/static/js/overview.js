// Overview auto-refresh: counts and uPlot charts from /admin/api/overview every 5 s.
(function () {
  'use strict';
  const root = document.getElementById('overview');
  if (!root) return;
  const api = root.dataset.api;
  const charts = {};
  // [column, legend label, colour]; every chart names its unit on the value axis
  const specs = {
    'chart-rate': {unit: 'answers / s', fmt: plain,
      series: [['hintsPerSec', 'hints/s', '#2f855a'], ['noHintsPerSec', 'no-hints/s', '#b7791f']]},
    'chart-latency': {unit: 'milliseconds', fmt: plain,
      series: [['latencyP50Ms', 'p50 (ms)', '#2a6fdb'], ['latencyP99Ms', 'p99 (ms)', '#c53030']]},
    'chart-bytes': {unit: 'bytes / s', fmt: bytesPerSec,
      series: [['bytesPerSec', 'bytes/s', '#6b46c1']]},
    'chart-gain': {unit: 'ms per lease', fmt: plain,
      series: [['predictedGainMs', 'predicted (ms)', '#2a6fdb'], ['realisedGainMs', 'realised (ms)', '#2f855a']]},
  };

  function plain(v) {
    if (v == null) return '';
    const a = Math.abs(v);
    if (a >= 1e6) return (v / 1e6).toFixed(1) + 'M';
    if (a >= 1e4) return (v / 1e3).toFixed(0) + 'k';
    return a >= 100 || Number.isInteger(v) ? v.toFixed(0) : v.toPrecision(2);
  }

  function bytesPerSec(v) {
    if (v == null) return '';
    const units = ['B/s', 'KiB/s', 'MiB/s', 'GiB/s', 'TiB/s'];
    let u = 0;
    let x = Math.abs(v);
    while (x >= 1024 && u < units.length - 1) { x /= 1024; u++; }
    const digits = x >= 100 || (u === 0 && Number.isInteger(x)) ? 0 : x >= 10 ? 1 : 2;
    return (v < 0 ? '-' : '') + x.toFixed(digits) + ' ' + units[u];
  }

  const FONT = '12px system-ui, -apple-system, "Segoe UI", sans-serif';
  const LABEL_FONT = 'bold 12px system-ui, -apple-system, "Segoe UI", sans-serif';
  const measure = document.createElement('canvas').getContext('2d');

  // The value axis is as wide as its widest tick label (measured in the axis font), so none is cut off.
  function axisWidth(values) {
    measure.font = FONT;
    let widest = 0;
    for (const v of values || []) widest = Math.max(widest, measure.measureText(String(v)).width);
    return Math.ceil(Math.max(widest, 24)) + 10 + 8 + 6;
  }

  function chart(id, spec, data) {
    const el = document.getElementById(id);
    const cols = [data.t].concat(spec.series.map(s => data[s[0]]));
    if (!charts[id]) {
      const opts = {
        width: el.clientWidth || 500, height: 220,
        // a single point, or none, still gets a readable range instead of a span of years
        scales: {
          // from the data itself: uPlot widens a single time point by 86400 units (years, in seconds)
          x: {time: true, range: u => {
            const t = (u.data[0] || []).filter(v => v != null);
            const now = Date.now() / 1000;
            if (t.length === 0) return [now - 300, now];
            const lo = t[0], hi = t[t.length - 1];
            return hi - lo < 60 ? [hi - 60, hi] : [lo, hi];
          }},
          y: {range: (u, min, max) => (min == null || max == null ? [0, 1]
              : uPlot.rangeNum(Math.min(0, min), max <= 0 ? 1 : max, 0.1, true))},
        },
        series: [{}].concat(spec.series.map(s => ({label: s[1], stroke: s[2], width: 2, spanGaps: false}))),
        axes: [
          {label: 'time (browser clock)', labelSize: 20, labelFont: LABEL_FONT, font: FONT, size: 50},
          {label: spec.unit, labelSize: 20, labelFont: LABEL_FONT, font: FONT, gap: 8,
            values: (u, vals) => vals.map(spec.fmt), size: (u, values) => axisWidth(values)},
        ],
        legend: {live: false},
      };
      charts[id] = new uPlot(opts, cols, el);
      el.dataset.unit = spec.unit;
    } else {
      charts[id].setData(cols);
    }
  }
  // the browser tests read the charts' axes from here
  window.kvreuseCharts = charts;

  function counts(body) {
    document.querySelectorAll('[data-count]').forEach(el => {
      const path = el.dataset.count.split('.');
      let v = body;
      for (const p of path) v = (v == null) ? undefined : v[p];
      if (v !== undefined) el.textContent = Math.round(v).toString();
    });
    const badge = document.getElementById('reuse-state');
    badge.textContent = body.reuseEnabled ? 'Reuse enabled' : 'Reuse disabled';
    badge.className = 'badge ' + (body.reuseEnabled ? 'ok' : 'off');
    const a = body.attention;
    const any = a.uncertainLeases + a.overdueLeases + a.unhealthyIncarnations + a.banksNeedingRepair > 0;
    const box = document.getElementById('attention');
    box.className = 'alert ' + (any ? 'warn' : 'ok');
    box.querySelector('strong').textContent = any ? 'Needs attention' : 'Nothing stuck';
    const text = body.headlineText || {};
    document.querySelectorAll('[data-headline]').forEach(el => {
      const v = text[el.dataset.headline];
      if (v !== undefined) el.textContent = v;
    });
  }

  async function refresh() {
    try {
      const res = await fetch(api, {headers: {Accept: 'application/json'}, credentials: 'same-origin'});
      if (res.status === 401) { window.location = '/login'; return; }
      if (!res.ok) throw new Error('HTTP ' + res.status);
      const body = await res.json();
      counts(body);
      for (const id in specs) chart(id, specs[id], body.series);
      document.getElementById('refreshed').textContent = 'updated ' + new Date().toLocaleTimeString();
    } catch (e) {
      document.getElementById('refreshed').textContent = 'refresh failed (' + e.message + '), retrying';
    }
  }

  refresh();
  setInterval(refresh, 5000);
})();
