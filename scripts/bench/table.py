#!/usr/bin/env python3
"""Prints scripts/bench-compare.sh's table from the result files of one run; exits 1 when the
sides disagree on what they found (iBeacons, containing pairs).

  table.py --dir RESULTS --command "..." --machine "..." --date "..."

RESULTS holds: rk-parse.json (regionkit bench parse --json), peers.jsonl (peers_parse.py),
rk-geofence.json (regionkit bench geofence --json), postgis.txt (postgis.sql result lines
`form|fixes|seconds|pairs|checksum`).
"""
from __future__ import annotations

import argparse
import json
import sys

POSTGIS_FORMS = {
    "per_fix": "PostGIS query per fix: max-radius ST_DWithin prefilter",
    "per_fix_box": "PostGIS query per fix: GiST on each region's bbox",
    "join_max": "PostGIS one join: max-radius ST_DWithin prefilter",
    "join_fixes": "PostGIS one join: regions probe GiST(fixes), own radius",
    "join_box": "PostGIS one join: GiST on each region's bbox",
}

# Issue 6's targets: RegionKit ingest / geofence engine against each peer.
TARGETS = {"beacontools": 500, "ibeacon-ble": 50, "postgis": 100}


def number(value: float) -> str:
    return f"{value:,.0f}"


