#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import RegionKitConcurrency

/// The one place that reads and writes transport file descriptors.
///
/// Owns a non-blocking descriptor and a wake-up pipe. A dedicated reader thread
/// polls both, feeds what it reads through an ``H4Deframer`` and yields packets
/// into an `AsyncThrowingStream`. Writes happen on the caller's thread under a
/// lock, waiting with `poll` (bounded by `writeTimeout`) when the kernel buffer
/// is full. Only the reader thread closes the descriptor, under the same lock,
/// so a write can never hit a closed or reused descriptor.
///
/// ```swift
/// let channel = FileDescriptorChannel(descriptor: fd, name: "tcp:127.0.0.1:9000", isSocket: true)
/// channel.start()
/// try channel.write(H4Packet(command: .reset).encoded)
/// for try await packet in channel.packets { ... }
/// await channel.close()
/// ```
final class FileDescriptorChannel: @unchecked Sendable {
    private struct State {
        var descriptor: Int32
        var wakeRead: Int32
        var wakeWrite: Int32
        var closing = false
        var finished = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    let name: String
    let packets: AsyncThrowingStream<H4Packet, any Error>
    private let continuation: AsyncThrowingStream<H4Packet, any Error>.Continuation
    private let state: LockedBox<State>
    private let isSocket: Bool
    private let writeTimeoutMilliseconds: Int32

