import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Acknowledges the broker's bytes at once instead of after the kernel's delayed-ACK timer
/// (Linux `TCP_QUICKACK`, set again after every read: the kernel leaves quick-ack mode on its own).
///
/// Mosquitto leaves Nagle's algorithm on by default (`set_tcp_nodelay false`): of several PUBACKs
/// for a pipelined group of QoS 1 publishes, it sends the first and holds the next until that one
/// is acknowledged — which a client waiting for the rest has nothing to piggyback on, so the ACK
/// waits for the delayed-ACK timer, ≈ 40 ms a group. Measured with the Debian broker's default
/// configuration: a group of 2 or 3 QoS 1 publishes 44 ms a round trip, 0.1 ms with quick ACKs
/// (the presence hub publishes each event with its retained updates as one group, so a backlog went
/// out at ≈ 22 events a second). Our own TCP_NODELAY does not help: the holding is on the broker's
/// side. First in the pipeline (it sees the socket's reads, before TLS); elsewhere than Linux it
/// only passes the reads on.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandler(QuickAckHandler())
/// ```
final class QuickAckHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    func channelReadComplete(context: ChannelHandlerContext) {
        #if os(Linux)
        // A failure (a channel that is not a TCP socket) costs nothing but the quick ACK.
        try? context.channel.syncOptions?.setOption(
            ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: CInt(TCP_QUICKACK))), value: 1)
        #endif
        context.fireChannelReadComplete()
    }
}
