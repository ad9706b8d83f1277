/// The dashboard's HTML page (served at `/`; no build step, no external resources).
enum DashboardPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>RegionKit</title>
<link rel="stylesheet" href="/assets/app.css">
</head>
<body>
<header class="top">
  <div class="brand"><span class="logo" aria-hidden="true">◎</span> RegionKit</div>
  <div class="status"><span id="live-dot" class="dot"></span><span id="live-text">connecting…</span></div>
  <button id="token-button" class="ghost" type="button">Token</button>
</header>

<main class="grid">
  <section class="card" id="regions-card">
    <div class="card-head"><h2>Regions</h2><button id="new-region" type="button">Add region</button></div>
    <p id="regions-readonly" class="muted small" hidden></p>
    <div class="pager">
      <input id="region-find" type="search" placeholder="Find: identifier begins with…" aria-label="Find regions by the beginning of their identifier" autocomplete="off">
      <span id="regions-range" class="muted small"></span>
      <button id="regions-previous" class="ghost" type="button" disabled>‹ Previous</button>
      <button id="regions-next" class="ghost" type="button" disabled>Next ›</button>
    </div>
    <ul id="regions" class="regions" aria-live="polite"></ul>
    <p id="regions-empty" class="muted" hidden>No monitored region yet.</p>
  </section>

  <section class="card" id="rooms-card">
    <div class="card-head"><h2>Rooms</h2><span class="muted small">which beacon is nearest to which scanner, and how each scanner is</span></div>
    <div id="rooms" class="rooms"></div>
  </section>

  <section class="card wide" id="beacons-card">
    <div class="card-head"><h2>Beacons</h2><span class="muted small">filtered RSSI (dBm) and distance (m), up to the last 5 minutes</span></div>
    <p id="beacons-scope" class="muted small" hidden></p>
    <div id="beacons" class="beacons"></div>
    <p id="beacons-more" class="muted small" hidden></p>
    <p id="beacons-empty" class="muted" hidden>No beacon heard yet.</p>
  </section>

  <section class="card wide" id="cluster-card" hidden>
    <div class="card-head"><h2>Cluster</h2><span class="muted small">members, their partitions and who runs the outputs, from the shared store</span></div>
    <table id="cluster-members" class="cluster">
      <thead><tr><th>Member</th><th>Process</th><th>Heartbeat</th><th>Partitions</th><th>Sightings</th></tr></thead>
      <tbody></tbody>
    </table>
    <p id="cluster-summary" class="muted small"></p>
    <p id="cluster-definitions" class="warning small" hidden></p>
  </section>

  <section class="card wide" id="timeline-card">
    <div class="card-head">
      <h2>Timeline</h2>
      <div class="filters">
        <select id="filter-type" aria-label="Event type">
          <option value="">all events</option>
          <option value="crossings">enter / exit</option>
          <option value="didDetermineState">state determined</option>
          <option value="monitoring">monitoring started / stopped / failed</option>
          <option value="process">launched / stopped</option>
          <option value="rangedBeaconCountChanged">ranged count changed</option>
          <option value="didChangeNearestScanner">room changes</option>
        </select>
        <select id="filter-region" aria-label="Region"><option value="">all regions</option></select>
      </div>
    </div>
    <ol id="timeline" class="timeline"></ol>
  </section>
</main>

<dialog id="region-dialog">
  <form id="region-form" method="dialog" novalidate>
    <h2 id="region-form-title">Add region</h2>
    <div class="field"><label for="f-id">Identifier</label><input id="f-id" name="identifier" required autocomplete="off"><small class="error" data-for="id"></small></div>
    <fieldset class="kind">
      <label><input type="radio" name="kind" value="beacon" checked> Beacon</label>
      <label><input type="radio" name="kind" value="circular"> Circular</label>
    </fieldset>
    <div class="beacon-fields">
      <div class="field"><label for="f-format">Format</label><select id="f-format" name="format">
        <option value="ibeacon">iBeacon</option><option value="altbeacon">AltBeacon (id1 / id2 / id3)</option><option value="eddystone-uid">Eddystone-UID</option><option value="device">Device (phone, watch, tracker)</option>
      </select><small class="error" data-for="format"></small></div>
      <div class="id-fields">
        <div class="field"><label for="f-uuid">UUID</label><input id="f-uuid" name="uuid" placeholder="E2C56DB5-DFFB-48D2-B060-D0F5A71096E0" autocomplete="off"><small class="error" data-for="uuid"></small></div>
        <div class="row">
          <div class="field"><label for="f-major">Major</label><input id="f-major" name="major" inputmode="numeric"><small class="error" data-for="major"></small></div>
          <div class="field"><label for="f-minor">Minor</label><input id="f-minor" name="minor" inputmode="numeric"><small class="error" data-for="minor"></small></div>
        </div>
      </div>
      <div class="eddystone-fields" hidden>
        <div class="field"><label for="f-namespace">Namespace</label><input id="f-namespace" name="namespace" placeholder="20 hex digits" autocomplete="off"><small class="error" data-for="namespace"></small></div>
        <div class="field"><label for="f-instance">Instance (optional)</label><input id="f-instance" name="instance" placeholder="12 hex digits" autocomplete="off"><small class="error" data-for="instance"></small></div>
      </div>
      <div class="device-fields" hidden>
        <div class="field"><label for="f-device">Device</label><input id="f-device" name="device" placeholder="irk:… · an address · an ESPresense alias" autocomplete="off"><small class="error" data-for="device"></small></div>
      </div>
      <div class="field"><label for="f-scanner">Scanner (optional: hear only this one)</label><input id="f-scanner" name="scanner" autocomplete="off"><small class="error" data-for="scanner"></small></div>
    </div>
    <div class="circular-fields" hidden>
      <div class="row">
        <div class="field"><label for="f-latitude">Latitude</label><input id="f-latitude" name="latitude" inputmode="decimal"><small class="error" data-for="latitude"></small></div>
        <div class="field"><label for="f-longitude">Longitude</label><input id="f-longitude" name="longitude" inputmode="decimal"><small class="error" data-for="longitude"></small></div>
      </div>
      <div class="field"><label for="f-radius">Radius (m)</label><input id="f-radius" name="radius" inputmode="decimal"><small class="error" data-for="radius"></small></div>
    </div>
    <fieldset class="checks">
      <label><input type="checkbox" name="notifyOnEntry" checked> notify on entry</label>
      <label><input type="checkbox" name="notifyOnExit" checked> notify on exit</label>
      <label class="beacon-only"><input type="checkbox" name="notifyEntryStateOnDisplay"> state when the display turns on</label>
    </fieldset>
    <small class="error" data-for="body"></small>
    <div class="actions">
      <button type="button" class="ghost" id="region-cancel">Cancel</button>
      <button type="submit" id="region-save">Save</button>
    </div>
  </form>
</dialog>

<dialog id="token-dialog">
  <form id="token-form" method="dialog">
    <h2>API token</h2>
    <p class="muted small">The daemon's bearer token (http.tokenFile or REGIONKIT_API_TOKEN). Kept in this tab only.</p>
    <div class="field"><label for="f-token">Token</label><input id="f-token" name="token" type="password" autocomplete="off"><small class="error" data-for="Authorization"></small></div>
    <div class="actions"><button type="submit" id="token-save">Use token</button></div>
  </form>
</dialog>
<script src="/assets/app.js"></script>
</body>
</html>
"""#
}
