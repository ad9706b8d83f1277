#!/usr/bin/env python3
"""Parse the same advertising reports with the Python peers and print parses per second (JSON).

  peers_parse.py --reports reports.hci [--only beacontools|ibeacon-ble]

The file holds HCI LE Advertising Report events back to back (see generate.py). Reading the file,
slicing out each report's advertising data and building ibeacon-ble's input (a
home-assistant-bluetooth BluetoothServiceInfo, made with bluetooth-data-tools' GAP parser as Home
Assistant makes it) happen before and outside the timed loops. Timed: one loop per parser over
every report, single thread:
  beacontools   parse_packet(advertising_data)          -> IBeaconAdvertisement or not
  ibeacon-ble   iBeaconParser().parse(service_info)      -> iBeaconAdvertisement or None
Each loop counts the iBeacons found and sums major + minor so the results can be compared.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import time


def read_reports(path: str) -> list[tuple[bytes, bytes, int, int]]:
    """(address bytes as on the wire, advertising data, rssi, event type) per report."""
    with open(path, "rb") as handle:
        blob = handle.read()
    reports = []
    offset = 0
    index = 0
    size = len(blob)
    while offset < size:
        if offset + 2 > size:
            sys.exit(f"{path}: offset {offset}: event {index} truncated (header needs 2 bytes, {size - offset} left)")
        code, length = blob[offset], blob[offset + 1]
        end = offset + 2 + length
        if end > size:
            sys.exit(f"{path}: offset {offset}: event {index} declares {length} parameter bytes, {size - offset - 2} left")
        if code != 0x3E or length < 2 or blob[offset + 2] != 0x02 or blob[offset + 3] != 1:
            sys.exit(f"{path}: offset {offset}: event {index} is not an LE Advertising Report event with one report")
        event_type = blob[offset + 4]
        address = blob[offset + 6:offset + 12]
        data_length = blob[offset + 12]
        if 13 + data_length + 1 != length + 2:
            sys.exit(f"{path}: offset {offset}: event {index} Data_Length {data_length} does not fit its length {length}")
        data = blob[offset + 13:offset + 13 + data_length]
        rssi = int.from_bytes(blob[offset + 13 + data_length:end], "little", signed=True)
        reports.append((address, data, rssi, event_type))
        offset = end
        index += 1
    return reports


def timed(loop) -> tuple[float, int, int]:
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        found, checksum = loop()
        elapsed = time.perf_counter() - started
    finally:
        gc.enable()
    return elapsed, found, checksum


def bench_beacontools(reports) -> dict:
    import beacontools
    from beacontools import parse_packet, IBeaconAdvertisement

    packets = [data for _, data, _, _ in reports]

    def loop():
        found = checksum = 0
        for packet in packets:
            parsed = parse_packet(packet)
            if type(parsed) is IBeaconAdvertisement:
                found += 1
                checksum += parsed.major + parsed.minor
        return found, checksum

    elapsed, found, checksum = timed(loop)
    return {"peer": "beacontools", "version": beacontools_version(), "call": "parse_packet(data)",
            "reports": len(packets), "ibeacons": found, "checksum": checksum, "seconds": elapsed,
            "per_second": len(packets) / elapsed}


def beacontools_version() -> str:
    from importlib.metadata import version
    return version("beacontools")


def bench_ibeacon_ble(reports) -> dict:
    from importlib.metadata import version
    from bluetooth_data_tools import parse_advertisement_data_tuple
    from home_assistant_bluetooth import BluetoothServiceInfo
    from ibeacon_ble import iBeaconParser

    parser = iBeaconParser()
    asyncio.run(parser.async_setup())  # loads the OUI table its parse uses for the vendor name
    infos = []
    for address, data, rssi, _ in reports:
        text = ":".join(f"{b:02X}" for b in reversed(address))
        local_name, service_uuids, service_data, manufacturer_data, _tx = parse_advertisement_data_tuple((data,))
        infos.append(BluetoothServiceInfo(
            name=local_name or text, address=text, rssi=rssi, manufacturer_data=manufacturer_data,
            service_data=service_data, service_uuids=service_uuids, source="local"))

    def loop():
        found = checksum = 0
        parse = parser.parse
        for info in infos:
            parsed = parse(info)
            if parsed is not None:
                found += 1
                checksum += parsed.major + parsed.minor
        return found, checksum

    elapsed, found, checksum = timed(loop)
    return {"peer": "ibeacon-ble", "version": version("ibeacon-ble"), "call": "iBeaconParser().parse(service_info)",
            "reports": len(infos), "ibeacons": found, "checksum": checksum, "seconds": elapsed,
            "per_second": len(infos) / elapsed}


def main() -> None:
    arguments = argparse.ArgumentParser(description="Python iBeacon parsers on a reports file.")
    arguments.add_argument("--reports", required=True)
    arguments.add_argument("--only", choices=["beacontools", "ibeacon-ble"])
    args = arguments.parse_args()
    reports = read_reports(args.reports)
    if not reports:
        sys.exit(f"{args.reports}: no reports")
    if args.only in (None, "beacontools"):
        print(json.dumps(bench_beacontools(reports)), flush=True)
    if args.only in (None, "ibeacon-ble"):
        print(json.dumps(bench_ibeacon_ble(reports)), flush=True)


if __name__ == "__main__":
    main()
