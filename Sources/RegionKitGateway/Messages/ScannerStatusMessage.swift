/// A scanner's word on whether it is online: ESPresense's retained `espresense/rooms/<room>/status`,
/// Theengs Gateway's and OpenMQTTGateway's will `home/<gateway>/LWT` — `online`, or `offline` (the
/// will the broker publishes when the scanner's connection is lost, or what it says before it
/// stops). An empty message (the retained status removed: `mosquitto_pub -r -n`, a node retired)
/// says nothing is known of it any more, which is read as online: nothing holds its beacons.
///
/// The scanner is the topic level at the filter's `+` (the name its sightings carry: the room, the
/// gateway), or the source's configured scanner. RegionKit's own scanners (`regionkit scan
/// --publish`) keep theirs on `regionkit/scanners/<level>/status`, the level their name in
/// ``ScannerBatch/topicLevel(scanner:)``'s one-to-one form, read with `encodedNames`.
///
/// ```swift
/// let status = try ScannerStatusMessage.decode(topic: "espresense/rooms/kitchen/status", payload: Array("offline".utf8),
///                                              filter: "espresense/rooms/+/status", scanner: nil)
/// status.scanner   // "kitchen"
/// status.online    // false
/// ```
public struct ScannerStatusMessage: Hashable, Sendable {
    public var scanner: String
    public var online: Bool

    public init(scanner: String, online: Bool) {
        self.scanner = scanner
        self.online = online
    }

    /// The longest payload read: `offline` with room for whitespace; anything longer is no status.
    public static let maximumPayloadSize = 64

    /// Reads one status message on `topic`, which matched `filter`; `scanner`: the source's
    /// configured scanner, named instead of the topic's level; `encodedNames`: the level is a
    /// name in ``ScannerBatch/topicLevel(scanner:)``'s form (format `regionkit`), read back with
    /// ``ScannerBatch/scanner(topicLevel:)``. `online` and `offline` are read without regard to
    /// case or surrounding whitespace; anything else is an error naming it.
    public static func decode(topic: String, payload: [UInt8], filter: String, scanner: String?,
                              encodedNames: Bool = false) throws(SightingMessageError) -> ScannerStatusMessage {
        guard payload.count <= maximumPayloadSize else {
            throw SightingMessageError(.tooLarge, "status of \(payload.count) bytes on '\(topic.prefix(200))': at most \(maximumPayloadSize)")
        }
        guard let text = String(validating: payload, as: UTF8.self) else {
            throw SightingMessageError(.invalidUTF8, "status on '\(topic.prefix(200))' is not UTF-8")
        }
        let online: Bool
        switch text.trimmingWhitespace.lowercased() {
        case "online", "": online = true
        case "offline": online = false
        default:
            throw SightingMessageError(.badStatus, "status '\(text.prefix(40))' on '\(topic.prefix(200))' is neither 'online' nor 'offline'")
        }
        if let scanner { return ScannerStatusMessage(scanner: scanner, online: online) }
        let filterLevels = filter.split(separator: "/", omittingEmptySubsequences: false)
        let topicLevels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard let index = filterLevels.firstIndex(of: "+"), index < topicLevels.count else {
            throw SightingMessageError(.badTopic, "status topic '\(topic.prefix(200))' has no level naming its scanner (filter '\(filter)')")
        }
        let level = topicLevels[index]
        guard let name = encodedNames ? ScannerBatch.scanner(topicLevel: level) : String(level) else {
            throw SightingMessageError(.badTopic, "status topic '\(topic.prefix(200))': level \(index + 1) '\(level.prefix(40))' is not a scanner name's topic level (a % not followed by two hex digits, or not UTF-8)")
        }
        return ScannerStatusMessage(scanner: try SightingMessageDecoder.scannerName(name, from: "status topic '\(topic.prefix(200))': level \(index + 1)"),
                                    online: online)
    }
}

extension String {
    /// Without leading and trailing spaces, tabs, carriage returns and line feeds.
    fileprivate var trimmingWhitespace: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}
