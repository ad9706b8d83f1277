#!/usr/bin/env python3
"""Virtual BLE controllers for RegionKit's HCI tests (Bumble, one shared radio link).

Every positional spec, e.g. ``tcp-server:127.0.0.1:9000``, exposes one Bumble
software controller as H4 over TCP; a host (our Swift TCPTransport) connects to
it and talks HCI. All controllers share one ``LocalLink``: what one advertises,
the others can scan.

``--advertise-raw HEX[,HEX...]`` adds a controller advertising those bytes (in turn,
``--rotate-ms`` each). ``--advertise-ibeacon UUID:MAJOR:MINOR:POWER`` adds a controller that is NOT
exposed, driven in-process by a Bumble host (``bumble.device.Device``) that
advertises that iBeacon as legacy ADV_NONCONN_IND every ``--interval-ms``.

Patches applied to Bumble (checked against the pinned version, see setup.sh):
  * the legacy advertiser transmits for ADV_IND, ADV_SCAN_IND and ADV_NONCONN_IND
    (stock Bumble only transmits ADV_IND; iBeacons are non-connectable).
    Receivers still report such PDUs as ADV_IND (+ a SCAN_RSP copy): Bumble's
    link has no PDU type for them.
  * the legacy advertising interval is read in 0.625 ms units, as the spec says
    (stock Bumble reads milliseconds: 100 ms configured gave ~160 ms).
  * HCI_Reset stops legacy advertising, advertising sets and scanning, so state
    does not leak from one host connection to the next.
  * an unknown command gets Command Status "Unknown HCI Command" (0x01); stock
    Bumble sent nothing for opcodes it cannot parse, leaving the host waiting.
``--legacy-only`` clears the LE Extended Advertising feature bit on the exposed
controllers, so they deliver legacy LE Advertising Reports (subevent 0x02)
instead of extended ones (0x0D).

Beacon control: ``--beacons-paused`` sets the beacons up without advertising;
SIGUSR1 starts every beacon's advertising (prints ``BEACONS-STARTED``), SIGUSR2
stops it (prints ``BEACONS-STOPPED``), so a test can make a beacon appear and
disappear while its scanner stays connected.

``--scan-json`` adds an unexposed controller driven by an in-process Bumble host
that scans passively and prints one line ``ADV <json>`` per advertising report:
``{"t": monotonic seconds, "address", "address_type", "rssi", "tx_power",
"legacy", "connectable", "scannable", "scan_response", "data": hex}`` (data is
the report's own bytes, not Bumble's merge with the previous advertisement).
It is an independent receiver for testing an advertising host.

Prints one line ``READY <json>`` on stdout when every port listens and every
beacon advertises. Do not probe the ports by connecting: each serves one host.
SIGTERM or SIGINT closes the transports and exits 0.

Example:
  .venv/bin/python scripts/bumble/controllers.py \\
      tcp-server:127.0.0.1:9101 tcp-server:127.0.0.1:9102 \\
      --advertise-ibeacon E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2:-59
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
import uuid

import bumble
from bumble import controller as bumble_controller
from bumble import hci
from bumble.controller import Controller
from bumble.device import AdvertisingType, Device
from bumble.host import Host
from bumble.link import LocalLink
from bumble.transport import open_transport
from bumble.transport.common import AsyncPipeSink

TESTED_BUMBLE_VERSION = "0.0.236"


def apply_patches() -> None:
    """Patch Bumble's software controller; fail loudly if its internals moved."""
    legacy = bumble_controller.LegacyAdvertiser
    for name in ("send_advertising_data", "_on_timer_fired", "advertising_interval_min"):
        if not hasattr(legacy, name) and name not in getattr(legacy, "__dataclass_fields__", {}):
            raise SystemExit(f"controllers.py: bumble {bumble.__version__} has no LegacyAdvertiser.{name}; "
                             f"the patches were written for {TESTED_BUMBLE_VERSION}")
    for name in ("on_hci_reset_command", "on_hci_command", "_send_hci_command_status"):
        if not hasattr(Controller, name):
            raise SystemExit(f"controllers.py: Controller.{name} is gone in bumble {bumble.__version__}; update the patches")

    advertising_types = hci.HCI_LE_Set_Advertising_Parameters_Command.AdvertisingType
    transmitting = {
        int(advertising_types.ADV_IND),
        int(advertising_types.ADV_SCAN_IND),
        int(advertising_types.ADV_NONCONN_IND),
    }

    def send_advertising_data(self) -> None:
        if not self.enabled or int(self.advertising_type) not in transmitting:
            return
        # The link only carries AdvInd / AdvExtInd to scanners, so every legacy PDU travels as AdvInd.
        self.controller.send_advertising_pdu(
            bumble_controller.ll.AdvInd(advertiser_address=self.address, data=self.advertising_data)
        )

    def on_timer_fired(self) -> None:
        self.send_advertising_data()
        # Advertising_Interval_Min is in units of 0.625 ms (Core Vol 4 Part E 7.8.5).
        seconds = max(self.advertising_interval_min * 0.625 / 1000.0, 0.02)
        self.timer_handle = asyncio.get_running_loop().call_later(seconds, self._on_timer_fired)

    def on_hci_reset_command(self, _command):
        self.le_legacy_advertiser.stop()
        for advertising_set in self.advertising_sets.values():
            advertising_set.stop()
        self.advertising_sets.clear()
        self.le_scan_enable = False
        self.filter_duplicates = False
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    unsupported_fallback = Controller.on_hci_command

    def on_hci_command(self, command):
        # Stock Bumble answers an unknown opcode only if it parsed it as a "sync" command,
        # otherwise the host waits forever. A controller must answer Unknown HCI Command (0x01).
        result = unsupported_fallback(self, command)
        if isinstance(command, hci.HCI_SyncCommand):
            return result
        self._send_hci_command_status(hci.HCI_ErrorCode.UNKNOWN_HCI_COMMAND_ERROR, command.op_code)
        return None

    legacy.send_advertising_data = send_advertising_data
    legacy._on_timer_fired = on_timer_fired
    Controller.on_hci_reset_command = on_hci_reset_command
    Controller.on_hci_command = on_hci_command


