// Overview auto-refresh: counts and uPlot charts from /admin/api/overview every 5 s.
(function () {
  'use strict';
  const root = document.getElementById('overview');
  if (!root) return;
  const api = root.dataset.api;
  const charts = {};
  const specs = {
    'chart-rate': [['hintsPerSec', 'hints/s', '#2f855a'], ['noHintsPerSec', 'no-hints/s', '#b7791f']],
    'chart-latency': [['latencyP50Ms', 'p50 ms', '#2a6fdb'], ['latencyP99Ms', 'p99 ms', '#c53030']],
    'chart-bytes': [['bytesPerSec', 'bytes/s', '#6b46c1']],
    'chart-gain': [['predictedGainMs', 'predicted ms', '#2a6fdb'], ['realisedGainMs', 'realised ms', '#2f855a']],
  };

  function chart(id, series, data) {
    const el = document.getElementById(id);
    const cols = [data.t].concat(series.map(s => data[s[0]]));
    if (!charts[id]) {
      const opts = {
        width: el.clientWidth || 500, height: 180,
        series: [{}].concat(series.map(s => ({label: s[1], stroke: s[2], width: 2, spanGaps: false}))),
        axes: [{}, {size: 60}],
        legend: {live: false},
      };
      charts[id] = new uPlot(opts, cols, el);
    } else {
      charts[id].setData(cols);
    }
  }

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
