import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import RegionKitHCI

/// Records a session as btsnoop (datalink 1002) from the host's side.
final class BTSnoopCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var writer = BTSnoopWriter()

    func record(_ packet: H4Packet, direction: BTSnoopRecord.Direction) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let micros = Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000
        lock.withLock { writer.append(packet: packet, direction: direction, unixMicroseconds: micros) }
    }

    var bytes: [UInt8] { lock.withLock { writer.bytes } }
}