def ibeacon_advertising_data(spec: str) -> bytes:
    """Flags AD + Apple manufacturer data for UUID:MAJOR:MINOR:POWER."""
    try:
        text, major, minor, power = spec.rsplit(":", 3)
        beacon_uuid = uuid.UUID(text)
        major_value, minor_value, power_value = int(major), int(minor), int(power)
    except ValueError as error:
        raise SystemExit(f"controllers.py: bad --advertise-ibeacon '{spec}' (want UUID:MAJOR:MINOR:POWER): {error}")
    if not (0 <= major_value <= 0xFFFF and 0 <= minor_value <= 0xFFFF and -128 <= power_value <= 127):
        raise SystemExit(f"controllers.py: bad --advertise-ibeacon '{spec}': major/minor 0...65535, power -128...127")
    payload = (
        bytes([0x4C, 0x00, 0x02, 0x15])
        + beacon_uuid.bytes
        + major_value.to_bytes(2, "big")
        + minor_value.to_bytes(2, "big")
        + power_value.to_bytes(1, "big", signed=True)
    )
    return bytes([0x02, 0x01, 0x06, len(payload) + 1, 0xFF]) + payload


def print_line(text: str) -> None:
    """One stdout line, flushed at once (the test harness reads them as they come)."""
    print(text, flush=True)


async def start_scanner(link: LocalLink) -> dict:
    """An unexposed controller + Bumble host scanning passively, printing ADV lines."""
    address = "D0:00:00:00:00:01"
    controller = Controller("scanner", link=link, public_address=address)
    device = Device(address=hci.Address(address), host=Host(controller, AsyncPipeSink(controller)))

    def on_advertisement(advertisement) -> None:
        print_line("ADV " + json.dumps({
            "t": round(asyncio.get_running_loop().time(), 6),
            "address": str(advertisement.address).split("/")[0],
            "address_type": int(advertisement.address.address_type),
            "rssi": advertisement.rssi,
            "tx_power": advertisement.tx_power,
            "legacy": bool(advertisement.is_legacy),
            "connectable": bool(advertisement.is_connectable),
            "scannable": bool(advertisement.is_scannable),
            "scan_response": bool(advertisement.is_scan_response),
            "data": bytes(advertisement.data_bytes).hex(),
        }))

    device.on("advertisement", on_advertisement)
    await device.power_on()
    await device.start_scanning(active=False, filter_duplicates=False, own_address_type=hci.OwnAddressType.PUBLIC)
    return {"address": address}


