import Foundation
import RegionKitTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP/1.1 client over a real TCP socket on 127.0.0.1 (blocking, with a deadline on every
/// read), enough for JSON requests and for reading a Server-Sent Events stream frame by frame.
struct LoopbackResponse {
    var status: Int
    var headers: [String: String]
    var body: Data
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:] }
}

enum LoopbackError: Error { case connect(Int32), timeout, malformed(String) }

final class LoopbackConnection {
    let fd: Int32
    var buffer: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { close(fd); throw LoopbackError.connect(errno) }
    }

    deinit { close(fd) }

    /// Ends the connection from this side (the descriptor is closed when the object goes).
    func hangUp() { shutdown(fd, Int32(SHUT_RDWR)) }

    func send(_ text: String, body: Data = Data()) {
        let bytes = Array(text.utf8) + Array(body)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Reads more bytes; false at end of stream.
    func fill(deadline: Date) throws -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let remaining = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
        guard poll(&poller, 1, remaining) > 0 else { throw LoopbackError.timeout }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = recv(fd, &chunk, chunk.count, 0)
        guard n > 0 else { return false }
        buffer += chunk[0..<n]
        return true
    }

    func line(deadline: Date) throws -> String {
        while true {
            if let index = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<index], as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
                buffer.removeFirst(index + 1)
                return line
            }
            guard try fill(deadline: deadline) else { throw LoopbackError.malformed("connection closed mid-line") }
        }
    }

    func bytes(_ count: Int, deadline: Date) throws -> [UInt8] {
        while buffer.count < count { guard try fill(deadline: deadline) else { throw LoopbackError.malformed("connection closed mid-body") } }
        let out = Array(buffer[..<count])
        buffer.removeFirst(count)
        return out
    }

    func head(deadline: Date) throws -> (Int, [String: String]) {
        let status = try line(deadline: deadline)
        let parts = status.split(separator: " ")
        guard parts.count >= 2, let code = Int(parts[1]) else { throw LoopbackError.malformed(status) }
        var headers: [String: String] = [:]
        while true {
            let header = try line(deadline: deadline)
            if header.isEmpty { break }
            if let colon = header.firstIndex(of: ":") {
                headers[header[..<colon].lowercased()] = header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return (code, headers)
    }

    /// The next chunk of a chunked body (empty at its end).
    func chunk(deadline: Date) throws -> [UInt8] {
        let sizeLine = try line(deadline: deadline)
        guard let size = Int(sizeLine.split(separator: ";").first.map(String.init) ?? "", radix: 16) else { throw LoopbackError.malformed(sizeLine) }
        let data = try bytes(size, deadline: deadline)
        _ = try line(deadline: deadline)
        return data
    }
}

struct LoopbackClient {
    let port: Int
    var token: String?

    /// The request on a thread of its own: a test awaiting it does not hold one of the few
    /// cooperative threads the server under test needs to answer (a blocking call in an async test
    /// starved the server when suites ran side by side on a 2-core machine).
    func request(_ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:], timeout: Double = 10) async throws -> LoopbackResponse {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try self.blockingRequest(method, path, body: body, headers: headers, timeout: timeout) })
            }
        }
    }

    /// The request on the calling thread (for synchronous callers).
    func request(_ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:], timeout: Double = 10) throws -> LoopbackResponse {
        try blockingRequest(method, path, body: body, headers: headers, timeout: timeout)
    }

    private func blockingRequest(_ method: String, _ path: String, body: String?, headers: [String: String], timeout: Double) throws -> LoopbackResponse {
        let connection = try LoopbackConnection(port: port)
        let payload = Data((body ?? "").utf8)
        // A `Host` among `headers` replaces the loopback address.
        var text = "\(method) \(path) HTTP/1.1\r\n\(headers.keys.contains("Host") ? "" : "Host: 127.0.0.1:\(port)\r\n")Connection: close\r\n"
        if let token { text += "Authorization: Bearer \(token)\r\n" }
        if body != nil { text += "Content-Type: application/json\r\nContent-Length: \(payload.count)\r\n" }
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        connection.send(text + "\r\n", body: payload)
        let deadline = Date().addingTimeInterval(timeout)
        let (status, responseHeaders) = try connection.head(deadline: deadline)
        var data = Data()
        if method == "HEAD" {
            // No body follows, whatever Content-Length says.
        } else if responseHeaders["transfer-encoding"]?.lowercased() == "chunked" {
            while true {
                let chunk = try connection.chunk(deadline: deadline)
                if chunk.isEmpty { break }
                data += chunk
            }
        } else if let length = responseHeaders["content-length"].flatMap(Int.init) {
            data = Data(try connection.bytes(length, deadline: deadline))
        }
        return LoopbackResponse(status: status, headers: responseHeaders, body: data)
    }
}

/// An open SSE stream: yields (id, type, data) frames.
final class EventStreamReader {
    let connection: LoopbackConnection
    let status: Int
    private var text = ""

    init(port: Int, token: String?, path: String = "/v1/events/stream", lastEventID: Int64? = nil) throws {
        connection = try LoopbackConnection(port: port)
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        if let lastEventID { request += "Last-Event-ID: \(lastEventID)\r\n" }
        connection.send(request + "\r\n")
        (status, _) = try connection.head(deadline: Date().addingTimeInterval(10))
    }

    /// The next event frame (comments and `retry:` skipped), or a timeout error.
    func next(timeout: Double = 10) throws -> (id: Int64, type: String, data: [String: Any]) {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            while let range = text.range(of: "\n\n") {
                let frame = String(text[..<range.lowerBound])
                text.removeSubrange(..<range.upperBound)
                var id: Int64?, type = "", data = ""
                for line in frame.split(separator: "\n") {
                    if line.hasPrefix("id: ") { id = Int64(line.dropFirst(4)) }
                    if line.hasPrefix("event: ") { type = String(line.dropFirst(7)) }
                    if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
                }
                if let id {
                    let object = ((try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any]) ?? [:]
                    return (id, type, object)
                }
            }
            let chunk = try connection.chunk(deadline: deadline)
            if chunk.isEmpty { throw LoopbackError.malformed("stream ended") }
            text += String(decoding: chunk, as: UTF8.self)
        }
    }
}

/// Runs blocking loopback reads on a thread of their own: the server's handlers run on the
/// cooperative pool (two threads on this machine), which a test blocked in `poll` would starve
/// under the parallel suite (seen in CI: an answer the test waited for never came).
final class Blocking<T>: @unchecked Sendable {
    let work: () throws -> T
    var result: Result<T, any Error>?
    init(_ work: @escaping () throws -> T) { self.work = work }
}

func offPool<T>(_ work: @escaping () throws -> T) async throws -> T {
    let blocking = Blocking(work)
    await offThread { blocking.result = Result { try blocking.work() } }
    return try blocking.result!.get()
}
