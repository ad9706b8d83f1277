/// The dashboard's script: polls the regions and beacons, follows the event stream (fetch-based
/// SSE so the bearer token travels in a header, with Last-Event-ID resume), and edits regions.
enum DashboardScript {
    static let source = #"""
"use strict";
const TOKEN_KEY = "regionkit.token";
const HISTORY_SECONDS = 300;
const state = {
  token: sessionStorage.getItem(TOKEN_KEY) || "",
  regions: [],
  beacons: [],
  scanners: [],            // GET /v1/scanners: each room's scanner, online or offline by its own word
  scannersTime: 0,         // its time: the daemon's clock
  history: new Map(),      // beacon key -> [{t, rssi, distance}]
  events: [],
  lastEventId: null,
  previousStates: new Map(),
  sinceListing: null,      // while a listing is on its way: the states shown in place meanwhile
  // The page of regions shown (GET /v1/regions?limit=): the cursors of the pages before it and
  // its own (null: the first), the find box's prefix, the next page's cursor, the total.
  regionPage: { cursors: [null], prefix: "", next: null, total: 0, preceding: 0 },
  tokenWaiters: [],
};

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
const $ = (selector) => document.querySelector(selector);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function headers(extra = {}) {
  const result = { ...extra };
  if (state.token) result["Authorization"] = "Bearer " + state.token;
  return result;
}

async function api(method, path, body) {
  const sent = state.token;
  const options = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) options.body = JSON.stringify(body);
  const response = await fetch(path, options);
  let json = null;
  const type = response.headers.get("Content-Type") || "";
  if (type.includes("json")) json = await response.json();
  if ((response.status === 401 || response.status === 403) && sent === state.token) askToken(json && json.detail, response.status === 403);
  return { status: response.status, json };
}

// ---- token -------------------------------------------------------------------------------
// A 403 always says why (a wrong token, or a public read refused to this page's host name); a 401
// before any token was given is just the question. The page's requests fail together (regions,
// beacons, the event stream): while the dialog is open, one that brings no reason leaves the
// reason another gave. A refusal of a request that carried another token than the page's now (sent
// before the user gave one, answered after) asks nothing: it is the old token's answer.
function askToken(message, refused = false) {
  const dialog = $("#token-dialog");
  const error = dialog.querySelector('[data-for="Authorization"]');
  const reason = (state.token || refused) && message ? message : "";
  if (reason || !dialog.open) error.textContent = reason;
  if (!dialog.open) dialog.showModal();
  $("#f-token").focus();
}
function waitForToken() { return new Promise((resolve) => state.tokenWaiters.push(resolve)); }
$("#token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  state.token = $("#f-token").value.trim();
  sessionStorage.setItem(TOKEN_KEY, state.token);
  $("#token-dialog").close();
  const waiters = state.tokenWaiters.splice(0);
  waiters.forEach((resolve) => resolve());
  refreshRegions(); refreshBeacons(); refreshCluster();
});
$("#token-button").addEventListener("click", () => askToken());

