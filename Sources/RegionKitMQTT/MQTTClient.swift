import Logging
import NIOCore
import NIOPosix
import NIOSSL
import RegionKitConcurrency

/// An MQTT 3.1.1 client that stays connected: `run()` connects, reconnects with exponential backoff
/// and jitter, re-subscribes every remembered filter after each reconnect, pings every keepalive and
/// reconnects when the PINGRESP is late, until its task is cancelled or `shutdown()` is called.
///
/// ```swift
/// let client = MQTTClient(configuration: try MQTTClientConfiguration(url: "mqtt://127.0.0.1:1883"),
///                         onMessage: { message in print(message.topic, message.payload.count) })
/// let running = Task { await client.run() }
/// try await client.subscribe("espresense/devices/+/+", qos: .atMostOnce)
/// try await client.waitUntilConnected()
/// try await client.publish(MQTTMessage(topic: "regionkit/home/status", payload: Array("online".utf8),
///                                      qos: .atLeastOnce, retain: true))
/// await client.shutdown()
/// await running.value
/// ```
///
/// With several servers (``MQTTClientConfiguration/fallbackServers``) each attempt goes to the next
/// server of the list (wrapping around), after a failed attempt and after a lost connection alike;
/// the backoff delay is waited after a lost connection and once per round in which every server
/// failed. ``currentServer`` says which one the live connection goes to.
///
/// `onMessage` is called on the connection's event loop for each incoming PUBLISH, in order (keep it
/// cheap; QoS 1 messages are acknowledged after it returns; a client made with `onDelivery` leaves
/// that to its consumer, ``acknowledge(_:)``). `onConnectionEvent` is called from the
/// task running `run()` (`.connected`, `.disconnected`), from the connection's event loop or the
/// task of a `subscribe` call (`.subscriptionRefused`, `.subscriptionRestored`); a connection's
/// refusals and restorations are reported after its `.connected`. Neither may wait for `shutdown()`.
public final class MQTTClient: Sendable {
    /// The live connection (after CONNACK).
    struct Connection: Sendable {
        let channel: any Channel
        let handler: NIOLoopBoundBox<MQTTConnectionHandler?>
    }

    private struct State: ~Copyable {
        var subscriptions: [MQTTPacket.Subscription] = []
        var connection: Connection?
        /// The server of the live connection.
        var server: MQTTServer?
        /// The channel from TCP connect until it is closed (also before CONNACK).
        var channel: (any Channel)?
        var running = false
        var runFinished = false
        var shutdownRequested = false
        /// Whether a failure of the attempt under way is followed at once by an attempt to another
        /// server (``triesAnotherServerAfterFailure``).
        var anotherServerAfterFailure = false
        var nextWaiterID: UInt64 = 0
        var connectedWaiters: [UInt64: CheckedContinuation<Result<Void, MQTTError>, Never>] = [:]
        var runEndWaiters: [CheckedContinuation<Void, Never>] = []
        var sleeper: (id: UInt64, continuation: CheckedContinuation<Void, Never>)?
        /// Whether the live connection's `.connected` has been reported: a refusal that comes
        /// first (its SUBACK is read on the event loop, `.connected` is reported from `run()`'s
        /// task) waits in ``pendingRefusals`` and is reported right after it, so that a handler
        /// that resets its state on `.connected` never erases it.
        var connectedReported = false
        var pendingRefusals: [String] = []
        /// The filters refused on the live connection that are being asked for again (one chain
        /// of ``MQTTClient/askAgain(for:refusals:on:logger:)`` each).
        var askingAgain: Set<String> = []
    }

    public let configuration: MQTTClientConfiguration
    private let logger: Logger
    /// Each message, with the acknowledgement it owes when ``acknowledgesLater`` (QoS 1).
    private let onDelivery: @Sendable (MQTTMessage, MQTTAcknowledgement?) -> Void
    /// Made with `onDelivery`: QoS 1 messages are acknowledged by ``acknowledge(_:)``, not on delivery.
    public let acknowledgesLater: Bool
    private let onConnectionEvent: @Sendable (MQTTConnectionEvent) -> Void
    private let onReadComplete: @Sendable () -> Void
    /// Backpressure from the consumer of the messages (nil: the client reads whenever it can).
    public let readPause: MQTTReadPause?
    private let group: any EventLoopGroup
    private let state = LockedBox(State())
    /// PUBLISH packets over ``MQTTClientConfiguration/maximumIncomingPacketSize`` skipped so far.
    private let skipped = LockedBox(0)