async def run(arguments: argparse.Namespace) -> int:
    apply_patches()
    link = LocalLink()
    transports = []
    exposed = []
    for index, spec in enumerate(arguments.specs):
        if not spec.startswith("tcp-server:127.") and not spec.startswith("tcp-server:localhost:"):
            raise SystemExit(f"controllers.py: '{spec}': only tcp-server on loopback is allowed")
        transport = await open_transport(spec)
        transports.append(transport)
        address = f"F0:00:00:00:00:{index + 1:02X}"
        controller = Controller(
            f"exposed{index}", host_source=transport.source, host_sink=transport.sink,
            link=link, public_address=address,
        )
        if arguments.legacy_only:
            controller.le_features &= ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
        exposed.append({"spec": spec, "address": address})

    beacons = []
    beacon_devices = []
    for index, spec in enumerate(arguments.advertise_ibeacon or []):
        address = f"C0:FF:EE:00:00:{index + 1:02X}"
        controller = Controller(f"beacon{index}", link=link, public_address=address)
        # A legacy-only advertiser makes the Bumble host use the legacy advertising commands.
        controller.le_features &= ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
        device = Device(address=hci.Address(address), host=Host(controller, AsyncPipeSink(controller)))
        await device.power_on()
        beacon_devices.append((device, ibeacon_advertising_data(spec)))
        beacons.append({"ibeacon": spec, "address": address, "interval_ms": arguments.interval_ms})

    # Raw beacons: advertising data given as hex (a test's own bytes, e.g. AltBeacon or Eddystone);
    # several frames separated by commas are sent in turn, switching every --rotate-ms (one
    # transmitter address interleaving e.g. Eddystone-UID and -TLM, as real beacons do).
    raw_frames = []
    for index, spec in enumerate(arguments.advertise_raw or []):
        address = f"C0:FF:EE:00:01:{index + 1:02X}"
        try:
            frames = [bytes.fromhex(part) for part in spec.split(",")]
        except ValueError as error:
            raise SystemExit(f"controllers.py: bad --advertise-raw '{spec}': {error}")
        if any(len(frame) > 31 for frame in frames):
            raise SystemExit(f"controllers.py: bad --advertise-raw '{spec}': legacy advertising data is at most 31 bytes")
        controller = Controller(f"raw{index}", link=link, public_address=address)
        controller.le_features &= ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
        device = Device(address=hci.Address(address), host=Host(controller, AsyncPipeSink(controller)))
        await device.power_on()
        beacon_devices.append((device, frames[0]))
        raw_frames.append((device, frames))
        beacons.append({"raw": spec, "address": address, "interval_ms": arguments.interval_ms})

    async def rotate() -> None:
        turn = 0
        while True:
            await asyncio.sleep(arguments.rotate_ms / 1000.0)
            turn += 1
            for device, frames in raw_frames:
                if len(frames) > 1:
                    await device.host.send_command(
                        hci.HCI_LE_Set_Advertising_Data_Command(advertising_data=frames[turn % len(frames)]))

    if any(len(frames) > 1 for _, frames in raw_frames):
        asyncio.ensure_future(rotate())

    async def start_beacons() -> None:
        for device, data in beacon_devices:
            await device.start_advertising(
                advertising_type=AdvertisingType.UNDIRECTED,  # ADV_NONCONN_IND
                own_address_type=hci.OwnAddressType.PUBLIC,
                advertising_data=data,
                advertising_interval_min=arguments.interval_ms,
                advertising_interval_max=arguments.interval_ms,
            )

    async def stop_beacons() -> None:
        for device, _ in beacon_devices:
            await device.stop_advertising()

    if not arguments.beacons_paused:
        await start_beacons()
    scanner = await start_scanner(link) if arguments.scan_json else None

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signal_number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signal_number, stop.set)

    def control(coroutine_function, done_line: str) -> None:
        async def act() -> None:
            try:
                await coroutine_function()
                print_line(done_line)
            except Exception as error:  # report, keep serving the other controllers
                print(f"controllers.py: {done_line}: {error}", file=sys.stderr, flush=True)
        asyncio.ensure_future(act())

    loop.add_signal_handler(signal.SIGUSR1, control, start_beacons, "BEACONS-STARTED")
    loop.add_signal_handler(signal.SIGUSR2, control, stop_beacons, "BEACONS-STOPPED")
    ready = {"bumble": bumble.__version__, "controllers": exposed, "beacons": beacons,
             "legacy_only": arguments.legacy_only, "beacons_paused": arguments.beacons_paused,
             "scanner": scanner}
    print("READY " + json.dumps(ready), flush=True)

    await stop.wait()
    for transport in transports:
        try:
            await transport.close()
        except Exception as error:  # closing must not hide the exit
            print(f"controllers.py: closing a transport: {error}", file=sys.stderr)
    print("STOPPED", flush=True)
    return 0


def main() -> int:
    # A launcher may start us with signals blocked: Swift's Foundation.Process on Linux passes on
    # the spawning thread's signal mask, and test runners' worker threads block most signals. The
    # SIGTERM/SIGINT/SIGUSR1/SIGUSR2 handlers below would then never run (SIGTERM degrading to the
    # caller's SIGKILL fallback), so unblock them first.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGUSR2})
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("specs", nargs="+", help="tcp-server:127.0.0.1:PORT, one per exposed controller")
    parser.add_argument("--legacy-only", action="store_true",
                        help="clear LE extended advertising on the exposed controllers (legacy reports)")
    parser.add_argument("--advertise-ibeacon", action="append", metavar="UUID:MAJOR:MINOR:POWER",
                        help="add an unexposed controller advertising this iBeacon (repeatable)")
    parser.add_argument("--advertise-raw", action="append", metavar="HEX[,HEX...]",
                        help="add an unexposed controller advertising these advertising data bytes, in turn (repeatable)")
    parser.add_argument("--rotate-ms", type=float, default=250.0, help="how long each --advertise-raw frame is sent (default 250)")
    parser.add_argument("--interval-ms", type=float, default=100.0, help="beacon advertising interval (default 100)")
    parser.add_argument("--beacons-paused", action="store_true",
                        help="set the beacons up without advertising; SIGUSR1 starts them, SIGUSR2 stops them")
    parser.add_argument("--scan-json", action="store_true",
                        help="add an in-process Bumble scanner printing 'ADV <json>' per advertising report")
    parser.add_argument("--log-level", default="WARNING")
    arguments = parser.parse_args()
    logging.basicConfig(level=arguments.log_level.upper(), stream=sys.stderr)
    return asyncio.run(run(arguments))


if __name__ == "__main__":
    sys.exit(main())
