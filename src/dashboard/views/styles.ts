/** The dashboard's one stylesheet, served from /dashboard/assets so the CSP can forbid inline styles. */
export const dashboardCss = `
:root { --processed: #2f855a; --ignored: #a0aec0; --pending: #d69e2e; --failed: #c53030; --ink: #1a202c; --muted: #718096; --line: #e2e8f0; --bg: #f7fafc; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink); background: var(--bg); }
a { color: #2b6cb0; text-decoration: none; } a:hover { text-decoration: underline; }
header { display: flex; align-items: center; gap: 16px; padding: 10px 24px; background: #1a202c; color: #fff; }
header h1 { font-size: 16px; margin: 0; font-weight: 600; } header h1 a { color: #fff; }
header .spacer { flex: 1; }
header form { display: flex; gap: 6px; align-items: center; margin: 0; }
header input { padding: 4px 8px; border-radius: 4px; border: 1px solid #4a5568; background: #2d3748; color: #fff; }
header .mode { color: #cbd5e0; font-size: 13px; }
main { padding: 16px 24px 40px; max-width: 1280px; margin: 0 auto; }
h2 { font-size: 15px; margin: 24px 0 8px; } h3 { font-size: 14px; margin: 0; }
.notice { padding: 8px 12px; border-radius: 6px; background: #ebf8ff; border: 1px solid #bee3f8; margin-bottom: 12px; }
.notice.bad { background: #fff5f5; border-color: #feb2b2; }
.status-line { display: flex; gap: 12px; flex-wrap: wrap; align-items: center; margin-bottom: 8px; }
.pill { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600; color: #fff; background: var(--muted); }
.pill.processed { background: var(--processed); } .pill.ignored { background: #718096; } .pill.pending { background: var(--pending); } .pill.failed { background: var(--failed); }
.pill.ok { background: var(--processed); }
.legend { display: flex; gap: 14px; font-size: 12px; color: var(--muted); align-items: center; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; vertical-align: -1px; }
.legend .processed { background: var(--processed); } .legend .ignored { background: var(--ignored); } .legend .pending { background: var(--pending); } .legend .failed { background: var(--failed); }
.providers { display: grid; grid-template-columns: repeat(auto-fill, minmax(590px, 1fr)); gap: 16px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; }
.card-head { display: flex; align-items: baseline; gap: 10px; margin-bottom: 8px; }
.card-head .spacer { flex: 1; }
.figures { display: grid; grid-template-columns: repeat(4, 1fr); gap: 8px; margin: 6px 0 10px; }
.figure { border-left: 3px solid var(--line); padding-left: 8px; }
.figure b { display: block; font-size: 18px; } .figure span { color: var(--muted); font-size: 12px; }
.figure.alert { border-color: var(--failed); } .figure.alert b { color: var(--failed); }
.figure.warn { border-color: var(--pending); }
.charts { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.chart-box h4 { margin: 0 0 2px; font-size: 12px; color: var(--muted); font-weight: 600; }
svg.chart { width: 100%; height: auto; display: block; }
svg .s-processed { fill: var(--processed); } svg .s-ignored { fill: var(--ignored); } svg .s-pending { fill: var(--pending); } svg .s-failed { fill: var(--failed); }
svg .hover { fill: transparent; } svg g:hover .hover { fill: #edf2f7; }
svg .grid { stroke: var(--line); stroke-width: 1; } svg .axis { stroke: #a0aec0; stroke-width: 1; }
svg .tick { font-size: 10px; fill: var(--muted); }
table { width: 100%; border-collapse: collapse; background: #fff; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.time { white-space: nowrap; }
.status-line .spacer { flex: 1; }
table.compact { font-size: 12px; } tr.changes td { font-weight: 600; } table.compact td, table.compact th { padding: 3px 6px; white-space: nowrap; }
td.event { min-width: 240px; max-width: 340px; word-break: break-all; } td.error-text { min-width: 260px; }
.error-text { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; color: var(--failed); word-break: break-word; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
pre { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 12px; overflow: auto; max-height: 560px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 12px; margin: 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
.two { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
button { padding: 4px 10px; border-radius: 4px; border: 1px solid #2b6cb0; background: #3182ce; color: #fff; cursor: pointer; font: inherit; font-size: 13px; }
button.secondary { background: #fff; color: #2b6cb0; }
form.inline { display: inline; margin: 0; }
form.filters { display: flex; gap: 10px; flex-wrap: wrap; align-items: end; background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px; }
form.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 2px; }
form.filters select, form.filters input { padding: 4px 6px; border: 1px solid #cbd5e0; border-radius: 4px; font: inherit; }
.muted { color: var(--muted); }
tr.this-event td { background: #fffbea; }
.two h3 { margin: 14px 0 6px; } .two > div > h3:first-child { margin-top: 0; }

header nav a { color: #cbd5e0; margin-right: 12px; } header nav a:hover { color: #fff; }
p.sentence { font-size: 15px; margin: 0 0 12px; }
p.pager { display: flex; gap: 16px; margin: 10px 0; }
a.more { font-size: 12px; font-weight: normal; margin-left: 8px; }
td.alert { color: var(--failed); font-weight: 600; }
td.delivery { font-size: 12px; } td.delivery.delivered { color: var(--processed); } td.delivery.parked, td.delivery.failing { color: var(--failed); } td.delivery.waiting, td.delivery.untried { color: var(--muted); }
#destinations th { font-weight: 600; color: var(--ink); font-size: 13px; }
`;