    /// Takes ownership of `descriptor` (it will be made non-blocking and closed by the channel).
    init(descriptor: Int32, name: String, isSocket: Bool, writeTimeout: Duration = .seconds(2)) throws(HCIError) {
        var pipeDescriptors: [Int32] = [-1, -1]
        guard pipe(&pipeDescriptors) == 0 else {
            let code = errno
            _ = Syscall.close(descriptor)
            throw HCIError(code: .io, message: "cannot create the wake-up pipe for \(name)", cause: SystemCallError(call: "pipe", errno: code))
        }
        for end in pipeDescriptors {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        self.name = name
        self.isSocket = isSocket
        let (stream, continuation) = AsyncThrowingStream<H4Packet, any Error>.makeStream(bufferingPolicy: .unbounded)
        packets = stream
        self.continuation = continuation
        state = LockedBox(State(descriptor: descriptor, wakeRead: pipeDescriptors[0], wakeWrite: pipeDescriptors[1]))
        let milliseconds = writeTimeout.components.seconds * 1000 + writeTimeout.components.attoseconds / 1_000_000_000_000_000
        writeTimeoutMilliseconds = Int32(clamping: milliseconds)
    }

    /// Starts the reader thread.
    func start() {
        let thread = Thread { [self] in readLoop() }
        thread.name = "RegionKitHCI reader \(name)"
        thread.start()
    }

    // MARK: Reading

    private func readLoop() {
        let (descriptor, wakeRead) = state.withLock { ($0.descriptor, $0.wakeRead) }
        var deframer = H4Deframer()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var failure: HCIError?
        loop: while true {
            var fds = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                failure = HCIError(code: .io, message: "poll on \(name) failed", cause: SystemCallError(call: "poll", errno: errno))
                break
            }
            if fds[1].revents != 0 { break } // close() asked us to stop
            if fds[0].revents == 0 { continue }
            let count = buffer.withUnsafeMutableBytes { Syscall.read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 {
                failure = HCIError(code: .connectionClosed, message: "\(name): the controller closed the connection (end of stream)")
                break
            }
            if count < 0 {
                let code = errno
                if code == EINTR || code == EAGAIN || code == EWOULDBLOCK { continue }
                let kind: HCIError.Code = (code == ECONNRESET || code == EPIPE || code == ENODEV || code == ENXIO) ? .connectionClosed : .io
                failure = HCIError(code: kind, message: "\(name): read failed", cause: SystemCallError(call: "read", errno: code))
                break
            }
            deframer.append(buffer[0..<count])
            do {
                // Yield each packet as soon as it is cut, so packets before a framing error still arrive.
                while let packet = try deframer.next() { continuation.yield(packet) }
            } catch {
                failure = HCIError(
                    code: error.code, message: "\(name): \(error.message)", offset: error.offset, index: error.index, cause: error.cause
                )
                break loop
            }
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            _ = Syscall.close(state.descriptor)
            _ = Syscall.close(state.wakeRead)
            _ = Syscall.close(state.wakeWrite)
            state.descriptor = -1
            state.wakeRead = -1
            state.wakeWrite = -1
            state.finished = true
            let waiters = state.waiters
            state.waiters = []
            return waiters
        }
        // A failure after close() was requested is not reported: the user asked for the end.
        let requested = state.withLock { $0.closing }
        if let failure, !requested {
            continuation.finish(throwing: failure)
        } else {
            continuation.finish()
        }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: Writing

    /// Writes all bytes or throws. Safe to call from any thread.
    func write(_ bytes: [UInt8]) throws(HCIError) {
        let result: HCIError? = state.withLock { state -> HCIError? in
            guard !state.closing, !state.finished, state.descriptor >= 0 else {
                return HCIError(code: state.closing ? .closed : .connectionClosed, message: "\(name) is closed")
            }
            var written = 0
            while written < bytes.count {
                let count = bytes.withUnsafeBytes { raw -> Int in
                    let base = raw.baseAddress.map { $0 + written }
                    if isSocket {
                        return send(state.descriptor, base, bytes.count - written, Int32(MSG_NOSIGNAL))
                    }
                    return Syscall.write(state.descriptor, base, bytes.count - written)
                }
                if count > 0 {
                    written += count
                    continue
                }
                let code = errno
                if count < 0, code == EINTR { continue }
                if count < 0, code == EAGAIN || code == EWOULDBLOCK {
                    var fds = [pollfd(fd: state.descriptor, events: Int16(POLLOUT), revents: 0)]
                    let ready = poll(&fds, 1, writeTimeoutMilliseconds)
                    if ready == 0 {
                        return HCIError(code: .timedOut, message: "\(name): the controller accepted no bytes for \(writeTimeoutMilliseconds) ms (\(written) of \(bytes.count) written)")
                    }
                    continue
                }
                let kind: HCIError.Code = (code == EPIPE || code == ECONNRESET || code == ENODEV || code == ENXIO) ? .connectionClosed : .io
                return HCIError(code: kind, message: "\(name): write failed", cause: SystemCallError(call: isSocket ? "send" : "write", errno: code))
            }
            return nil
        }
        if let result { throw result }
    }

    // MARK: Closing

    /// Stops the reader, closes the descriptor, finishes `packets`, then returns.
    func close() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.finished { return true }
                state.waiters.append(waiter)
                Self.signalClose(&state)
                return false
            }
            if done { waiter.resume() }
        }
    }

    /// Asks the reader to stop without waiting (for `deinit` of a transport that was never closed).
    func requestClose() {
        state.withLock { state in
            if !state.finished { Self.signalClose(&state) }
        }
    }

    private static func signalClose(_ state: inout State) {
        guard !state.closing else { return }
        state.closing = true
        var byte: UInt8 = 1
        _ = Syscall.write(state.wakeWrite, &byte, 1)
    }

    var isClosed: Bool { state.withLock { $0.closing || $0.finished } }
}

/// Runs blocking work (connect, open, tcsetattr) on its own thread so it never
/// occupies a Swift concurrency thread.
func runBlocking<T: Sendable>(_ work: @escaping @Sendable () throws(HCIError) -> T) async throws(HCIError) -> T {
    let result: Result<T, HCIError> = await withCheckedContinuation { continuation in
        let thread = Thread {
            do throws(HCIError) {
                continuation.resume(returning: .success(try work()))
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        thread.start()
    }
    return try result.get()
}
