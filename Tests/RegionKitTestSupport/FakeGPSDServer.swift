import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A scripted TCP server on 127.0.0.1 (ephemeral port) that plays gpsd for client tests.
/// Each accepted connection gets the next script: lines to send, then the connection closes.
///
/// ```swift
/// let server = try FakeGPSDServer(scripts: [[#"{"class":"VERSION","release":"3.25"}"#]])
/// let events = await collect(GPSDClient(host: "127.0.0.1", port: server.port).events(), count: 2, timeout: 5)
/// ```
public final class FakeGPSDServer: @unchecked Sendable {
    public let port: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var _received: [String] = []
    private var scripts: [[String]]

    public var received: [String] { lock.lock(); defer { lock.unlock() }; return _received }

    public init(scripts: [[String]]) throws {
        self.scripts = scripts
        (listener, port) = try Loopback.listen(backlog: 4)
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    private func serve() {
        while true {
            lock.lock()
            guard !scripts.isEmpty else { lock.unlock(); break }
            let script = scripts.removeFirst()
            lock.unlock()
            let c = accept(listener, nil, nil)
            if c < 0 { return }
            // Read the client's WATCH line (bounded wait).
            var buf = [UInt8](repeating: 0, count: 512)
            var p = pollfd(fd: c, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, 2000) > 0 {
                let n = buf.withUnsafeMutableBytes { recv(c, $0.baseAddress, $0.count, 0) }
                if n > 0 {
                    lock.lock(); _received.append(String(decoding: buf[0..<n], as: UTF8.self)); lock.unlock()
                }
            }
            for line in script {
                let bytes = Array((line + "\n").utf8)
                _ = bytes.withUnsafeBytes { send(c, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                usleep(5_000)
            }
            usleep(50_000)
            close(c)
        }
        close(listener)
    }
}

/// Collects up to `count` elements of an async sequence, giving up after `seconds`.
public func collect<S: AsyncSequence & Sendable>(
    _ sequence: S, count: Int, timeout seconds: Double, until done: @escaping @Sendable ([S.Element]) -> Bool = { _ in false }
) async -> [S.Element]
where S.Element: Sendable {
    await withTaskGroup(of: [S.Element]?.self) { group in
        group.addTask {
            var out: [S.Element] = []
            do {
                for try await e in sequence {
                    out.append(e)
                    if out.count >= count || done(out) { break }
                }
            } catch {}
            return out
        }
        group.addTask {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            return nil
        }
        var result: [S.Element] = []
        for await r in group {
            if let r { result = r; group.cancelAll(); break }
            // timeout: cancel the reader; its partial result arrives next
            group.cancelAll()
        }
        return result
    }
}