// ---- regions -----------------------------------------------------------------------------
function formatTime(seconds) {
  if (seconds === undefined || seconds === null) return "";
  return new Date(seconds * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}
function ago(seconds) {
  if (!seconds) return "";
  const delta = Math.max(0, Date.now() / 1000 - seconds);
  if (delta < 90) return Math.round(delta) + " s ago";
  if (delta < 5400) return Math.round(delta / 60) + " min ago";
  return Math.round(delta / 3600) + " h ago";
}
function describe(region) {
  if (region.kind === "beacon") {
    const scanner = region.scanner ? " · at " + region.scanner : "";
    if (region.format === "device") return "Device " + region.device + scanner;
    if (region.format === "eddystone-uid") {
      return "Eddystone " + region.namespace + (region.instance !== undefined ? " · instance " + region.instance : "") + scanner;
    }
    const [id2, id3] = region.format === "altbeacon" ? ["id2", "id3"] : ["major", "minor"];
    return (region.format === "altbeacon" ? "AltBeacon " : "") + region.uuid + (region.major !== undefined ? " · " + id2 + " " + region.major : "")
      + (region.minor !== undefined ? " · " + id3 + " " + region.minor : "") + scanner;
  }
  return region.latitude.toFixed(5) + ", " + region.longitude.toFixed(5) + " · r " + region.radius + " m";
}
// One request at a time: a poll while one is in flight is skipped (a slow daemon must not stack
// requests up); with `again`, it runs once more after it instead (a change announced by the
// event stream meanwhile is still fetched).
function oneAtATime(load, again) {
  let running = false, pending = false;
  return async function run() {
    if (running) { pending = pending || again; return; }
    running = true;
    try { do { pending = false; await load(); } while (pending); } finally { running = false; }
  };
}
// One page of REGION_PAGE regions, in the daemon's identifier order: a daemon of 100,000
// regions sent every one (30 MB) every 5 s, and the page built a row for each.
const REGION_PAGE = 200;
function regionPath() {
  const page = state.regionPage;
  const cursor = page.cursors[page.cursors.length - 1];
  let path = "/v1/regions?limit=" + REGION_PAGE;
  if (cursor !== null) path += "&cursor=" + encodeURIComponent(cursor);
  if (page.prefix) path += "&prefix=" + encodeURIComponent(page.prefix);
  return path;
}
async function loadRegions() {
  state.sinceListing = [];   // the states shown in place from now on (applyRegionEvent)
  const path = regionPath();
  let result;
  try { result = await api("GET", path); } catch { state.sinceListing = null; return; }
  const shownMeanwhile = state.sinceListing;
  state.sinceListing = null;
  if (result.status !== 200) return;
  // Paged, or turned to another page, while this one was on its way: that one is fetched next.
  if (path !== regionPath()) return;
  const page = state.regionPage;
  // Every region of a later page went away (deleted, or filtered out): back one page.
  if (result.json.regions.length === 0 && page.cursors.length > 1) { page.cursors.pop(); return loadRegions(); }
  page.next = result.json.nextCursor ?? null;
  page.total = result.json.total ?? result.json.regions.length;
  page.preceding = result.json.preceding ?? 0;
  state.regions = result.json.regions;
  // A state the stream showed while this listing was on its way may be newer than the listing.
  for (const event of shownMeanwhile) applyState(state.regions, event);
  // A cluster member: regions are configuration, so the editing controls go away, saying why.
  state.changesRefused = result.json.changesRefused || null;
  $("#new-region").hidden = !!state.changesRefused;
  $("#regions-readonly").hidden = !state.changesRefused;
  $("#regions-readonly").textContent = state.changesRefused ? "Read-only: " + state.changesRefused + "." : "";
  renderRegions();
  renderRegionFilter();
}
const refreshRegions = oneAtATime(loadRegions, true);
function renderRegions() {
  $("#regions").replaceChildren(...state.regions.map(regionRow));
  const page = state.regionPage;
  $("#regions-empty").hidden = state.regions.length > 0;
  $("#regions-empty").textContent = page.prefix ? "No region's identifier begins with “" + page.prefix + "”." : "No monitored region yet.";
  // Numbered by the daemon (the pages before may hold fewer than REGION_PAGE once regions went).
  const first = page.preceding + 1;
  $("#regions-range").textContent = state.regions.length === 0 ? "" :
    first.toLocaleString() + "–" + (first + state.regions.length - 1).toLocaleString() + " of " + page.total.toLocaleString();
  $("#regions-previous").disabled = page.cursors.length <= 1;
  $("#regions-next").disabled = page.next === null;
  // One page: no paging buttons.
  const single = page.cursors.length <= 1 && page.next === null;
  $("#regions-previous").hidden = single;
  $("#regions-next").hidden = single;
}
function turnRegionPage(forward) {
  const page = state.regionPage;
  if (forward && page.next !== null) page.cursors.push(page.next);
  else if (!forward && page.cursors.length > 1) page.cursors.pop();
  else return;
  page.next = null;
  renderRegions();
  refreshRegions();
}
$("#regions-next").addEventListener("click", () => turnRegionPage(true));
$("#regions-previous").addEventListener("click", () => turnRegionPage(false));
let findTimer = null;
$("#region-find").addEventListener("input", () => {
  clearTimeout(findTimer);
  findTimer = setTimeout(() => {
    const prefix = $("#region-find").value;
    if (prefix === state.regionPage.prefix) return;
    state.regionPage = { cursors: [null], prefix, next: null, total: 0, preceding: 0 };
    refreshRegions();
  }, 250);
});
// The daemon's order: the UTF-8 bytes of the NFC form, which is the order of the code points
// (JavaScript's < compares UTF-16 units, which differs past U+FFFF).
function codePoints(text) { return Array.from(text.normalize("NFC"), (c) => c.codePointAt(0)); }
function precedes(a, b) {
  const x = codePoints(a), y = codePoints(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] < y[i];
  return x.length < y.length;
}
// Whether region `id` belongs on the page shown: it begins with the prefix and sorts after the
// page's cursor and, when a page follows, not after its last region. A state of a region on
// another page changes nothing here (it listed this page again, for every event of every page).
function onShownPage(id) {
  const page = state.regionPage;
  const cursor = page.cursors[page.cursors.length - 1];
  if (page.prefix) {
    const p = codePoints(page.prefix), i = codePoints(id);
    if (p.length > i.length || p.some((c, k) => c !== i[k])) return false;
  }
  if (cursor !== null && !precedes(cursor, id)) return false;
  return page.next === null || !precedes(page.next, id);
}
// A state the event stream reports for a listed region is shown in place, in its row alone: no
// listing (a daemon of 10,000 regions sent 3 MB for every state, and the page rebuilt every row).
// A crossing's didEnter/didExit and the ranged counts change nothing the list shows (the
// didDetermineState that follows every crossing does). Anything else about a region (started,
// failed, stopped, redefined, or one not listed yet) lists them again: false.
function applyRegionEvent(event) {
  if (["didEnterRegion", "didExitRegion", "rangedBeaconCountChanged", "didFailRanging"].includes(event.type)) return true;
  // A region of another page (started, stopped, a state): this page's total catches up at the next poll.
  if (!onShownPage(event.region)) return true;
  if (event.type !== "didDetermineState" || !event.state) return false;
  const index = applyState(state.regions, event);
  if (index === OLDER) return true;
  const row = index < 0 ? null : $("#regions").children[index];
  if (!row || row.dataset.region !== event.region) return false;
  if (state.sinceListing) state.sinceListing.push(event);
  row.replaceWith(regionRow(state.regions[index]));
  return true;
}
// The region of `event` in `regions` takes its state (its `since` when the state changed: a
// requested state repeats it), its reason, and is no longer stale. Its index; -1 when the region
// is not listed or waits for its source (no state events then); OLDER when the event is older than
// the state listed (the stream's backlog at start, a listing read after the event), or as old
// with another state (which came last is not known: the next listing says).
const OLDER = -2;
function applyState(regions, event) {
  const index = regions.findIndex((region) => region.identifier === event.region);
  const current = regions[index];
  if (!current || current.waitingForSource) return -1;
  if (typeof current.since === "number" && (event.time < current.since || (event.time === current.since && event.state !== current.state))) return OLDER;
  const updated = Object.assign({}, current, { state: event.state, stale: false, lastReason: event.reason || undefined });
  if (current.state !== event.state) updated.since = event.time;
  regions[index] = updated;
  return index;
}
function regionRow(region) {
  const previous = state.previousStates.get(region.identifier);
  state.previousStates.set(region.identifier, region.state);
  const pill = el("span", { class: "pill " + region.state + (previous && previous !== region.state ? " flash" : ""), "data-state": region.state }, region.state);
  const remove = el("button", { class: "link danger", type: "button", "data-action": "delete" }, "Delete");
  remove.addEventListener("click", async () => {
    if (remove.dataset.armed !== "1") { remove.dataset.armed = "1"; remove.textContent = "Confirm delete"; return; }
    await api("DELETE", "/v1/regions/" + encodeURIComponent(region.identifier));
    refreshRegions();
  });
  const reason = region.lastReason ? " — " + region.lastReason : "";
  // Not monitored now: its source is away (its state is the one it carries over when the source is back).
  const waiting = region.waitingForSource ? el("span", { class: "tag waiting", title: region.waitingForSource }, "waiting for its source") : null;
  return el("li", { class: "region", "data-region": region.identifier },
    pill,
    el("span", { class: "name" }, region.identifier, el("span", { class: "tag" }, region.origin), waiting),
    state.changesRefused ? el("span", {}) :
      el("span", {}, el("button", { class: "link", type: "button", "data-action": "edit", onclick: () => editRegion(region) }, "Edit"), remove),
    el("span", { class: "detail" },
      (region.waitingForSource ? "not monitored: " + region.waitingForSource + (region.since ? " · state since " + formatTime(region.since) : "") :
        (region.since ? "since " + formatTime(region.since) : "state not determined yet") + reason),
      el("br"), describe(region)));
}
function renderRegionFilter() {
  const select = $("#filter-region");
  const chosen = select.value;
  const names = new Set(state.regions.map((r) => r.identifier));
  for (const event of state.events) if (event.region) names.add(event.region);
  select.replaceChildren(el("option", { value: "" }, "all regions"), ...[...names].sort().map((name) => el("option", { value: name }, name)));
  select.value = chosen;
}

// ---- region form -------------------------------------------------------------------------
const form = $("#region-form");
function setKind(kind) {
  form.querySelector(`input[name=kind][value=${kind}]`).checked = true;
  form.querySelector(".beacon-fields").hidden = kind !== "beacon";
  form.querySelector(".circular-fields").hidden = kind !== "circular";
  form.querySelector(".beacon-only").hidden = kind !== "beacon";
}
function setFormat(format) {
  form.format.value = format;
  form.querySelector(".id-fields").hidden = format === "eddystone-uid" || format === "device";
  form.querySelector(".eddystone-fields").hidden = format !== "eddystone-uid";
  form.querySelector(".device-fields").hidden = format !== "device";
}
form.format.addEventListener("change", () => setFormat(form.format.value));
form.querySelectorAll("input[name=kind]").forEach((radio) => radio.addEventListener("change", () => setKind(radio.value)));
function clearErrors() {
  form.querySelectorAll(".error").forEach((node) => (node.textContent = ""));
  form.querySelectorAll("input.invalid").forEach((node) => node.classList.remove("invalid"));
}
function openRegionForm(region) {
  form.reset();
  clearErrors();
  $("#region-form-title").textContent = region ? "Edit " + region.identifier : "Add region";
  form.elements.identifier.value = region ? region.identifier : "";
  form.elements.identifier.readOnly = !!region;
  setKind(region ? region.kind : "beacon");
  setFormat(region && region.format ? region.format : "ibeacon");
  if (region) {
    for (const name of ["uuid", "major", "minor", "namespace", "instance", "device", "scanner", "latitude", "longitude", "radius"]) form[name].value = region[name] ?? "";
    form.notifyOnEntry.checked = region.notifyOnEntry;
    form.notifyOnExit.checked = region.notifyOnExit;
    // Every field the API has is in the form: a PUT replaces the whole region.
    form.notifyEntryStateOnDisplay.checked = !!region.notifyEntryStateOnDisplay;
  }
  $("#region-dialog").showModal();
  (region ? (region.kind !== "beacon" ? form.uuid : region.format === "eddystone-uid" ? form.namespace : region.format === "device" ? form.device : form.uuid)
    : form.elements.identifier).focus();
}
// The form is filled from the region as stored now (the list on the page may be older: another
// client's change), since saving replaces the whole region.
async function editRegion(region) {
  let current = region;
  try {
    const result = await api("GET", "/v1/regions/" + encodeURIComponent(region.identifier));
    if (result.status === 200 && result.json) current = result.json;
  } catch {}
  openRegionForm(current);
}
$("#new-region").addEventListener("click", () => openRegionForm(null));
$("#region-cancel").addEventListener("click", () => $("#region-dialog").close());
function value(name) {
  const text = form[name].value.trim();
  if (text === "") return undefined;
  const number = Number(text);
  return ["major", "minor", "latitude", "longitude", "radius"].includes(name) && !Number.isNaN(number) ? number : text;
}
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearErrors();
  // An edit saves the region under its identifier as it is (one stored before white space at
  // an end was refused, "lobby ", was saved as "lobby": another region, or over it).
  const id = form.elements.identifier.readOnly ? form.elements.identifier.value : form.elements.identifier.value.trim();
  if (!id) {
    form.querySelector('.error[data-for="id"]').textContent = "give the region an identifier";
    form.elements.identifier.classList.add("invalid");
    return;
  }
  const kind = form.querySelector("input[name=kind]:checked").value;
  const body = { notifyOnEntry: form.notifyOnEntry.checked, notifyOnExit: form.notifyOnExit.checked };
  const format = form.format.value;
  if (kind === "beacon" && format !== "ibeacon") body.format = format;
  if (kind === "beacon") body.notifyEntryStateOnDisplay = form.notifyEntryStateOnDisplay.checked;
  const fields = kind !== "beacon" ? ["latitude", "longitude", "radius"]
    : format === "eddystone-uid" ? ["namespace", "instance", "scanner"] : format === "device" ? ["device", "scanner"] : ["uuid", "major", "minor", "scanner"];
  for (const name of fields) {
    const v = value(name);
    if (v !== undefined) body[name] = v;
  }
  const result = await api("PUT", "/v1/regions/" + encodeURIComponent(id), body);
  if (result.status === 200 || result.status === 201) {
    $("#region-dialog").close();
    // A region of another page is found for the user: the find box shows those beginning with it.
    if (!onShownPage(id)) {
      $("#region-find").value = id;
      state.regionPage = { cursors: [null], prefix: id, next: null, total: 0, preceding: 0 };
    }
    refreshRegions();
    return;
  }
  const problem = result.json || { detail: "HTTP " + result.status };
  const field = problem.field || "body";
  // A field of a section hidden for this kind or format: the message goes under the form.
  const named = form.querySelector(`.error[data-for="${field}"]`);
  const slot = named && !named.closest("[hidden]") ? named : form.querySelector('.error[data-for="body"]');
  slot.textContent = problem.detail;
  const input = form.elements[field === "id" ? "identifier" : field];
  if (input && input.classList) { input.classList.add("invalid"); input.focus(); }
});

