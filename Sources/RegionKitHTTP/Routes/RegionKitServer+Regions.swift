import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import RegionKit
import RegionKitStore

extension RegionKitServer {
    /// `GET /v1/regions`, `GET|PUT|DELETE /v1/regions/{id}`, `POST /v1/regions/{id}/request-state`.
    func addRegionRoutes(to router: Router<BasicRequestContext>) {
        router.get("/v1/regions") { request, _ in
            // A cluster member says why the regions cannot be changed here (the dashboard hides its editing).
            let refusal = self.backend.regionChangesRefusal
            guard let query = try Self.regionPageQuery(request) else {
                let regions = try await self.regionReports()
                return Self.json(bytes: RegionReport.listingJSON(regions, changesRefused: refusal))
            }
            let page = try await self.metrics.timedStore("region_rows") { try await self.backend.regionPage(query) }
            return Self.json(bytes: RegionReport.listingJSON(page.reports, changesRefused: refusal, page: (page.total, page.preceding, page.nextCursor)))
        }
        router.get("/v1/regions/:id") { _, context in
            let id = try Self.regionID(context)
            guard let report = try await self.regionReports(only: id).first else {
                throw Problem(.notFound, "region '\(id)' is not monitored", field: "id")
            }
            return Self.json(bytes: report.json)
        }
        router.put("/v1/regions/:id") { request, context in
            let id = try Self.regionID(context)
            try self.refuseRegionChanges()
            try Self.requireJSON(request)
            let body = try await Self.collect(request, limit: self.configuration.maxBodyBytes)
            let region = try RegionBody.region(identifier: id, json: body, maximumRadius: self.backend.maximumRegionRadius)
            let existed: Bool
            do {
                existed = try await self.metrics.timedStore("put_region") { try await self.backend.putRegion(region) }
            } catch let error as RegionKitError where error.code == .regionMonitoringFailure {
                // The daemon cannot monitor it now: no source for its kind (the field names the
                // kind), or the region limit (no field of the body is at fault).
                let limit = (error.cause as? RegionKitError)?.code == .regionMonitoringFailure
                throw Problem(.conflict, error.message, field: limit ? nil : Self.sourceField(of: region))
            } catch let error as RegionKitError where error.code == .stopping {
                throw Problem(.serviceUnavailable, error.message, field: "id")
            }
            guard let report = try await self.regionReports(only: id).first else {
                throw Problem(.conflict, "region '\(id)' stopped being monitored while it was saved", field: "id")
            }
            return Self.json(bytes: report.json, status: existed ? .ok : .created)
        }
        router.delete("/v1/regions/:id") { _, context in
            let id = try Self.regionID(context)
            try self.refuseRegionChanges()
            let removed: Bool
            do {
                removed = try await self.metrics.timedStore("delete_region") { try await self.backend.removeRegion(id) }
            } catch let error as RegionKitError where error.code == .stopping {
                throw Problem(.serviceUnavailable, error.message, field: "id")
            }
            guard removed else { throw Problem(.notFound, "region '\(id)' is not monitored", field: "id") }
            return Response(status: .noContent)
        }
        router.post("/v1/regions/:id/request-state") { _, context in
            let id = try Self.regionID(context)
            let outcome = try await self.backend.requestState(id)
            switch outcome {
            case .notMonitored:
                throw Problem(.notFound, "region '\(id)' is not monitored", field: "id")
            case .waitingForSource(let reason):
                // Listed by GET (waitingForSource): not "no such region" (it answered 404).
                throw Problem(.conflict, "region '\(id)' waits for its source, so its state cannot be determined now: \(reason)", field: "id")
            case .requested, .stored:
                // A DELETE between the request and its report: not `null` with 202 (review finding).
                guard let report = try await self.regionReports(only: id).first else {
                    throw Problem(.notFound, "region '\(id)' stopped being monitored", field: "id")
                }
                return Self.json(bytes: report.json, status: outcome == .requested ? .accepted : .ok)
            }
        }
    }

    /// `GET /v1/regions` lists this many regions a page when `cursor` or `prefix` asks for a page without a `limit`.
    static let regionPageDefault = 100
    /// The largest `limit` of `GET /v1/regions`.
    static let regionPageMaximum = 10_000

    /// The page `GET /v1/regions` asks for: `limit` (1…``regionPageMaximum``), `cursor` (the
    /// `nextCursor` of the page before) and `prefix`; nil when none is given (every region, in
    /// registration order, as before pages). A cursor or prefix must be a valid region id (not
    /// empty, no NUL), so that a mistyped parameter is an error rather than an empty page.
    /// The body field a 409 for want of a source names: the first the region's kind and format
    /// have (the dashboard shows the message beside it; `uuid` for an Eddystone or device region
    /// named a field hidden for those, and the dialog showed nothing).
    static func sourceField(of region: Region) -> String {
        switch region.beaconRegion?.constraint.format {
        case nil: "latitude"
        case .eddystoneUID: "namespace"
        case .device: "device"
        case .iBeacon, .altBeacon: "uuid"
        }
    }

