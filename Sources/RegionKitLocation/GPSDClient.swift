import Foundation
import RegionKitCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A client for a running gpsd: connects over TCP (default 127.0.0.1:2947), sends
/// `?WATCH={"enable":true,"json":true}`, decodes the newline-delimited JSON, and yields fixes as
/// an `AsyncSequence`. When gpsd goes away (restart, crash, network) it reconnects with
/// exponential backoff, forever unless ``Configuration/maximumReconnectAttempts`` is set.
///
/// "Location unavailable" is explicit: a TPV with mode ≤ 1 (or without a position) becomes a
/// `LocationFix` with `mode == .noFix`; in ``fixes()`` a lost connection does too.
///
/// Blocking socket I/O runs on its own thread (never on the Swift concurrency pool), polling
/// every 100 ms so that cancelling the consuming task stops it promptly.
///
/// ```swift
/// let client = GPSDClient()                       // 127.0.0.1:2947
/// for await fix in client.fixes() {
///     if fix.mode == .noFix { print("location unavailable") } else { print(fix.latitude, fix.longitude) }
/// }
/// ```
public struct GPSDClient: Sendable {
    /// Connection and reconnection policy.
    public struct Configuration: Sendable {
        public var host: String
        public var port: UInt16
        /// Sent right after connecting.
        public var watchCommand: String
        /// Seconds allowed for the TCP connect.
        public var connectTimeout: Double
        /// First reconnect delay in seconds; doubles after each failure up to ``maximumBackoff``.
        public var initialBackoff: Double
        public var maximumBackoff: Double
        /// Give up after this many consecutive failed attempts (`nil`: never give up).
        public var maximumReconnectAttempts: Int?
        /// Treat a connection as dead when nothing arrives for this long (`nil`: wait forever).
        /// gpsd sends nothing while no receiver reports, so leave this `nil` unless you know better.
        public var silenceTimeout: Double?
        /// Drop a TPV-derived fix identical to the one just yielded (gpsd repeats a TPV several
        /// times per cycle). Default `true`.
        public var dropRepeats: Bool
        /// Clock for TPVs without `time` and for disconnect notices.
        public var clock: @Sendable () -> Timestamp
        /// Events ``GPSDClient/events()`` holds for a consumer that falls behind (at least 1);
        /// beyond it the oldest are dropped, and a ``GPSDClient/Event/diagnostic(_:)`` with code
        /// ``LocationInputError/Code/droppedEvents`` says how many once there is room again.
        public var eventBuffer: Int

        public init(
            host: String = "127.0.0.1", port: UInt16 = 2947,
            watchCommand: String = #"?WATCH={"enable":true,"json":true}"#,
            connectTimeout: Double = 5, initialBackoff: Double = 0.25, maximumBackoff: Double = 8,
            maximumReconnectAttempts: Int? = nil, silenceTimeout: Double? = nil, dropRepeats: Bool = true,
            clock: @escaping @Sendable () -> Timestamp = { Timestamp(seconds: Date().timeIntervalSince1970) },
            eventBuffer: Int = 4096
        ) {
            self.eventBuffer = max(1, eventBuffer)
            self.host = host
            self.port = port
            self.watchCommand = watchCommand
            self.connectTimeout = connectTimeout
            self.initialBackoff = initialBackoff
            self.maximumBackoff = maximumBackoff
            self.maximumReconnectAttempts = maximumReconnectAttempts
            self.silenceTimeout = silenceTimeout
            self.dropRepeats = dropRepeats
            self.clock = clock
        }
    }

    /// Everything the client observes, in order.
    public enum Event: Sendable {
        /// TCP connection established and WATCH sent.
        case connected
        /// gpsd's greeting.
        case version(GPSDMessage.Version)
        /// A TPV as a fix (`.noFix` for mode ≤ 1).
        case fix(LocationFix, tpv: GPSDMessage.TPV)
        /// Another decoded message (SKY, DEVICES, WATCH, unknown classes).
        case message(GPSDMessage)
        /// A line that could not be decoded; the connection carries on.
        case diagnostic(LocationInputError)
        /// The connection ended or could not be made; a reconnect follows after `retryIn` seconds
        /// (`nil` when the client gives up).
        case disconnected(LocationInputError, retryIn: Double?)
    }

    public var configuration: Configuration

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Convenience: `GPSDClient(host:port:)`.
    public init(host: String, port: UInt16) {
        self.configuration = Configuration(host: host, port: port)
    }

