// panel-styles.js — the panel's stylesheet: one string, adopted by the
// panel's shadow root (or put in a <style> there where a browser has no
// constructable sheets), so the game's CSS and the panel's never meet.
// `:host { all: initial; }` is what keeps the page's inherited styles out.

export const CSS = `
:host { all: initial; }
* { box-sizing: border-box; }
.backdrop { position: fixed; inset: 0; z-index: 2147483647; background: rgba(5, 8, 12, 0.55);
  display: flex; align-items: center; justify-content: center;
  font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #d8dee9; }
.backdrop[hidden] { display: none; }
.dialog { width: min(1120px, 96vw); height: min(860px, 94vh); display: flex; flex-direction: column;
  background: #12161c; border: 1px solid #3a4350; border-radius: 10px; overflow: hidden; }
.dialog:focus { outline: none; }
header { display: flex; align-items: center; gap: 12px; padding: 10px 14px; border-bottom: 1px solid #262d36; background: #161b22; }
header h1 { font-size: 14px; margin: 0; font-weight: 650; letter-spacing: .02em; color: #e6edf3; }
header .conn { font-size: 12px; color: #8b949e; }
header .conn[data-state="live"]::before { content: "● "; color: #3fb950; }
header .conn[data-state="connecting"]::before, header .conn[data-state="retry"]::before { content: "● "; color: #d29922; }
header .conn[data-state="offline"]::before { content: "● "; color: #f85149; }
header .endpoint { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; color: #8b949e; }
header .spacer { flex: 1; }
header .regime { font-size: 12px; color: #ffa657; border: 1px solid #9e6a03; border-radius: 10px; padding: 1px 8px; }
.verdict { font: 13px ui-monospace, monospace; margin: 6px 0; color: #e6edf3; }
.verdict .reason { font-family: system-ui, sans-serif; color: #8b949e; }
.verdict.software strong, .verdict.incomparable strong { color: #ffa657; }
.verdict.no-detectable-change strong, .verdict.not-enough-evidence strong { color: #c9d1d9; }
.delta.noise { color: #8b949e; }
button { font: inherit; color: inherit; background: #21262d; border: 1px solid #363d47; border-radius: 6px; padding: 4px 10px; cursor: pointer; }
button:hover { background: #2a313a; }
button:focus-visible, [tabindex]:focus-visible, input:focus-visible, textarea:focus-visible, select:focus-visible { outline: 2px solid #58a6ff; outline-offset: 1px; }
button[disabled] { opacity: .5; cursor: default; }
button.primary { background: #1f6feb; border-color: #1f6feb; color: #fff; }
button.danger { border-color: #6e2a2a; }
button.close { font-size: 16px; line-height: 1; padding: 3px 9px; }
[role="tablist"] { display: flex; gap: 2px; padding: 0 10px; border-bottom: 1px solid #262d36; background: #161b22; }
[role="tab"] { border: 0; border-bottom: 2px solid transparent; border-radius: 0; background: none; padding: 8px 12px; color: #8b949e; }
[role="tab"][aria-selected="true"] { color: #e6edf3; border-bottom-color: #f78166; }
[role="tab"] .count { margin-left: 6px; font-size: 11px; background: #30363d; border-radius: 8px; padding: 0 6px; color: #c9d1d9; }
[role="tabpanel"] { flex: 1; overflow: auto; padding: 12px 16px 20px; }
[role="tabpanel"][hidden] { display: none; }
[role="tabpanel"]:focus { outline: none; }
.source { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; margin-bottom: 10px; padding: 6px 10px; border: 1px solid #2d3540; border-radius: 6px; background: #161b22; font-size: 12px; color: #9da7b3; }
.source strong { color: #e6edf3; font-weight: 600; }
.source .switch { margin-left: auto; display: flex; gap: 4px; }
.source .switch button[aria-pressed="true"] { background: #1f6feb33; border-color: #1f6feb; color: #e6edf3; }
.error { border: 1px solid #6e2a2a; background: #2a1618; color: #ffb4ab; border-radius: 6px; padding: 10px 12px; margin: 8px 0; }
.error code { color: #ffd8d3; }
.loading { color: #8b949e; padding: 10px 0; }
.empty { color: #8b949e; padding: 14px 0; }
code, .mono { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
ul.rows { list-style: none; margin: 0; padding: 0; }
ul.rows > li { border-bottom: 1px solid #21262d; }
button.row { width: 100%; display: flex; gap: 8px; align-items: center;
  text-align: left; background: none; border: 0; border-radius: 0; padding: 7px 6px; }
button.row > span { flex: 0 0 auto; min-width: 0; white-space: nowrap; overflow: hidden; }
button.row > .n { flex-basis: 64px; }
button.row > .type { flex-basis: 82px; }
button.row > .guess { flex: 1.3 1 120px; }
button.row > .st { flex-basis: 86px; }
button.row > .ago { flex-basis: 92px; }
button.row > .chips { flex: 1.5 1 120px; }
button.row > .fp { flex-basis: 76px; }
button.row:hover { background: #1a2029; }
button.row[aria-expanded="true"] { background: #1a2029; }
.row .n { font: 600 13px ui-monospace, monospace; color: #e6edf3; }
button.row > .machines { flex-basis: 92px; color: #8b949e; font-size: 11px; }
.row .type { color: #9da7b3; }
.row .guess { color: #e6edf3; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.row .ago { color: #9da7b3; font-size: 12px; }
.row .chips { overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.row .fp { font: 12px ui-monospace, monospace; color: #79c0ff; }
.chip { display: inline-block; font-size: 11px; padding: 0 6px; margin: 1px 3px 1px 0; border-radius: 9px; background: #1f2a37; color: #a5d6ff; border: 1px solid #2a3b50; }
.chip.dim { color: #6e7681; background: none; border-color: #30363d; }
.chip.build { background: #272033; color: #d2a8ff; border-color: #3d2f52; }
.badge { display: inline-block; font-size: 11px; padding: 0 7px; border-radius: 9px; font-weight: 600; text-transform: uppercase; letter-spacing: .03em; }
.badge.open { background: #3b2e0a; color: #e3b341; }
.badge.fixed { background: #0f2d1a; color: #56d364; }
.badge.pending { background: #1f2a37; color: #a5d6ff; }
.waiting { color: #a5d6ff; }
.badge.regressed { background: #3d1214; color: #ff7b72; }
.badge.applied, .badge.merged { background: #0f2d1a; color: #56d364; }
.badge.proposed { background: #102a4c; color: #79c0ff; }
.badge.rejected { background: #2d2d2d; color: #8b949e; }
.detail { padding: 8px 12px 14px 70px; background: #161b22; border-top: 1px dashed #262d36; }
.detail dl { display: grid; grid-template-columns: 120px 1fr; gap: 4px 12px; margin: 0 0 8px; }
.detail dt { color: #8b949e; }
.detail dd { margin: 0; word-break: break-word; }
.detail h3, .cards h3 { font-size: 12px; text-transform: uppercase; letter-spacing: .05em; color: #8b949e; margin: 12px 0 6px; }
.cmd { display: flex; gap: 8px; align-items: center; background: #0d1117; border: 1px solid #30363d; border-radius: 6px; padding: 6px 8px; }
.cmd code { flex: 1; white-space: pre-wrap; word-break: break-all; color: #e6edf3; }
.fixline { padding: 4px 0; }
.occ { font-size: 12px; color: #9da7b3; }
.more { margin-top: 10px; }
.session-tools { display: grid; grid-template-columns: 1fr auto; gap: 10px; align-items: start; margin-bottom: 12px; }
.session-tools textarea { width: 100%; min-height: 56px; resize: vertical; background: #0d1117; color: #e6edf3; border: 1px solid #30363d; border-radius: 6px; padding: 6px 8px; font: 13px system-ui, sans-serif; }
.session-tools .actions { display: flex; flex-direction: column; gap: 6px; align-items: stretch; }
.session-tools .copied { font-size: 12px; color: #56d364; min-height: 16px; }
.session-tools .copied.fail { color: #ff7b72; }
ul.incidents { list-style: none; margin: 0; padding: 0; }
ul.incidents li { display: grid; grid-template-columns: 74px 70px 86px minmax(140px, 1fr) 84px 54px 86px; gap: 8px; align-items: center; padding: 6px 4px; border-bottom: 1px solid #21262d; }
ul.incidents li .evidence { grid-column: 4 / 8; color: #8b949e; font-size: 12px; }
ul.incidents li .time { font: 12px ui-monospace, monospace; color: #9da7b3; }
ul.incidents li.note { display: block; color: #d29922; font-size: 12px; }
q.note { color: #e3b341; font-style: italic; }
ul.incidents .woke { font-size: 11px; color: #f0883e; }
button.fp { font: 12px ui-monospace, monospace; color: #79c0ff; background: none; border: 0; padding: 0 2px; text-align: left; }
.timeline { position: relative; }
.axis { display: grid; grid-template-columns: 150px 1fr; font-size: 11px; color: #8b949e; }
.axis svg text { fill: #8b949e; font: 10px ui-monospace, monospace; }
.axis svg line { stroke: #30363d; }
.axis svg line.build { stroke: #8957e5; stroke-dasharray: 3 3; }
.axis svg text.build { fill: #d2a8ff; }
.strips { outline: none; }
.strips:focus-visible { outline: 2px solid #58a6ff; outline-offset: 2px; }
.striprow { display: grid; grid-template-columns: 150px 1fr; align-items: center; border-bottom: 1px solid #1c2128; }
.striprow .label { padding-right: 8px; }
.striprow .label .name { color: #c9d1d9; font-size: 12px; }
.striprow .label .readout { display: block; font: 12px ui-monospace, monospace; color: #e6edf3; min-height: 16px; }
.striprow .label .readout.gap { color: #6e7681; font-style: italic; }
.striprow .label .readout.spike { color: #f0883e; }
.striprow .label .scale { display: block; font-size: 10px; color: #6e7681; }
svg.strip { display: block; overflow: visible; }
svg.strip .gap { fill: #ffffff0a; }
.dim { color: #6e7681; }
svg.strip .base { stroke: #30363d; stroke-width: 1; }
svg.strip .ceiling { stroke: #f0883e55; stroke-dasharray: 2 3; }
svg.strip .build, .sparks .build { stroke: #8957e5; stroke-width: 1; stroke-dasharray: 3 3; }
svg.strip .series, .sparks .series { fill: none; stroke: #58a6ff; stroke-width: 1.6; stroke-linejoin: round; }
svg.strip .dot, .sparks .dot { fill: #58a6ff; }
svg.strip .caret, .sparks .caret { fill: #f0883e; }
svg.strip .cross { stroke: #e6edf3aa; stroke-width: 1; }
.hover { font: 12px ui-monospace, monospace; color: #c9d1d9; min-height: 18px; margin: 6px 0 4px 150px; }
.legend { font-size: 11px; color: #8b949e; margin: 6px 0 0 150px; }
.legend .sw { display: inline-block; width: 14px; height: 9px; vertical-align: middle; margin: 0 4px 0 10px; }
.legend .sw.gap { background: #ffffff12; border: 1px dashed #30363d; }
.legend .sw.caret { background: #f0883e; clip-path: polygon(50% 0, 100% 100%, 0 100%); }
.legend .sw.build { border-left: 2px dashed #8957e5; width: 2px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(330px, 1fr)); gap: 12px; }
.card { border: 1px solid #2d3540; border-radius: 8px; padding: 10px 12px; background: #161b22; }
.card .head { display: flex; gap: 8px; align-items: baseline; justify-content: space-between; }
.card .title { font-weight: 600; color: #e6edf3; }
.card .meta { font-size: 12px; color: #8b949e; margin: 2px 0 6px; }
.card .was { font: 13px ui-monospace, monospace; margin: 6px 0; color: #e6edf3; }
.card table { width: 100%; border-collapse: collapse; font-size: 12px; }
.card td { padding: 1px 4px; white-space: nowrap; }
.card td:first-child { white-space: normal; color: #9da7b3; }
.card td.num { text-align: right; font-family: ui-monospace, monospace; }
.card .actions { display: flex; gap: 8px; margin-top: 8px; }
.delta.better { color: #56d364; }
.delta.worse { color: #ff7b72; }
.delta.same, .delta.none { color: #8b949e; }
.sparks { display: flex; gap: 12px; margin: 6px 0; }
.spark { margin: 0; }
.spark figcaption { font-size: 10px; color: #8b949e; }
.spark svg { background: #0d1117; border: 1px solid #21262d; border-radius: 4px; }
.spark-none { font-size: 12px; color: #6e7681; margin: 6px 0; }
.settings section { margin-bottom: 18px; }
.settings h3 { font-size: 12px; text-transform: uppercase; letter-spacing: .05em; color: #8b949e; margin: 0 0 8px; }
.settings input[type="text"], .settings input[type="url"] { width: 340px; background: #0d1117; color: #e6edf3; border: 1px solid #30363d; border-radius: 6px; padding: 5px 8px; font: 13px ui-monospace, monospace; }
.settings label.level { display: flex; gap: 8px; align-items: baseline; padding: 4px 0; }
.settings .help { color: #8b949e; font-size: 12px; }
.settings .msg { font-size: 12px; margin-left: 8px; }
.settings .msg.ok { color: #56d364; }
.settings .msg.fail { color: #ff7b72; }
.settings dl { display: grid; grid-template-columns: 160px 1fr; gap: 3px 12px; margin: 0; font-size: 12px; }
.settings dt { color: #8b949e; }
.settings dd { margin: 0; font-family: ui-monospace, monospace; word-break: break-all; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
`;
