import Hummingbird

/// Counts requests by route template, method and status, and times them.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let clock = ContinuousClock()
        let start = clock.now
        let response = try await next(request, context)
        // The router names a request no route took "NotFound" (the 404 and the 405 alike): a known
        // path asked with a method it does not have (405) is counted under its route, the rest
        // as "unmatched" (one series for every path no route has).
        let matched = context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 }
        let route = matched ?? RouteTable.template(for: request.uri.path) ?? "unmatched"
        metrics.recordRequest(route: route, method: request.method.rawValue, status: response.status.code, duration: clock.now - start)
        return response
    }
}
