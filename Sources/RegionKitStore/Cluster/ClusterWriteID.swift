/// Which write of which partition writer a contribution or an event batch is, so that a write
/// retried after its reply was lost is committed once.
///
/// A write whose transaction committed while the client gave up waiting (a timeout, a connection
/// cut after the `COMMIT` went out) has an unknown outcome; the writer retries it. Without an
/// identity the retry appended its room events and hook deliveries a second time. The store
/// remembers, per partition, the last write committed (writer and sequence) and the ids of the
/// events it committed: a write it has already committed is answered with those events instead
/// of being applied again.
///
/// One writer per partition writes at a time, in order, and retries a write until it is
/// committed or fenced, so only the last write of each partition needs remembering.
///
/// ```swift
/// let writer = "\(UUID())"
/// var write = ClusterWriteID(writer: writer, sequence: 1)
/// _ = try await store.appendEvents(rows, lease: lease, member: "engine-a", write: write)
/// _ = try await store.appendEvents(rows, lease: lease, member: "engine-a", write: write)   // committed once; same events
/// write.sequence += 1
/// ```
public struct ClusterWriteID: Hashable, Sendable, CustomStringConvertible {
    /// The writer: unique for each writer a partition ever has (a UUID), in any member.
    public var writer: String
    /// The write's number within its writer, from 1, increasing in submission order.
    public var sequence: Int64

    public init(writer: String, sequence: Int64) {
        self.writer = writer
        self.sequence = sequence
    }

    public var description: String { "\(writer)#\(sequence)" }
}