def ratio(value: float) -> str:
    return f"{value:,.1f}x" if value < 100 else f"{value:,.0f}x"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--machine", required=True)
    parser.add_argument("--date", required=True)
    args = parser.parse_args()

    with open(f"{args.dir}/rk-parse.json") as handle:
        rk = json.load(handle)
    with open(f"{args.dir}/peers.jsonl") as handle:
        peers = [json.loads(line) for line in handle if line.strip()]
    with open(f"{args.dir}/rk-geofence.json") as handle:
        geo = json.load(handle)
    postgis: dict[str, list[dict]] = {}
    with open(f"{args.dir}/postgis.txt") as handle:
        for line in handle:
            fields = line.strip().split("|")
            if len(fields) != 5 or fields[0] not in POSTGIS_FORMS:
                continue
            form, fixes, seconds, pairs, checksum = fields
            postgis.setdefault(form, []).append({"fixes": int(fixes), "seconds": float(seconds),
                                                 "pairs": int(pairs), "checksum": int(checksum)})
    if not postgis:
        sys.exit(f"table.py: no PostGIS results in {args.dir}/postgis.txt")

    agree = True
    out = []
    out.append(f"RegionKit side by side — {args.date}")
    out.append(f"machine: {args.machine}")
    out.append(f"command: {args.command}")
    out.append("")
    out.append(f"1. iBeacon advertising reports: {rk['reports']:,} HCI LE Advertising Reports, {rk['distinct_beacons']:,} beacons, "
               f"{rk['ibeacons']:,} iBeacon; single thread each, input in memory")
    width = 58
    out.append(f"  {'':{width}} {'reports/s':>12}  {'RK parse ÷':>10}  {'RK ingest ÷':>11}  {'iBeacons':>9}  checksum")
    out.append(f"  {'RegionKit parse: HCI event + IBeaconFrame.decode':{width}} {number(rk['parses_per_second']):>12}  {'':>10}  {'':>11}  "
               f"{rk['ibeacons']:>9,}  {rk['checksum']}")
    out.append(f"  {'RegionKit ingest: + MonitoringEngine.ingest, ' + str(rk['regions']) + ' regions':{width}} "
               f"{number(rk['ingest_per_second']):>12}  {'':>10}  {'':>11}  {rk['observations']:>9,}"
               + (f"  (+ {rk['other_observations']:,} Eddystone/AltBeacon also ingested)" if rk.get("other_observations") else ""))
    goals = []
    for peer in peers:
        label = f"{peer['peer']} {peer['version']}: {peer['call']}"
        parse_ratio = rk["parses_per_second"] / peer["per_second"]
        ingest_ratio = rk["ingest_per_second"] / peer["per_second"]
        out.append(f"  {label:{width}} {number(peer['per_second']):>12}  {ratio(parse_ratio):>10}  {ratio(ingest_ratio):>11}  "
                   f"{peer['ibeacons']:>9,}  {peer['checksum']}")
        same = peer["ibeacons"] == rk["ibeacons"] == rk["observations"] and peer["checksum"] == rk["checksum"] and peer["reports"] == rk["reports"]
        agree &= same
        goals.append((f"ingest >= {TARGETS[peer['peer']]}x {peer['peer']}", ingest_ratio, TARGETS[peer["peer"]]))
    parsers_agree = all(p["ibeacons"] == rk["ibeacons"] and p["checksum"] == rk["checksum"] for p in peers) and rk["observations"] == rk["ibeacons"]
    out.append(f"  agreement: every parser found the same iBeacons (count and Σ major+minor): {'yes' if parsers_agree else 'NO'}"
               + (f"; {rk['malformed']} undecodable events" if rk["malformed"] else ""))
    out.append("")

    out.append(f"2. Geofencing: {geo['regions']:,} circular regions, {geo['fixes']:,} fixes; "
               f"{geo['pairs']:,} containing (fix, region) pairs, {geo['fixes_with_hits']:,} fixes in >= 1 region")
    out.append(f"  {'':{width + 10}} {'fixes/s':>12}  {'RK engine ÷':>11}  {'RK index ÷':>10}  {'pairs':>7}  agrees")
    out.append(f"  {'RegionKit engine: MonitoringEngine.ingest(fix), responsive':{width + 10}} {number(geo['engine_fixes_per_second']):>12}  "
               f"{'':>11}  {'':>10}  {'':>7}  first fix: {geo['first_fix_inside']} inside, index {geo['first_fix_index_inside']}")
    out.append(f"  {'RegionKit index: RegionIndex.forEachMatch':{width + 10}} {number(geo['index_fixes_per_second']):>12}  "
               f"{'':>11}  {'':>10}  {geo['pairs']:>7,}  checksum {geo['checksum']}")
    agree &= geo["first_fix_inside"] == geo["first_fix_index_inside"]
    best = None
    for form, label in POSTGIS_FORMS.items():
        runs = postgis.get(form)
        if not runs:
            continue
        fastest = min(runs, key=lambda run: run["seconds"])
        rate = fastest["fixes"] / fastest["seconds"]
        same = all(run["pairs"] == geo["pairs"] and run["checksum"] == geo["checksum"] and run["fixes"] == geo["fixes"] for run in runs)
        agree &= same
        if best is None or rate > best[1]:
            best = (form, rate)
        note = f" (best of {len(runs)})" if len(runs) > 1 else ""
        out.append(f"  {label + note:{width + 10}} {number(rate):>12}  "
                   f"{ratio(geo['engine_fixes_per_second'] / rate):>11}  {ratio(geo['index_fixes_per_second'] / rate):>10}  "
                   f"{fastest['pairs']:>7,}  {'yes' if same else 'NO'}")
    goals.append((f"geofence engine >= {TARGETS['postgis']}x PostGIS best ({best[0]})", geo["engine_fixes_per_second"] / best[1], TARGETS["postgis"]))
    out.append("")
    out.append("targets (issue 6):")
    for name, value, target in goals:
        out.append(f"  {name:{width}} {ratio(value):>10}  {'met' if value >= target else 'NOT met'}")
    out.append(f"  {'ingest >= 5,000,000 reports/s per core':{width}} {number(rk['ingest_per_second']):>10}  "
               f"{'met' if rk['ingest_per_second'] >= 5e6 else 'NOT met'}")
    out.append(f"  {'geofence engine >= 1,000,000 fixes/s per core (100k regions)':{width}} {number(geo['engine_fixes_per_second']):>10}  "
               f"{'met' if geo['engine_fixes_per_second'] >= 1e6 else 'NOT met'}")
    out.append("")
    out.append(f"results agree across all sides: {'yes' if agree else 'NO'}")
    print("\n".join(out))
    if not agree:
        sys.exit(1)


if __name__ == "__main__":
    main()