// ---- beacons and rooms -------------------------------------------------------------------
const keyOf = (b) => b.id;
function beaconLabel(b) {
  if (b.format === "device") return [b.device, "device"];
  if (b.format === "eddystone-uid") return ["Eddystone " + b.instance, b.namespace];
  if (b.format === "altbeacon") return ["AltBeacon " + b.major + " · " + b.minor, b.uuid];
  return ["major " + b.major + " · minor " + b.minor, b.uuid];
}
const chipOf = (b) => b.format === "device" ? b.device : b.format === "eddystone-uid" ? b.instance : b.major + "." + b.minor;
// A beacon as logged events name it (its description: UUID:MAJOR:MINOR, altbeacon:UUID:MAJOR:MINOR,
// eddystone-uid:NAMESPACE:INSTANCE, device:ID), titled as its card is; anything else as it came.
function beaconName(description) {
  const text = String(description ?? "?"), parts = text.split(":"), prefix = parts[0].toLowerCase();
  if (prefix === "device" && parts.length > 1) return text.slice("device:".length);
  if (prefix === "eddystone-uid" && parts.length === 3) return beaconLabel({ format: "eddystone-uid", instance: parts[2] })[0];
  if (prefix === "altbeacon" && parts.length === 4) return beaconLabel({ format: "altbeacon", major: parts[2], minor: parts[3] })[0];
  if (parts.length === 3) return beaconLabel({ major: parts[1], minor: parts[2] })[0];
  return text;
}
// A didChangeNearestScanner event's line: the beacon, its room now (none: it left, Home
// Assistant's not_home) and the one before.
function roomChange(change) {
  const now = change.scanner ? "in " + change.scanner : "in no room";
  return beaconName(change.beacon) + " " + now + (change.previous ? " (was " + change.previous + ")" : "");
}
// The most recently heard this many are shown (a flood of new identities listed tens of
// thousands, 25 MB a poll); the note under the list says how many are heard.
const BEACON_LIMIT = 200;
async function loadBeacons() {
  let result;
  try { result = await api("GET", "/v1/beacons?limit=" + BEACON_LIMIT); } catch { return; }
  if (result.status !== 200) return;
  const now = result.json.time;
  state.beacons = result.json.beacons;
  const more = $("#beacons-more");
  const total = result.json.total ?? state.beacons.length;
  more.hidden = total <= state.beacons.length;
  more.textContent = "Showing the " + state.beacons.length + " most recently heard of " + total + " beacons heard now.";
  // A cluster member lists the beacons of its own partitions only.
  const scope = $("#beacons-scope");
  scope.hidden = !result.json.member;
  if (result.json.member) {
    const held = result.json.partitions || [];
    scope.textContent = "Cluster member " + result.json.member + ": beacons of its partitions " +
      (held.length ? held.join(", ") : "(none now)") + " of " + result.json.partitionCount + "; the other members show the rest.";
  }
  for (const beacon of state.beacons) {
    const key = keyOf(beacon);
    const series = state.history.get(key) || [];
    if (!series.length || series[series.length - 1].seen !== beacon.lastSeen) {
      series.push({ t: now, seen: beacon.lastSeen, rssi: beacon.filteredRSSI ?? beacon.rssi, distance: beacon.distance });
    }
    while (series.length && series[0].t < now - HISTORY_SECONDS) series.shift();
    state.history.set(key, series);
  }
  // The history of beacons no longer listed (not heard, or beyond the limit) is let go.
  const listed = new Set(state.beacons.map(keyOf));
  for (const key of [...state.history.keys()]) if (!listed.has(key)) state.history.delete(key);
  // The scanners (ESPresense rooms, gateways): whether each said it is offline, and how lively,
  // at the daemon's clock (the beacons' time is the engine's, which stands still while nothing
  // comes in). None shown when they cannot be read.
  state.scanners = [];
  try {
    const scanners = await api("GET", "/v1/scanners?limit=" + BEACON_LIMIT);
    if (scanners.status === 200) { state.scanners = scanners.json.scanners; state.scannersTime = scanners.json.time; }
  } catch {}
  renderBeacons(now);
  renderRooms(now);
}
const refreshBeacons = oneAtATime(loadBeacons, false);
// ---- cluster -----------------------------------------------------------------------------
// Shown by a cluster member only: one daemon answers 404, and is not asked again.
// One request at a time: a slow store must not stack them up.
let clusterPolling = true, clusterPending = false;
async function refreshCluster() {
  if (!clusterPolling || clusterPending) return;
  clusterPending = true;
  try { await showCluster(); } finally { clusterPending = false; }
}
async function showCluster() {
  let result;
  try { result = await api("GET", "/v1/cluster"); } catch { return; }
  const card = $("#cluster-card");
  if (result.status === 404) { clusterPolling = false; card.hidden = true; return; }
  if (result.status === 401 || result.status === 403) return;
  if (result.status !== 200 || !result.json) {
    // The last answer stays, marked as such.
    $("#cluster-members").classList.add("stale");
    $("#cluster-summary").textContent = "No answer from the shared store (HTTP " + result.status + "): the table is the last one read.";
    return;
  }
  $("#cluster-members").classList.remove("stale");
  const cluster = result.json;
  const outputs = cluster.outputs && cluster.outputs.live ? cluster.outputs.owner : null;
  card.hidden = false;
  $("#cluster-members tbody").replaceChildren(...cluster.members.map((m) => el("tr", { "data-member": m.member, class: m.live ? null : "gone" },
    el("td", {}, el("b", {}, m.member), m.member === cluster.member ? " (answering)" : "", m.member === outputs ? " · runs the outputs" : ""),
    el("td", { class: "muted small" }, m.instance || "–"),
    el("td", {}, m.live ? "live (" + m.expiresIn.toFixed(1) + " s left)" : "gone"),
    el("td", { "data-partitions": m.partitions.join(",") }, m.partitions.length ? m.partitions.join(", ") : "none"),
    el("td", {}, String(m.sightings)))));
  // Live members running other region definitions decide their regions by those (a rolling
  // restart under way, or a member left on an old configuration): named, with each digest.
  const live = cluster.members.filter((m) => m.live && m.regions);
  const definitions = new Set(live.map((m) => m.regions));
  const warning = $("#cluster-definitions");
  warning.hidden = definitions.size < 2;
  warning.textContent = definitions.size < 2 ? "" : "Members run different region definitions: " +
    live.map((m) => m.member + " (" + m.regions + ")").join(", ") +
    ". Each decides its partitions' regions by its own until every member runs one configuration.";
  const free = cluster.partitions.filter((p) => !p.live).map((p) => p.partition);
  $("#cluster-summary").textContent = cluster.partitionCount + " partitions, " +
    (free.length ? "free now: " + free.join(", ") : "every one held") + "; " +
    (outputs ? "the outputs (hooks, MQTT events) run on " + outputs : "nobody runs the outputs now") + ".";
}

