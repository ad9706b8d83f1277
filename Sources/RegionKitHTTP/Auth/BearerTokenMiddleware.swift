import Hummingbird

/// Requires `Authorization: Bearer TOKEN` for writes, and for reads unless the API is public.
/// The dashboard page, `/healthz` and `/openapi.yaml` are always open (they carry no data).
/// The token is compared in constant time and never logged. A public read without a token is
/// served only to a `Host` that ``PublicReadHosts`` admits (no DNS rebinding).
struct BearerTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: [UInt8]?
    let isPublic: Bool
    let publicHosts: PublicReadHosts

    static func isOpen(_ path: String) -> Bool {
        path == "/" || path == "/index.html" || path == "/healthz" || path == "/openapi.yaml" || path.hasPrefix("/assets/")
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let isRead = request.method == .get || request.method == .head
        if Self.isOpen(request.uri.path) {
            return try await next(request, context)
        }
        let challenge: HTTPFields = [.wwwAuthenticate: "Bearer realm=\"regionkit\""]
        if isRead && isPublic {
            if publicHosts.admits(request.head.authority) { return try await next(request, context) }
            // A name the operator did not list: a page that re-pointed its own name at this
            // daemon (DNS rebinding) would be reading it. The token still opens it.
            guard request.headers[.authorization] != nil else {
                let host = String(request.head.authority?.prefix(100) ?? "")
                throw Problem(.forbidden, "reads without a token are served to IP addresses, localhost and the names in http.allowedHosts; '\(host)' is not one of them: list it, or send the bearer token",
                              field: "Host", headers: challenge)
            }
        }
        guard let token else {
            throw Problem(.unauthorized, "this server has no API token configured (http.tokenFile or REGIONKIT_API_TOKEN): \(isRead ? "reads" : "writes") are refused",
                          field: "Authorization", headers: challenge)
        }
        guard let header = request.headers[.authorization] else {
            throw Problem(.unauthorized, "missing bearer token", field: "Authorization", headers: challenge)
        }
        let prefix = "Bearer "
        guard header.count > prefix.count, header.prefix(prefix.count).lowercased() == prefix.lowercased() else {
            throw Problem(.unauthorized, "the Authorization header must be 'Bearer TOKEN'", field: "Authorization", headers: challenge)
        }
        let presented = Array(header.utf8.dropFirst(prefix.utf8.count))
        guard ConstantTime.equal(presented, token) else {
            throw Problem(.forbidden, "wrong bearer token", field: "Authorization")
        }
        return try await next(request, context)
    }
}