    /// - Parameters:
    ///   - readPause: stops reading from the broker while `onMessage`'s consumer is behind
    ///     (``MQTTReadPause``); nil reads whenever the socket has bytes.
    ///   - onReadComplete: called on the event loop after the messages of one read from the socket
    ///     went to `onMessage` (and before their QoS 1 acknowledgements are flushed): where a
    ///     consumer that batches them hands the batch on.
    public convenience init(configuration: MQTTClientConfiguration, logger: Logger = Logger(label: "regionkit.mqtt"),
                            readPause: MQTTReadPause? = nil, onReadComplete: @escaping @Sendable () -> Void = {},
                            onMessage: @escaping @Sendable (MQTTMessage) -> Void,
                            onConnectionEvent: @escaping @Sendable (MQTTConnectionEvent) -> Void = { _ in }) {
        self.init(configuration: configuration, logger: logger, readPause: readPause, onReadComplete: onReadComplete,
                  acknowledgesLater: false, onDelivery: { message, _ in onMessage(message) }, onConnectionEvent: onConnectionEvent)
    }

    /// A client whose consumer acknowledges each QoS 1 message itself, once it has made it
    /// durable (``acknowledge(_:)``, in the order the messages arrived): `onDelivery` gets the
    /// message and, at QoS 1, the ``MQTTAcknowledgement`` it owes. A message never acknowledged
    /// stays the broker's: with a persistent session (`cleanSession` false) it is delivered again
    /// after the connection closes, to whoever connects with the client id next. The broker sends
    /// at most its in-flight window of unacknowledged QoS 1 messages (Mosquitto's
    /// `max_inflight_messages`, 20 by default) before it waits for acknowledgements.
    ///
    /// ```swift
    /// let client = MQTTClient(configuration: configuration, onDelivery: { message, acknowledgement in
    ///     queue.append((message, acknowledgement))   // acknowledged once written
    /// })
    /// ```
    public convenience init(configuration: MQTTClientConfiguration, logger: Logger = Logger(label: "regionkit.mqtt"),
                            readPause: MQTTReadPause? = nil, onReadComplete: @escaping @Sendable () -> Void = {},
                            onDelivery: @escaping @Sendable (MQTTMessage, MQTTAcknowledgement?) -> Void,
                            onConnectionEvent: @escaping @Sendable (MQTTConnectionEvent) -> Void = { _ in }) {
        self.init(configuration: configuration, logger: logger, readPause: readPause, onReadComplete: onReadComplete,
                  acknowledgesLater: true, onDelivery: onDelivery, onConnectionEvent: onConnectionEvent)
    }