function polyline(points, color) {
  if (points.length < 2) return null;
  const svgNS = "http://www.w3.org/2000/svg";
  const line = document.createElementNS(svgNS, "polyline");
  line.setAttribute("points", points.map(([x, y]) => x.toFixed(1) + "," + y.toFixed(1)).join(" "));
  line.setAttribute("fill", "none");
  line.setAttribute("stroke", color);
  line.setAttribute("stroke-width", "1.8");
  line.setAttribute("vector-effect", "non-scaling-stroke");
  return line;
}
function plot(series, now) {
  const svgNS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(svgNS, "svg");
  svg.setAttribute("viewBox", "0 0 300 90");
  svg.setAttribute("preserveAspectRatio", "none");
  for (const y of [22.5, 45, 67.5]) {
    const grid = document.createElementNS(svgNS, "line");
    grid.setAttribute("x1", 0); grid.setAttribute("x2", 300); grid.setAttribute("y1", y); grid.setAttribute("y2", y);
    grid.setAttribute("stroke", "var(--line)"); grid.setAttribute("stroke-width", "1");
    svg.append(grid);
  }
  // The window grows with the data, up to HISTORY_SECONDS.
  const span = Math.min(HISTORY_SECONDS, Math.max(30, series.length ? now - series[0].t : 0));
  const x = (t) => 300 - ((now - t) / span) * 300;
  const rssiY = (r) => 90 - ((Math.min(-30, Math.max(-105, r)) + 105) / 75) * 86 - 2;
  const distances = series.map((p) => p.distance).filter((d) => d !== undefined && d !== null);
  const maxDistance = Math.max(2, ...distances) * 1.1;
  const distanceY = (d) => 88 - (d / maxDistance) * 86;
  const rssi = polyline(series.filter((p) => p.rssi !== undefined && p.rssi !== null && p.rssi !== 0).map((p) => [x(p.t), rssiY(p.rssi)]), "#2f6fed");
  const distance = polyline(series.filter((p) => p.distance !== undefined && p.distance !== null).map((p) => [x(p.t), distanceY(p.distance)]), "#f59e0b");
  if (rssi) svg.append(rssi);
  if (distance) svg.append(distance);
  return { svg, maxDistance, span };
}
// Heard by several scanners, the raw RSSI is the latest sample of any of them: its scanner is
// named (" at Room202", the API's rssiScanner), so it is not read as the nearest one's, whose
// readings the filtered RSSI and the distance are (a beacon on one node's desk reads −17 there
// and −92 at the next room's). Heard by one scanner (the nearest, or one only ranging hears),
// it goes without saying.
function rssiSource(beacon) {
  if (beacon.rssi === undefined || beacon.rssiScanner === undefined) return "";
  const scanners = beacon.scanners || [];
  const nearest = beacon.nearestScanner;
  if (scanners.length < 2 && (nearest === undefined || nearest === beacon.rssiScanner)) return "";
  return " at " + beacon.rssiScanner;
}
function renderBeacons(now) {
  const container = $("#beacons");
  container.replaceChildren(...state.beacons.map((beacon) => {
    const series = state.history.get(keyOf(beacon)) || [];
    const { svg, maxDistance, span } = plot(series, now);
    const numbers = el("div", { class: "numbers" },
      el("span", {}, "RSSI ", el("b", {}, beacon.rssi ?? "–"), " dBm" + rssiSource(beacon)),
      el("span", {}, "filtered ", el("b", {}, beacon.filteredRSSI !== undefined ? beacon.filteredRSSI.toFixed(1) : "–")),
      el("span", {}, "distance ", el("b", {}, beacon.distance !== undefined ? beacon.distance.toFixed(2) + " m" : "–")),
      el("span", {}, el("b", {}, beacon.proximity)),
      el("span", {}, "room ", el("b", {}, beacon.nearestScanner || "–")),
      el("span", {}, "seen ", ago(beacon.lastSeen)));
    return el("div", { class: "beacon", "data-beacon": keyOf(beacon) },
      el("div", { class: "id" }, beaconLabel(beacon)[0], el("span", { class: "muted small" }, "  " + beaconLabel(beacon)[1])),
      numbers, svg,
      el("div", { class: "legend" },
        el("span", {}, el("span", { class: "swatch", style: "background:#2f6fed" }), "RSSI −105…−30 dBm"),
        el("span", {}, el("span", { class: "swatch", style: "background:#f59e0b" }), "distance 0…" + maxDistance.toFixed(1) + " m"),
        el("span", {}, "last " + (span >= 90 ? Math.round(span / 60) + " min" : Math.round(span) + " s"))));
  }));
  $("#beacons-empty").hidden = state.beacons.length > 0;
}
function renderRooms(now) {
  const rooms = new Map();
  for (const beacon of state.beacons) {
    if (now - beacon.lastSeen > 30) continue;
    const room = beacon.nearestScanner || "unassigned";
    if (!rooms.has(room)) rooms.set(room, []);
    rooms.get(room).push(beacon);
  }
  for (const beacon of state.beacons) for (const scanner of beacon.scanners) if (scanner.scanner && !rooms.has(scanner.scanner)) rooms.set(scanner.scanner, []);
  // Every scanner has its room, also one that hears nothing now or said it is offline.
  const scanners = new Map(state.scanners.map((s) => [s.name, s]));
  for (const name of scanners.keys()) if (!rooms.has(name)) rooms.set(name, []);
  const container = $("#rooms");
  if (!rooms.size) { container.replaceChildren(el("p", { class: "muted" }, "No beacon heard in the last 30 s.")); return; }
  container.replaceChildren(...[...rooms.entries()].sort().map(([room, beacons]) =>
    el("div", { class: "room", "data-room": room }, el("h3", {}, room, scannerBadge(scanners.get(room), state.scannersTime)),
      ...beacons.map((b) => el("span", { class: "chip" }, chipOf(b))))));
}
// A room's scanner: offline by its own word (its beacons are held for it, up to 120 s), silent
// (nothing reported for 30 s), or its sightings a second; nothing for one that only said it is
// online (a profile that keeps no scanner channels does not see its sightings).
function scannerBadge(scanner, now) {
  if (!scanner || (scanner.status !== "offline" && scanner.lastHeard === undefined)) return null;
  if (scanner.status === "offline") {
    return el("span", { class: "scanner offline", "data-scanner-status": "offline", title: "It said it is offline: its beacons are held for it" },
      "offline" + (scanner.offlineSince ? " " + ago(scanner.offlineSince) : ""));
  }
  if (now - scanner.lastHeard > 30) {
    return el("span", { class: "scanner silent", "data-scanner-status": "silent", title: "Nothing reported for 30 s or more" },
      "silent " + ago(scanner.lastHeard));
  }
  return el("span", { class: "scanner", "data-scanner-status": "online", title: "Sightings a second, every beacon together" },
    scanner.sightingsPerSecond.toFixed(1) + "/s");
}

