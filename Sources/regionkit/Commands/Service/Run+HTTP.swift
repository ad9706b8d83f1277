import Logging
import RegionKit
import RegionKitHTTP

extension Run {
    /// Serves the HTTP API until the task is cancelled (one daemon or a cluster member alike),
    /// logging where it listens — never the token, only whether one is set; a server that fails
    /// stops the daemon with that reason.
    ///
    /// ```swift
    /// group.addTask { await Run.serve(server, http, logger: logger, stopRequest: stopRequest); return .other }
    /// ```
    static func serve(_ server: RegionKitServer, _ http: HTTPConfiguration, logger: Logger, stopRequest: StopRequest) async {
        do {
            try await server.run { port in
                logger.info("http listening", metadata: ["address": "\(http.host):\(port)", "public": "\(http.isPublic)",
                                                         "token": "\(http.token == nil ? "none (API refused)" : "set")"])
                // Public on the network with no names listed: clients that reach it by a host name
                // (a Prometheus target, a kiosk) get 403 without the token; said once, at the start.
                if http.isPublic, http.allowedHosts.isEmpty, !["127.0.0.1", "::1", "localhost"].contains(http.host) {
                    logger.notice("""
                        public reads are served without the token to IP addresses and localhost only: list the host names \
                        clients use (http.allowedHosts, * for any)
                        """, metadata: ["address": "\(http.host):\(port)"])
                }
            }
        } catch is CancellationError {
        } catch {
            // Named with the address (a port in use said only "bind(descriptor:ptr:bytes:): Address already in use").
            let detail = (error as? RegionKitError)?.message ?? "\(error)"
            stopRequest.request("the HTTP server on \(http.host):\(http.port) failed: \(detail)", failed: true)
        }
    }
}
