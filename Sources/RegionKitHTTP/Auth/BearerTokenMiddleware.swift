import Hummingbird

/// Requires `Authorization: Bearer TOKEN` for writes, and for reads unless the API is public.
/// The dashboard page, `/healthz` and `/openapi.yaml` are always open (they carry no data).
/// The token is compared in constant time and never logged.
struct BearerTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: [UInt8]?
    let isPublic: Bool

    static func isOpen(_ path: String) -> Bool {
        path == "/" || path == "/index.html" || path == "/healthz" || path == "/openapi.yaml" || path.hasPrefix("/assets/")
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let isRead = request.method == .get || request.method == .head
        if Self.isOpen(request.uri.path) || (isRead && isPublic) {
            return try await next(request, context)
        }
        let challenge: HTTPFields = [.wwwAuthenticate: "Bearer realm=\"regionkit\""]
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