// ---- timeline ----------------------------------------------------------------------------
const LABELS = {
  processStarted: ["▲", "Launched"], processStopped: ["▼", "Stopped"],
  didStartMonitoring: ["▶", "Monitoring started"], monitoringStopped: ["■", "Monitoring stopped"],
  monitoringDidFail: ["✕", "Monitoring failed"], didEnterRegion: ["→", "Entered"], didExitRegion: ["←", "Exited"],
  didDetermineState: ["●", "State determined"], rangedBeaconCountChanged: ["≋", "Ranged beacon count changed"],
  didChangeAuthorization: ["⚑", "Region kind availability changed"], didFailRanging: ["✕", "Ranging failed"],
  sourceStatusChanged: ["⚑", "Source status changed"], didChangeNearestScanner: ["⌂", "Room"],
};
const GROUPS = {
  crossings: ["didEnterRegion", "didExitRegion"],
  monitoring: ["didStartMonitoring", "monitoringStopped", "monitoringDidFail"],
  process: ["processStarted", "processStopped", "sourceStatusChanged"],
};
function matches(event) {
  const type = $("#filter-type").value, region = $("#filter-region").value;
  if (type && !(GROUPS[type] ? GROUPS[type].includes(event.type) : event.type === type)) return false;
  if (region && event.region !== region) return false;
  return true;
}
function renderTimeline() {
  const shown = state.events.filter(matches).slice(-300).reverse();
  $("#timeline").replaceChildren(...shown.map((event) => {
    const [icon, label] = LABELS[event.type] || ["•", event.type];
    const kind = event.type === "didEnterRegion" ? "enter" : event.type === "didExitRegion" ? "exit" : "";
    let text = label + (event.region ? " " + event.region : "");
    if (event.type === "didDetermineState" && event.state) text = (event.region || "") + " is " + event.state;
    if (event.type === "didChangeNearestScanner") text = roomChange(event.event || {});
    return el("li", { class: "event " + kind, "data-type": event.type, "data-id": event.id },
      el("time", { datetime: new Date(event.time * 1000).toISOString() }, formatTime(event.time)),
      el("span", { class: "icon" }, icon),
      el("span", {}, text, event.reason ? el("span", { class: "reason" }, " — " + event.reason) : null));
  }));
}
// The timeline is drawn once for the frames of one read from the stream, not once per frame: a
// backlog of 300 events drew up to 300 rows 300 times in one task (90,000 rows), and a busy
// daemon's stream redrew it for every event.
let timelineQueued = false;
function queueTimeline() {
  if (timelineQueued) return;
  timelineQueued = true;
  setTimeout(() => { timelineQueued = false; renderTimeline(); }, 0);
}
$("#filter-type").addEventListener("change", renderTimeline);
$("#filter-region").addEventListener("change", renderTimeline);

