/// The API's route templates and their methods, to answer 405 (with `Allow`) for a known path
/// asked with another method. Every GET route answers HEAD too (the router generates it).
enum RouteTable {
    static let routes: [(segments: [String], methods: [String])] = [
        (["v1", "regions"], ["GET"]),
        (["v1", "regions", "*"], ["GET", "PUT", "DELETE"]),
        (["v1", "regions", "*", "request-state"], ["POST"]),
        (["v1", "events"], ["GET"]),
        (["v1", "events", "stream"], ["GET"]),
        (["v1", "beacons"], ["GET"]),
        (["v1", "scanners"], ["GET"]),
        (["v1", "cluster"], ["GET"]),
        (["v1", "sources"], ["GET"]),
        (["healthz"], ["GET"]),
        (["readyz"], ["GET"]),
        (["metrics"], ["GET"]),
        (["openapi.yaml"], ["GET"]),
        ([], ["GET"]),
        (["index.html"], ["GET"]),
        (["assets", "app.js"], ["GET"]),
        (["assets", "app.css"], ["GET"]),
    ]

    /// The template of the route `path` has the shape of, as the router names its endpoints
    /// (`/v1/regions/{id}`), or nil when no route has this shape: a request answered 405 is
    /// counted under its route in `/metrics`, not with the unmatched paths.
    ///
    /// ```swift
    /// RouteTable.template(for: "/v1/regions/lobby")   // "/v1/regions/{id}"
    /// RouteTable.template(for: "/nowhere")            // nil
    /// ```
    static func template(for path: String) -> String? {
        let segments = path.split(separator: "/")
        guard let route = routes.first(where: { route in
            route.segments.count == segments.count && zip(route.segments, segments).allSatisfy { $0 == "*" || $0 == $1 }
        }) else { return nil }
        return "/" + route.segments.map { $0 == "*" ? "{id}" : $0 }.joined(separator: "/")
    }

    /// The methods allowed on `path`, or nil when no route has this shape.
    static func allowedMethods(for path: String) -> [String]? {
        let segments = path.split(separator: "/").map(String.init)
        let matching = routes.filter { route in
            route.segments.count == segments.count && zip(route.segments, segments).allSatisfy { $0 == "*" || $0 == $1 }
        }
        guard !matching.isEmpty else { return nil }
        var methods: [String] = []
        for route in matching {
            for method in route.methods.flatMap({ $0 == "GET" ? ["GET", "HEAD"] : [$0] }) where !methods.contains(method) { methods.append(method) }
        }
        return methods
    }
}
