import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request does not arrive in full within a time limit from its head:
/// Hummingbird's idle timeout only runs between requests, so a client that sends a head and then
/// its body a byte every few seconds (or one that got its 401 and keeps sending the body it
/// announced) held the connection, and a file descriptor, for as long as it liked.
///
/// One per connection, after the HTTP/1 codec (it sees each request's head and end).
///
/// ```swift
/// HTTP1Channel.Configuration(additionalChannelHandlers: [RequestReadTimeout(limit: .seconds(30))])
/// ```
final class RequestReadTimeout: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    let limit: TimeAmount
    private var deadline: Scheduled<Void>?

    init(limit: TimeAmount) {
        self.limit = limit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            deadline?.cancel()
            let channel = context.channel
            deadline = context.eventLoop.scheduleTask(in: limit) { channel.close(promise: nil) }
        case .end:
            deadline?.cancel()
            deadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }
}
