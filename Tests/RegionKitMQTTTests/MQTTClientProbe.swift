import Foundation
import Logging
import RegionKitConcurrency
import RegionKitTestSupport
@testable import RegionKitMQTT

/// Runs an `MQTTClient` for a test and records what it reports: messages, connection events, logs.
final class MQTTClientProbe: Sendable {
    let client: MQTTClient
    let logs = InMemoryLogHandler.Store()
    private final class Recorder: Sendable {
        let messages = LockedBox<[MQTTMessage]>([])
        let events = LockedBox<[MQTTConnectionEvent]>([])
    }
    private let recorder = Recorder()
    private let task = LockedBox<Task<Void, Never>?>(nil)

    /// - Parameter beforeRecording: runs in `onConnectionEvent` before the event is recorded (a
    ///   slow handler, say).
    init(configuration: MQTTClientConfiguration, readPause: MQTTReadPause? = nil,
         beforeRecording: (@Sendable (MQTTConnectionEvent) -> Void)? = nil) {
        let recorder = recorder
        let logs = logs
        client = MQTTClient(configuration: configuration, logger: Logger(label: "regionkit.mqtt.test") { _ in InMemoryLogHandler(store: logs) },
                            readPause: readPause,
                            onMessage: { message in recorder.messages.withLock { $0.append(message) } },
                            onConnectionEvent: { event in
                                beforeRecording?(event)
                                recorder.events.withLock { $0.append(event) }
                            })
    }

    /// Starts `run()` in a task.
    func start() {
        let client = client
        task.withLock { $0 = Task { await client.run() } }
    }

    func stop() async {
        await client.shutdown()
        await task.withLock { $0 }?.value
    }

    var received: [MQTTMessage] { recorder.messages.withLock { $0 } }
    var allEvents: [MQTTConnectionEvent] { recorder.events.withLock { $0 } }

    var connectedCount: Int { allEvents.filter { if case .connected = $0 { true } else { false } }.count }
    /// The reason of every `.disconnected` event, in order (`nil` for a clean shutdown).
    var disconnections: [MQTTError?] {
        var reasons: [MQTTError?] = []
        for case .disconnected(let error) in allEvents { reasons.append(error) }
        return reasons
    }
    var disconnectedCount: Int { allEvents.filter { if case .disconnected = $0 { true } else { false } }.count }

    /// Polls `condition` every 10 ms until it holds or `timeout` passes; returns whether it held.
    @discardableResult
    func wait(timeout: Duration = .seconds(15), until condition: () -> Bool) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }
}
