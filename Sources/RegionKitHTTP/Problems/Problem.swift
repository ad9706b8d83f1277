import Foundation
import Hummingbird

/// An RFC 9457 problem (`application/problem+json`): what went wrong, and for a bad request the
/// field and the reason.
///
/// ```swift
/// throw Problem(.badRequest, "radius must be > 0", field: "radius")
/// ```
public struct Problem: Error, HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var detail: String
    /// The request field at fault (a JSON key, a query parameter or a header).
    public var field: String?
    public var headers: HTTPFields

    public init(_ status: HTTPResponse.Status, _ detail: String, field: String? = nil, headers: HTTPFields = [:]) {
        self.status = status
        self.detail = detail
        self.field = field
        self.headers = headers
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        response()
    }

    func response() -> Response {
        var object: [String: Any] = ["type": "about:blank", "title": status.reasonPhrase, "status": status.code, "detail": detail]
        if let field { object["field"] = field }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        var fields = headers
        fields[.contentType] = "application/problem+json"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
