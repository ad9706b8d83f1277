/// The OpenAPI 3.1 description of the HTTP API, served at `/openapi.yaml`.
import Foundation

enum OpenAPIDocument {
    /// The document with the running daemon's limits filled in.
    static func yaml(maximumRadius: Double) -> String {
        template.replacingOccurrences(of: "MAXIMUM_RADIUS", with: "\(maximumRadius)")
            .replacingOccurrences(of: "EVENT_TYPES", with: EventFilter.types.joined(separator: ", "))
    }

    static let template = #"""
openapi: 3.1.0
info:
  title: RegionKit daemon API
  version: "1.0"
  description: |
    Regions, events, beacons and sources of a running `regionkit run`. Every write needs
    `Authorization: Bearer TOKEN`; reads need it too unless the daemon's `http.public` is true,
    and then a read without it is served only when `Host` is an IP address, `localhost` or a name
    in `http.allowedHosts` (else 403 with `field: Host`).
    Errors are `application/problem+json` with the offending `field`.

    In cluster mode (`regionkit run` with a `cluster:` block) every member serves this API from
    the shared PostgreSQL store, so any member answers alike: regions with their merged states
    (the union of the partitions' contributions), the shared event log and its stream (events
    caused by any member). Regions are configuration there: `PUT` and `DELETE /v1/regions/{id}`
    are refused with 405 (`Allow: GET`), `GET /v1/regions` says why in `changesRefused`, and
    `request-state` answers the stored merged state (200, no event). `/v1/beacons` lists the
    beacons of the partitions the answering member runs (named in `member` and `partitions`), and
    `/v1/scanners` the scanners as those partitions know them.
servers:
  - url: http://127.0.0.1:8080
security:
  - bearer: []
paths:
  /v1/regions:
    get:
      operationId: listRegions
      summary: Regions with their live state, and those waiting for their source (waitingForSource); paged on request
      description: |
        Without `limit`, `cursor` or `prefix`: every region, the monitored ones in registration
        order, then those waiting for their source. With any of them: one page, in identifier
        order (the UTF-8 bytes of the NFC form: Unicode scalar order, byte order for ASCII), with
        `nextCursor` (pass it as `cursor` for the next page; null on the last), `total` and
        `preceding` (the regions of the pages before: the first listed is number `preceding + 1`).
        `cursor` and `prefix` are form-encoded: `+` is a space, a literal plus is `%2B`.
      parameters:
        - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 10000, default: 100}, description: "Regions a page (the default when only cursor or prefix is given)"}
        - {name: cursor, in: query, schema: {type: string, minLength: 1, pattern: "^[^\\x00]+$"}, description: "The previous page's nextCursor: regions whose identifier sorts after it"}
        - {name: prefix, in: query, schema: {type: string, minLength: 1, pattern: "^[^\\x00]+$"}, description: "Only regions whose identifier begins with it (NFC, bytewise; total counts them)"}
      responses:
        "200":
          description: The regions, or one page of them
          content:
            application/json:
              schema:
                type: object
                required: [regions]
                additionalProperties: false
                properties:
                  regions: {type: array, items: {$ref: "#/components/schemas/Region"}}
                  changesRefused: {type: string, description: "Cluster mode only: why PUT and DELETE are refused (regions are configuration)"}
                  nextCursor: {type: [string, "null"], description: "A page only: the cursor of the next page, null on the last"}
                  total: {type: integer, minimum: 0, description: "A page only: the regions listed on all pages (with the prefix, if any)"}
                  preceding: {type: integer, minimum: 0, description: "A page only: the regions (with the prefix) that sort at or before the cursor"}
        "400": {$ref: "#/components/responses/Problem"}
        "401": {$ref: "#/components/responses/Problem"}
        "403": {$ref: "#/components/responses/Problem"}
  /v1/regions/{id}:
    parameters:
      - {name: id, in: path, required: true, schema: {type: string, minLength: 1}}
    get:
      operationId: getRegion
      summary: One region, its state since when and the last evidence
      responses:
        "200": {description: The region, content: {application/json: {schema: {$ref: "#/components/schemas/Region"}}}}
        "400": {$ref: "#/components/responses/Problem"}
        "401": {$ref: "#/components/responses/Problem"}
        "403": {$ref: "#/components/responses/Problem"}
        "404": {$ref: "#/components/responses/Problem"}
    put:
      operationId: putRegion
      summary: Create or replace a region (replacing restarts monitoring); durable across restarts
      description: During an outage of the source of its kind the region is saved and answered with waitingForSource; it is monitored when the source is back. 409 when the daemon cannot monitor it (no source of its kind is configured or its use is denied, the region limit counted with the regions waiting for their source, an outage when the daemon's automation has no retry).
      parameters:
        - name: id
          in: path
          required: true
          description: "A new region's identifier: no control character, no bidirectional override or isolate, no white space or invisible character (U+FEFF, U+200B…) at its start or end, not . or .., at most 256 characters (counted in NFC)"
          schema: {type: string, minLength: 1, maxLength: 256, pattern: "^(?!\\.\\.?(?![\\s\\S]))[^\\x00-\\x1f\\x7f-\\x9f\\u202a-\\u202e\\u2066-\\u2069\\x20\\xa0\\xad\\u034f\\u061c\\u115f\\u1160\\u1680\\u17b4\\u17b5\\u180e\\u2000-\\u200f\\u2028\\u2029\\u202f\\u205f-\\u206f\\u3000\\u3164\\ufeff\\uffa0\\ufff0-\\ufff8]([^\\x00-\\x1f\\x7f-\\x9f\\u202a-\\u202e\\u2066-\\u2069]*[^\\x00-\\x1f\\x7f-\\x9f\\u202a-\\u202e\\u2066-\\u2069\\x20\\xa0\\xad\\u034f\\u061c\\u115f\\u1160\\u1680\\u17b4\\u17b5\\u180e\\u2000-\\u200f\\u2028\\u2029\\u202f\\u205f-\\u206f\\u3000\\u3164\\ufeff\\uffa0\\ufff0-\\ufff8])?(?![\\s\\S])"}
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/RegionBody"}
      responses:
        "200": {description: Replaced, content: {application/json: {schema: {$ref: "#/components/schemas/Region"}}}}
        "201": {description: Created, content: {application/json: {schema: {$ref: "#/components/schemas/Region"}}}}
        "400": {$ref: "#/components/responses/Problem"}
        "401": {$ref: "#/components/responses/Problem"}
        "403": {$ref: "#/components/responses/Problem"}
        "405": {$ref: "#/components/responses/RegionsAreConfiguration"}
        "409": {$ref: "#/components/responses/Problem"}
        "413": {$ref: "#/components/responses/Problem"}
        "415": {$ref: "#/components/responses/Problem"}
        "503": {$ref: "#/components/responses/Problem"}
    delete:
      operationId: deleteRegion
      summary: Stop monitoring and forget the region (its events stay in the log)
      responses:
        "204": {description: Deleted}
        "400": {$ref: "#/components/responses/Problem"}
        "401": {$ref: "#/components/responses/Problem"}
        "403": {$ref: "#/components/responses/Problem"}
        "404": {$ref: "#/components/responses/Problem"}
        "405": {$ref: "#/components/responses/RegionsAreConfiguration"}
        "503": {$ref: "#/components/responses/Problem"}
  /v1/regions/{id}/request-state:
    parameters:
      - {name: id, in: path, required: true, schema: {type: string, minLength: 1}}
    post:
      operationId: requestState
      summary: Ask for didDetermineState (logged as an event); 409 for a region waiting for its source
      responses:
        "200": {description: "Cluster mode: the stored merged state; nothing is determined or logged", content: {application/json: {schema: {$ref: "#/components/schemas/Region"}}}}
        "202": {description: Requested, content: {application/json: {schema: {$ref: "#/components/schemas/Region"}}}}
        "400": {$ref: "#/components/responses/Problem"}
        "401": {$ref: "#/components/responses/Problem"}
        "403": {$ref: "#/components/responses/Problem"}
        "404": {$ref: "#/components/responses/Problem"}
        "409": {$ref: "#/components/responses/Problem"}
  /v1/events:
    get:
      operationId: listEvents
      summary: The event log, oldest first, paged by cursor
      parameters:
        - {name: since, in: query, schema: {type: number, minimum: -1.0e15, maximum: 1.0e15}, description: Unix seconds}
        - {name: region, in: query, schema: {type: string, minLength: 1, pattern: "^[^\\x00]+$"}, description: "Only events of this region (form-decoded: + is a space, a literal plus %2B)"}
        - {name: type, in: query, schema: {type: string, enum: [EVENT_TYPES]}, description: "Only events of this type (another is a 400)"}
        - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 1000, default: 100}}
        - {name: cursor, in: query, schema: {type: integer, minimum: 0, maximum: 9223372036854775807}, description: The previous page's nextCursor}
      responses:
        "200":
          description: One page
          content:
            application/json:
              schema:
                type: object
                required: [events, nextCursor]
                additionalProperties: false
                properties:
                  events: {type: array, items: {$ref: "#/components/schemas/Event"}}
                  nextCursor: {type: [string, "null"]}
        "400": {$ref: "#/components/responses/Problem"}
        "401": {$ref: "#/components/responses/Problem"}
        "403": {$ref: "#/components/responses/Problem"}
  /v1/events/stream:
    get:
      operationId: streamEvents
      summary: Live events as Server-Sent Events, resumable with Last-Event-ID
      description: |
        Each event is sent as `id: N`, `event: TYPE`, `data: Event JSON`. A client that reconnects
        with `Last-Event-ID: N` receives every event logged after N exactly once; an N past the
        end of the log is taken for an id of another log (the daemon restarted on a new store), and
        the stream starts at this log's beginning (at most its newest 10,000 events). Without it
        the stream starts at the newest event (or with the newest `backlog` events that pass the
        `region` and `type` filters, among the log's newest 10,000).
      parameters:
        - {name: Last-Event-ID, in: header, schema: {type: string, pattern: "^[0-9]+$"}}
        - {name: lastEventId, in: query, schema: {type: string, pattern: "^[0-9]+$"}, description: "As Last-Event-ID (for clients that cannot set headers); digits past Int64 are past the end"}
        - {name: backlog, in: query, schema: {type: integer, minimum: 0, maximum: 10000}}
        - {name: region, in: query, schema: {type: string, minLength: 1, pattern: "^[^\\x00]+$"}, description: "Only events of this region (form-decoded, as in listEvents)"}
        - {name: type, in: query, schema: {type: string, enum: [EVENT_TYPES]}}
      responses:
        "200": {description: An endless event stream, content: {text/event-stream: {schema: {type: string}}}}
        "400": {$ref: "#/components/responses/Problem"}
        "401": {$ref: "#/components/responses/Problem"}
        "403": {$ref: "#/components/responses/Problem"}
  /v1/beacons:
    get:
      operationId: listBeacons
      summary: Beacons heard now, from the engine's snapshot (the most recently heard `limit`)
      parameters:
        - {name: limit, in: query, description: "How many to list, most recently heard first (default 1000)", schema: {type: integer, minimum: 1, maximum: 100000}}
      responses:
        "200":
          description: Most recently heard first
          content:
            application/json:
              schema:
                type: object
                required: [time, beacons, total]
                additionalProperties: false
                properties:
                  time: {type: number}
                  beacons: {type: array, items: {$ref: "#/components/schemas/Beacon"}}
                  total: {type: integer, minimum: 0, description: "How many beacons are heard now (beacons lists at most limit of them)"}
                  member: {type: string, description: "Cluster mode only: the member that answered"}
                  partitions: {type: array, items: {type: integer}, description: "Cluster mode only: the partitions this member runs; the beacons listed are theirs only"}
                  partitionCount: {type: integer, description: "Cluster mode only: the cluster's partition count"}
                  offlineScanners: {type: array, items: {type: string}, description: "The scanners that said they are offline (an ESPresense node's status, a Theengs gateway's will), sorted: the beacons only they hear are held in their regions and rooms (up to 120 s). Cluster mode: as this member's partitions know them"}
        "400": {$ref: "#/components/responses/Problem"}
        "401": {$ref: "#/components/responses/Problem"}
        "403": {$ref: "#/components/responses/Problem"}
  /v1/scanners:
    get:
      operationId: listScanners
      summary: "The scanners the engine knows (ESPresense rooms, Theengs gateways, RegionKit scanners) heard within the hour or offline now: online or offline by their own word, last heard, sightings a second, beacons in their room."
      parameters:
        - {name: limit, in: query, description: "How many to list, most recently heard first (default 1000)", schema: {type: integer, minimum: 1, maximum: 100000}}
      responses:
        "200":
          description: "Most recently heard first; those never heard (only their status said) after them, by name"
          content:
            application/json:
              schema:
                type: object
                required: [time, scanners, total]
                additionalProperties: false
                properties:
                  time: {type: number, description: "The daemon's clock, Unix seconds"}
                  scanners:
                    type: array
                    items:
                      type: object
                      required: [name, status, sightingsPerSecond, beaconsInRoom]
                      additionalProperties: false
                      properties:
                        name: {type: string, description: "The name its sightings carry: the ESPresense room, the gateway, --scanner"}
                        status: {type: string, enum: [online, offline], description: "offline while it says so (its status topic or will) and has not come back; online otherwise, also when it said nothing"}
                        offlineSince: {type: number, description: "Since when it has said it is offline (Unix seconds)"}
                        lastHeard: {type: number, description: "Its last sighting (Unix seconds); absent when it only said whether it is online"}
                        sightingsPerSecond: {type: number, minimum: 0, description: "Every beacon together, over about the last 10 s at time: 0 once the scanner has been silent 30 s"}
                        beaconsInRoom: {type: integer, minimum: 0, description: "Beacons placed in its room now (nearest scanner)"}
                  total: {type: integer, minimum: 0, description: "How many scanners the engine knows (scanners lists at most limit of them)"}
                  member: {type: string, description: "Cluster mode only: the member that answered; the scanners as its partitions know them"}
        "400": {$ref: "#/components/responses/Problem"}
        "401": {$ref: "#/components/responses/Problem"}
        "403": {$ref: "#/components/responses/Problem"}
  /v1/cluster:
    get:
      operationId: getCluster
      summary: "Cluster mode: the members, their processes and partitions, and who holds each partition and the outputs (from the shared store)"
      responses:
        "200":
          description: "The cluster; expiries in seconds from now on the store's clock"
          content:
            application/json:
              schema:
                type: object
                required: [member, instance, partitionCount, members, partitions]
                additionalProperties: false
                properties:
                  member: {type: string, description: The member that answered}
                  instance: {type: string, description: "Its process: host, pid and a random part"}
                  partitionCount: {type: integer, minimum: 1}
                  members:
                    type: array
                    items:
                      type: object
                      required: [member, live, expiresIn, sightings, partitions]
                      additionalProperties: false
                      properties:
                        member: {type: string}
                        instance: {type: string}
                        live: {type: boolean}
                        expiresIn: {type: number}
                        sightings: {type: integer}
                        partitions: {type: array, items: {type: integer}}
                        regions: {type: string, description: "The digest of its configured region definitions (their count and a hash): live members with different ones decide their partitions' regions by different definitions (a rolling restart under way)"}
                  partitions: {type: array, items: {$ref: "#/components/schemas/Lease"}}
                  outputs: {$ref: "#/components/schemas/Lease"}
        "401": {$ref: "#/components/responses/Problem"}
        "403": {$ref: "#/components/responses/Problem"}
        "404": {$ref: "#/components/responses/Problem"}
  /v1/sources:
    get:
      operationId: listSources
      summary: Input sources and their status
      responses:
        "200":
          description: The sources
          content:
            application/json:
              schema:
                type: object
                required: [sources]
                additionalProperties: false
                properties:
                  sources: {type: array, items: {$ref: "#/components/schemas/Source"}}
        "401": {$ref: "#/components/responses/Problem"}
        "403": {$ref: "#/components/responses/Problem"}
  /healthz:
    get:
      operationId: health
      summary: Liveness
      security: []
      responses:
        "200": {description: Alive, content: {application/json: {schema: {type: object, required: [status], properties: {status: {const: ok}}}}}}
  /readyz:
    get:
      operationId: ready
      summary: "Readiness: ready (store writable, every source up), degraded (some sources down, one works: 200), not ready (503)"
      responses:
        "200": {description: Ready or degraded, content: {application/json: {schema: {$ref: "#/components/schemas/Readiness"}}}}
        "503": {description: Not ready, content: {application/json: {schema: {$ref: "#/components/schemas/Readiness"}}}}
        "401": {$ref: "#/components/responses/Problem"}
        "403": {$ref: "#/components/responses/Problem"}
  /metrics:
    get:
      operationId: metrics
      summary: Prometheus metrics (text format 0.0.4)
      responses:
        "200": {description: Metrics, content: {text/plain: {schema: {type: string}}}}
        "401": {$ref: "#/components/responses/Problem"}
        "403": {$ref: "#/components/responses/Problem"}
  /openapi.yaml:
    get:
      operationId: openapi
      summary: This document
      security: []
      responses:
        "200": {description: OpenAPI 3.1, content: {application/yaml: {schema: {type: string}}}}
components:
  securitySchemes:
    bearer: {type: http, scheme: bearer}
  responses:
    Problem:
      description: An RFC 9457 problem naming the field at fault
      content:
        application/problem+json:
          schema: {$ref: "#/components/schemas/Problem"}
    RegionsAreConfiguration:
      description: |
        Cluster mode only: regions are configuration (every member monitors the regions of its
        configuration file; a change through one member would not reach the partitions the others
        run). The problem's detail says so; change every member's configuration and restart them.
      headers:
        Allow: {schema: {type: string, const: GET}}
      content:
        application/problem+json:
          schema: {$ref: "#/components/schemas/Problem"}
  schemas:
    Problem:
      type: object
      required: [type, title, status, detail]
      properties:
        type: {type: string}
        title: {type: string}
        status: {type: integer}
        detail: {type: string}
        field: {type: string, description: The JSON key, query parameter or header at fault}
    Lease:
      type: object
      required: [epoch, live, expiresIn]
      additionalProperties: false
      properties:
        partition: {type: integer, description: "A partition's lease (absent for the outputs)"}
        owner: {type: string, description: The last holder}
        epoch: {type: integer, description: "The fencing epoch: one more at every take"}
        live: {type: boolean, description: "Held now (an owner, unexpired)"}
        expiresIn: {type: number}
    RegionBody:
      description: One region of the configuration without its identifier
      oneOf:
        - {$ref: "#/components/schemas/BeaconRegionBody"}
        - {$ref: "#/components/schemas/EddystoneRegionBody"}
        - {$ref: "#/components/schemas/DeviceRegionBody"}
        - {$ref: "#/components/schemas/CircularRegionBody"}
    BeaconRegionBody:
      description: An iBeacon region (or AltBeacon with id1/id2/id3 as uuid/major/minor); minor needs major
      type: object
      additionalProperties: false
      required: [uuid]
      dependentRequired: {minor: [major]}
      properties:
        format: {enum: [ibeacon, altbeacon], default: ibeacon}
        uuid: {type: string, pattern: "^([0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}|[0-9A-Fa-f]{32})$", description: "32 hex digits, dashes optional (8-4-4-4-12), as in the configuration"}
        major: {type: integer, minimum: 0, maximum: 65535}
        minor: {type: integer, minimum: 0, maximum: 65535}
        scanner: {type: string, minLength: 1, maxLength: 128, pattern: "^[^\\x00-\\x1f\\x7f-\\x9f]+$", description: "The only scanner the region hears (at most 128 bytes of UTF-8, as MQTT scanner names are counted)"}
        notifyOnEntry: {type: boolean, default: true}
        notifyOnExit: {type: boolean, default: true}
        notifyEntryStateOnDisplay: {type: boolean, default: false}
    EddystoneRegionBody:
      description: An Eddystone-UID region (a namespace, optionally one instance)
      type: object
      additionalProperties: false
      required: [format, namespace]
      properties:
        format: {const: eddystone-uid}
        namespace: {type: string, pattern: "^[0-9A-Fa-f]{20}$"}
        instance: {type: string, pattern: "^[0-9A-Fa-f]{12}$"}
        scanner: {type: string, minLength: 1, maxLength: 128, pattern: "^[^\\x00-\\x1f\\x7f-\\x9f]+$", description: "The only scanner the region hears (at most 128 bytes of UTF-8, as MQTT scanner names are counted)"}
        notifyOnEntry: {type: boolean, default: true}
        notifyOnExit: {type: boolean, default: true}
        notifyEntryStateOnDisplay: {type: boolean, default: false}
    DeviceRegionBody:
      description: "A device that is no beacon (a phone, a watch, a tracker) by the id its scanner gives it: an ESPresense id (irk: and 32 hex digits, an address, an alias) or a Theengs gateway's address"
      type: object
      additionalProperties: false
      required: [device]
      properties:
        format: {const: device}
        device: {type: string, minLength: 1, maxLength: 36, pattern: "^([!\"$-*,-.0-~]{1,20}|[Ii][Rr][Kk]:[0-9A-Fa-f]{32})$"}
        scanner: {type: string, minLength: 1, maxLength: 128, pattern: "^[^\\x00-\\x1f\\x7f-\\x9f]+$", description: "The only scanner the region hears (at most 128 bytes of UTF-8, as MQTT scanner names are counted)"}
        notifyOnEntry: {type: boolean, default: true}
        notifyOnExit: {type: boolean, default: true}
        notifyEntryStateOnDisplay: {type: boolean, default: false}
    CircularRegionBody:
      description: A circular region (metres; at most the daemon profile's maximumRegionMonitoringDistance)
      type: object
      additionalProperties: false
      required: [latitude, longitude, radius]
      properties:
        latitude: {type: number, minimum: -90, maximum: 90}
        longitude: {type: number, minimum: -180, maximum: 180}
        radius: {type: number, minimum: 0, maximum: MAXIMUM_RADIUS}
        notifyOnEntry: {type: boolean, default: true}
        notifyOnExit: {type: boolean, default: true}
    Region:
      type: object
      required: [identifier, kind, origin, notifyOnEntry, notifyOnExit, state, stale]
      properties:
        identifier: {type: string}
        kind: {enum: [beacon, circular]}
        origin: {enum: [config, api]}
        format: {enum: [ibeacon, altbeacon, eddystone-uid, device]}
        uuid: {type: string}
        major: {type: integer}
        minor: {type: integer}
        namespace: {type: string}
        instance: {type: string}
        device: {type: string, description: "A device region's device: the id its scanner gives it"}
        scanner: {type: string}
        latitude: {type: number}
        longitude: {type: number}
        radius: {type: number}
        notifyOnEntry: {type: boolean}
        notifyOnExit: {type: boolean}
        notifyEntryStateOnDisplay: {type: boolean}
        state: {enum: [inside, outside, unknown]}
        since: {type: number, description: Unix seconds}
        stale: {type: boolean, description: Restored after a restart (or waiting for its source) and not yet confirmed}
        lastReason: {type: string}
        lastEvidence: {$ref: "#/components/schemas/Evidence"}
        waitingForSource: {type: string, description: "Present when the region is not monitored now because its source (the Bluetooth scanner, the location source) is unavailable or has not reported yet, or is back and the region's retry is due; the text says why. It is registered when the source works; DELETE removes it. Its state is the one it carries over then (stale), or unknown for a definition never monitored."}
    Evidence:
      type: object
      properties:
        rssi: {type: integer}
        scannerID: {type: string}
        beacon: {type: object}
        lastSightingAge: {type: number}
        exitThreshold: {type: number}
        distance: {type: number}
        horizontalAccuracy: {type: number}
        dwell: {type: number}
        reason: {type: string}
    Event:
      type: object
      required: [id, time, type, region, state, reason, event]
      properties:
        id: {type: integer}
        time: {type: [number, "null"], description: "Unix seconds; null only for a damaged row whose time is not a finite number"}
        type: {type: string}
        region: {type: [string, "null"]}
        state: {type: [string, "null"]}
        reason: {type: [string, "null"]}
        event: {type: [object, "null"], description: The full event as logged (evidence included)}
    Beacon:
      type: object
      required: [id, format, uuid, major, minor, proximity, lastSeen, regions, scanners]
      properties:
        id: {type: string, description: "The identity, unique across formats: UUID:MAJOR:MINOR, altbeacon:ID1:ID2:ID3, eddystone-uid:NAMESPACE:INSTANCE, device:ID"}
        format: {enum: [ibeacon, altbeacon, eddystone-uid, device]}
        uuid: {type: string, description: "iBeacon UUID, AltBeacon id1; for Eddystone-UID the 16 id bytes (read namespace and instance); for a device its first 16 identity bytes (read device)"}
        major: {type: integer}
        minor: {type: integer}
        namespace: {type: string}
        instance: {type: string}
        device: {type: string, description: "A device that is no beacon: the id its scanner gives it (irk:…, an address, an ESPresense alias)"}
        rssi: {type: integer, description: "The last RSSI heard (dBm), by any scanner"}
        rssiScanner: {type: string, description: "The scanner that heard rssi (absent for a sighting that names none)"}
        filteredRSSI: {type: number}
        distance: {type: number}
        proximity: {enum: [unknown, immediate, near, far]}
        nearestScanner: {type: string}
        lastSeen: {type: number}
        regions: {type: array, items: {type: string}}
        scanners:
          type: array
          items:
            type: object
            required: [lastSeen, sightings]
            properties:
              scanner: {type: string}
              rssi: {type: integer}
              lastSeen: {type: number}
              sightings: {type: integer}
    Source:
      type: object
      required: [name, kind, state, sightings, reconnects, decodeErrors]
      properties:
        name: {type: string}
        kind: {type: string}
        state: {enum: [up, connecting, finished, down]}
        detail: {type: string}
        sightings: {type: integer}
        reconnects: {type: integer}
        decodeErrors: {type: object, additionalProperties: {type: integer}}
        lastInput: {type: number}
        readPauses: {type: integer, description: "Times reads were held back because the event log was behind (MQTT sources only)"}
        readPausedSeconds: {type: number, description: "Seconds reads have been held back in all, the current hold included (MQTT sources only)"}
        readPaused: {type: boolean, description: "Whether reads are held back now (MQTT sources only)"}
    Readiness:
      type: object
      required: [status, checks]
      properties:
        status: {enum: [ready, degraded, not ready]}
        checks:
          type: array
          items:
            type: object
            required: [name, ok]
            properties:
              name: {type: string}
              ok: {type: boolean}
              state: {enum: [up, connecting, finished, down]}
              detail: {type: string}
"""#
}
