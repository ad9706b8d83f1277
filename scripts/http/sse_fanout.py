#!/usr/bin/env python3
"""SSE fan-out load: N clients on /v1/events/stream of a running daemon (loopback only).

Each client counts the events it receives and the lag between an event's logged time and its
arrival. Prints one JSON object: clients, events per client (min/max), events/s delivered in all,
lag p50/p99/max in ms, and whether every client received every event (same id sequence).
While they listen, a writer asks for the state of REGION RATE times a second (each request logs a
didDetermineState event), with the token from $REGIONKIT_API_TOKEN.
Usage: sse_fanout.py PORT CLIENTS SECONDS [REGION RATE]   (the daemon must allow public reads)
"""
import json, os, socket, sys, threading, time, urllib.request

port, clients, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
results = [None] * clients
start_barrier = threading.Barrier(clients + 1)

def client(index):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /v1/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    s.settimeout(1.0)
    start_barrier.wait()
    buffer, ids, lags = b"", [], []
    end = time.time() + seconds
    while time.time() < end:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            continue
        if not chunk:
            break
        buffer += chunk
        now = time.time()
        while b"\ndata: " in buffer:
            i = buffer.index(b"\ndata: ")
            j = buffer.find(b"\n", i + 7)
            if j < 0:
                break
            data = json.loads(buffer[i + 7:j])
            ids.append(data["id"])
            lags.append((now - data["time"]) * 1000)
            buffer = buffer[j + 1:]
    s.close()
    results[index] = (ids, lags)

region = sys.argv[4] if len(sys.argv) > 4 else None
rate = float(sys.argv[5]) if len(sys.argv) > 5 else 0
requested = [0]

def writer():
    token = os.environ.get("REGIONKIT_API_TOKEN", "")
    end = time.time() + seconds - 1
    while time.time() < end:
        request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/regions/{region}/request-state", method="POST",
                                         headers={"Authorization": "Bearer " + token})
        urllib.request.urlopen(request).read()
        requested[0] += 1
        time.sleep(1 / rate)

threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
for t in threads: t.start()
start_barrier.wait()
t0 = time.time()
if region and rate > 0:
    w = threading.Thread(target=writer); w.start(); w.join()
for t in threads: t.join()
elapsed = time.time() - t0
# Compare the events every client saw during the common window (the first id all saw on).
first = max(r[0][0] for r in results if r[0]) if all(r[0] for r in results) else None
last = min(r[0][-1] for r in results if r[0]) if all(r[0] for r in results) else None
window = [[i for i in r[0] if first <= i <= last] for r in results] if first is not None else []
complete = bool(window) and all(w == list(range(first, last + 1)) for w in window)
lags = sorted(l for r in results for l in r[1])
pick = lambda q: round(lags[min(len(lags) - 1, int(q * len(lags)))], 1) if lags else None
total = sum(len(r[0]) for r in results)
print(json.dumps({"clients": clients, "seconds": round(elapsed, 1), "state_requests": requested[0],
                  "events_per_client_min": min(len(r[0]) for r in results), "events_per_client_max": max(len(r[0]) for r in results),
                  "events_delivered_per_s": round(total / elapsed, 1), "lag_ms_p50": pick(0.5), "lag_ms_p99": pick(0.99), "lag_ms_max": pick(1.0),
                  "every_client_got_every_event": complete}))
