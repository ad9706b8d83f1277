/// The dashboard's style sheet.
enum DashboardStyle {
    static let source = #"""
:root {
  --bg: #f4f5f7; --card: #fff; --ink: #1d2330; --muted: #6b7280; --line: #e5e7eb;
  --accent: #2f6fed; --inside: #16a34a; --outside: #9ca3af; --unknown: #d97706; --bad: #dc2626;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif;
  color: var(--ink); background: var(--bg);
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #0f1219; --card: #171b24; --ink: #e5e7eb; --muted: #9aa3b2; --line: #262c38; }
}
* { box-sizing: border-box; }
body { margin: 0; }
.top { display: flex; align-items: center; gap: 1rem; padding: .75rem 1.25rem; background: var(--card); border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 2; }
.brand { font-weight: 700; font-size: 1.1rem; letter-spacing: .01em; }
.logo { color: var(--accent); }
.status { margin-left: auto; display: flex; align-items: center; gap: .4rem; font-size: .85rem; color: var(--muted); }
.dot { width: .6rem; height: .6rem; border-radius: 50%; background: var(--outside); }
.dot.live { background: var(--inside); box-shadow: 0 0 0 3px color-mix(in srgb, var(--inside) 25%, transparent); }
.dot.down { background: var(--bad); }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(340px, 1fr)); gap: 1rem; padding: 1rem 1.25rem 2rem; max-width: 1400px; margin: 0 auto; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 1rem 1.1rem; min-width: 0; }
.card.wide { grid-column: 1 / -1; }
.card-head { display: flex; align-items: center; justify-content: space-between; gap: .75rem; flex-wrap: wrap; margin-bottom: .6rem; }
h2 { font-size: 1rem; margin: 0; }
.muted { color: var(--muted); }
.small { font-size: .8rem; }
button { font: inherit; border: 0; border-radius: 8px; padding: .45rem .85rem; background: var(--accent); color: #fff; cursor: pointer; }
button.ghost { background: transparent; color: var(--ink); border: 1px solid var(--line); }
button.link { background: none; color: var(--accent); padding: .1rem .3rem; }
button.link.danger { color: var(--bad); }
.regions { list-style: none; margin: 0; padding: 0; }
.pager { display: flex; align-items: center; gap: .5rem; flex-wrap: wrap; margin-bottom: .5rem; }
.pager input { flex: 1 1 12rem; min-width: 0; }
.pager #regions-range { margin-left: auto; font-variant-numeric: tabular-nums; }
.region { display: grid; grid-template-columns: auto 1fr auto; gap: .2rem .75rem; align-items: center; padding: .6rem 0; border-top: 1px solid var(--line); }
.region:first-child { border-top: 0; }
.region .name { font-weight: 600; }
.region .detail { grid-column: 2 / 4; font-size: .82rem; color: var(--muted); }
.pill { font-size: .75rem; font-weight: 600; padding: .15rem .55rem; border-radius: 999px; color: #fff; background: var(--outside); text-transform: uppercase; letter-spacing: .03em; }
.pill.inside { background: var(--inside); }
.pill.unknown { background: var(--unknown); }
.pill.flash { animation: flash 1.2s ease-out; }
@keyframes flash { from { box-shadow: 0 0 0 6px color-mix(in srgb, var(--accent) 40%, transparent); } to { box-shadow: none; } }
.tag { font-size: .7rem; color: var(--muted); border: 1px solid var(--line); border-radius: 6px; padding: 0 .3rem; margin-left: .35rem; }
.tag.waiting { color: var(--unknown); border-color: var(--unknown); }
.rooms { display: grid; grid-template-columns: repeat(auto-fill, minmax(140px, 1fr)); gap: .6rem; }
.room { border: 1px dashed var(--line); border-radius: 10px; padding: .6rem; min-height: 4.2rem; }
.room h3 { font-size: .85rem; margin: 0 0 .4rem; display: flex; justify-content: space-between; gap: .4rem; }
.scanner { font-size: .7rem; font-weight: 400; color: var(--muted); }
.scanner.offline { color: var(--bad); }
.scanner.silent { color: var(--unknown); }
.chip { display: inline-block; font-size: .75rem; background: color-mix(in srgb, var(--accent) 14%, transparent); color: var(--ink); border-radius: 6px; padding: .1rem .4rem; margin: 0 .25rem .25rem 0; }
.beacons { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: .8rem; }
.beacon { border: 1px solid var(--line); border-radius: 10px; padding: .6rem .7rem; }
.beacon .id { font-size: .8rem; font-weight: 600; word-break: break-all; }
.beacon .numbers { display: flex; gap: .9rem; font-size: .8rem; color: var(--muted); margin: .2rem 0 .35rem; flex-wrap: wrap; }
.beacon .numbers b { color: var(--ink); font-weight: 600; }
.beacon svg { width: 100%; height: 90px; display: block; }
.beacon .legend { font-size: .7rem; color: var(--muted); display: flex; gap: .8rem; }
table.cluster { width: 100%; border-collapse: collapse; font-size: .9rem; }
table.cluster th, table.cluster td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
table.cluster tr.gone td { color: var(--muted); }
table.cluster.stale td { color: var(--muted); font-style: italic; }
p.warning { color: var(--unknown); }
.swatch { display: inline-block; width: .7rem; height: .18rem; vertical-align: middle; margin-right: .25rem; }
.filters { display: flex; gap: .5rem; flex-wrap: wrap; }
select, input { font: inherit; color: var(--ink); background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .4rem .55rem; }
.timeline { list-style: none; margin: 0; padding: 0; max-height: 420px; overflow-y: auto; }
.event { display: grid; grid-template-columns: 5.6rem 1.2rem 1fr; gap: .5rem; padding: .42rem 0; border-top: 1px solid var(--line); font-size: .88rem; }
.event:first-child { border-top: 0; }
.event time { color: var(--muted); font-variant-numeric: tabular-nums; }
.event .reason { color: var(--muted); }
.event.enter .icon { color: var(--inside); }
.event.exit .icon { color: var(--bad); }
dialog { border: 1px solid var(--line); border-radius: 14px; padding: 1.2rem; width: min(440px, 94vw); background: var(--card); color: var(--ink); }
dialog h2 { margin-bottom: .9rem; }
dialog::backdrop { background: rgb(0 0 0 / .35); }
.field { display: flex; flex-direction: column; gap: .2rem; margin-bottom: .6rem; flex: 1; min-width: 0; }
.field label { font-size: .8rem; color: var(--muted); }
.field input.invalid { border-color: var(--bad); }
.row { display: flex; gap: .6rem; }
fieldset { border: 0; padding: 0; margin: .2rem 0 .7rem; display: flex; gap: 1rem; flex-wrap: wrap; font-size: .9rem; }
.error { color: var(--bad); font-size: .78rem; min-height: 0; }
.error:empty { display: none; }
.actions { display: flex; justify-content: flex-end; gap: .5rem; margin-top: .6rem; }
@media (max-width: 600px) {
  .grid { padding: .6rem; gap: .6rem; grid-template-columns: 1fr; }
  .top { padding: .6rem .8rem; }
  .event { grid-template-columns: 4.6rem 1rem 1fr; font-size: .82rem; }
  .row { flex-direction: column; gap: 0; }
}
"""#
}
