import Foundation
import Hummingbird

extension RegionKitServer {
    /// `/v1/beacons`, `/v1/scanners`, `/v1/cluster`, `/v1/sources`, `/healthz`, `/readyz`, `/metrics`, `/openapi.yaml`.
    /// `GET /v1/beacons` and `GET /v1/scanners` list this many unless `limit` says otherwise.
    static let beaconListDefault = 1_000
    /// The largest `limit` of `GET /v1/beacons` and `GET /v1/scanners` (the engine keeps at most
    /// `MonitoringEngine.maximumChannels` scanners: invented names from an MQTT publisher).
    static let beaconListMaximum = 100_000

    /// The `limit` query parameter of `GET /v1/beacons` and `GET /v1/scanners`: 1…``beaconListMaximum``,
    /// ``beaconListDefault`` when absent; anything else a 400 naming it.
    static func listLimit(_ request: Request) throws -> Int {
        try integer(request.uri.queryParameters.get("limit"), "limit", range: 1...beaconListMaximum) ?? beaconListDefault
    }

    func addStatusRoutes(to router: Router<BasicRequestContext>) {
        // The `limit` most recently heard (a flood of new identities listed 70,717 beacons, 25 MB,
        // on every dashboard poll); `total` says how many are heard now.
        router.get("/v1/beacons") { request, _ in
            try Self.json(self.backend.beacons(limit: try Self.listLimit(request)))
        }
        router.get("/v1/scanners") { request, _ in
            try Self.json(self.backend.scanners(limit: try Self.listLimit(request)))
        }
        router.get("/v1/cluster") { _, _ in
            guard let report = try await self.backend.clusterReport() else {
                throw Problem(.notFound, "this daemon is not a cluster member: it runs alone (cluster mode: the cluster block of the configuration)")
            }
            return try Self.json(report)
        }
        router.get("/v1/sources") { _, _ in
            try Self.json(["sources": self.sources()])
        }
        router.get("/healthz") { _, _ in
            try Self.jsonObject(["status": "ok"])
        }
        // Ready: the store is writable and every source works. Degraded (still 200: the daemon
        // serves): some sources are down or reconnecting but at least one works. Not ready (503):
        // the store fails, or no source works. Each source is a check of its own, with its detail.
        router.get("/readyz") { _, _ in
            var checks: [[String: Any]] = []
            var storeOK = true
            do {
                try await self.metrics.timedStore("write_probe") { try await self.backend.store.checkWritable() }
                checks.append(["name": "store", "ok": true])
            } catch {
                storeOK = false
                checks.append(["name": "store", "ok": false, "detail": "\(error)"])
            }
            let sources = self.sources()
            var working = 0
            for source in sources {
                let ok = source.state == .up || source.state == .finished
                if ok { working += 1 }
                var check: [String: Any] = ["name": "source:\(source.name)", "ok": ok, "state": source.state.rawValue]
                if let detail = source.detail { check["detail"] = detail }
                checks.append(check)
            }
            let status = !storeOK || (!sources.isEmpty && working == 0) ? "not ready" : working < sources.count ? "degraded" : "ready"
            return try Self.jsonObject(["status": status, "checks": checks], status: status == "not ready" ? .serviceUnavailable : .ok)
        }
        router.get("/metrics") { _, _ in
            let text = try await self.metrics.scrape(backend: self.backend, sources: self.sources(), outputs: self.outputs(),
                                                      sseClients: self.events.subscriberCount)
            return Self.text(text, contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
        router.get("/openapi.yaml") { _, _ in
            Self.text(OpenAPIDocument.yaml(maximumRadius: self.backend.maximumRegionRadius), contentType: "application/yaml")
        }
    }
}
