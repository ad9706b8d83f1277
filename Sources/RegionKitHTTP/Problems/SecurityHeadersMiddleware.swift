import HTTPTypes
import Hummingbird

/// Browser hardening on every response, errors included (it runs outside ``ProblemMiddleware``):
/// `X-Content-Type-Options: nosniff` (a response is only ever what its type says: a JSON body
/// echoing a region identifier is never sniffed into HTML), and a policy that keeps the
/// dashboard out of other sites' frames and runs only its own script file (no inline script,
/// no `eval`, no plugins). Inline `style` attributes stay allowed: the dashboard's legend uses them.
///
/// ```swift
/// router.middlewares.add(SecurityHeadersMiddleware())
/// ```
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    static var contentTypeOptions: HTTPField.Name { HTTPField.Name("X-Content-Type-Options")! }
    static var frameOptions: HTTPField.Name { HTTPField.Name("X-Frame-Options")! }
    static var policy: String { "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[Self.contentTypeOptions] = "nosniff"
        response.headers[Self.frameOptions] = "DENY"
        response.headers[.contentSecurityPolicy] = Self.policy
        return response
    }
}
