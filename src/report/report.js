// The report's script: reads the data element and draws every section. Plain JavaScript, no
// library, nothing fetched.
//
// The data (src/report/html_report.cpp): {"tool_version", "runs": [run, ...]}, a run per process
// (the ranks of an MPI job, ordered by rank), each
//   label, pid, end_ns        the process, the run's length (ns from its first event)
//   start_ns                   where its first event lies on the first run's time line, from that
//                              run's first event (0 for one run; can be negative)
//   clock {alignment, offset_start_ns, offset_end_ns}   several runs: how its times were put on the
//                              first run's line, as kob merge does ("reference", "mpi", "wall clock", "none")
//   tracks [{index, name, kind}]   threads, devices and mutex-hold lanes, in display order
//   cats ["kokkos.kernel", ...]    the categories the bins and spans name by position
//   bin_ns, bins [{track, cat, pm}] per track and category, the share of each bin_ns-wide bin
//                               covered, in thousandths (can pass 1000 where spans nest)
//   names, spans [track, cat, name, start, dur, ...]  the longest spans (all of a small run)
//   spans_total                every span of the run: more than spans/5 when some were left out
//   memory [{name, t, v}]      each space's allocated bytes over time (peaks kept)
//   summary                    the run's summary JSON, as PREFIX.summary.json holds it (the kernel
//                              table, findings, OpenMP constructs, ... are drawn from it)
'use strict';
(function () {
  const DATA = JSON.parse(document.getElementById('kob-data').textContent);
  const RUNS = DATA.runs || [];
  const $ = (id) => document.getElementById(id);

  // Colour-blind-safe (Okabe-Ito, and Paul Tol's wine and teal for the last two).
  const GROUPS = [
    { name: 'Kokkos kernel', color: '#0072B2', cats: ['kokkos.kernel'] },
    { name: 'Kokkos region', color: '#8C8C8C', cats: ['kokkos.region'] },
    { name: 'fence', color: '#F0E442', cats: ['kokkos.fence'] },
    { name: 'deep copy', color: '#D55E00', cats: ['kokkos.deep_copy'] },
    { name: 'OpenMP parallel / implicit task', color: '#56B4E9', cats: ['omp.parallel', 'omp.implicit_task'] },
    { name: 'OpenMP work', color: '#009E73', cats: ['omp.work'] },
    { name: 'OpenMP wait (sync, mutex)', color: '#E69F00', cats: ['omp.sync', 'omp.mutex'] },
    { name: 'OpenMP task', color: '#CC79A7', cats: ['omp.task'] },
    { name: 'target', color: '#882255', cats: ['omp.target', 'omp.target_data', 'omp.target_submit'] },
    { name: 'device', color: '#44AA99', cats: ['omp.device'] },
    { name: 'other', color: '#BBBBBB', cats: [] },
  ];
  const LINE_COLORS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'];
  const BUSY = '#0072B2', WAIT = '#E69F00';

  function groupOf(cat) {
    for (let g = 0; g < GROUPS.length - 1; g++) if (GROUPS[g].cats.includes(cat)) return g;
    return GROUPS.length - 1;
  }
  // Black or white text, whichever reads better on this background.
  function textOn(hex) {
    const c = [1, 3, 5].map((i) => parseInt(hex.substr(i, 2), 16) / 255).map((v) => (v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4)));
    const l = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    return l > 0.22 ? '#000000' : '#ffffff';
  }

  // ---- formatting -------------------------------------------------------------------------------
  function fmtTime(ns) {
    if (ns === null || ns === undefined || isNaN(ns)) return '\u2013';
    if (ns < 1e3) return Math.round(ns) + ' ns';
    if (ns < 1e6) return (ns / 1e3).toFixed(2) + ' \u00b5s';
    if (ns < 1e9) return (ns / 1e6).toFixed(2) + ' ms';
    return (ns / 1e9).toFixed(3) + ' s';
  }
  // A time that can be negative (a rank that started before the first): its sign always shown.
  function fmtSigned(ns) { return (ns < 0 ? '\u2212' : '+') + fmtTime(Math.abs(ns)); }
  function fmtBytes(b) {
    if (b === null || b === undefined) return '\u2013';
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(1) : String(b)) + ' ' + u[i];
  }
  function fmtPct(x) { return x === null || x === undefined ? '\u2013' : (100 * x).toFixed(1) + ' %'; }
  function fmtNum(x) { return x === null || x === undefined ? '\u2013' : (Number.isInteger(x) ? String(x) : x.toFixed(2)); }
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === 'text') e.textContent = attrs[k];
      else if (k === 'style') e.style.cssText = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    for (const k of kids) if (k !== null && k !== undefined) e.append(k);
    return e;
  }
  function table(t, head, rows) {
    t.replaceChildren();
    t.append(el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { scope: 'col', text: h })))));
    const tb = el('tbody');
    for (const r of rows) tb.append(el('tr', {}, ...r.map((c, i) => el('td', i === 0 ? { class: 'name', title: String(c) } : {}, String(c)))));
    t.append(tb);
  }
  function empty(node, text) { node.replaceChildren(el('p', { class: 'note none', text })); }
  // A section with nothing to show is hidden, with its link (the run picker may show it again).
  function showSection(id, on) {
    $(id).hidden = !on;
    for (const a of document.querySelectorAll('nav a[href="#' + id + '"]')) a.hidden = !on;
  }
  // Text whose `backticked` parts are code (the findings' fixes and evidence name directives and
  // calls so): those parts as <code>, the rest as text, nothing parsed as markup.
  function withCode(text) {
    return String(text).split('`').map((part, i) => (i % 2 ? el('code', { text: part }) : document.createTextNode(part)));
  }

  // ---- the runs and their header ----------------------------------------------------------------
  let cur = 0;
  const sumOf = (r) => (r && r.summary) || {};
  // A run's name in the rank table and on the timeline: the process (and rank), its pid where
  // two runs would otherwise read the same.
  const nameOf = (r) => (RUNS.filter((q) => q.label === r.label).length > 1 ? r.label + ' (pid ' + r.pid + ')' : r.label);
  const other = (r) => sumOf(r).otherData || {};

  function renderFacts(ri) {
    const r = RUNS[ri], s = sumOf(r), o = other(r);
    $('title').textContent = 'kokkos-ompt-bridge report: ' + (r ? nameOf(r) : 'no run');
    const facts = [];
    if (o.host) facts.push('host ' + o.host);
    if (r) facts.push('pid ' + r.pid);
    if (o.start_time) facts.push('started ' + o.start_time);
    facts.push('run time ' + fmtTime(s.run_time_ns));
    facts.push((s.kernels || []).length + ' kernels');
    if (s.dropped_events) facts.push(s.dropped_events + ' events dropped: figures cover part of the run');
    // The tool's own cost on the program's threads: copies of full ring slots made where the
    // writer thread had no free core (the 'tool: flush' spans on the timeline).
    const tool = s.tool || {};
    if (tool.flushes) facts.push('tool flushes: ' + tool.flushes + ' on ' + (tool.threads || []).length + ' thread(s), ' + fmtTime(tool.flush_ns));
    facts.push('kokkos-ompt-bridge ' + (DATA.tool_version || ''));
    if (o.openmp_runtime) facts.push('OpenMP runtime: ' + o.openmp_runtime);
    $('run-facts').textContent = facts.join(' \u00b7 ');
  }

  function renderRanks() {
    if (RUNS.length < 2) return;
    $('ranks').hidden = false;
    const sel = $('run-select');
    RUNS.forEach((r, i) => sel.append(el('option', { value: i }, nameOf(r))));
    sel.addEventListener('change', () => select(+sel.value));
    const t = $('rank-table');
    const clock = (r) => {
      const c = r.clock || {};
      if (!c.alignment || c.alignment === 'reference') return c.alignment || '\u2013';
      const o = c.offset_start_ns === c.offset_end_ns ? fmtSigned(c.offset_start_ns) : fmtSigned(c.offset_start_ns) + ' \u2026 ' + fmtSigned(c.offset_end_ns);
      return c.alignment + ', offset ' + o;
    };
    table(t, ['run', 'host', 'starts at', 'clock', 'run time', 'kernel calls', 'kernel time', 'slowest kernel', 'OpenMP busy', 'OpenMP wait', 'dropped events', 'findings'],
      RUNS.map((r) => {
        const s = sumOf(r), ks = s.kernels || [], th = (s.openmp && s.openmp.threads) || [];
        const top = ks.length ? ks[0].name + ' (' + fmtTime(ks[0].total_ns) + ')' : '\u2013';
        return [nameOf(r), other(r).host || '', fmtSigned(r.start_ns || 0), clock(r), fmtTime(s.run_time_ns), ks.reduce((a, k) => a + k.calls, 0),
          fmtTime(ks.reduce((a, k) => a + k.total_ns, 0)), top, fmtTime(th.reduce((a, x) => a + x.busy_ns, 0)),
          fmtTime(th.reduce((a, x) => a + x.wait_ns, 0)), s.dropped_events || 0, Array.isArray(s.findings) ? s.findings.length : 0];
      }));
    [...t.tBodies[0].rows].forEach((row, i) => row.addEventListener('click', () => select(i)));
  }

  // ---- findings ---------------------------------------------------------------------------------
  function label(key) { return key.replace(/_ns$/, '').replace(/_bytes$/, '').replace(/_/g, ' '); }
  function value(key, v) {
    if (v === null || v === undefined) return '\u2013';
    if (typeof v === 'number') {
      if (/_ns$/.test(key)) return fmtTime(v);
      if (/bytes/.test(key)) return fmtBytes(v);
      if (/(share|ratio|fraction|imbalance)/.test(key) && v <= 1) return fmtPct(v);
      return fmtNum(v);
    }
    if (Array.isArray(v)) return v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join('; ');
    if (typeof v === 'object') return Object.keys(v).map((k) => label(k) + ': ' + value(k, v[k])).join(', ');
    return String(v);
  }
  function renderFindings(ri) {
    const list = sumOf(RUNS[ri]).findings, box = $('findings-list');
    if (!Array.isArray(list) || list.length === 0) return empty(box, 'no findings');
    const ol = el('ol', { class: 'findings', style: 'padding-left:0;list-style:none' });
    list.forEach((f, i) => {
      const div = el('li', { class: 'finding' });
      if (typeof f !== 'object' || f === null) {
        div.append(el('h3', { text: String(f) }));
      } else if (typeof f.title === 'string' && typeof f.evidence === 'string' && typeof f.fix === 'string') {
        // The summary's findings: what, the time at stake, the evidence, the fix, the rule.
        const stake = typeof f.time_at_stake_ns === 'number' ? f.time_at_stake_ns
          : typeof f.time_at_stake_us === 'number' ? Math.round(f.time_at_stake_us * 1000) : null;
        const head = el('h3', {}, el('span', { class: 'rank', text: (i + 1) + '. ' }), f.title);
        if (stake !== null)
          head.append(el('span', { class: 'stake', text: fmtTime(stake) + ' at stake' +
            (typeof f.share_of_run === 'number' ? ' (' + fmtPct(f.share_of_run) + ' of the run)' : '') }));
        const dl = el('dl');
        dl.append(el('dt', { text: 'evidence' }), el('dd', {}, ...withCode(f.evidence)));
        dl.append(el('dt', { text: 'fix' }), el('dd', { class: 'fix' }, ...withCode(f.fix)));
        const rule = (typeof f.id === 'string' ? f.id : '') + (typeof f.threshold === 'string' ? ': ' + f.threshold : '');
        if (rule) dl.append(el('dt', { text: 'rule' }), el('dd', { class: 'rule', text: rule }));
        div.append(head, dl);
      } else {
        const tkey = ['title', 'name', 'kind', 'id'].find((k) => typeof f[k] === 'string');
        div.append(el('h3', {}, el('span', { class: 'rank', text: (i + 1) + '. ' }), tkey ? f[tkey] : 'finding'));
        const dl = el('dl');
        for (const k of Object.keys(f)) {
          if (k === tkey) continue;
          dl.append(el('dt', { text: label(k) }), el('dd', { text: value(k, f[k]) }));
        }
        div.append(dl);
      }
      ol.append(div);
    });
    box.replaceChildren(ol);
  }

  // ---- kernel table -----------------------------------------------------------------------------
  const KCOLS = [
    { key: 'name', label: 'Kernel', type: 'str' },
    { key: 'kind', label: 'Kind', type: 'str' },
    { key: 'calls', label: 'Calls', type: 'int' },
    { key: 'total_ns', label: 'Total', type: 'time' },
    { key: 'mean_ns', label: 'Mean', type: 'time' },
    { key: 'min_ns', label: 'Min', type: 'time' },
    { key: 'max_ns', label: 'Max', type: 'time' },
    { key: 'team', label: 'OpenMP team', type: 'num' },
    { key: 'imbalance', label: 'Imbalance', type: 'pct' },
    { key: 'barrier', label: 'Barrier wait', type: 'pct' },
  ];
  let krows = [], ksort = { key: null, dir: 0 };

  // The summary's kernels joined with their OpenMP figures (by name and kind); a kernel without
  // OpenMP regions has none (null: sorts as -1).
  function kernelRows(s) {
    const omp = new Map();
    // A kernel row is a name, kind and execution space.
    const key = (k) => k.name + '\u0000' + k.kind + '\u0000' + k.device;
    for (const k of (s.openmp && s.openmp.kernels) || []) omp.set(key(k), k);
    return (s.kernels || []).map((k, i) => {
      const o = omp.get(key(k));
      return Object.assign({}, k, { index: i, team: o ? o.mean_team_size : null, imbalance: o ? o.load_imbalance : null,
        barrier: o ? o.barrier_wait_share : null });
    });
  }
  function cell(c, v) {
    if (c.type === 'time') return fmtTime(v);
    if (c.type === 'pct') return fmtPct(v);
    if (c.type === 'num') return fmtNum(v);
    return String(v);
  }
  // The rows by one column (dir 1 ascending, -1 descending), ties in the summary's order.
  function sortedRows(key, dir) {
    const v = (r) => (r[key] === null || r[key] === undefined ? -1 : r[key]);
    return krows.slice().sort((a, b) => {
      const x = v(a), y = v(b);
      const c = x < y ? -1 : x > y ? 1 : 0;
      return dir * c || a.index - b.index;
    });
  }
  function renderKernelBody(rows) {
    const t = $('kernel-table');
    const tb = el('tbody');
    for (const r of rows) {
      const tr = el('tr', { 'data-index': r.index, 'data-name': r.name, 'data-kind': r.kind, 'data-calls': r.calls,
        'data-total-ns': r.total_ns, 'data-mean-ns': r.mean_ns, 'data-min-ns': r.min_ns, 'data-max-ns': r.max_ns });
      KCOLS.forEach((c, i) => tr.append(el('td', i === 0 ? { class: 'name', title: r.name } : c.type === 'str' ? { class: 'str' } : {}, cell(c, r[c.key]))));
      tb.append(tr);
    }
    if (t.tBodies.length) t.tBodies[0].replaceWith(tb); else t.append(tb);
  }
  function onSort(th) {
    const c = KCOLS[+th.dataset.col];
    ksort.dir = ksort.key === c.key ? -ksort.dir : (c.type === 'str' ? 1 : -1);
    ksort.key = c.key;
    for (const h of th.parentNode.children) h.removeAttribute('aria-sort');
    th.setAttribute('aria-sort', ksort.dir > 0 ? 'ascending' : 'descending');
    renderKernelBody(sortedRows(c.key, ksort.dir));
  }
  function renderKernels(ri) {
    const s = sumOf(RUNS[ri]), t = $('kernel-table');
    krows = kernelRows(s);
    ksort = { key: null, dir: 0 };
    t.replaceChildren();
    // No kernel (a plain OpenMP program): a line saying so, no empty header, the section hidden.
    showSection('kernels', krows.length > 0);
    if (!krows.length) return t.append(el('caption', { text: 'no Kokkos kernels recorded' }));
    const tr = el('tr');
    KCOLS.forEach((c, i) => {
      const th = el('th', { scope: 'col', tabindex: '0', 'data-col': i, 'data-key': c.key, class: c.type === 'str' ? 'str' : '', text: c.label });
      th.addEventListener('click', () => onSort(th));
      th.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); onSort(th); } });
      tr.append(th);
    });
    t.append(el('thead', {}, tr));
    renderKernelBody(krows);
  }

  // ---- OpenMP constructs by source location -------------------------------------------------------
  // summary.openmp.constructs in its order (largest total first), at most MAX_CONSTRUCT_ROWS of them
  // (a program of many thousand sites keeps a page that draws fast); cells that do not apply to a
  // row's category are a dash.
  const MAX_CONSTRUCT_ROWS = 500;
  function renderConstructs(ri) {
    const s = sumOf(RUNS[ri]), rows = (s.openmp && s.openmp.constructs) || [], t = $('construct-table');
    t.replaceChildren();
    showSection('constructs', rows.length > 0);
    if (!rows.length) {
      t.append(el('caption', { text: 'no OpenMP constructs outside Kokkos kernels recorded (or their code addresses were not resolved)' }));
      return;
    }
    const head = ['Location', 'Kind', 'Calls', 'Total', 'Mean', 'Team', 'Imbalance', 'Barrier wait', 'Wait', 'Hold'];
    t.append(el('thead', {}, el('tr', {}, ...head.map((h, i) => el('th', { scope: 'col', class: i < 2 ? 'str' : '', text: h })))));
    const tb = el('tbody'), dash = '\u2013';
    // The program's constructs, then Kokkos' own (its start-up and finalize) as one group.
    const runtime = (c) => c.group === 'kokkos_runtime';
    const shown = rows.slice(0, MAX_CONSTRUCT_ROWS);
    const ordered = shown.filter((c) => !runtime(c)).concat(shown.filter(runtime));
    ordered.forEach((c, i) => {
      if (runtime(c) && (i === 0 || !runtime(ordered[i - 1])))
        tb.append(el('tr', { class: 'group' }, el('th', { colspan: head.length, scope: 'rowgroup',
          text: 'Kokkos runtime: its own start-up and finalize (not ranked with the program\u2019s constructs)' })));
      const team = c.category === 'parallel', waits = c.category === 'mutex' || c.category === 'sync';
      const tr = el('tr', { 'data-construct': i, 'data-label': c.label, 'data-kind': c.kind, 'data-calls': c.calls,
        'data-total-ns': c.total_ns, 'data-group': c.group || 'program' });
      const cells = [c.kind, c.calls, fmtTime(c.total_ns), fmtTime(c.mean_ns), team ? fmtNum(c.team_size) : dash,
        team ? fmtPct(c.load_imbalance) : dash, team ? fmtPct(c.barrier_wait) : dash, waits ? fmtTime(c.wait_ns) : dash,
        c.category === 'mutex' ? fmtTime(c.hold_ns) : dash];
      tr.append(el('td', { class: 'name', title: c.source || c.label }, c.label + (c.partial ? ' *' : '')));
      cells.forEach((v, j) => tr.append(el('td', j === 0 ? { class: 'str' } : {}, String(v))));
      tb.append(tr);
    });
    t.append(tb);
    if (rows.length > MAX_CONSTRUCT_ROWS)
      t.append(el('caption', { text: `the ${MAX_CONSTRUCT_ROWS} largest of ${rows.length} (summary.json lists them all)` }));
  }

  // ---- region flame graph -----------------------------------------------------------------------
  function renderFlame(ri) {
    const s = sumOf(RUNS[ri]), regions = s.regions || [], box = $('flame');
    $('flame-note').textContent = '';
    showSection('regions', regions.length > 0);
    if (!regions.length) return empty(box, 'no Kokkos profile regions recorded');
    box.replaceChildren();
    // The whole width is the time in top-level regions (their share of the run is in the note).
    const top = regions.filter((r) => r.depth === 0).reduce((a, r) => a + r.inclusive_ns, 0);
    const scale = Math.max(top, 1), run = Math.max(s.run_time_ns || 0, 1);
    const H = 22, shades = ['#FDD49E', '#FDBB84', '#FEE8C8', '#FC8D59'];
    const root = { left: 0, used: 0 }, stack = [];  // per depth: {left, used} of the region open there (tree order)
    let maxDepth = 0;
    for (const r of regions) {
      const d = r.depth;
      const parent = d > 0 ? stack[d - 1] : root;
      if (!parent) continue;
      const left = parent.left + parent.used, width = r.inclusive_ns / scale;
      parent.used += width;
      stack[d] = { left, used: 0 };
      stack.length = d + 1;
      maxDepth = Math.max(maxDepth, d);
      const tip = r.path + '\ninclusive ' + fmtTime(r.inclusive_ns) + ' (' + fmtPct(r.inclusive_ns / run) + ' of the run)' +
        '\nexclusive ' + fmtTime(r.exclusive_ns) + '\ncalls ' + r.calls;
      box.append(el('div', { class: 'flame-box', title: tip, 'data-path': r.path,
        style: `left:${(100 * left).toFixed(4)}%;width:${(100 * width).toFixed(4)}%;top:${d * H}px;background:${shades[d % shades.length]}` },
      width > 0.02 ? r.name + ' ' + fmtTime(r.inclusive_ns) : ''));
    }
    box.style.height = (maxDepth + 1) * H + 2 + 'px';
    $('flame-note').textContent = `The full width is the ${fmtTime(top)} spent in top-level regions, ${fmtPct(top / run)} of the run; ` +
      'under each region, its child regions. Hover for figures.';
  }

  // ---- memory -----------------------------------------------------------------------------------
  function renderMemory(ri) {
    const r = RUNS[ri], s = sumOf(r), cv = $('mem-canvas'), series = (r && r.memory) || [];
    table($('mem-table'), ['space', 'allocations', 'deallocations', 'bytes allocated', 'high-water mark', 'still allocated at the end'],
      (s.memory || []).map((m) => [m.space, m.allocations, m.deallocations, fmtBytes(m.bytes_allocated), fmtBytes(m.high_water_bytes), fmtBytes(m.final_bytes)]));
    $('mem-legend').replaceChildren(...series.map((m, i) => el('span', {}, el('i', { style: 'background:' + LINE_COLORS[i % LINE_COLORS.length] }), m.name.replace(/^memory /, ''))));
    cv.hidden = !series.length;
    showSection('memory', series.length > 0 || (s.memory || []).length > 0);
    if (!series.length) return;
    const W = cv.clientWidth || 800, Hc = 220, dpr = window.devicePixelRatio || 1;
    cv.width = W * dpr; cv.height = Hc * dpr; cv.style.height = Hc + 'px';
    const g = cv.getContext('2d');
    g.scale(dpr, dpr);
    g.clearRect(0, 0, W, Hc);
    const L = 80, B = 24, T = 8, end = Math.max(r.end_ns, 1);
    const top = Math.max(1, ...series.map((m) => Math.max(0, ...m.v)));
    const X = (t) => L + (t / end) * (W - L - 10), Y = (v) => T + (1 - v / top) * (Hc - T - B);
    g.strokeStyle = '#c8c8c8'; g.fillStyle = '#1a1a1a'; g.font = '12px sans-serif'; g.lineWidth = 1;
    for (let i = 0; i <= 4; i++) {
      const v = (top * i) / 4;
      g.beginPath(); g.moveTo(L, Y(v)); g.lineTo(W - 10, Y(v)); g.stroke();
      g.textAlign = 'right'; g.fillText(fmtBytes(Math.round(v)), L - 6, Y(v) + 4);
    }
    for (let i = 0; i <= 5; i++) {
      g.textAlign = i === 0 ? 'left' : i === 5 ? 'right' : 'center';
      g.fillText(fmtTime((end * i) / 5), X((end * i) / 5), Hc - 6);
    }
    series.forEach((m, i) => {
      g.strokeStyle = LINE_COLORS[i % LINE_COLORS.length]; g.lineWidth = 2;
      g.beginPath(); g.moveTo(X(0), Y(0));
      let last = 0;
      for (let j = 0; j < m.t.length; j++) { g.lineTo(X(m.t[j]), Y(last)); g.lineTo(X(m.t[j]), Y(m.v[j])); last = m.v[j]; }
      g.lineTo(X(end), Y(last)); g.stroke();
    });
  }

  // ---- copies and transfers ---------------------------------------------------------------------
  function renderCopies(ri) {
    const s = sumOf(RUNS[ri]);
    const copies = s.deep_copies || [];
    if (copies.length) {
      table($('copy-table'), ['destination \u2190 source', 'calls', 'bytes', 'time', 'bandwidth'],
        copies.map((c) => [c.dst_space + ' \u2190 ' + c.src_space, c.calls, fmtBytes(c.bytes), fmtTime(c.time_ns), c.time_ns ? c.bandwidth_gb_per_s.toFixed(2) + ' GB/s' : '\u2013']));
    } else {
      $('copy-table').replaceChildren(el('caption', { text: 'no deep copies recorded' }));
    }
    const rows = [];
    for (const d of (s.target && s.target.devices) || [])
      for (const [dir, t] of Object.entries(d.transfers || {}))
        rows.push(['device ' + d.device + (d.type ? ' (' + d.type + ')' : ''), dir, t.count, fmtBytes(t.bytes), fmtTime(t.time_ns), t.time_ns ? t.bandwidth_gb_per_s.toFixed(2) + ' GB/s' : '\u2013']);
    if (rows.length) table($('transfer-table'), ['device', 'direction', 'count', 'bytes', 'time', 'bandwidth'], rows);
    else $('transfer-table').replaceChildren(el('caption', { text: 'no target transfers recorded' }));
    const tc = (s.target && s.target.deep_copies) || [];
    if (tc.length) {
      table($('target-copy-table'), ['deep copy causing target data ops', 'destination', 'source', 'calls', 'bytes', 'data ops'],
        tc.map((c) => [c.name, c.dst_space, c.src_space, c.calls, fmtBytes(c.bytes), Object.entries(c.data_ops || {}).map(([k, v]) => k + ' ' + v.count).join(', ')]));
    } else {
      $('target-copy-table').replaceChildren();
    }
    showSection('copies', copies.length > 0 || rows.length > 0 || tc.length > 0);
  }

  // ---- threads ----------------------------------------------------------------------------------
  function renderThreads(ri) {
    const r = RUNS[ri], s = sumOf(r), th = (s.openmp && s.openmp.threads) || [], box = $('thread-bars');
    showSection('threads', th.length > 0);
    if (!th.length) return empty(box, 'no OpenMP threads recorded');
    const names = new Map(((r && r.tracks) || []).map((t) => [t.index, t.name]));
    const most = Math.max(1, ...th.map((t) => t.busy_ns + t.wait_ns));
    const grid = el('div', { class: 'bars' });
    for (const t of th) {
      const all = t.busy_ns + t.wait_ns;
      grid.append(el('span', { text: names.get(t.track) || 'thread ' + t.track }),
        el('div', { class: 'bar', title: `busy ${fmtTime(t.busy_ns)}, waiting ${fmtTime(t.wait_ns)}` },
          el('b', { style: `width:${(100 * t.busy_ns) / most}%;background:${BUSY}` }),
          el('b', { style: `width:${(100 * t.wait_ns) / most}%;background:${WAIT}` })),
        el('span', { text: `busy ${fmtTime(t.busy_ns)} \u00b7 wait ${fmtTime(t.wait_ns)}` + (all ? ` (${fmtPct(t.wait_ns / all)})` : '') }));
    }
    box.replaceChildren(el('div', { class: 'legend' }, el('span', {}, el('i', { style: 'background:' + BUSY }), 'busy (implicit tasks minus waits)'),
      el('span', {}, el('i', { style: 'background:' + WAIT }), 'waiting (barriers, taskwaits, ...)')), grid);
  }

  // ---- timeline ---------------------------------------------------------------------------------
  // A lane is one track's spans of one group (kernels, OpenMP waits, ...), a row per nesting depth.
  const ROW = 14, AXIS = 22, LABEL = 210, MAXD = 8;
  const lanes = [];
  let END = 1, view = [0, 1], drawnRects = 0;
  // One time axis for every run: from the earliest run's first event.
  const FIRST = Math.min(0, ...RUNS.map((r) => r.start_ns || 0));
  const startOf = (r) => (r.start_ns || 0) - FIRST;
  function buildLanes() {
    RUNS.forEach((r, ri) => {
      const off = startOf(r);
      END = Math.max(END, off + (r.end_ns || 0));
      const byTrack = new Map();
      const lane = (track, g) => {
        if (!byTrack.has(track)) byTrack.set(track, new Map());
        const m = byTrack.get(track);
        if (!m.has(g)) m.set(g, { ri, off, track, group: g, spans: [], bins: [], levels: null, depth: 1 });
        return m.get(g);
      };
      const sp = r.spans || [];
      for (let i = 0; i + 4 < sp.length; i += 5) {
        const ln = lane(sp[i], groupOf(r.cats[sp[i + 1]]));
        ln.spans.push({ s: off + sp[i + 3], e: off + sp[i + 3] + sp[i + 4], name: r.names[sp[i + 2]], cat: r.cats[sp[i + 1]], d: 0 });
      }
      for (const b of r.bins || []) lane(b.track, groupOf(r.cats[b.cat])).bins.push(b.pm);
      const truncated = (r.spans_total || 0) > sp.length / 5;
      for (const t of r.tracks || []) {
        const m = byTrack.get(t.index);
        if (!m) continue;
        let first = true;
        for (const g of [...m.keys()].sort((a, b) => a - b)) {
          const ln = m.get(g);
          ln.label = first ? t.name : '';
          ln.first = first; ln.runFirst = first && !lanes.some((l) => l.ri === ri); first = false;
          ln.runName = ln.runFirst && RUNS.length > 1 ? nameOf(r) : '';  // in bold under its first track's name
          ln.truncated = truncated; ln.binNs = r.bin_ns;
          // Nesting depth: spans come by start, longer first on ties.
          ln.spans.sort((a, b) => a.s - b.s || b.e - a.e);
          const open = [];
          for (const x of ln.spans) {
            while (open.length && open[open.length - 1] <= x.s) open.pop();
            x.d = Math.min(open.length, MAXD - 1);
            open.push(x.e);
            ln.depth = Math.max(ln.depth, x.d + 1);
          }
          lanes.push(ln);
        }
      }
    });
    view = [0, END];
    // Kokkos' own start-up folded at the left: the view opens where every run is past it.
    STARTUP = Math.max(0, ...RUNS.map((r) => { const e = startupEnd(r); return e > 0 ? startOf(r) + e : 0; }));
    if (STARTUP > 0.05 * END && STARTUP < END) view = [Math.max(0, STARTUP - 0.02 * (END - STARTUP)), END];
  }
  // The end of Kokkos' start-up in a run: the last span of a Kokkos runtime construct (summary.json's
  // group "kokkos_runtime"; its spans are named "<what> <label>") that starts before the first
  // kernel; 0: none.
  let STARTUP = 0;
  function startupEnd(r) {
    const cons = (sumOf(r).openmp && sumOf(r).openmp.constructs) || [];
    const labels = new Set(cons.filter((c) => c.group === 'kokkos_runtime').map((c) => c.label));
    if (!labels.size) return 0;
    const sp = r.spans || [];
    let firstKernel = Infinity, end = 0;
    for (let i = 0; i + 4 < sp.length; i += 5) if (r.cats[sp[i + 1]] === 'kokkos.kernel') firstKernel = Math.min(firstKernel, sp[i + 3]);
    for (let i = 0; i + 4 < sp.length; i += 5) {
      const name = r.names[sp[i + 2]] || '', cut = name.indexOf(' ');
      if (cut > 0 && labels.has(name.slice(cut + 1)) && sp[i + 3] < firstKernel) end = Math.max(end, sp[i + 3] + sp[i + 4]);
    }
    return end;
  }
  // The lane's bins summed over its categories, and coarser levels (each halves the count).
  function level(ln, k) {
    if (!ln.levels) {
      const n = Math.max(0, ...ln.bins.map((b) => b.length));
      const a = new Float32Array(n);
      for (const b of ln.bins) for (let i = 0; i < b.length; i++) a[i] += b[i] / 1000;
      ln.levels = [a];
    }
    while (ln.levels.length <= k) {
      const p = ln.levels[ln.levels.length - 1], a = new Float32Array(Math.ceil(p.length / 2));
      for (let i = 0; i < a.length; i++) a[i] = (p[2 * i] + (2 * i + 1 < p.length ? p[2 * i + 1] : 0)) / 2;
      ln.levels.push(a);
    }
    return ln.levels[k];
  }
  function niceStep(range, n) {
    const raw = range / n, p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }
  function drawTimeline() {
    const cv = $('tl-canvas'), dpr = window.devicePixelRatio || 1;
    const W = cv.clientWidth || 1200;
    let H = AXIS;
    for (const ln of lanes) { ln.top = H; H += ln.depth * ROW + (ln.first ? 3 : 1); }
    H = Math.max(H + 4, 60);
    cv.width = Math.round(W * dpr); cv.height = Math.round(H * dpr); cv.style.height = H + 'px';
    const g = cv.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = '#ffffff'; g.fillRect(0, 0, W, H);
    const [v0, v1] = view, PW = W - LABEL - 8, k = PW / (v1 - v0);
    const X = (t) => LABEL + (t - v0) * k;
    g.font = '11px sans-serif'; g.textBaseline = 'middle';
    // Axis.
    const step = niceStep(v1 - v0, Math.max(2, PW / 110));
    g.strokeStyle = '#e3e3e3'; g.fillStyle = '#1a1a1a'; g.textAlign = 'center';
    for (let t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
      const x = X(t);
      g.beginPath(); g.moveTo(x, AXIS - 4); g.lineTo(x, H); g.stroke();
      g.textAlign = x > W - 40 ? 'right' : 'center';
      g.fillText(fmtTime(t), Math.min(x, W - 2), AXIS / 2);
    }
    drawnRects = 0;
    for (const ln of lanes) {
      if (ln.first) { g.fillStyle = ln.runFirst && ln.ri > 0 ? '#1a1a1a' : '#c8c8c8'; g.fillRect(0, ln.top - 2, W, ln.runFirst && ln.ri > 0 ? 2 : 1); }
      const G = GROUPS[ln.group];
      g.fillStyle = '#1a1a1a'; g.textAlign = 'left';
      if (ln.label) g.fillText(ln.label.length > 30 ? ln.label.slice(0, 29) + '\u2026' : ln.label, 4, ln.top + ROW / 2);
      if (ln.runName) {
        g.font = 'bold 11px sans-serif';
        g.fillText(ln.runName.length > 28 ? ln.runName.slice(0, 27) + '\u2026' : ln.runName, 4, ln.top + ROW * 1.5);
        g.font = '11px sans-serif';
      }
      g.fillStyle = G.color; g.fillRect(LABEL - 14, ln.top + 3, 8, ROW - 6);
      g.save();
      g.beginPath(); g.rect(LABEL, ln.top, PW, ln.depth * ROW); g.clip();
      // Where spans were left out, the bins show the time covered (as a bar height).
      if (ln.truncated && ln.bins.length) {
        const lv = Math.max(0, Math.ceil(Math.log2(1 / (k * ln.binNs))));
        const a = level(ln, lv), bw = ln.binNs * Math.pow(2, lv);
        g.globalAlpha = 0.45; g.fillStyle = G.color;
        for (let i = Math.max(0, Math.floor((v0 - ln.off) / bw)); i < a.length && ln.off + i * bw <= v1; i++) {
          if (a[i] <= 0) continue;
          const h = Math.min(1, a[i]) * (ROW - 2);
          g.fillRect(X(ln.off + i * bw), ln.top + ROW - 1 - h, Math.max(1, bw * k), h);
          drawnRects++;
        }
        g.globalAlpha = 1;
      }
      const lastX = new Float64Array(MAXD).fill(-1e9);
      const ink = textOn(G.color);
      for (const x of ln.spans) {
        if (x.e < v0 || x.s > v1) continue;
        const x0 = X(x.s), x1 = X(x.e), w = x1 - x0;
        if (w < 1 && x1 < lastX[x.d] + 1) continue;  // one pixel already drawn there
        lastX[x.d] = Math.max(x1, x0 + 1);
        const y = ln.top + x.d * ROW;
        // On whole pixels: crisp edges, and a span under a pixel wide still shows in its own colour.
        const px0 = Math.round(x0), px1 = Math.max(px0 + 1, Math.round(x1));
        g.fillStyle = G.color; g.fillRect(px0, y + 1, px1 - px0, ROW - 2);
        drawnRects++;
        if (w > 2) { g.fillStyle = 'rgba(255,255,255,0.6)'; g.fillRect(x1 - 0.5, y + 1, 0.5, ROW - 2); }
        if (w > 36) {
          const cx = Math.max(x0, LABEL) + 3, room = Math.min(x1, LABEL + PW) - cx - 3, n = Math.floor(room / 6.2);
          if (n > 2) { g.fillStyle = ink; g.fillText(x.name.length > n ? x.name.slice(0, n - 1) + '\u2026' : x.name, cx, y + ROW / 2); }
        }
      }
      g.restore();
    }
    cv.dataset.drawn = drawnRects;
    $('tl-range').textContent = fmtTime(v0) + ' \u2013 ' + fmtTime(v1) + ' (' + fmtTime(v1 - v0) + ' shown)';
  }
  let pending = false;
  function redraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; drawTimeline(); });
  }
  function zoom(f, at) {
    const [v0, v1] = view, span = Math.min(END, Math.max(100, (v1 - v0) * f));
    const c = at === undefined ? (v0 + v1) / 2 : at, r = (c - v0) / (v1 - v0);
    let a = c - r * span;
    a = Math.max(0, Math.min(END - span, a));
    view = [a, a + span];
    redraw();
  }
  function pan(frac) {
    const span = view[1] - view[0];
    const a = Math.max(0, Math.min(END - span, view[0] + frac * span));
    view = [a, a + span];
    redraw();
  }
  function timeAt(cv, clientX) {
    const rect = cv.getBoundingClientRect(), PW = rect.width - LABEL - 8;
    return view[0] + ((clientX - rect.left - LABEL) / PW) * (view[1] - view[0]);
  }
  function hit(cv, e) {
    const rect = cv.getBoundingClientRect(), y = e.clientY - rect.top, t = timeAt(cv, e.clientX);
    const slack = (4 * (view[1] - view[0])) / Math.max(1, rect.width - LABEL - 8);
    for (const ln of lanes) {
      if (y < ln.top || y >= ln.top + ln.depth * ROW) continue;
      const d = Math.floor((y - ln.top) / ROW);
      let best = null;
      for (const x of ln.spans) if (x.d === d && x.s - slack <= t && t <= x.e + slack && (!best || x.e - x.s < best.e - best.s)) best = x;
      const who = (RUNS.length > 1 ? nameOf(RUNS[ln.ri]) + ': ' : '') + ((RUNS[ln.ri].tracks || []).find((q) => q.index === ln.track) || {}).name;
      if (best) return `${best.name}\n${best.cat} on ${who}\nstart ${fmtTime(best.s)}, duration ${fmtTime(best.e - best.s)}`;
      if (ln.truncated && ln.bins.length && d === 0) {
        const k = (rect.width - LABEL - 8) / (view[1] - view[0]);
        const lv = Math.max(0, Math.ceil(Math.log2(1 / (k * ln.binNs)))), bw = ln.binNs * Math.pow(2, lv), i = Math.floor(t / bw);
        const a = level(ln, lv);
        if (i >= 0 && i < a.length && a[i] > 0) return `${GROUPS[ln.group].name} on ${who}\n${fmtPct(Math.min(1, a[i]))} of ${fmtTime(i * bw)} \u2013 ${fmtTime((i + 1) * bw)} covered`;
      }
      return null;
    }
    return null;
  }
  function setupTimeline() {
    buildLanes();
    const cv = $('tl-canvas'), tip = $('tl-tip');
    $('tl-legend').replaceChildren(...GROUPS.filter((G, i) => lanes.some((l) => l.group === i))
      .map((G) => el('span', {}, el('i', { style: 'background:' + G.color }), G.name)));
    let kept = 0, total = 0;
    for (const r of RUNS) { kept += (r.spans || []).length / 5; total += r.spans_total || 0; }
    cv.dataset.lanes = lanes.length; cv.dataset.spans = kept; cv.dataset.spansTotal = total;
    cv.dataset.startupEnd = Math.round(STARTUP); cv.dataset.viewStart = Math.round(view[0]);
    $('tl-note').textContent = (!lanes.length ? 'no spans recorded' : kept < total
      ? `The ${kept} longest of the run's ${total} spans are drawn one by one; the shaded bars show, per track and kind, the share of time covered by all of them.`
      : `All ${total} spans. Wheel or +/- to zoom, drag or the arrow keys to pan, hover for details.`) +
      (view[0] > 0 ? ` Kokkos' own start-up (its first ${fmtTime(STARTUP)}) is folded at the left: Whole run (0) shows it.` : '');
    cv.addEventListener('wheel', (e) => { e.preventDefault(); zoom(Math.exp(e.deltaY * 0.002), timeAt(cv, e.clientX)); }, { passive: false });
    let drag = null;
    cv.addEventListener('mousedown', (e) => { drag = { x: e.clientX, v: view.slice() }; cv.style.cursor = 'grabbing'; });
    window.addEventListener('mouseup', () => { drag = null; cv.style.cursor = ''; });
    cv.addEventListener('mousemove', (e) => {
      if (drag) {
        const PW = cv.getBoundingClientRect().width - LABEL - 8, span = drag.v[1] - drag.v[0];
        const a = Math.max(0, Math.min(END - span, drag.v[0] - ((e.clientX - drag.x) / PW) * span));
        view = [a, a + span];
        tip.hidden = true;
        return redraw();
      }
      const text = hit(cv, e);
      tip.hidden = !text;
      if (text) {
        const rect = cv.getBoundingClientRect();
        tip.textContent = text;
        tip.style.left = Math.min(e.clientX - rect.left + 12, rect.width - 300) + 'px';
        tip.style.top = e.clientY - rect.top + 14 + 'px';
      }
    });
    cv.addEventListener('mouseleave', () => { tip.hidden = true; });
    cv.addEventListener('keydown', (e) => {
      const acts = { '+': () => zoom(0.5), '=': () => zoom(0.5), '-': () => zoom(2), ArrowLeft: () => pan(-0.2), ArrowRight: () => pan(0.2), '0': () => { view = [0, END]; redraw(); } };
      if (acts[e.key]) { e.preventDefault(); acts[e.key](); }
    });
    $('tl-in').addEventListener('click', () => zoom(0.5));
    $('tl-out').addEventListener('click', () => zoom(2));
    $('tl-left').addEventListener('click', () => pan(-0.2));
    $('tl-right').addEventListener('click', () => pan(0.2));
    $('tl-reset').addEventListener('click', () => { view = [0, END]; redraw(); });
    window.addEventListener('resize', () => { redraw(); renderMemory(cur); });
    drawTimeline();
  }

  // ---- putting it together ----------------------------------------------------------------------
  function select(ri) {
    cur = ri;
    $('run-select').value = ri;
    const rt = $('rank-table');
    if (rt.tBodies.length) [...rt.tBodies[0].rows].forEach((row, i) => row.classList.toggle('selected', i === ri));
    renderFacts(ri);
    renderFindings(ri);
    renderKernels(ri);
    renderConstructs(ri);
    renderFlame(ri);
    renderMemory(ri);
    renderCopies(ri);
    renderThreads(ri);
  }

  // ?selftest=1: sorts the kernel table by every column, both ways, through the headers' own click
  // handlers, and writes the orders (summary indices) into #selftest for the tests to read back.
  function selftest() {
    const out = { sorts: [] };
    for (const th of [...$('kernel-table').tHead.rows[0].cells]) {
      for (let n = 0; n < 2; n++) {
        th.click();
        out.sorts.push({ key: th.dataset.key, dir: th.getAttribute('aria-sort'),
          order: [...$('kernel-table').tBodies[0].rows].map((r) => +r.dataset.index) });
      }
    }
    const st = $('selftest');
    st.textContent = JSON.stringify(out);
    st.hidden = false;
  }

  renderRanks();
  select(0);
  setupTimeline();
  if (performance.mark) performance.mark('kob-report-drawn');
  document.body.dataset.ready = '1';
  if (/[?&]selftest=1/.test(location.search)) selftest();
})();
