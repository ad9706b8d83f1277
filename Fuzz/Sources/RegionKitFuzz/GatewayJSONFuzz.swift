import FuzzSupport
@testable import RegionKitGateway

/// Gateway recordings (concatenated JSON sighting objects) split in chunks, then the recording built
/// from them (lateness, duration, observations). Invariants: chunking never changes the objects;
/// the decoder's fast path (`GatewaySighting.fastDecode`) accepts only objects `JSONDecoder`'s path
/// accepts, with the same sighting.
enum GatewayJSONFuzz {
    static func run(_ data: [UInt8]) {
        let whole = sightings(chunks: [Array(data.dropFirst())])
        let chunked = sightings(chunks: FuzzInput.chunks(data, maximum: 23))
        guard whole == chunked else { FuzzTarget.fail("chunking changed the sightings") }
        inspect(whole.sightings)
    }

    struct Outcome: Equatable {
        var objects: [[UInt8]] = []
        var offsets: [Int] = []
        var sightings: [GatewaySighting] = []
        var failed = false
    }

    static func sightings(chunks: [[UInt8]]) -> Outcome {
        var splitter = ConcatenatedJSONSplitter(source: "fuzz")
        var outcome = Outcome()
        do {
            for chunk in chunks {
                for object in try splitter.feed(chunk) {
                    outcome.objects.append(object.bytes)
                    outcome.offsets.append(object.offset)
                    if let fast = GatewaySighting.fastDecode(object.bytes) {
                        let slow = try? GatewaySighting(decoding: object.bytes, offset: object.offset, source: "fuzz")
                        guard slow == fast else {
                            FuzzTarget.fail("fast path \(fast) vs JSONDecoder's \(slow.map { "\($0)" } ?? "error") for \(String(decoding: object.bytes, as: UTF8.self))")
                        }
                    }
                    if let sighting = try? GatewaySighting(json: object.bytes, offset: object.offset, source: "fuzz") {
                        outcome.sightings.append(sighting)
                    }
                }
            }
            try splitter.finish()
        } catch {
            outcome.failed = true
        }
        return outcome
    }

    /// What `regionkit replay` and the daemon's gateway source do with decoded sightings.
    static func inspect(_ sightings: [GatewaySighting]) {
        // GatewayRecording(fileOrder:) requires at least one sighting (documented precondition;
        // GatewayRecording(path:) checks it), so an empty recording stops here.
        guard !sightings.isEmpty else { return }
        let recording = GatewayRecording(fileOrder: sightings, path: "fuzz.json")
        _ = recording.duration
        _ = recording.observations
    }
}
