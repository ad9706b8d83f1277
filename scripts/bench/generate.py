#!/usr/bin/env python3
"""Seeded, reproducible inputs for scripts/bench-compare.sh (read by RegionKit and by the peers).

  generate.py reports --count 1000000 --seed 6 --out reports.hci
  generate.py geofence --regions 100000 --fixes 20000 --seed 6 --regions-out regions.csv --fixes-out fixes.csv

reports: a file of HCI LE Advertising Report events (Core spec Vol 4 Part E 7.7.65.2), one
report per event as controllers send them, written back to back with no other framing: event
code 0x3E, parameter length, subevent 0x02, Num_Reports 1, Event_Type, Address_Type, Address
(6 bytes, least significant first), Data_Length, Data, RSSI. The event's length byte frames it.

Mix (per report): 70% iBeacon from a fleet of --beacons beacons (5 proximity UUIDs; 80% with a
Flags AD, 20% without), and 30% adverts that are not iBeacons: Apple Find My / Nearby Info
(company 0x004C with another Apple type), Microsoft CDP (0x0006), Eddystone-UID service data,
connectable devices with a name and 16-bit service UUIDs, and scan responses carrying a name.
All are well formed, so every parser must find the same iBeacons.

geofence: regions.csv `id,latitude,longitude,radius` (centres uniform over a ~300 km x 300 km
box around 48.5 N 9 E, radii log-uniform 50 m - 2 km), fixes.csv `id,time,latitude,longitude,
accuracy` (vehicle tracks: 20 starts uniform in the box, ~15 m/s with a wandering heading, one
fix per second, 5 m noise). Coordinates are written with repr(), the shortest text that parses
back to the same double, so both sides read identical values.
"""
from __future__ import annotations

import argparse
import math
import random
import struct
import sys

EARTH_RADIUS = 6_371_008.8  # same sphere as RegionKitCore.Geodesy

# The iBeacon fleet's proximity UUIDs (random, fixed; none is on ibeacon-ble's banned list).
FLEET_UUIDS = [
    bytes.fromhex("E2C56DB5DFFB48D2B060D0F5A71096E0"),
    bytes.fromhex("B9407F30F5F8466EAFF925556B57FE6D"),
    bytes.fromhex("5A4BCFCE174E4BACA814092E77F6B7E5"),
    bytes.fromhex("74278BDAB64445208F0C720EAF059935"),
    bytes.fromhex("FDA50693A4E24FB1AFCFC6EB07647825"),
]

ADV_IND, ADV_NONCONN_IND, SCAN_RSP = 0x00, 0x03, 0x04


def event(event_type: int, address_type: int, address: bytes, data: bytes, rssi: int) -> bytes:
    assert len(address) == 6 and len(data) <= 31
    params = bytes([0x02, 0x01, event_type, address_type]) + address + bytes([len(data)]) + data + struct.pack("b", rssi)
    return bytes([0x3E, len(params)]) + params


def ibeacon_data(uuid: bytes, major: int, minor: int, power: int, with_flags: bool) -> bytes:
    msd = bytes([0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]) + uuid + struct.pack(">HHb", major, minor, power)
    return (bytes([0x02, 0x01, 0x06]) + msd) if with_flags else msd


def random_address(rng: random.Random) -> bytes:
    raw = bytearray(rng.getrandbits(8) for _ in range(6))
    raw[5] |= 0xC0  # static random address: two top bits of the most significant byte set (wire order: last byte)
    return bytes(raw)


def name_ad(name: str) -> bytes:
    encoded = name.encode()
    return bytes([len(encoded) + 1, 0x09]) + encoded


