import RegionKitHCI
import RegionKitConcurrency

/// One host's conversation with a controller over an `HCITransport`: sends commands one at a
/// time and waits for their Command Complete / Command Status with a bounded time limit, and hands
/// every other event (advertising reports, Hardware Error...) to `onEvent`, in order.
///
/// When the transport's packet stream fails or ends without ``close()``, a Hardware Error
/// arrives, or an event cannot be decoded as H4, `onFailure` is called once with a typed
/// ``BluetoothError`` and the pending command (if any) fails with the same error. After that every
/// ``execute(_:timeout:)`` fails at once: a channel is never reused; open a new transport.
///
/// ```swift
/// let transport = try await HCITransportSpecification(parsing: "tcp:127.0.0.1:9000").open()
/// let channel = HCICommandChannel(transport: transport, onEvent: { print($0) }, onFailure: { print("lost:", $0) })
/// let returned = try await channel.execute(.leReadLocalSupportedFeatures)
/// let features = try LEFeatures(returnParameters: returned)
/// await channel.close()
/// ```
public final class HCICommandChannel: Sendable {
    /// How long a command may go unanswered: 2 s, the Linux kernel's `HCI_CMD_TIMEOUT`
    /// (include/net/bluetooth/hci.h), which BlueZ-managed controllers are held to.
    public static let defaultCommandTimeout: Duration = .seconds(2)

    private struct Pending {
        var id: Int
        var opcode: HCIOpcode
        var continuation: CheckedContinuation<[UInt8], any Error>
        var timer: Task<Void, Never>?
    }

    private struct State {
        var pending: Pending?
        var nextID = 0
        var failure: BluetoothError?
        var closing = false
    }

    public let transport: any HCITransport
    /// A name for messages (`tcp:127.0.0.1:9000`).
    public let name: String
    /// Measures the command timeouts (a test passes a clock it advances by hand).
    public let clock: any Clock<Duration>
    private let layout: LEAdvertisingReportLayout
    private let onEvent: @Sendable (HCIEvent) -> Void
    private let onAdvertisingReport: (@Sendable ([UInt8]) -> Bool)?
    private let onFailure: @Sendable (BluetoothError) -> Void
    private let state = LockedBox(State())
    private let reader = LockedBox<Task<Void, Never>?>(nil)

    /// Starts reading `transport` at once.
    /// - Parameters:
    ///   - layout: how to read multi-report legacy advertising events; `.reportByReport` is what
    ///     controllers, BlueZ, Zephyr, Bumble and tshark do.
    ///   - onEvent: every event that is not the answer to a command, on the reader task.
    ///   - onFailure: called at most once, when the link fails (not after ``close()``).
    ///   - onAdvertisingReport: offered every LE (Extended) Advertising Report event packet
    ///     (event code, length, parameters) before it is decoded; returning true means it was
    ///     handled (the scanner's allocation-free path), false sends it on to `onEvent` decoded.
    ///   - clock: measures command timeouts; `ContinuousClock` unless a test brings its own.
    public init(transport: any HCITransport, name: String = "controller", layout: LEAdvertisingReportLayout = .reportByReport,
                clock: any Clock<Duration> = ContinuousClock(),
                onAdvertisingReport: (@Sendable ([UInt8]) -> Bool)? = nil,
                onEvent: @escaping @Sendable (HCIEvent) -> Void, onFailure: @escaping @Sendable (BluetoothError) -> Void) {
        self.transport = transport
        self.name = name
        self.clock = clock
        self.layout = layout
        self.onAdvertisingReport = onAdvertisingReport
        self.onEvent = onEvent
        self.onFailure = onFailure
        let task = Task { [weak self] in
            guard let packets = self?.transport.packets else { return }
            do {
                for try await packet in packets {
                    guard let self else { return }
                    self.handle(packet)
                }
                self?.fail(BluetoothError(.transportFailed, "\(self?.name ?? "controller"): the transport's packet stream ended"))
            } catch {
                guard let self else { return }
                self.fail(BluetoothError(transport: error, "\(self.name): the link to the controller failed"))
            }
        }
        reader.withLock { $0 = task }
    }

    /// The failure that ended this channel, if any.
    public var failure: BluetoothError? { state.withLock { $0.failure } }

