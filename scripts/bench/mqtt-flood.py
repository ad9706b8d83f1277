#!/usr/bin/env python3
"""A flood of ESPresense sightings of ever new iBeacon identities, published at QoS 0 over one
raw MQTT 3.1.1 connection (no client library): what a busy site's nodes send when a crowd of
phones and tags passes, faster than any event log can take their events.

    scripts/bench/mqtt-flood.py --port 1883 --count 200000 [--rate 0] [--rooms 2000]

Identity i is `iBeacon:<uuid>-<i // 65536>-<i % 65536>` heard in room `room-<i % rooms>`;
`--rate 0` sends as fast as the socket takes them. Prints how many were sent and how long it took.
"""
import argparse
import socket
import struct
import sys
import time

UUID = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"


def remaining_length(n):
    out = bytearray()
    while True:
        byte = n % 128
        n //= 128
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def utf8(text):
    data = text.encode()
    return struct.pack("!H", len(data)) + data


def packet(kind, body):
    return bytes([kind]) + remaining_length(len(body)) + body


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--count", type=int, default=200_000)
    parser.add_argument("--rate", type=float, default=0, help="messages per second; 0: as fast as possible")
    parser.add_argument("--rooms", type=int, default=2_000)
    parser.add_argument("--first", type=int, default=0, help="the first identity's index")
    arguments = parser.parse_args()
    if arguments.count < 0 or arguments.rooms < 1 or arguments.rate < 0 or not 0 <= arguments.first < 2**32:
        sys.exit("mqtt-flood: --count >= 0, --rooms >= 1, --rate >= 0, 0 <= --first < 2^32")

    connection = socket.create_connection((arguments.host, arguments.port), timeout=10)
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    # CONNECT: protocol name, level 4, clean session, keepalive 60 s, client id.
    connection.sendall(packet(0x10, utf8("MQTT") + bytes([4, 0x02]) + struct.pack("!H", 60) + utf8("mqtt-flood")))
    connack = connection.recv(4)
    if len(connack) < 4 or connack[0] != 0x20 or connack[3] != 0:
        sys.exit(f"mqtt-flood: the broker refused the connection: {connack!r}")

    started = time.monotonic()
    batch = bytearray()
    for offset in range(arguments.count):
        index = arguments.first + offset
        beacon = f"iBeacon:{UUID}-{(index // 65536) % 65536}-{index % 65536}"
        topic = f"espresense/devices/{beacon}/room-{index % arguments.rooms}"
        payload = f'{{"id":"{beacon}","rssi":-{60 + index % 30},"rssi@1m":-59,"distance":2.1}}'.encode()
        batch += packet(0x30, utf8(topic) + payload)
        if len(batch) >= 32_768 or offset == arguments.count - 1:
            connection.sendall(batch)
            batch.clear()
            if arguments.rate > 0:
                ahead = (offset + 1) / arguments.rate - (time.monotonic() - started)
                if ahead > 0:
                    time.sleep(ahead)
    elapsed = time.monotonic() - started
    connection.sendall(packet(0xE0, b""))   # DISCONNECT
    connection.close()
    print(f"sent {arguments.count} messages in {elapsed:.1f} s ({arguments.count / max(elapsed, 1e-9):,.0f}/s)")


if __name__ == "__main__":
    main()