    static func regionPageQuery(_ request: Request) throws -> RegionPage.Query? {
        let limit = try integer(request.uri.queryParameters.get("limit"), "limit", range: 1...regionPageMaximum)
        let cursor = try formValue(request, "cursor")
        let prefix = try formValue(request, "prefix")
        guard limit != nil || cursor != nil || prefix != nil else { return nil }
        return RegionPage.Query(cursor: cursor, limit: limit ?? regionPageDefault, prefix: prefix)
    }

    /// The first query parameter `name`, decoded as a form does: `+` is a space (a literal plus
    /// is `%2B`), then `%XX` escapes, which must make UTF-8. Hummingbird's `queryParameters`
    /// leave `+` as it is: the cursor `Room 204` sent by Python's `requests` or `curl -G
    /// --data-urlencode` as `Room+204` sorted after `Room 205`, and a page skipped every region
    /// between them. A region identifier (not empty, no NUL) or a 400 naming the parameter.
    static func formValue(_ request: Request, _ name: String) throws -> String? {
        guard let query = request.uri.query else { return nil }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts[0] == name else { continue }
            let raw = parts.count > 1 ? String(parts[1]) : ""
            guard let value = percentDecoded(raw.replacingOccurrences(of: "+", with: " ")) else {
                throw Problem(.badRequest, "\(name) '\(raw.prefix(200))' is not valid percent-encoded UTF-8", field: name)
            }
            guard !value.isEmpty, !value.utf8.contains(0) else {
                throw Problem(.badRequest, "\(name) must be a region identifier: not empty, without NUL", field: name)
            }
            return value
        }
        return nil
    }

    /// The `{id}` of a region path, percent-decoded (Hummingbird hands path parameters over as
    /// sent; query values it decodes): `/v1/regions/Room%20204` is the region `Room 204`, as the
    /// dashboard writes it with `encodeURIComponent`. 400 when it is not valid percent-encoding
    /// of UTF-8, or holds a NUL.
    ///
    /// ```swift
    /// let id = try Self.regionID(context)   // "Room 204" for /v1/regions/Room%20204
    /// ```
    static func regionID(_ context: BasicRequestContext) throws -> String {
        let raw = try context.parameters.require("id")
        guard let id = Self.percentDecoded(raw), !id.isEmpty else {
            throw Problem(.badRequest, "the region id in the path, '\(raw)', is not valid percent-encoded UTF-8", field: "id")
        }
        // The stores end text at a NUL: "lobby%00x" would be stored as, and overwrite, "lobby".
        guard !id.utf8.contains(0) else {
            throw Problem(.badRequest, "the region id in the path, '\(raw.prefix(200))', must not contain %00 (NUL)", field: "id")
        }
        return id
    }

    /// `text` with its `%XX` escapes decoded, if they are well formed and the result is UTF-8.
    /// Every byte is kept: Foundation's `removingPercentEncoding` dropped a leading U+FEFF, so
    /// `/v1/regions/%EF%BB%BFlobby` addressed, and replaced, the region `lobby`.
    ///
    /// ```swift
    /// Self.percentDecoded("Room%20204")   // "Room 204"
    /// Self.percentDecoded("%FF")          // nil: not UTF-8
    /// ```
    static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(Self.hexValue), let low = iterator.next().flatMap(Self.hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// 405 with `Allow: GET` when the daemon takes its regions from configuration only (a cluster member).
    func refuseRegionChanges() throws {
        if let refusal = backend.regionChangesRefusal {
            throw Problem(.methodNotAllowed, refusal, field: "id", headers: [.allow: "GET"])
        }
    }

    func regionReports(only identifier: String? = nil) async throws -> [RegionReport] {
        try await metrics.timedStore("region_rows") { try await backend.regionReports(only: identifier) }
    }

    static func requireJSON(_ request: Request) throws {
        guard let type = request.headers[.contentType] else { return }   // a missing type is read as JSON
        let base = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard base == "application/json" else {
            throw Problem(.unsupportedMediaType, "the body must be application/json, not '\(type)'", field: "Content-Type")
        }
    }

    static func collect(_ request: Request, limit: Int) async throws -> Data {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw Problem(.contentTooLarge, "the body is \(length) bytes; at most \(limit) are accepted", field: "body")
        }
        // "Too many bytes" is 413 and a malformed chunked framing 400 (it was 500, as if the daemon
        // were at fault); anything else (the client gone mid-body) goes up as it is.
        do {
            var buffer = try await request.body.collect(upTo: limit)
            return Data(buffer.readBytes(length: buffer.readableBytes) ?? [])
        } catch is NIOTooManyBytesError {
            throw Problem(.contentTooLarge, "the body is larger than \(limit) bytes", field: "body")
        } catch let error as HTTPParserError {
            // The rest of the connection cannot be framed: it is closed after the answer.
            throw Problem(.badRequest, "the body is not valid HTTP/1.1 framing (\(error)): a chunked body is a hexadecimal size line, that many bytes, CRLF, …, and a 0 size line",
                          field: "body", headers: [.connection: "close"])
        }
    }
}