def generate_reports(count: int, seed: int, beacons: int, out: str) -> None:
    rng = random.Random(seed)
    fleet = []
    for index in range(beacons):
        uuid = FLEET_UUIDS[index % len(FLEET_UUIDS)]
        major = 1 + (index // len(FLEET_UUIDS)) // 50
        minor = 1 + index
        fleet.append((random_address(rng), uuid, major, minor, rng.randint(-65, -55)))
    others = [random_address(rng) for _ in range(max(10, beacons // 2))]
    written = ibeacons = 0
    with open(out, "wb") as handle:
        chunk = []
        for _ in range(count):
            roll = rng.random()
            rssi = rng.randint(-100, -35)
            if roll < 0.70:
                address, uuid, major, minor, power = fleet[rng.randrange(beacons)]
                data = ibeacon_data(uuid, major, minor, power, with_flags=rng.random() < 0.8)
                packet = event(ADV_NONCONN_IND, 0x01, address, data, rssi)
                ibeacons += 1
            else:
                address = others[rng.randrange(len(others))]
                kind = rng.random()
                if kind < 0.27:  # Apple Find My (offline finding), 31 bytes
                    data = bytes([0x1E, 0xFF, 0x4C, 0x00, 0x12, 0x19]) + bytes(rng.getrandbits(8) for _ in range(25))
                    packet = event(ADV_NONCONN_IND, 0x01, address, data, rssi)
                elif kind < 0.40:  # Apple Nearby Info
                    data = bytes([0x02, 0x01, 0x1A, 0x0A, 0xFF, 0x4C, 0x00, 0x10, 0x05]) + bytes(rng.getrandbits(8) for _ in range(5))
                    packet = event(ADV_IND, 0x01, address, data, rssi)
                elif kind < 0.60:  # Microsoft CDP beacon
                    data = bytes([0x1E, 0xFF, 0x06, 0x00, 0x01, 0x09, 0x20, 0x02]) + bytes(rng.getrandbits(8) for _ in range(23))
                    packet = event(ADV_NONCONN_IND, 0x01, address, data, rssi)
                elif kind < 0.75:  # Eddystone-UID
                    data = (bytes([0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE, 0x17, 0x16, 0xAA, 0xFE, 0x00, 0xEB])
                            + bytes(rng.getrandbits(8) for _ in range(16)) + bytes(2))
                    packet = event(ADV_NONCONN_IND, 0x01, address, data, rssi)
                elif kind < 0.90:  # connectable sensor: flags, Battery Service UUID, name
                    data = bytes([0x02, 0x01, 0x06, 0x03, 0x03, 0x0F, 0x18]) + name_ad(f"Sensor-{rng.randrange(10000):04d}")
                    packet = event(ADV_IND, 0x00, address, data, rssi)
                else:  # scan response carrying a name
                    data = name_ad(f"Room {rng.randrange(1000):03d} display")
                    packet = event(SCAN_RSP, 0x01, address, data, rssi)
            chunk.append(packet)
            written += 1
            if len(chunk) >= 65536:
                handle.write(b"".join(chunk))
                chunk.clear()
        handle.write(b"".join(chunk))
    print(f"generated {written} advertising reports ({ibeacons} iBeacon, {written - ibeacons} other) "
          f"from {beacons} beacons, seed {seed} -> {out}", file=sys.stderr)


def destination(lat: float, lon: float, distance: float, bearing: float) -> tuple[float, float]:
    """Point `distance` metres from (lat, lon) on `bearing` degrees, on the Geodesy sphere."""
    delta = distance / EARTH_RADIUS
    theta = math.radians(bearing)
    phi1, lambda1 = math.radians(lat), math.radians(lon)
    phi2 = math.asin(math.sin(phi1) * math.cos(delta) + math.cos(phi1) * math.sin(delta) * math.cos(theta))
    lambda2 = lambda1 + math.atan2(math.sin(theta) * math.sin(delta) * math.cos(phi1),
                                   math.cos(delta) - math.sin(phi1) * math.sin(phi2))
    return math.degrees(phi2), (math.degrees(lambda2) + 540) % 360 - 180


def generate_geofence(regions: int, fixes: int, seed: int, regions_out: str, fixes_out: str) -> None:
    rng = random.Random(seed)
    lat_lo, lat_hi, lon_lo, lon_hi = 47.15, 49.85, 7.0, 11.0  # ~300 km x 295 km
    with open(regions_out, "w") as handle:
        handle.write("id,latitude,longitude,radius\n")
        for index in range(1, regions + 1):
            lat = rng.uniform(lat_lo, lat_hi)
            lon = rng.uniform(lon_lo, lon_hi)
            radius = math.exp(rng.uniform(math.log(50.0), math.log(2_000.0)))
            handle.write(f"{index},{lat!r},{lon!r},{radius!r}\n")
    tracks = 20
    per_track = -(-fixes // tracks)
    written = 0
    with open(fixes_out, "w") as handle:
        handle.write("id,time,latitude,longitude,accuracy\n")
        time = 0
        for _ in range(tracks):
            lat, lon = rng.uniform(lat_lo, lat_hi), rng.uniform(lon_lo, lon_hi)
            heading = rng.uniform(0, 360)
            for _ in range(per_track):
                if written == fixes:
                    break
                heading += rng.uniform(-15, 15)
                lat, lon = destination(lat, lon, rng.uniform(10, 20), heading)
                if not (lat_lo <= lat <= lat_hi and lon_lo <= lon <= lon_hi):  # turn back at the box edge
                    heading += 180
                noisy = destination(lat, lon, rng.uniform(0, 5), rng.uniform(0, 360))
                time += 1
                written += 1
                handle.write(f"{written},{time},{noisy[0]!r},{noisy[1]!r},10\n")
    print(f"generated {regions} regions and {written} fixes, seed {seed} -> {regions_out}, {fixes_out}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    reports = sub.add_parser("reports")
    reports.add_argument("--count", type=int, required=True)
    reports.add_argument("--beacons", type=int, default=1000)
    reports.add_argument("--seed", type=int, default=6)
    reports.add_argument("--out", required=True)
    geofence = sub.add_parser("geofence")
    geofence.add_argument("--regions", type=int, required=True)
    geofence.add_argument("--fixes", type=int, required=True)
    geofence.add_argument("--seed", type=int, default=6)
    geofence.add_argument("--regions-out", required=True)
    geofence.add_argument("--fixes-out", required=True)
    args = parser.parse_args()
    if args.what == "reports":
        if args.count <= 0 or args.beacons <= 0:
            parser.error("--count and --beacons must be > 0")
        generate_reports(args.count, args.seed, args.beacons, args.out)
    else:
        if args.regions <= 0 or args.fixes <= 0:
            parser.error("--regions and --fixes must be > 0")
        generate_geofence(args.regions, args.fixes, args.seed, args.regions_out, args.fixes_out)


if __name__ == "__main__":
    main()
