#!/usr/bin/env python3
"""Writes the seed corpora under Fuzz/Corpus/<target>/ from the real fixtures (../shared/fixtures,
or $REGIONKIT_FIXTURES) and from hand-built byte-level frames (the HCI, btsnoop and MQTT formats,
for which there are no recorded fixtures). Seeds are small slices: the whole corpus stays a few MB.
Fuzz/Seeds holds the built-in scenarios (`regionkit scenarios show NAME`). Run from anywhere:
    python3 Fuzz/seed-corpus.py
Existing corpus files (including inputs libFuzzer added) are kept."""
import gzip, hashlib, json, os, struct, sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
fixtures = os.environ.get("REGIONKIT_FIXTURES", os.path.join(os.path.dirname(root), "shared", "fixtures"))
corpus = os.path.join(here, "Corpus")

def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    folder = os.path.join(corpus, target)
    os.makedirs(folder, exist_ok=True)
    name = "seed-" + hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)

def fixture(*parts):
    path = os.path.join(fixtures, *parts)
    if not os.path.exists(path):
        sys.exit(f"fixture missing: {path} (set REGIONKIT_FIXTURES)")
    with open(path, "rb") as f:
        return f.read()

def line_slices(data, lines_per_slice, count):
    lines = data.splitlines(keepends=True)
    step = max(1, len(lines) // count)
    for start in range(0, len(lines), step):
        yield b"".join(lines[start:start + lines_per_slice])

# --- Bluetooth byte-level frames (field by field) ---
UUID = bytes.fromhex("E2C56DB5DFFB48D2B060D0F5A71096E0")
def ibeacon_adv(major=1, minor=2, power=-59, name=None):
    data = bytes([0x02, 0x01, 0x06])                       # Flags: LE General Discoverable, BR/EDR not supported
    data += bytes([0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15])     # len 26, Manufacturer Specific, Apple, iBeacon type, length 21
    data += UUID + struct.pack(">HHb", major, minor, power) # proximity UUID, major, minor (big-endian), measured power
    if name:
        data += bytes([len(name) + 1, 0x09]) + name         # Complete Local Name
    return data

ADDRESS = bytes([0x11, 0x22, 0x33, 0x44, 0x55, 0x66])       # LSB first on the wire
def legacy_report(event_type=0x03, data=None, rssi=-60):
    data = ibeacon_adv() if data is None else data
    # Event_Type, Address_Type (public), Address, Data_Length, Data, RSSI
    return bytes([event_type, 0x00]) + ADDRESS + bytes([len(data)]) + data + struct.pack("b", rssi)

def legacy_event(reports):
    params = bytes([0x02, len(reports)]) + b"".join(reports)  # subevent LE Advertising Report, Num_Reports
    return bytes([0x3E, len(params)]) + params

def extended_report(event_type=0x0010, data=None, rssi=-60):
    data = ibeacon_adv() if data is None else data
    # Event_Type (2, LE), Address_Type, Address, Primary_PHY 1M, Secondary_PHY none, SID none,
    # TX_Power unavailable, RSSI, Periodic_Advertising_Interval 0, Direct_Address_Type, Direct_Address, Data_Length, Data
    return (struct.pack("<H", event_type) + bytes([0x01]) + ADDRESS + bytes([0x01, 0x00, 0xFF, 0x7F])
            + struct.pack("b", rssi) + struct.pack("<H", 0) + bytes([0x00]) + bytes(6) + bytes([len(data)]) + data)

def extended_event(reports):
    params = bytes([0x0D, len(reports)]) + b"".join(reports)  # subevent LE Extended Advertising Report, Num_Reports
    return bytes([0x3E, len(params)]) + params

COMMAND_COMPLETE_RESET = bytes([0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])   # Command Complete, 1 packet, HCI_Reset, success
COMMAND_STATUS = bytes([0x0F, 0x04, 0x00, 0x01, 0x0C, 0x20])           # Command Status success, LE Set Scan Enable
HARDWARE_ERROR = bytes([0x10, 0x01, 0x05])
DISCONNECTION = bytes([0x05, 0x04, 0x00, 0x40, 0x00, 0x13])
RESET_COMMAND = bytes([0x03, 0x0C, 0x00])                              # HCI_Reset (opcode LSB first), no parameters

events = [legacy_event([legacy_report()]),
          legacy_event([legacy_report(0x03), legacy_report(0x04, bytes([0x05, 0x09]) + b"desk", -70)]),
          extended_event([extended_report()]),
          extended_event([extended_report(0x0013), extended_report(0x001B, ibeacon_adv(3, 4, -65, b"tag"))]),
          COMMAND_COMPLETE_RESET, COMMAND_STATUS, HARDWARE_ERROR, DISCONNECTION]
for event in events:
    put("hci-event", event)
put("hci-event", RESET_COMMAND)
for event in events[:4]:
    # advertising-report: selector byte (bit 0: extended, bit 1: report-by-report layout), then the subevent's parameters
    extended = event[2] == 0x0D
    put("advertising-report", bytes([1 if extended else 0]) + event[3:])
    put("advertising-report", bytes([3 if extended else 2]) + event[3:])
h4 = b"".join(b"\x04" + e for e in events) + b"\x01" + RESET_COMMAND
put("h4", b"\x00" + h4)                       # chunk-size byte, then the H4 stream
put("h4", b"\x05" + h4[:40])
put("h4", b"\x01" + b"\x02" + bytes([0x01, 0x20, 0x04, 0x00, 0xAA, 0xBB, 0xCC, 0xDD]))  # ACL packet

for adv in [ibeacon_adv(), ibeacon_adv(7, 9, -70, b"kitchen"), ibeacon_adv() + bytes(5), bytes([0x02, 0x01, 0x06, 0x03, 0xFF, 0x4C, 0x00])]:
    put("ibeacon", adv)

def btsnoop(datalink, packets):
    out = b"btsnoop\x00" + struct.pack(">II", 1, datalink)   # identification, version 1, datalink (1001 HCI, 1002 H4)
    t = 0x00E03AB44A676000                                   # 2000-01-01 in microseconds since year 0
    for i, (flags, packet) in enumerate(packets):
        # original length, included length, flags (bit 0 received, bit 1 command/event), cumulative drops, timestamp
        out += struct.pack(">IIIIq", len(packet), len(packet), flags, 0, t + i * 100_000) + packet
    return out
h4_events = [(3, b"\x04" + e) for e in events[:4]]
put("btsnoop", btsnoop(1002, h4_events))
put("btsnoop", btsnoop(1002, [(2, b"\x01" + RESET_COMMAND), (3, b"\x04" + COMMAND_COMPLETE_RESET)] + h4_events))
put("btsnoop", btsnoop(1001, [(3, e) for e in events[:4]]))
put("btsnoop", btsnoop(1002, h4_events)[:-7])             # truncated last record

# --- MQTT 3.1.1 packets (fixed header: type<<4|flags, remaining length varint) ---
def mqtt(first, body):
    length, encoded = len(body), b""
    while True:
        byte = length % 128; length //= 128
        encoded += bytes([byte | (0x80 if length else 0)])
        if not length: break
    return bytes([first]) + encoded + body
def mstr(s): return struct.pack(">H", len(s)) + s
connack = mqtt(0x20, b"\x00\x00")                                   # session present 0, accepted
suback = mqtt(0x90, struct.pack(">H", 1) + b"\x00\x01\x80")         # packet id 1, granted QoS 0, 1, failure
publish0 = mqtt(0x30, mstr(b"espresense/devices/x/kitchen") + b'{"rssi":-60}')
publish1 = mqtt(0x32, mstr(b"regionkit/scanners/hall") + struct.pack(">H", 7) + b'{"v":1}')   # QoS 1 with packet id 7
puback, unsuback, pingresp = mqtt(0x40, struct.pack(">H", 7)), mqtt(0xB0, struct.pack(">H", 2)), mqtt(0xD0, b"")
connect = mqtt(0x10, mstr(b"MQTT") + bytes([4, 0x02]) + struct.pack(">H", 30) + mstr(b"regionkit"))
for first_byte in [0, 1]:
    put("mqtt-packet", bytes([first_byte]) + connack + suback + publish0 + publish1 + puback + unsuback + pingresp)
put("mqtt-packet", b"\x00" + connect)
put("mqtt-packet", b"\x00" + mqtt(0x30, mstr(b"t") + bytes(300)))

# --- sighting payloads: format byte (0 espresense, 1 theengs, 2 regionkit; +0x80 scanner override), topic, newline, payload ---
put("sighting-message", b"\x00espresense/devices/iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2/kitchen\n"
    b'{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-71.5,"rssi@1m":-59,"distance":2.1}')
put("sighting-message", b"\x80espresense/devices/iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2/kitchen\n"
    b'{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","rssi":-71}')
put("sighting-message", b"\x01home/TheengsGateway/BTtoMQTT/6087574C9BC2\n"
    b'{"id":"60:87:57:4C:9B:C2","mac_type":1,"rssi":-78,"manufacturerdata":"4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5","servicedata":[1,{"x":null}]}')
put("sighting-message", b"\x02regionkit/scanners/hall\n"
    b'{"v":1,"scanner":"hall","time":1700000000.5,"sightings":[{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":2,"rssi":-60,"power":-59,"dt":-0.25}]}')

# --- the scanners' status on the format's status filter (same target) ---
put("sighting-message", b"\x00espresense/rooms/kitchen/status\noffline")
put("sighting-message", b"\x01home/OpenMQTTGateway/LWT\nonline")
put("sighting-message", b"\x80espresense/rooms/kitchen/status\n Online\r\n")
put("sighting-message", b"\x02regionkit/scanners/Living%20Room/status\noffline")
put("sighting-message", b"\x02regionkit/scanners/K%c3%bcche/status\nonline")
put("sighting-message", b"\x02regionkit/scanners/100%/status\nonline")

# --- HTTP region bodies: path id, newline, JSON body ---
put("http-region-body", 'lobby\n{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 2, "notifyOnExit": false}')
put("http-region-body", 'home\n{"latitude": 48.8566, "longitude": 2.3522, "radius": 150, "notifyOnEntry": true}')
put("http-region-body", 'x\n{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "notifyEntryStateOnDisplay": true}')

# --- CLI specifiers ---
for spec in ["lobby:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2", "home:48.8566,2.3522,150", "tcp:127.0.0.1:4567",
             "serial:/dev/ttyUSB0@115200", "hci0", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "11:22:33:44:55:66",
             # beacon identities as logged events carry them (BeaconIdentity(description:))
             "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2", "altbeacon:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:65535:0",
             "eddystone-uid:8b0ca750e7a74e14bd99:0000000000a1"]:
    put("region-specifier", spec)

# --- engine programs: bytes read as operations (see EngineFuzz.swift) ---
import random
rng = random.Random(14)
for n in range(6):
    put("engine", bytes(rng.randrange(256) for _ in range(64 + 96 * n)))

# --- real fixtures ---
for name in ["bt451.log", "mtk-3301.log", "bu353-glonass.log", "nmea-fuzzy-cases.log", "sirfstarv-nmea.log",
             "ublox-neo-m9n-nmea.log", "nmea-rtk.log", "bundg_zeus_9.log", "ublox-zed-f9p-nmea.log"]:
    for piece in list(line_slices(fixture("gpsd", name), 12, 3)):
        put("nmea", piece)
for name in ["bt451.log.chk", "mtk-3301.log.chk", "nmea-fuzzy-cases.log.chk", "ublox-neo-m9n-nmea.log.chk", "sirfstarv-nmea.log.chk"]:
    for piece in list(line_slices(fixture("gpsd", name), 4, 3)):
        put("gpsd", piece)
put("gpsd", b'{"class":"VERSION","release":"3.25","rev":"3.25","proto_major":3,"proto_minor":15}\n'
    b'{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyACM0","activated":"2024-01-01T00:00:00.000Z"}]}\n'
    b'{"class":"WATCH","enable":true,"json":true}\n{"class":"ERROR","message":"unrecognized"}\n')

gpx = fixture("gpx", "Mojstrovka.gpx").decode()
head, _, rest = gpx.partition("<trkpt")
points = ["<trkpt" + p for p in rest.split("<trkpt")]
tail = "</trkseg></trk></gpx>\n"
for count in [1, 3, 8]:
    body = "".join(points[:count])
    body = body.split("</trkseg>")[0]
    put("gpx", head + body + tail)
put("gpx", '<?xml version="1.0"?><gpx version="1.1"><wpt lat="46.1" lon="13.7"><ele>1200</ele><time>2020-01-01T10:00:00Z</time><name>a</name></wpt>'
    '<rte><rtept lat="46.2" lon="13.8"/><rtept lat="46.3" lon="13.9"><hdop>1.5</hdop><speed>1.2</speed><course>90</course></rtept></rte></gpx>')

put("geojson", json.dumps({"type": "FeatureCollection", "features": [
    {"type": "Feature", "id": "home", "properties": {"radius": 150, "notifyOnExit": False}, "geometry": {"type": "Point", "coordinates": [2.3522, 48.8566]}},
    {"type": "Feature", "properties": {"identifier": "park"}, "geometry": {"type": "Polygon", "coordinates": [[[2.35, 48.85], [2.36, 48.85], [2.36, 48.86], [2.35, 48.85]]]}}]}))
put("geojson", json.dumps({"type": "Feature", "properties": {"identifier": "office", "radius": 40}, "geometry": {"type": "Point", "coordinates": [-122.4, 37.7]}}))

def gateway_objects(name, count, start=0):
    text = gzip.decompress(fixture("beacon-runs", name))
    objects, depth, begin, i = [], 0, None, 0
    while i < len(text) and len(objects) < start + count:
        c = text[i:i + 1]
        if c == b"{":
            if depth == 0: begin = i
            depth += 1
        elif c == b"}":
            depth -= 1
            if depth == 0: objects.append(text[begin:i + 1])
        i += 1
    return objects[start:]
for name in ["FourScannersBeacon5Run1-2015-03-13.json.gz", "TwoScannersRun1-2015-03-03.json.gz", "FourScannersRun1-2015-03-07.json.gz"]:
    objects = gateway_objects(name, 12)
    plain = b"\n".join(objects)
    put("gateway-json", b"\x07" + plain)                                 # chunk-size byte, then the recording
    put("gateway-gzip", b"\x20" + gzip.compress(plain, mtime=0))
    put("gateway-gzip", b"\x3f" + gzip.compress(plain[:400], mtime=0) + gzip.compress(plain[400:900], mtime=0))  # two members

for name in ["20210103-1026-A.csv", "20210105-1754-A.csv", "20210107-1123-A.csv"]:
    lines = fixture("rssi-distance", name).splitlines(keepends=True)
    put("distance-samples", b"".join(lines[:20]))
    put("distance-samples", b"time,rssi,distance\n" + b"".join(lines[5000:5015]))

put("distance-model", '{"format": "regionkit-distance-model", "version": 1, "reference_power_dbm": -60, "model": {"type": "linear", "intercept_m": 1}, "filter": {"type": "raw"}}')
put("distance-model", '{"format": "regionkit-distance-model", "version": 1, "reference_power_dbm": -59, "model": {"type": "linear", "intercept_m": 0.4, "slope_m_per_db": 0.12}, "filter": {"type": "median", "window_s": 5},'
    ' "calibration": {"files": ["a.csv"], "samples": 100, "reference_distance_m": 1, "median_abs_error_m": 0.5, "p90_abs_error_m": 1.2}}')

# --- AltBeacon, Eddystone, beacon layouts (issue 16) ---
# Identities from the recorded gateway runs (real UUID/major/minor/power), carried in the AltBeacon
# and Eddystone frame layouts; the codecs' byte-level test vectors (Tests/RegionKitCoreTests/BeaconFormatTests.swift).
def altbeacon_adv(id1, id2, id3, rssi=-59, company=0x0118, reserved=0x00):
    data = bytes([0x02, 0x01, 0x06])                            # Flags
    data += bytes([0x1B, 0xFF]) + struct.pack("<H", company)    # AD length 27, Manufacturer Specific Data, MFG ID (LE)
    data += bytes([0xBE, 0xAC]) + id1 + struct.pack(">HHbB", id2, id3, rssi, reserved)  # beacon code, id, reference RSSI, MFG RSVD
    return data
def eddystone_adv(frame):
    # Flags, Complete List of 16-bit Service UUIDs 0xFEAA, Service Data 0xFEAA + frame
    return bytes([0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE, len(frame) + 3, 0x16, 0xAA, 0xFE]) + frame
NAMESPACE, INSTANCE = bytes.fromhex("8B0CA750E7A74E14BD99"), bytes.fromhex("0000000000A1")
def uid_frame(ranging=-18, namespace=NAMESPACE, instance=INSTANCE, rfu=True):
    return bytes([0x00]) + struct.pack("b", ranging) + namespace + instance + (b"\0\0" if rfu else b"")
URL_FRAMES = [bytes([0x10, 0xEC, 0x01]) + b"example" + bytes([0x00]),     # https://www.example.com/
              bytes([0x10, 0x00, 0x02]) + b"goo.gl/S6zT6P",                 # http://goo.gl/S6zT6P
              bytes([0x10, 0xEC, 0x03, 0x72, 0x6B, 0x0B])]                  # https://rk.info
TLM_FRAME = bytes([0x20, 0x00, 0x0B, 0xB8, 0x18, 0x80, 0, 0, 0x01, 0x00, 0, 0, 0x02, 0x58])  # v0, 3000 mV, 24.5 C, 256 adv, 60 s
alt_kat = altbeacon_adv(bytes.fromhex("2F234454CF6D4A0FADF2F4911BA9FFA6"), 1, 2, -59, 0x0118, 0x5A)
recorded = [json.loads(o) for o in gateway_objects("TwoScannersRun1-2015-03-03.json.gz", 40)]
recorded = [o for o in recorded if len(o.get("uuid", "")) == 32][:6]
alt_real = [altbeacon_adv(bytes.fromhex(o["uuid"]), o["major"], o["minor"], max(-128, min(127, o.get("calibratedPower", o.get("power", -59)) or -59)))
            for o in recorded]
for frame in [alt_kat] + alt_real[:3]:
    put("altbeacon", frame)
put("altbeacon", alt_kat[:20])                                           # truncated structure
put("altbeacon", alt_kat[:3] + bytes([0x1A]) + alt_kat[4:-1])            # 25 bytes: wrong length
put("altbeacon", ibeacon_adv())                                           # iBeacon: wrong beacon code
put("altbeacon", alt_real[0] + eddystone_adv(TLM_FRAME)[3:])             # AltBeacon + TLM in one payload
put("altbeacon", eddystone_adv(uid_frame()) + alt_kat[3:])               # UID before the AltBeacon
for data in [eddystone_adv(uid_frame()), eddystone_adv(TLM_FRAME)] + [eddystone_adv(f) for f in URL_FRAMES]:
    put("eddystone", b"\x00" + data)                                     # shape 0: whole advertising data
for frame in [uid_frame(), uid_frame(rfu=False), TLM_FRAME] + URL_FRAMES:
    put("eddystone", b"\x01" + frame)                                    # shape 1: the frame after 0xFEAA
for o in recorded[:2]:                                                    # recorded ids as namespace + instance
    put("eddystone", b"\x01" + uid_frame(-20, bytes.fromhex(o["uuid"])[:10], bytes.fromhex(o["uuid"])[10:]))
put("eddystone", b"\x00" + eddystone_adv(URL_FRAMES[0]) + eddystone_adv(uid_frame())[3:])  # URL before UID
put("eddystone", b"\x00" + eddystone_adv(uid_frame())[:20])                             # truncated
put("eddystone", b"\x01" + bytes([0x20, 0x01]) + TLM_FRAME[2:])                          # encrypted TLM version
LAYOUTS = [("m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24", ibeacon_adv()),            # the Android Beacon Library's iBeacon
           ("m:0-3=4c000215,i:4-19,i:20-21,i:22-23,p:24-24", ibeacon_adv()),        # RegionKit's built-in iBeacon
           ("m:2-3=beac,i:4-19,i:20-21,i:22-23,p:24-24,d:25-25", alt_kat),          # AltBeacon
           ("s:0-1=feaa,m:2-2=00,p:3-3:-41,i:4-13,i:14-19", eddystone_adv(uid_frame())),
           ("s:0-1=feaa,m:2-2=10,p:3-3:-41,i:4-21v", eddystone_adv(URL_FRAMES[0])),
           ("x,s:0-1=feaa,m:2-2=20,d:3-3,d:4-5,d:6-7,d:8-11,d:12-15", eddystone_adv(TLM_FRAME)),
           ("s:0-1=fed8,m:2-2=00,p:3-3:-41,i:4-21v", eddystone_adv(URL_FRAMES[1])),  # URIBeacon (service UUID 0xFED8)
           ("m:2-3=abcd,i:4-7l,p:8-8,d:9-10l", bytes([0x0C, 0xFF, 0x59, 0x00, 0xAB, 0xCD, 1, 2, 3, 4, 0xC4, 0x34, 0x12]))]  # a vendor frame
for expression, data in LAYOUTS:
    put("beacon-layout", bytes([len(expression)]) + expression.encode() + data)
put("beacon-layout", bytes([len(LAYOUTS[2][0])]) + LAYOUTS[2][0].encode() + alt_real[0])

for name in sorted(os.listdir(os.path.join(here, "Seeds"))):
    with open(os.path.join(here, "Seeds", name), "rb") as f:
        data = f.read()
    if name.startswith("scenario-"):
        put("scenario", data)
with open(os.path.join(root, "contrib", "config.example.yaml"), "rb") as f:
    put("config", f.read())
put("config", '{"profile": "corelocation", "regions": [{"identifier": "home", "latitude": 48.85, "longitude": 2.35, "radius": 100}],'
    ' "sources": [{"gateway": {"file": "/data/run.json.gz", "speed": 1}}, {"gpsd": {"host": "127.0.0.1", "port": 2947}}]}')
put("config", "regions:\n  - {identifier: a, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1}\nsources:\n  - simulator: {scenario: museum}\n"
    "  - mqtt: {format: espresense}\nmqtt: {url: \"mqtt://127.0.0.1:1883\", site: home}\nhttp: {listen: \"127.0.0.1:8088\", public: true}\n")
print("corpus seeded under", corpus)
