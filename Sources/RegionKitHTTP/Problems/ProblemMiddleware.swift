import Hummingbird
import Logging

/// Turns every error into `application/problem+json`: ``Problem`` as is, Hummingbird's own errors
/// (no route, wrong method) with their status, anything else as a 500 whose detail is logged, not sent.
struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let problem as Problem {
            return problem.response()
        } catch let error as HTTPError where error.status == .notFound {
            if let allowed = RouteTable.allowedMethods(for: request.uri.path), !allowed.contains(request.method.rawValue) {
                return Problem(.methodNotAllowed, "\(request.method) is not allowed on \(request.uri.path) (allowed: \(allowed.joined(separator: ", ")))",
                               headers: [.allow: allowed.joined(separator: ", ")]).response()
            }
            return Problem(.notFound, error.body ?? "no such route: \(request.method) \(request.uri.path)", headers: error.headers).response()
        } catch let error as HTTPError {
            let detail = error.body ?? (error.status == .notFound ? "no such route: \(request.method) \(request.uri.path)" : error.status.reasonPhrase)
            return Problem(error.status, detail, headers: error.headers).response()
        } catch {
            logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return Problem(.internalServerError, "internal error (see the daemon's log)").response()
        }
    }
}
