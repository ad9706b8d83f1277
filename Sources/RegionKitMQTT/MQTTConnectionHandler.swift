import Logging
import NIOCore

/// One connection's protocol state, on its event loop: sends CONNECT, waits for CONNACK, delivers
/// PUBLISHes (PUBACKing QoS 1 after `onMessage` returns, unless it takes the acknowledgement:
/// then ``acknowledge(_:)`` sends it), matches acknowledgements to the requests in
/// flight by packet id, pings every keepalive and closes the connection when the answer is late or
/// the broker sends something malformed, and holds back reads while its consumer is behind
/// (``MQTTReadPause``). `MQTTClient` makes one per connection.
final class MQTTConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = MQTTPacket
    typealias OutboundIn = MQTTPacket
    typealias OutboundOut = MQTTPacket

    /// A request waiting for its acknowledgement.
    private enum Pending {
        case publish(EventLoopPromise<Void>)
        case subscribe(count: Int, EventLoopPromise<[UInt8]>)
        case unsubscribe(EventLoopPromise<Void>)

        func fail(_ error: MQTTError) {
            switch self {
            case .publish(let promise): promise.fail(error)
            case .subscribe(_, let promise): promise.fail(error)
            case .unsubscribe(let promise): promise.fail(error)
            }
        }
    }

    private let connectPacket: MQTTPacket.Connect
    private let keepAlive: TimeAmount
    private let connectTimeout: TimeAmount
    /// A PUBLISH, with its packet id at QoS 1; true when the consumer acknowledges it later
    /// (``acknowledge(_:)``), false when it is acknowledged here as `onMessage` returns.
    private let onMessage: @Sendable (MQTTMessage, UInt16?) -> Bool
    /// A PUBLISH too large to accept was skipped by the decoder (acknowledged here first).
    private let onSkipped: @Sendable (MQTTPacket.OversizedPublish) -> Void
    /// The end of one read from the socket: the messages of that read have all been handed to `onMessage`.
    private let onReadComplete: @Sendable () -> Void
    private let logger: Logger
    /// Succeeds with "session present" on an accepting CONNACK; fails otherwise.
    let connAckPromise: EventLoopPromise<Bool>
    /// Succeeds when the connection is gone: `nil` after `disconnectAndClose()`, else the reason.
    let closedPromise: EventLoopPromise<MQTTError?>

    private var context: ChannelHandlerContext?
    private(set) var isConnected = false
    private var pending: [UInt16: Pending] = [:]
    private var lastPacketID: UInt16 = 0
    private var pingTimer: Scheduled<Void>?
    private var pingDeadline: Scheduled<Void>?
    private var connectDeadline: Scheduled<Void>?
    private var heardSincePing = true
    private var closeReason: MQTTError?
    private var closingCleanly = false
    private var needsFlush = false
    private var flushScheduled = false
    private var finished = false
    /// Backpressure from the consumer (nil: reads are never held).
    private let readPause: MQTTReadPause?
    /// A held read's next look at the backlog, and when the hold began (while reads are held).
    private var readCheck: Scheduled<Void>?
    private var readHeldSince: NIODeadline?
    /// Whether reads were held at some moment since the last PINGREQ: its PINGRESP may be unread
    /// in the socket, so a missing answer then says nothing about the broker.
    private var readHeldSincePing = false

    init(connect: MQTTPacket.Connect, keepAlive: TimeAmount, connectTimeout: TimeAmount, logger: Logger,
         onMessage: @escaping @Sendable (MQTTMessage, UInt16?) -> Bool, onSkipped: @escaping @Sendable (MQTTPacket.OversizedPublish) -> Void = { _ in },
         onReadComplete: @escaping @Sendable () -> Void = {}, readPause: MQTTReadPause? = nil,
         connAckPromise: EventLoopPromise<Bool>, closedPromise: EventLoopPromise<MQTTError?>) {
        self.readPause = readPause
        self.onReadComplete = onReadComplete
        self.connectPacket = connect
        self.keepAlive = keepAlive
        self.connectTimeout = connectTimeout
        self.logger = logger
        self.onMessage = onMessage
        self.onSkipped = onSkipped
        self.connAckPromise = connAckPromise
        self.closedPromise = closedPromise
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    private func start(context: ChannelHandlerContext) {
        guard connectDeadline == nil, !finished else { return }
        context.writeAndFlush(wrapOutboundOut(.connect(connectPacket)), promise: nil)
        connectDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: connectTimeout) { [self] in
            guard !isConnected, let context = self.context else { return }
            logger.warning("no CONNACK from the broker in time; closing the connection")
            closeReason = closeReason ?? .connectTimeout
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        heardSincePing = true
        switch unwrapInboundIn(data) {
        case .publish(let publish):
            guard isConnected else { return protocolFailure(context, "PUBLISH before CONNACK") }
            let deferred = onMessage(publish.message, publish.packetID)
            if let packetID = publish.packetID, !deferred {
                context.write(wrapOutboundOut(.puback(packetID: packetID)), promise: nil)
                needsFlush = true
            }
        case .puback(let packetID):
            // An acknowledgment of another kind than the request in flight under its packet id is
            // the broker's error: the request stays in flight (failed with the rest when the
            // connection closes), never dropped with its promise left waiting for good.
            switch pending[packetID] {
            case .publish(let promise)?:
                pending[packetID] = nil
                promise.succeed()
            case nil:
                logger.debug("PUBACK for a packet id not in flight", metadata: ["packetID": "\(packetID)"])
            case _?:
                return protocolFailure(context, "PUBACK for packet id \(packetID), which is not a PUBLISH in flight")
            }
        case .suback(let suback):
            let count: Int, promise: EventLoopPromise<[UInt8]>
            switch pending[suback.packetID] {
            case .subscribe(let expected, let waiting)?:
                pending[suback.packetID] = nil
                (count, promise) = (expected, waiting)
            case nil:
                logger.debug("SUBACK for a packet id not in flight", metadata: ["packetID": "\(suback.packetID)"])
                return
            case _?:
                return protocolFailure(context, "SUBACK for packet id \(suback.packetID), which is not a SUBSCRIBE in flight")
            }
            guard suback.returnCodes.count == count else {
                let what = "SUBACK with \(suback.returnCodes.count) return codes for \(count) filters"
                promise.fail(MQTTError.protocolError(.init(kind: .unexpectedPacket, what: what, offset: 4)))
                return protocolFailure(context, what)
            }
            promise.succeed(suback.returnCodes)
        case .unsuback(let packetID):
            switch pending[packetID] {
            case .unsubscribe(let promise)?:
                pending[packetID] = nil
                promise.succeed()
            case nil:
                logger.debug("UNSUBACK for a packet id not in flight", metadata: ["packetID": "\(packetID)"])
            case _?:
                return protocolFailure(context, "UNSUBACK for packet id \(packetID), which is not an UNSUBSCRIBE in flight")
            }
        case .pingresp:
            pingDeadline?.cancel()
            pingDeadline = nil
        case .connack(let connack):
            guard !isConnected else { return protocolFailure(context, "a second CONNACK") }
            connectDeadline?.cancel()
            if connack.returnCode == .accepted {
                isConnected = true
                schedulePing(context: context)
                connAckPromise.succeed(connack.sessionPresent)
            } else {
                closeReason = .connectionRefused(connack.returnCode)
                connAckPromise.fail(MQTTError.connectionRefused(connack.returnCode))
                context.close(promise: nil)
            }
        case .connect, .subscribe, .unsubscribe, .pingreq, .disconnect:
            protocolFailure(context, "a client-to-server packet (type \(unwrapInboundIn(data).typeNumber)) from the broker")
        }
    }

    /// The decoder skipped a PUBLISH over the size limit (``MQTTDecoder``): acknowledged like a
    /// delivered one (or the broker would send it again), then reported.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let skipped = event as? MQTTPacket.OversizedPublish else { return context.fireUserInboundEventTriggered(event) }
        heardSincePing = true
        guard isConnected else { return protocolFailure(context, "PUBLISH before CONNACK") }
        if let packetID = skipped.packetID {
            context.write(wrapOutboundOut(.puback(packetID: packetID)), promise: nil)
            needsFlush = true
        }
        onSkipped(skipped)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Before the PUBACKs go out: a consumer that batches a read's messages has them all.
        onReadComplete()
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    // MARK: Backpressure

    /// Passes the channel's request for more bytes on, unless the consumer is more than
    /// ``MQTTReadPause/pauseAbove`` behind: then it is held, and let through once the backlog is
    /// down to ``MQTTReadPause/resumeAtOrBelow`` or after ``MQTTReadPause/maximumHold``. Reads
    /// before CONNACK are never held.
    func read(context: ChannelHandlerContext) {
        guard let readPause, isConnected, readHeldSince == nil, let behind = readPause.backlogToPauseFor() else {
            if readHeldSince == nil { context.read() }
            return
        }
        let now = NIODeadline.now()
        readHeldSince = now
        readHeldSincePing = true
        if readPause.held(at: now) {
            logger.warning("the consumer of this connection's messages is behind: reads from the broker are held back until it catches up, one read at most every \(readPause.maximumHold) (the broker queues or drops meanwhile; further holds are only counted)",
                           metadata: ["backlog": "\(behind)", "pauseAbove": "\(readPause.pauseAbove)", "resumeAtOrBelow": "\(readPause.resumeAtOrBelow)"])
        }
        scheduleReadCheck(context, readPause)
    }

    private func scheduleReadCheck(_ context: ChannelHandlerContext, _ readPause: MQTTReadPause) {
        readCheck = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(readPause.checkInterval)) { [self] in
            readCheck = nil
            guard !finished, let context = self.context, let since = readHeldSince else { return }
            let now = NIODeadline.now()
            guard readPause.mayResume(heldFor: now - since) else { return scheduleReadCheck(context, readPause) }
            readHeldSince = nil
            readPause.released(at: now)
            context.read()
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let mqttError = MQTTClient.mqttError(from: error)
        if case .protocolError(let detail) = mqttError {
            logger.error("malformed packet from the broker; closing the connection",
                         metadata: ["what": "\(detail.what)", "offset": "\(detail.offset)", "kind": "\(detail.kind)"])
        } else {
            logger.error("connection error; closing the connection", metadata: ["error": "\(mqttError)"])
        }
        closeReason = closeReason ?? mqttError
        context.close(promise: nil)
    }

    private func protocolFailure(_ context: ChannelHandlerContext, _ what: String) {
        let error = MQTTProtocolError(kind: .unexpectedPacket, what: what, offset: 0)
        logger.error("unexpected packet from the broker; closing the connection", metadata: ["what": "\(what)"])
        closeReason = closeReason ?? .protocolError(error)
        context.close(promise: nil)
    }

    /// Fails everything in flight and reports the end of the connection (once).
    private func finish() {
        guard !finished else { return }
        finished = true
        isConnected = false
        pingTimer?.cancel()
        pingDeadline?.cancel()
        connectDeadline?.cancel()
        readCheck?.cancel()
        if readHeldSince != nil {
            readHeldSince = nil
            readPause?.released(at: .now())
        }
        let inFlight = pending
        pending.removeAll()
        for request in inFlight.values { request.fail(.notConnected) }
        let reason = closingCleanly ? nil : (closeReason ?? .connectionClosed)
        connAckPromise.fail(reason ?? .shutdown)
        closedPromise.succeed(reason)
    }

    // MARK: Keepalive

    private func schedulePing(context: ChannelHandlerContext) {
        pingTimer = context.eventLoop.assumeIsolated().scheduleTask(in: keepAlive) { [self] in
            sendPing()
        }
    }

    private func sendPing() {
        guard isConnected, let context else { return }
        heardSincePing = false
        readHeldSincePing = readHeldSince != nil
        context.writeAndFlush(wrapOutboundOut(.pingreq), promise: nil)
        pingDeadline?.cancel()
        pingDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(keepAlive.nanoseconds / 2)) { [self] in
            // Reads held meanwhile (backpressure): the answer may be waiting unread in the socket.
            guard isConnected, !heardSincePing, !readHeldSincePing, let context = self.context else { return }
            logger.error("no PINGRESP from the broker within half a keepalive; closing the connection")
            closeReason = closeReason ?? .keepAliveTimeout
            context.close(promise: nil)
        }
        schedulePing(context: context)
    }

    // MARK: Requests (call on the event loop)

    /// Sends the PUBACKs of QoS 1 messages whose acknowledgement `onMessage` took, in the order
    /// given (MQTT 3.1.1 §4.6: the order they arrived in). Nothing once the connection is gone:
    /// the broker delivers them again on the next one.
    func acknowledge(_ packetIDs: [UInt16]) {
        // (Not after a DISCONNECT: the broker would take the connection's end for an error.)
        guard isConnected, !closingCleanly, let context, !packetIDs.isEmpty else { return }
        for packetID in packetIDs { context.write(wrapOutboundOut(.puback(packetID: packetID)), promise: nil) }
        scheduleFlush(context)
    }

    /// QoS 0: `promise` succeeds once written to the socket. QoS 1: once the PUBACK arrives.
    func publish(_ message: MQTTMessage, promise: EventLoopPromise<Void>) {
        guard isConnected, let context else { return promise.fail(MQTTError.notConnected) }
        if message.qos == .atMostOnce {
            context.write(wrapOutboundOut(.publish(.init(message: message))), promise: promise)
        } else {
            guard let packetID = nextPacketID() else { return promise.fail(MQTTError.tooManyInFlight) }
            pending[packetID] = .publish(promise)
            context.write(wrapOutboundOut(.publish(.init(message: message, packetID: packetID))), promise: nil)
        }
        scheduleFlush(context)
    }

    /// `promise` succeeds with the SUBACK's return codes, one per subscription.
    func subscribe(_ subscriptions: [MQTTPacket.Subscription], promise: EventLoopPromise<[UInt8]>) {
        guard isConnected, let context else { return promise.fail(MQTTError.notConnected) }
        guard let packetID = nextPacketID() else { return promise.fail(MQTTError.tooManyInFlight) }
        pending[packetID] = .subscribe(count: subscriptions.count, promise)
        context.write(wrapOutboundOut(.subscribe(.init(packetID: packetID, subscriptions: subscriptions))), promise: nil)
        scheduleFlush(context)
    }

    func unsubscribe(_ filters: [String], promise: EventLoopPromise<Void>) {
        guard isConnected, let context else { return promise.fail(MQTTError.notConnected) }
        guard let packetID = nextPacketID() else { return promise.fail(MQTTError.tooManyInFlight) }
        pending[packetID] = .unsubscribe(promise)
        context.write(wrapOutboundOut(.unsubscribe(.init(packetID: packetID, filters: filters))), promise: nil)
        scheduleFlush(context)
    }

    /// Sends DISCONNECT (when connected) and closes; the will is not published.
    func disconnectAndClose() {
        guard let context, !finished else { return }
        closingCleanly = true
        guard isConnected else { return context.close(promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.disconnect)).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    /// The next packet id not in flight, cycling through 1…65535; `nil` when all are in flight.
    private func nextPacketID() -> UInt16? {
        guard pending.count < Int(UInt16.max) else { return nil }
        repeat {
            lastPacketID = lastPacketID == UInt16.max ? 1 : lastPacketID + 1
        } while pending[lastPacketID] != nil
        return lastPacketID
    }

    /// Writes made in the same event-loop turn share one flush (one syscall for a burst of publishes).
    private func scheduleFlush(_ context: ChannelHandlerContext) {
        guard !flushScheduled else { return }
        flushScheduled = true
        context.eventLoop.assumeIsolated().execute { [self] in
            flushScheduled = false
            self.context?.flush()
        }
    }
}