function setLive(live) {
  $("#live-dot").className = "dot " + (live ? "live" : "down");
  $("#live-text").textContent = live ? "live" : "reconnecting…";
}
let regionRefresh = null;
function handleFrame(frame) {
  let id = null, data = "";
  for (const line of frame.split("\n")) {
    if (line.startsWith("id:")) id = line.slice(3).trim();
    else if (line.startsWith("data:")) data += line.slice(5).trim();
  }
  if (id === null || !data) return;
  state.lastEventId = id;
  const event = JSON.parse(data);
  state.events.push(event);
  if (state.events.length > 2000) state.events.splice(0, state.events.length - 2000);
  queueTimeline();
  if (event.region && !applyRegionEvent(event) && !regionRefresh) regionRefresh = setTimeout(() => { regionRefresh = null; refreshRegions(); }, 150);
}
async function follow() {
  for (;;) {
    try {
      const extra = { Accept: "text/event-stream" };
      if (state.lastEventId !== null) extra["Last-Event-ID"] = state.lastEventId;
      const path = state.lastEventId === null ? "/v1/events/stream?backlog=300" : "/v1/events/stream";
      const sent = state.token;
      const response = await fetch(path, { headers: headers(extra) });
      if (response.status === 401 || response.status === 403) {
        let detail = null;
        try { detail = (await response.json()).detail; } catch { /* no problem document: no reason */ }
        if (sent !== state.token) continue;   // a token was given meanwhile: try it
        askToken(detail, response.status === 403);
        await waitForToken();
        continue;
      }
      if (response.status !== 200) throw new Error("HTTP " + response.status);
      setLive(true);
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let index;
        while ((index = buffer.indexOf("\n\n")) >= 0) {
          handleFrame(buffer.slice(0, index));
          buffer = buffer.slice(index + 2);
        }
      }
    } catch (error) { /* reconnect below */ }
    setLive(false);
    await sleep(2000);
  }
}

refreshRegions();
refreshBeacons();
refreshCluster();
setInterval(refreshBeacons, 1000);
setInterval(refreshCluster, 2000);
setInterval(refreshRegions, 5000);
follow();
"""#
}
