/// Where to find a controller, parsed from a short string:
///
/// - `hci0`, `hci1:user`, `hci0:raw` — Linux HCI socket (user channel by default)
/// - `tcp:HOST:PORT` — H4 over TCP (`tcp:127.0.0.1:9000`, `tcp:[::1]:9000`, `tcp:localhost:9000`)
/// - `serial:PATH[:BAUD]` — H4 over a serial device (`serial:/dev/ttyUSB0:1000000`; 115200 by default)
///
/// Errors name the bad part of the string.
///
/// ```swift
/// let spec = try HCITransportSpecification(parsing: "tcp:127.0.0.1:9000")
/// let transport = try await spec.open(timeout: .seconds(2))
/// ```
public enum HCITransportSpecification: Hashable, Sendable, CustomStringConvertible {
    case hciSocket(adapter: UInt16, channel: HCISocketTransport.Channel)
    case tcp(host: String, port: UInt16)
    case serial(path: String, baudRate: Int)

    public static let defaultBaudRate = 115_200

    public init(parsing text: String) throws(HCIError) {
        func fail(_ message: String) -> HCIError {
            HCIError(code: .invalidTransportSpecification, message: "'\(text)': \(message)")
        }
        if text.hasPrefix("tcp:") {
            let rest = String(text.dropFirst(4))
            let host: String
            let portText: String
            if rest.hasPrefix("[") {
                guard let close = rest.firstIndex(of: "]") else { throw fail("IPv6 host '\(rest)' lacks its closing ']'") }
                host = String(rest[rest.index(after: rest.startIndex)..<close])
                let after = rest[rest.index(after: close)...]
                guard after.hasPrefix(":") else { throw fail("expected ':PORT' after '[\(host)]'") }
                portText = String(after.dropFirst())
            } else {
                guard let colon = rest.lastIndex(of: ":") else { throw fail("expected tcp:HOST:PORT, the port is missing") }
                host = String(rest[..<colon])
                portText = String(rest[rest.index(after: colon)...])
                if host.contains(":") { throw fail("host '\(host)' contains ':'; write an IPv6 address as [ADDRESS]") }
            }
            guard !host.isEmpty else { throw fail("the host is empty (tcp:HOST:PORT)") }
            guard let port = UInt16(portText), port > 0 else {
                throw fail("port '\(portText)' is not a number in 1...65535")
            }
            self = .tcp(host: host, port: port)
        } else if text.hasPrefix("serial:") {
            let rest = String(text.dropFirst(7))
            var path = rest
            var baud = Self.defaultBaudRate
            if let colon = rest.lastIndex(of: ":") {
                let tail = String(rest[rest.index(after: colon)...])
                if !tail.isEmpty, tail.allSatisfy(\.isNumber) {
                    guard let value = Int(tail), SerialTransport.supportedBaudRates.contains(value) else {
                        throw fail("baud rate '\(tail)' is not one of \(SerialTransport.supportedBaudRates.map(String.init).joined(separator: ", "))")
                    }
                    baud = value
                    path = String(rest[..<colon])
                } else if tail.isEmpty {
                    throw fail("empty baud rate after ':'")
                }
            }
            guard !path.isEmpty else { throw fail("the device path is empty (serial:PATH[:BAUD])") }
            self = .serial(path: path, baudRate: baud)
        } else if text.hasPrefix("hci") {
            let rest = text.dropFirst(3)
            let parts = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let indexText = String(parts.first ?? "")
            guard !indexText.isEmpty, indexText.allSatisfy(\.isNumber), let index = UInt16(indexText), index < 0xFFFF else {
                throw fail("adapter number '\(indexText)' is not a number in 0...65534 (hci0, hci1, ...)")
            }
            var channel = HCISocketTransport.Channel.user
            if parts.count == 2 {
                switch parts[1] {
                case "user": channel = .user
                case "raw": channel = .raw
                default: throw fail("channel '\(parts[1])' is neither 'user' nor 'raw'")
                }
            }
            self = .hciSocket(adapter: index, channel: channel)
        } else {
            let scheme = text.split(separator: ":", maxSplits: 1).first.map(String.init) ?? text
            throw fail("unknown transport '\(scheme)'; use hciN, tcp:HOST:PORT or serial:PATH[:BAUD]")
        }
    }

    /// Opens the transport. `timeout` bounds a TCP connect.
    public func open(timeout: Duration = .seconds(5)) async throws(HCIError) -> any HCITransport {
        switch self {
        case .hciSocket(let adapter, let channel):
            try await HCISocketTransport.open(adapter: adapter, channel: channel)
        case .tcp(let host, let port):
            try await TCPTransport.connect(host: host, port: port, timeout: timeout)
        case .serial(let path, let baudRate):
            try await SerialTransport.open(path: path, baudRate: baudRate)
        }
    }

    public var description: String {
        switch self {
        case .hciSocket(let adapter, let channel): "hci\(adapter):\(channel == .user ? "user" : "raw")"
        case .tcp(let host, let port): "tcp:\(host.contains(":") ? "[\(host)]" : host):\(port)"
        case .serial(let path, let baudRate): "serial:\(path):\(baudRate)"
        }
    }
}