    /// The full event stream. Stops when the consumer stops iterating (or its task is cancelled),
    /// or after ``Configuration/maximumReconnectAttempts`` consecutive failures.
    ///
    /// A consumer that falls more than ``Configuration/eventBuffer`` events behind loses the
    /// oldest, and is told: a `.diagnostic` with code ``LocationInputError/Code/droppedEvents``
    /// and the count follows as soon as the buffer has room again (or last, before the stream ends).
    public func events() -> AsyncStream<Event> {
        let config = configuration
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(config.eventBuffer))
        let stop = StopFlag()
        continuation.onTermination = { _ in stop.set() }
        let thread = Thread {
            var delivery = DropCountingDelivery(buffer: config.eventBuffer)
            GPSDClient.run(config: config, stop: stop) { delivery.yield($0, to: continuation) }
            delivery.finish(continuation)
        }
        thread.name = "GPSDClient \(config.host):\(config.port)"
        thread.start()
        return stream
    }

    /// Fixes only: one per TPV (repeats dropped), plus a `.noFix` fix stamped with the clock
    /// whenever the connection is lost, so consumers see "location unavailable" during outages.
    ///
    /// A consumer that falls more than ``Configuration/eventBuffer`` fixes behind gets the newest
    /// (where it is now matters, not where it was), and is not told how many it missed (use
    /// ``events()`` for that); the stream held every fix it had not read before, without bound.
    public func fixes() -> AsyncStream<LocationFix> {
        let events = self.events()
        let clock = configuration.clock
        return AsyncStream(bufferingPolicy: .bufferingNewest(configuration.eventBuffer)) { continuation in
            let task = Task {
                var lostReported = false
                for await event in events {
                    switch event {
                    case .fix(let fix, _):
                        lostReported = false
                        continuation.yield(fix)
                    case .disconnected:
                        if !lostReported {
                            continuation.yield(LocationFix(timestamp: clock(), latitude: .nan, longitude: .nan, mode: .noFix))
                            lostReported = true
                        }
                    default:
                        break
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: - Worker (runs on a dedicated thread)

    final class StopFlag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        func set() { lock.lock(); value = true; lock.unlock() }
        var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    }

    static func run(config: Configuration, stop: StopFlag, emit: (Event) -> Void) {
        var failures = 0
        while !stop.isSet {
            var receivedSomething = false
            let error: LocationInputError
            switch connect(host: config.host, port: config.port, timeout: config.connectTimeout, stop: stop) {
            case .failure(let e):
                error = e
            case .success(let fd):
                emit(.connected)
                error = session(fd: fd, config: config, stop: stop, emit: emit, receivedSomething: &receivedSomething)
                close(fd)
            }
            if stop.isSet { return }
            failures = receivedSomething ? 1 : failures + 1
            if let limit = config.maximumReconnectAttempts, failures > limit {
                emit(.disconnected(error, retryIn: nil))
                return
            }
            let delay = min(config.maximumBackoff, config.initialBackoff * pow(2, Double(max(0, failures - 1))))
            emit(.disconnected(error, retryIn: delay))
            sleep(seconds: delay, stop: stop)
        }
    }

    private static func sleep(seconds: Double, stop: StopFlag) {
        let end = Date().addingTimeInterval(seconds)
        while !stop.isSet, Date() < end {
            Thread.sleep(forTimeInterval: min(0.05, max(0, end.timeIntervalSinceNow)))
        }
    }

    private static func session(
        fd: Int32, config: Configuration, stop: StopFlag, emit: (Event) -> Void, receivedSomething: inout Bool
    ) -> LocationInputError {
        let command = Array((config.watchCommand.hasSuffix("\n") ? config.watchCommand : config.watchCommand + "\n").utf8)
        var sent = 0
        while sent < command.count {
            let n = command[sent...].withUnsafeBytes { raw in
                sendNoSignal(fd, raw.baseAddress, raw.count)
            }
            if n > 0 {
                sent += n
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&p, 1, 100)
                if stop.isSet { return LocationInputError(code: .connectionClosed, message: "stopped") }
            } else {
                return LocationInputError(code: .connectionClosed, message: "send failed: \(String(cString: strerror(errno)))")
            }
        }
        var splitter = LineSplitter()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var lastData = Date()
        var lineNumber = 0
        var lastFix: LocationFix?
        while !stop.isSet {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, 100)
            if r == 0 {
                if let limit = config.silenceTimeout, Date().timeIntervalSince(lastData) > limit {
                    return LocationInputError(code: .timedOut, message: "no data from gpsd for \(limit) s")
                }
                continue
            }
            if r < 0 {
                if errno == EINTR { continue }
                return LocationInputError(code: .connectionClosed, message: "poll failed: \(String(cString: strerror(errno)))")
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 {
                return LocationInputError(code: .connectionClosed, message: "gpsd closed the connection")
            }
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                return LocationInputError(code: .connectionClosed, message: "recv failed: \(String(cString: strerror(errno)))")
            }
            lastData = Date()
            receivedSomething = true
            splitter.append(buffer[0..<n])
            while let item = splitter.nextLine() {
                lineNumber += 1
                switch item {
                case .overlong(let prefix, let length):
                    emit(.diagnostic(LocationInputError(
                        code: .malformedJSON, message: "line of \(length) bytes exceeds the limit; dropped",
                        line: lineNumber, excerpt: prefix)))
                case .line(let text):
                    if text.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
                    do throws(LocationInputError) {
                        switch try GPSDMessage.decode(text, lineNumber: lineNumber) {
                        case .tpv(let tpv):
                            let fix = tpv.locationFix(receivedAt: config.clock())
                            if config.dropRepeats, let lastFix, GPSDClient.same(lastFix, fix) { continue }
                            lastFix = fix
                            emit(.fix(fix, tpv: tpv))
                        case .version(let v):
                            emit(.version(v))
                        case let other:
                            emit(.message(other))
                        }
                    } catch {
                        emit(.diagnostic(error))
                    }
                }
            }
        }
        return LocationInputError(code: .connectionClosed, message: "stopped")
    }

    /// Equality that treats two no-fix reports at the same time as the same (NaN ≠ NaN).
    static func same(_ a: LocationFix, _ b: LocationFix) -> Bool {
        if a.mode == .noFix && b.mode == .noFix { return a.timestamp == b.timestamp }
        return a == b
    }

    private static func sendNoSignal(_ fd: Int32, _ p: UnsafeRawPointer?, _ n: Int) -> Int {
        #if os(Linux)
        return send(fd, p, n, Int32(MSG_NOSIGNAL))
        #else
        return send(fd, p, n, 0)
        #endif
    }

    /// Resolves `host` and connects with a timeout; the socket is left non-blocking.
    static func connect(host: String, port: UInt16, timeout: Double, stop: StopFlag) -> Result<Int32, LocationInputError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if os(Linux)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            return .failure(LocationInputError(
                code: .connectionFailed, message: "cannot resolve \(host): \(String(cString: gai_strerror(rc)))"))
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let ai = cursor {
            cursor = ai.pointee.ai_next
            let fd = socket(ai.pointee.ai_family, ai.pointee.ai_socktype, ai.pointee.ai_protocol)
            if fd < 0 { lastError = String(cString: strerror(errno)); continue }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if Glibc_connect(fd, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0 { return .success(fd) }
            guard errno == EINPROGRESS else {
                lastError = String(cString: strerror(errno))
                close(fd)
                continue
            }
            let deadline = Date().addingTimeInterval(timeout)
            var connected = false
            while !stop.isSet, Date() < deadline {
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                let r = poll(&p, 1, 100)
                if r > 0 {
                    var err: Int32 = 0
                    var len = socklen_t(MemoryLayout<Int32>.size)
                    _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
                    if err == 0 { connected = true } else { lastError = String(cString: strerror(err)) }
                    break
                }
                if r < 0 && errno != EINTR { lastError = String(cString: strerror(errno)); break }
            }
            if connected { return .success(fd) }
            if Date() >= deadline { lastError = "timed out after \(timeout) s" }
            close(fd)
        }
        return .failure(LocationInputError(code: .connectionFailed, message: "cannot connect to \(host):\(port): \(lastError)"))
    }
}

#if canImport(Glibc)
private func Glibc_connect(_ fd: Int32, _ addr: UnsafePointer<sockaddr>?, _ len: socklen_t) -> Int32 {
    Glibc.connect(fd, addr, len)
}
#elseif canImport(Darwin)
private func Glibc_connect(_ fd: Int32, _ addr: UnsafePointer<sockaddr>?, _ len: socklen_t) -> Int32 {
    Darwin.connect(fd, addr, len)
}
#endif