    /// Sends `command`, waits for its answer, and returns the Command Complete return parameters
    /// after checking the status byte. A Command Status with an error, a Command Complete whose
    /// first return parameter is an error status, no answer within `timeout`, or a failed link
    /// throw a ``BluetoothError`` naming the command.
    @discardableResult
    public func execute(_ command: HCICommand, timeout: Duration = HCICommandChannel.defaultCommandTimeout) async throws(BluetoothError) -> [UInt8] {
        do {
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8], any Error>) in
                let outcome = state.withLock { state -> Result<Int, BluetoothError> in
                    if let failure = state.failure { return .failure(failure) }
                    if state.closing { return .failure(BluetoothError(.stopped, "\(name): \(command.opcode) after the channel was closed", opcode: command.opcode)) }
                    if let pending = state.pending {
                        return .failure(BluetoothError(.invalidConfiguration,
                            "\(name): \(command.opcode) sent while \(pending.opcode) is still unanswered (one command at a time)", opcode: command.opcode))
                    }
                    state.nextID += 1
                    state.pending = Pending(id: state.nextID, opcode: command.opcode, continuation: continuation)
                    return .success(state.nextID)
                }
                switch outcome {
                case .failure(let error):
                    continuation.resume(throwing: error)
                case .success(let id):
                    let timer = Task { [weak self] in
                        guard let self else { return }
                        do {
                            try await self.transport.send(H4Packet(command: command))
                        } catch {
                            self.resolve(id, .failure(BluetoothError(transport: error, "\(self.name): cannot send \(command.opcode)")))
                            return
                        }
                        do { try await self.clock.sleep(for: timeout) } catch { return }
                        self.resolve(id, .failure(BluetoothError(.commandTimedOut,
                            "\(self.name): \(command.opcode): no Command Complete or Command Status within \(timeout)", opcode: command.opcode)))
                    }
                    state.withLock { state in
                        if state.pending?.id == id { state.pending?.timer = timer } else { timer.cancel() }
                    }
                }
            }
        } catch let error as BluetoothError {
            throw error
        } catch {
            throw BluetoothError(.transportFailed, "\(name): \(command.opcode): \(error)", opcode: command.opcode, cause: error)
        }
    }

    /// Stops reading and closes the transport. The pending command, if any, fails with `.stopped`.
    public func close() async {
        let pending = state.withLock { state -> Pending? in
            state.closing = true
            defer { state.pending = nil }
            return state.pending
        }
        pending?.timer?.cancel()
        pending?.continuation.resume(throwing: BluetoothError(.stopped, "\(name): closed while \(pending?.opcode.description ?? "") was pending", opcode: pending?.opcode))
        await transport.close()
        let task = reader.withLock { $0 }
        await task?.value
    }

    // MARK: - Reading

    private func handle(_ packet: H4Packet) {
        guard packet.type == .event else { return } // ACL/SCO/ISO: nothing a scanner or advertiser asked for
        if let onAdvertisingReport, packet.payload.count >= 3, packet.payload[0] == HCIEvent.leMetaCode,
           packet.payload[2] == 0x02 || packet.payload[2] == 0x0D, onAdvertisingReport(packet.payload) {
            return
        }
        let event: HCIEvent
        do {
            event = try packet.event(advertisingReportLayout: layout)
        } catch {
            // One garbled event is not a dead link: report it upwards as an unknown event and go on.
            onEvent(.unknown(code: packet.payload.first ?? 0, parameters: Array(packet.payload.dropFirst(2))))
            return
        }
        switch event {
        case .commandComplete(_, let opcode, let returned):
            answer(opcode) { () throws(BluetoothError) -> [UInt8] in
                if let first = returned.first {
                    let status = HCIStatus(rawValue: first)
                    guard status.isSuccess else {
                        throw BluetoothError(.controllerError, "\(self.name): \(opcode) failed: \(status)", opcode: opcode, status: status)
                    }
                }
                return returned
            } ?? onEvent(event)
        case .commandStatus(let status, _, let opcode):
            answer(opcode) { () throws(BluetoothError) -> [UInt8] in
                guard status.isSuccess else {
                    throw BluetoothError(.controllerError, "\(self.name): \(opcode) failed: \(status)", opcode: opcode, status: status)
                }
                return [status.rawValue]
            } ?? onEvent(event)
        case .hardwareError(let code):
            onEvent(event)
            fail(BluetoothError(.hardwareError, "\(name): the controller reported Hardware Error \(String(code, radix: 16, uppercase: true).leftPadded(2))"))
        default:
            onEvent(event)
        }
    }

    /// Resolves the pending command if it is for `opcode`; returns nil (so the caller forwards the
    /// event) when nothing waits for that opcode, e.g. Bumble's spontaneous Command Complete.
    private func answer(_ opcode: HCIOpcode, _ result: () throws(BluetoothError) -> [UInt8]) -> Void? {
        let id = state.withLock { $0.pending?.opcode == opcode ? $0.pending?.id : nil }
        guard let id else { return nil }
        do {
            resolve(id, .success(try result()))
        } catch {
            resolve(id, .failure(error))
        }
        return ()
    }

    private func resolve(_ id: Int, _ result: Result<[UInt8], BluetoothError>) {
        let pending = state.withLock { state -> Pending? in
            guard state.pending?.id == id else { return nil }
            defer { state.pending = nil }
            return state.pending
        }
        guard let pending else { return }
        pending.timer?.cancel()
        switch result {
        case .success(let returned): pending.continuation.resume(returning: returned)
        case .failure(let error): pending.continuation.resume(throwing: error)
        }
    }

    private func fail(_ error: BluetoothError) {
        let (first, pending) = state.withLock { state -> (Bool, Pending?) in
            guard state.failure == nil, !state.closing else { return (false, nil) }
            state.failure = error
            defer { state.pending = nil }
            return (true, state.pending)
        }
        guard first else { return }
        pending?.timer?.cancel()
        pending?.continuation.resume(throwing: error)
        onFailure(error)
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