    private init(configuration: MQTTClientConfiguration, logger: Logger, readPause: MQTTReadPause?, onReadComplete: @escaping @Sendable () -> Void,
                 acknowledgesLater: Bool, onDelivery: @escaping @Sendable (MQTTMessage, MQTTAcknowledgement?) -> Void,
                 onConnectionEvent: @escaping @Sendable (MQTTConnectionEvent) -> Void) {
        self.readPause = readPause
        self.onReadComplete = onReadComplete
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "clientID"] = "\(configuration.clientID)"
        self.logger = logger
        self.acknowledgesLater = acknowledgesLater
        self.onDelivery = onDelivery
        self.onConnectionEvent = onConnectionEvent
        self.group = MultiThreadedEventLoopGroup.singleton
    }

    /// Closes the live connection without ending the client: `run()` connects again after its
    /// backoff delay (reporting `.disconnected`, then `.connected`). For a consumer that withheld
    /// acknowledgements: a persistent session delivers those messages again on the next
    /// connection. Nothing when there is no connection.
    ///
    /// ```swift
    /// if withheld > 0 { client.reconnect() }
    /// ```
    public func reconnect() {
        guard let connection = state.withLock({ $0.connection }) else { return }
        connection.channel.close(promise: nil)
    }

    /// Sends the PUBACKs a client made with `onDelivery` owes, in the order given (MQTT 3.1.1
    /// §4.6 asks for the order the messages arrived in). Those of a connection that has closed
    /// are dropped: the broker delivers their messages again. Returns at once (written on the
    /// connection's event loop, behind what is already queued there).
    ///
    /// ```swift
    /// client.acknowledge(written.compactMap(\.acknowledgement))
    /// ```
    public func acknowledge(_ acknowledgements: [MQTTAcknowledgement]) {
        var start = acknowledgements.startIndex
        // One hand-over per run of one connection's (normally all of them).
        while start < acknowledgements.endIndex {
            let connection = acknowledgements[start].connection
            var end = start + 1
            while end < acknowledgements.endIndex, acknowledgements[end].connection === connection { end += 1 }
            let packetIDs = acknowledgements[start..<end].map(\.packetID)
            acknowledgements[start].loop.execute { connection.value?.acknowledge(packetIDs) }
            start = end
        }
    }

    /// Messages skipped since the client was made because they were larger than
    /// ``MQTTClientConfiguration/maximumIncomingPacketSize`` (each reported as
    /// ``MQTTConnectionEvent/messageSkipped(topic:size:retained:)``).
    public var skippedMessages: Int { skipped.withLock { $0 } }

    /// Whether a CONNACK accepted the current connection.
    public var isConnected: Bool { state.withLock { $0.connection != nil } }

    /// The server a CONNACK accepted the current connection from (`nil` while not connected).
    public var currentServer: MQTTServer? { state.withLock { $0.connection == nil ? nil : $0.server } }

    /// Whether the connection attempt under way, should it fail before its CONNACK, is followed
    /// at once by an attempt to another server of ``MQTTClientConfiguration/servers`` (not the
    /// last of a round of attempts failed in a row). Read it when the attempt's `.disconnected`
    /// is reported: a caller that takes a failed attempt for the broker being unreachable waits
    /// for the round's last one, so a standby broker answering next is no outage. Always false
    /// with one server.
    ///
    /// ```swift
    /// case .disconnected where !client.triesAnotherServerAfterFailure:
    ///     report(.restricted(reason: "every broker unreachable"))
    /// ```
    public var triesAnotherServerAfterFailure: Bool { state.withLock { $0.anotherServerAfterFailure } }

    // MARK: Running

    /// Connects and stays connected until the task is cancelled or `shutdown()` is called; then
    /// sends DISCONNECT, closes, reports `.disconnected(nil)` and returns. Call it once.
    public func run() async {
        let alreadyRunning = state.withLock { state in
            defer { state.running = true }
            return state.running
        }
        guard !alreadyRunning else {
            logger.error("MQTTClient.run() called while already running")
            return
        }
        await withTaskCancellationHandler {
            await runLoop()
        } onCancel: {
            beginShutdown()
        }
        let (waiters, endWaiters) = state.withLock { state in
            state.runFinished = true
            state.shutdownRequested = true
            defer { state.connectedWaiters.removeAll(); state.runEndWaiters.removeAll() }
            return (Array(state.connectedWaiters.values), state.runEndWaiters)
        }
        for waiter in waiters { waiter.resume(returning: .failure(.shutdown)) }
        for waiter in endWaiters { waiter.resume() }
    }

    /// Sends DISCONNECT, closes the connection and waits until `run()` has returned (when it runs).
    /// The will is not published.
    public func shutdown() async {
        beginShutdown()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting = state.withLock { state in
                guard state.running, !state.runFinished else { return false }
                state.runEndWaiters.append(continuation)
                return true
            }
            if !waiting { continuation.resume() }
        }
    }

    /// Returns once connected; throws `.shutdown` after `shutdown()` (or the end of `run()`) and
    /// `.cancelled` when the waiting task is cancelled.
    public func waitUntilConnected() async throws(MQTTError) {
        let id = state.withLock { state in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, MQTTError>, Never>) in
                let immediate: Result<Void, MQTTError>? = state.withLock { state in
                    if state.connection != nil { return .success(()) }
                    if state.shutdownRequested { return .failure(.shutdown) }
                    if Task.isCancelled { return .failure(.cancelled) }
                    state.connectedWaiters[id] = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            state.withLock { $0.connectedWaiters.removeValue(forKey: id) }?.resume(returning: .failure(.cancelled))
        }
        try result.get()
    }

    // MARK: Requests

    /// Subscribes to `filter`, remembered for re-subscription after every reconnect. When connected,
    /// waits for the SUBACK and, on 0x80, reports `.subscriptionRefused` and throws
    /// `.subscriptionFailed` (the filter stays remembered: asked for again after a delay, as
    /// `.subscriptionRefused` says; `unsubscribe` forgets it); when not
    /// connected (or the connection drops first) it returns and the filter is subscribed on the next
    /// connection. Subscribing again to a remembered filter replaces its QoS.
    public func subscribe(_ filter: String, qos: MQTTQoS) async throws(MQTTError) {
        try MQTTTopicFilter.validateFilter(filter)
        let connection = try state.withLock { (state) throws(MQTTError) -> Connection? in
            guard !state.shutdownRequested else { throw .shutdown }
            if let index = state.subscriptions.firstIndex(where: { $0.filter == filter }) {
                state.subscriptions[index].qos = qos
            } else {
                state.subscriptions.append(.init(filter: filter, qos: qos))
            }
            return state.connection
        }
        guard let connection else { return }
        let codes: [UInt8]
        do {
            codes = try await perform(on: connection) { handler, promise in
                handler.subscribe([.init(filter: filter, qos: qos)], promise: promise)
            }
        } catch .notConnected {
            return
        }
        if codes.first == MQTTPacket.SubAck.failure {
            refused(filter, on: connection, logger: logger)
            throw .subscriptionFailed(filter: filter)
        }
    }

    /// Forgets `filter`; when connected, sends UNSUBSCRIBE and waits for the UNSUBACK.
    public func unsubscribe(_ filter: String) async throws(MQTTError) {
        try MQTTTopicFilter.validateFilter(filter)
        let connection = state.withLock { state in
            state.subscriptions.removeAll { $0.filter == filter }
            return state.connection
        }
        guard let connection else { return }
        do {
            try await perform(on: connection) { handler, promise in handler.unsubscribe([filter], promise: promise) }
        } catch .notConnected {
            return
        }
    }

    /// Publishes `message`. QoS 0 returns once written to the socket, QoS 1 after the PUBACK (many
    /// may be in flight at once). Throws `.notConnected` at once when there is no connection, or when
    /// it drops before the PUBACK: callers with a durable outbox retry after the next `.connected`.
    public func publish(_ message: MQTTMessage) async throws(MQTTError) {
        try Self.checkPublishable(message)
        guard let connection = state.withLock({ $0.connection }) else { throw .notConnected }
        try await perform(on: connection) { handler, promise in handler.publish(message, promise: promise) }
    }

    /// Throws what ``publish(_:)-(MQTTMessage)`` would throw for `message` whatever the connection
    /// (`.invalidTopic`, `.packetTooLarge`): its topic is not a valid topic name, or the PUBLISH
    /// would not fit MQTT's 268,435,455-byte remaining length. Publishing such a message again
    /// cannot succeed: a caller that publishes a group can leave it out and publish the rest.
    ///
    /// ```swift
    /// let sendable = group.filter { (try? MQTTClient.checkPublishable($0)) != nil }
    /// ```
    public static func checkPublishable(_ message: MQTTMessage) throws(MQTTError) {
        try MQTTTopicFilter.validateTopicName(message.topic)
        let size = 2 + message.topic.utf8.count + (message.qos == .atLeastOnce ? 2 : 0) + message.payload.count
        guard size <= MQTTPacket.maximumRemainingLength else {
            throw .packetTooLarge(size: size, maximum: MQTTPacket.maximumRemainingLength)
        }
    }

    /// Publishes `messages` in this order, pipelined: up to ``publishWindow`` are written in one
    /// event-loop turn, then their acknowledgements are awaited (QoS 1) — one round trip for the
    /// lot instead of one each; a longer group goes out in windows of that many, each after the
    /// one before it was acknowledged (a group of over 65,535 QoS 1 messages, every packet id in
    /// flight, failed with ``MQTTError/tooManyInFlight`` at every attempt). Throws the first
    /// failure (the others may or may not have been delivered; QoS 1 callers re-publish the
    /// whole group); none is handed when one of them could never be published.
    ///
    /// ```swift
    /// try await client.publish([event, retainedState, retainedRoom])
    /// ```
    public func publish(_ messages: [MQTTMessage]) async throws(MQTTError) {
        if messages.count > Self.publishWindow {
            for message in messages { try Self.checkPublishable(message) }
        }
        var start = messages.startIndex
        repeat {
            let end = messages.index(start, offsetBy: Self.publishWindow, limitedBy: messages.endIndex) ?? messages.endIndex
            let sent = try hand(start == messages.startIndex && end == messages.endIndex ? messages : Array(messages[start..<end]), queued: false)
            var failure: MQTTError?
            for future in sent {
                do { try await future.get() } catch { failure = failure ?? Self.mqttError(from: error) }
            }
            if let failure { throw failure }
            start = end
        } while start < messages.endIndex
    }

    /// The most messages `publish(_:)` of a group hands to the connection at once: well
    /// under the 65,535 packet ids, leaving room for the other publishers of one connection.
    public static let publishWindow = 8_192

    /// Hands `messages` to the connection in this order and returns at once, without waiting for
    /// them to be written or acknowledged: messages handed by calls made one after another go out
    /// in the order of the calls, which an unstructured `Task { try await publish(…) }` per call
    /// does not promise. For outputs that are published from synchronous code and are worth
    /// nothing out of order (retained QoS 0 state: the last one written is what the broker keeps).
    /// - Returns: false, and nothing handed, when there is no connection or a message could never
    ///   be published (``checkPublishable(_:)``); a connection that drops before they are written
    ///   loses them (QoS 0 semantics).
    ///
    /// ```swift
    /// lock.withLock { client.publishDetached([distance, attributes]) }   // ordered with the next call
    /// ```
    @discardableResult
    public func publishDetached(_ messages: [MQTTMessage]) -> Bool {
        // Always queued, even on the event loop: written at once there, they would overtake
        // messages another thread handed a moment before and that still wait in the loop's queue.
        (try? hand(messages, queued: true)) != nil
    }

    /// Checks `messages`, then hands them to the connection's event loop in order (at once when
    /// called on it, unless `queued`: then behind everything already queued there); the futures
    /// complete when each is written (QoS 0) or acknowledged (QoS 1).
    private func hand(_ messages: [MQTTMessage], queued: Bool) throws(MQTTError) -> [EventLoopFuture<Void>] {
        for message in messages { try Self.checkPublishable(message) }
        guard !messages.isEmpty else { return [] }
        guard let connection = state.withLock({ $0.connection }) else { throw .notConnected }
        let loop = connection.channel.eventLoop
        let promises = messages.map { _ in loop.makePromise(of: Void.self) }
        let box = connection.handler
        let write: @Sendable () -> Void = {
            guard let handler = box.value else {
                for promise in promises { promise.fail(MQTTError.notConnected) }
                return
            }
            for (message, promise) in zip(messages, promises) { handler.publish(message, promise: promise) }
        }
        if loop.inEventLoop && !queued { write() } else { loop.execute(write) }
        return promises.map(\.futureResult)
    }

    /// Runs `body` with the connection's handler on its event loop and waits for the promise.
    private func perform<T: Sendable>(
        on connection: Connection,
        _ body: @escaping @Sendable (MQTTConnectionHandler, EventLoopPromise<T>) -> Void
    ) async throws(MQTTError) -> T {
        let loop = connection.channel.eventLoop
        let promise = loop.makePromise(of: T.self)
        let box = connection.handler
        if loop.inEventLoop {
            if let handler = box.value { body(handler, promise) } else { promise.fail(MQTTError.notConnected) }
        } else {
            loop.execute {
                if let handler = box.value { body(handler, promise) } else { promise.fail(MQTTError.notConnected) }
            }
        }
        do {
            return try await promise.futureResult.get()
        } catch {
            throw Self.mqttError(from: error)
        }
    }

    // MARK: Connection loop

    private var shutdownRequested: Bool { state.withLock { $0.shutdownRequested } }

    private func beginShutdown() {
        let (connection, channel, sleeper, waiters) = state.withLock { state in
            state.shutdownRequested = true
            defer { state.sleeper = nil; state.connectedWaiters.removeAll() }
            return (state.connection, state.channel, state.sleeper?.continuation, Array(state.connectedWaiters.values))
        }
        sleeper?.resume()
        for waiter in waiters { waiter.resume(returning: .failure(.shutdown)) }
        if let connection {
            let box = connection.handler
            connection.channel.eventLoop.execute {
                if let handler = box.value { handler.disconnectAndClose() } else { connection.channel.close(promise: nil) }
            }
        } else if let channel {
            channel.close(promise: nil)
        }
    }

    private func runLoop() async {
        let servers = configuration.servers
        var failures = 0
        var failedInRound = 0
        var index = 0
        while !shutdownRequested {
            // Failing before its CONNACK, this attempt is followed by the next server's at once
            // unless it is the round's last (every server failed in a row).
            let anotherAfter = failedInRound + 1 < servers.count
            state.withLock { $0.anotherServerAfterFailure = anotherAfter }
            let lasted = await connectOnce(to: servers[index])
            if shutdownRequested { break }
            // The next attempt goes to the next server: after a lost connection the node that was
            // lost is the likeliest to be down.
            index = (index + 1) % servers.count
            if let lasted {
                failedInRound = 0
                // Only a connection that lasted resets the backoff: a broker that accepts and
                // drops at once (another client taking over the same client ID, an ACL-refused
                // publish) would otherwise be reconnected to every `reconnectMinimumDelay`, each
                // time with the caller's `online`, discovery and batch. A short one waits at most
                // as after `shortConnectionFailures` failed attempts (not as long as the failures
                // of an outage before it).
                failures = lasted >= Self.stableConnection ? 0 : min(failures, Self.shortConnectionFailures)
            } else {
                failedInRound += 1
                if failedInRound < servers.count { continue }   // the other servers first, without waiting
                failedInRound = 0
            }
            let delay = backoffDelay(afterFailures: failures)
            failures += 1
            logger.debug("reconnecting after a delay", metadata: ["delay": "\(delay)"])
            await sleep(for: delay)
        }
    }

    /// How long a connection must last (from its CONNACK) for the reconnection backoff to start
    /// again from the minimum.
    static let stableConnection = Duration.seconds(10)
    /// After a shorter one the backoff goes on from at most this many failures: 0.8–1.6 s with the
    /// default minimum delay, growing again while connections stay short.
    static let shortConnectionFailures = 4

    /// min · 2^failures, capped at the maximum, drawn uniformly from [delay/2, delay].
    func backoffDelay(afterFailures failures: Int) -> Duration {
        let minimum = max(0, configuration.reconnectMinimumDelay.inSeconds)
        let maximum = max(minimum, configuration.reconnectMaximumDelay.inSeconds)
        let base = min(maximum, minimum * Double(1 << min(failures, 30)))
        return .seconds(Double.random(in: (base / 2)...max(base / 2, base)))
    }

    /// Sleeps for `delay` unless shutdown begins (which wakes it at once).
    private func sleep(for delay: Duration) async {
        let id = state.withLock { state in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let sleeping = state.withLock { state in
                guard !state.shutdownRequested else { return false }
                state.sleeper = (id, continuation)
                return true
            }
            guard sleeping else { return continuation.resume() }
            group.next().scheduleTask(in: TimeAmount(delay)) { [self] in
                let sleeper = state.withLock { state -> CheckedContinuation<Void, Never>? in
                    guard let sleeper = state.sleeper, sleeper.id == id else { return nil }
                    state.sleeper = nil
                    return sleeper.continuation
                }
                sleeper?.resume()
            }
        }
    }

    /// One connection attempt and, when a CONNACK accepts it, the connection's whole life.
    /// Returns how long the connection lasted from its CONNACK, or nil when none accepted it.
    private func connectOnce(to server: MQTTServer) async -> Duration? {
        let loop = group.next()
        let connAck = loop.makePromise(of: Bool.self)
        let closed = loop.makePromise(of: MQTTError?.self)
        let box = NIOLoopBoundBox.makeEmptyBox(valueType: MQTTConnectionHandler.self, eventLoop: loop)
        func abandon(_ error: MQTTError) {
            connAck.fail(error)
            closed.succeed(error)
        }

        var sslContext: NIOSSLContext?
        let logger = { var logger = self.logger; logger[metadataKey: "broker"] = "\(server)"; return logger }()
        if server.useTLS {
            do {
                sslContext = try makeSSLContext()
            } catch {
                logger.error("cannot set up TLS", metadata: ["error": "\(error)"])
                abandon(error)
                onConnectionEvent(.disconnected(error))
                return nil
            }
        }
        let configuration = configuration
        let deliver = onDelivery
        let acknowledgesLater = acknowledgesLater
        let readPause = readPause
        let onReadComplete = onReadComplete
        // MQTT-4.7.2-1: a filter starting with a wildcard does not match a topic starting with `$`.
        // NATS 2.9 breaks the rule (`#` receives its internal `$JS/…` and `$MQTT/…` traffic), so the
        // client applies it: a `$` topic is handed on only when a subscribed filter matches it
        // (one that is not is acknowledged at once).
        let onMessage: @Sendable (MQTTMessage, UInt16?) -> Bool = { [weak self] message, packetID in
            if message.topic.utf8.first == UInt8(ascii: "$"), let self, !self.isSubscribed(to: message.topic) { return false }
            guard acknowledgesLater, let packetID else {
                deliver(message, nil)
                return false
            }
            deliver(message, MQTTAcknowledgement(packetID: packetID, connection: box, loop: loop))
            return true
        }
        let maximum = configuration.maximumIncomingPacketSize
        let onSkipped: @Sendable (MQTTPacket.OversizedPublish) -> Void = { [weak self, logger, onConnectionEvent] skipped in
            // As for a delivered message: a `$` topic only when a subscribed filter names it (NATS's internal traffic).
            if skipped.topic.utf8.first == UInt8(ascii: "$"), let self, !self.isSubscribed(to: skipped.topic) { return }
            let count = self?.skipped.withLock { count in count += 1; return count } ?? 1
            // The first ten, then every thousandth: a flood of them must not flood the log.
            if count <= 10 || count % 1_000 == 0 {
                logger.warning("skipped a message larger than the maximum incoming packet size (the connection stays up)", metadata: [
                    "topic": "\(skipped.topic.prefix(200))", "bytes": "\(skipped.size)", "maximum": "\(maximum)",
                    "retained": "\(skipped.retain)", "skipped": "\(count)",
                ])
            }
            onConnectionEvent(.messageSkipped(topic: skipped.topic, size: skipped.size, retained: skipped.retain))
        }
        let serverHostname = Self.isIPAddress(server.host) ? nil : server.host
        let connect = MQTTPacket.Connect(
            clientID: configuration.clientID, cleanSession: configuration.cleanSession,
            keepAliveSeconds: configuration.keepAliveSeconds, will: configuration.will,
            username: configuration.username, password: configuration.password.map { Array($0.utf8) })
        let keepAlive = TimeAmount.seconds(Int64(configuration.keepAliveSeconds))
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(TimeAmount(configuration.connectTimeout))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { [sslContext] channel in
                do {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(QuickAckHandler())
                    if let sslContext {
                        try pipeline.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
                    }
                    try pipeline.addHandler(ByteToMessageHandler(MQTTDecoder(maximumPacketSize: configuration.maximumIncomingPacketSize)))
                    try pipeline.addHandler(MessageToByteHandler(MQTTEncoder()))
                    let handler = MQTTConnectionHandler(
                        connect: connect, keepAlive: keepAlive, connectTimeout: TimeAmount(configuration.connectTimeout),
                        logger: logger, onMessage: onMessage, onSkipped: onSkipped, onReadComplete: onReadComplete, readPause: readPause,
                        connAckPromise: connAck, closedPromise: closed)
                    try pipeline.addHandler(handler)
                    box.value = handler
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }

        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: server.host, port: server.port).get()
        } catch {
            let mqttError = Self.mqttError(from: error)
            abandon(mqttError)
            logger.info("cannot connect to the broker", metadata: ["error": "\(mqttError)"])
            onConnectionEvent(.disconnected(mqttError))
            return nil
        }
        let abort = state.withLock { state in
            if state.shutdownRequested { return true }
            state.channel = channel
            return false
        }
        if abort {
            channel.close(promise: nil)
            _ = try? await closed.futureResult.get()
            return nil
        }

        let sessionPresent: Bool
        do {
            sessionPresent = try await connAck.futureResult.get()
        } catch {
            let mqttError = Self.mqttError(from: error)
            channel.close(promise: nil)
            let closedReason = (try? await closed.futureResult.get()) ?? nil
            let reason: MQTTError? = closedReason ?? (shutdownRequested ? nil : mqttError)
            state.withLock { $0.channel = nil }
            if let reason {
                logger.warning("connection attempt failed", metadata: ["error": "\(reason)"])
            }
            onConnectionEvent(.disconnected(reason))
            return nil
        }

        let acceptedAt = ContinuousClock.now
        let connection = Connection(channel: channel, handler: box)
        let (subscriptions, waiters, shuttingDown) = state.withLock { state in
            state.connection = connection
            state.server = server
            state.connectedReported = false
            state.pendingRefusals = []
            state.askingAgain = []
            defer { state.connectedWaiters.removeAll() }
            return (state.subscriptions, Array(state.connectedWaiters.values), state.shutdownRequested)
        }
        if shuttingDown { beginShutdown() }
        logger.info("connected to the broker", metadata: ["sessionPresent": "\(sessionPresent)"])
        for waiter in waiters { waiter.resume(returning: .success(())) }
        resubscribe(subscriptions, on: connection, logger: logger)
        onConnectionEvent(.connected(sessionPresent: sessionPresent))
        let pending = state.withLock { state -> [String] in
            guard state.connection?.channel === connection.channel else { return [] }
            state.connectedReported = true
            defer { state.pendingRefusals = [] }
            return state.pendingRefusals
        }
        for filter in pending { onConnectionEvent(.subscriptionRefused(filter: filter)) }

        let reason = (try? await closed.futureResult.get()) ?? nil
        state.withLock { state in
            state.connection = nil
            state.server = nil
            state.channel = nil
        }
        if let reason {
            logger.info("disconnected from the broker", metadata: ["reason": "\(reason)"])
        } else {
            logger.info("disconnected from the broker (shutdown)")
        }
        onConnectionEvent(.disconnected(reason))
        return ContinuousClock.now - acceptedAt
    }

    /// Whether a remembered subscription's filter matches `topic` (MQTT's matching rules).
    private func isSubscribed(to topic: String) -> Bool {
        state.withLock { state in state.subscriptions.contains { MQTTTopicFilter.matches(filter: $0.filter, topic: topic) } }
    }

    /// Re-sends the remembered subscriptions (64 filters per SUBSCRIBE). The packets are queued on
    /// the event loop before this returns; their SUBACKs are checked in the background.
    private func resubscribe(_ subscriptions: [MQTTPacket.Subscription], on connection: Connection, logger: Logger) {
        guard !subscriptions.isEmpty else { return }
        let box = connection.handler
        for start in stride(from: 0, to: subscriptions.count, by: 64) {
            let chunk = Array(subscriptions[start..<min(start + 64, subscriptions.count)])
            let promise = connection.channel.eventLoop.makePromise(of: [UInt8].self)
            connection.channel.eventLoop.execute {
                if let handler = box.value { handler.subscribe(chunk, promise: promise) } else { promise.fail(MQTTError.notConnected) }
            }
            // A refused filter is kept (forgetting it stopped its messages for the rest of the
            // process when a reconnection met a transient refusal) and reported.
            promise.futureResult.whenComplete { [self] result in
                guard case .success(let codes) = result else { return }
                for (subscription, code) in zip(chunk, codes) where code == MQTTPacket.SubAck.failure {
                    refused(subscription.filter, on: connection, logger: logger)
                }
            }
        }
    }

    /// The broker refused the subscription to `filter` on `connection`: reported (after the
    /// connection's `.connected`, see ``State/connectedReported``) and, unless a chain is already
    /// at it, asked for again (``askAgain(for:refusals:on:logger:)``). When the connection has
    /// ended since, the refusal is reported without asking again (the next connection
    /// subscribes again); when a newer connection is up, it is moot and not reported.
    private func refused(_ filter: String, on connection: Connection, logger: Logger) {
        let (live, reportNow, startChain) = state.withLock { state -> (Bool, Bool, Bool) in
            guard let current = state.connection else { return (true, true, false) }
            guard current.channel === connection.channel else { return (false, false, false) }
            if !state.connectedReported { state.pendingRefusals.append(filter) }
            return (true, state.connectedReported, state.askingAgain.insert(filter).inserted)
        }
        guard live else { return }
        logger.error("the broker refused a subscription; asking again", metadata: ["filter": "\(filter)"])
        if reportNow { onConnectionEvent(.subscriptionRefused(filter: filter)) }
        if startChain { askAgain(for: filter, refusals: 1, on: connection, logger: logger) }
    }

    /// Asks again for the remembered subscription to `filter`, refused `refusals` times on
    /// `connection`, after the reconnection backoff's delay for as many failures (an ACL fixed and
    /// reloaded while the connection stays up is noticed): until it is granted, reported as
    /// `.subscriptionRestored`, the connection ends (the next one asks again at once) or
    /// `unsubscribe` forgets the filter. Refusals after the first are logged at debug; a request
    /// that could not be sent (no packet id free) is tried again the same way.
    private func askAgain(for filter: String, refusals: Int, on connection: Connection, logger: Logger) {
        let delay = backoffDelay(afterFailures: refusals - 1)
        let loop = connection.channel.eventLoop
        loop.scheduleTask(in: TimeAmount(delay)) { [self] in
            let subscription = state.withLock { state -> MQTTPacket.Subscription? in
                guard let live = state.connection, live.channel === connection.channel else { return nil }
                guard let subscription = state.subscriptions.first(where: { $0.filter == filter }) else {
                    state.askingAgain.remove(filter)   // unsubscribed meanwhile
                    return nil
                }
                return subscription
            }
            guard let subscription, let handler = connection.handler.value else { return }
            let promise = loop.makePromise(of: [UInt8].self)
            handler.subscribe([subscription], promise: promise)
            promise.futureResult.whenComplete { [self] result in
                switch result {
                case .success(let codes) where codes.first != MQTTPacket.SubAck.failure:
                    let (live, pending) = state.withLock { state -> (Bool, Bool) in
                        guard state.connection?.channel === connection.channel else { return (false, false) }
                        state.askingAgain.remove(filter)
                        // Granted before `.connected` was reported: the refusal was never reported either.
                        if let index = state.pendingRefusals.firstIndex(of: filter) {
                            state.pendingRefusals.remove(at: index)
                            return (true, true)
                        }
                        return (true, false)
                    }
                    guard live else { return }
                    logger.notice("the broker granted a subscription it had refused", metadata: ["filter": "\(filter)", "refusals": "\(refusals)"])
                    if !pending { onConnectionEvent(.subscriptionRestored(filter: filter)) }
                case .success:
                    logger.debug("the broker refused a subscription again", metadata: ["filter": "\(filter)", "refusals": "\(refusals + 1)"])
                    askAgain(for: filter, refusals: refusals + 1, on: connection, logger: logger)
                case .failure(let error):
                    logger.debug("cannot ask for a refused subscription again yet", metadata: ["filter": "\(filter)", "error": "\(error)"])
                    askAgain(for: filter, refusals: refusals + 1, on: connection, logger: logger)
                }
            }
        }
    }

    private func makeSSLContext() throws(MQTTError) -> NIOSSLContext {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile = configuration.caFile {
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
            } catch {
                throw .invalidConfiguration("cannot read the CA file '\(caFile)': \(error)")
            }
        }
        do {
            return try NIOSSLContext(configuration: tls)
        } catch {
            throw .tls("cannot create the TLS context: \(error)")
        }
    }

    /// Test hook: closes the connection without DISCONNECT (the broker then publishes the will), as
    /// a crash or a network failure would; the client reconnects as after any other loss.
    func dropConnectionWithoutDisconnect() {
        if let channel = state.withLock({ $0.channel }) { channel.close(promise: nil) }
    }

    static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || (!host.isEmpty && host.allSatisfy { $0 == "." || $0.isASCII && $0.isNumber })
    }

    /// Maps NIO's, NIOSSL's and the system's errors to `MQTTError`.
    static func mqttError(from error: any Error) -> MQTTError {
        switch error {
        case let error as MQTTError:
            return error
        case let error as ByteToMessageDecoderError:
            if case .dataReceivedInErrorState(let inner, _) = error { return mqttError(from: inner) }
            return .connectionFailed("\(error)")
        case let error as NIOSSLError:
            return .tls("\(error)")
        case let error as BoringSSLError:
            return .tls("\(error)")
        case let error as NIOSSLExtraError:
            return .tls("\(error)")
        case let error as ChannelError:
            switch error {
            case .connectTimeout: return .connectTimeout
            case .ioOnClosedChannel, .alreadyClosed, .outputClosed: return .notConnected
            case .eof: return .connectionClosed
            default: return .connectionFailed("\(error)")
            }
        case let error as NIOConnectionError:
            let reasons = error.connectionErrors.map { "\($0.target): \($0.error)" }
            return .connectionFailed(reasons.isEmpty ? "\(error)" : reasons.joined(separator: "; "))
        case let error as IOError:
            return .connectionFailed(error.description)
        default:
            return .connectionFailed("\(error)")
        }
    }
}
