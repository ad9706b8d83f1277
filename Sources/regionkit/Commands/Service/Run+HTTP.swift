import Logging
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
            }
        } catch is CancellationError {
        } catch {
            stopRequest.request("the HTTP server failed: \(error)", failed: true)
        }
    }
}
