import Foundation
import Testing
import RegionKit
import RegionKitStore
import RegionKitSimulation
@testable import RegionKitService
import RegionKitTestSupport

@Suite("Source runner", .tags(.realTime))
struct SourceRunnerTests {
    @Test("untilCancelled suspends until its task is cancelled, then throws CancellationError")
    func waitsForCancellation() async {
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let waiter = Task {
            startedContinuation.yield()
            try await SourceRunner.untilCancelled()
        }
        for await _ in started { break }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
    }

    @Test("untilCancelled in an already cancelled task throws at once")
    func alreadyCancelled() async {
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await SourceRunner.untilCancelled()
        }
        await #expect(throws: CancellationError.self) { try await waiter.value }
    }

    @Test("A simulator source feeds the service (museum at 100×): the visitor is found inside the museum; cancelling stops it")
    func simulatorFeedsService() async throws {
        let configuration = try ServiceConfiguration.decode("""
        regions:
          - {identifier: museum, uuid: 5A4BCFCE-174E-4BAC-A814-092E77F6B7E5}
        sources:
          - simulator: {scenario: museum, speed: 100}
        """, path: "test.yaml")
        let store = try RegionStore(path: temporaryStorePath())
        let service = MonitoringService(store: store, sources: configuration.initialSourceStatuses)
        try await service.start(regions: try configuration.monitoredRegions())
        let runner = SourceRunner(source: configuration.sources[0], configuration: configuration, service: service)
        let task = Task { try await runner.run() }
        // The museum walk lasts 240 virtual s, 2.4 real s at 100×; the visitor starts among the exhibits.
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, try !store.events().contains(where: Self.foundInside) {
            try await Task.sleep(for: .milliseconds(20))
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        let events = try store.events()
        #expect(events.contains(where: Self.foundInside), "\(events.map { "\($0.type) \($0.region ?? "")" })")
    }

    /// A gateway source replays the recording as it reads it. It used to read the whole file
    /// first (a recording of millions of sightings held in memory), and to open the file twice (a
    /// look at its first two bytes for gzip, then the read): a pipe replayed nothing until its
    /// writer closed it, and lost the bytes of the first look.
    @Test("A gateway source replays a pipe's sightings while the pipe is still open (fewer than one read's worth), the first one included", .timeLimit(.minutes(2)))
    func gatewayReadsAsItReplays() async throws {
        let path = TestScratch.directory.appendingPathComponent("rk-gateway-pipe-\(UUID().uuidString).json").path
        try #require(mkfifo(path, 0o600) == 0, "mkfifo \(path): errno \(errno)")
        defer { unlink(path) }
        let configuration = try ServiceConfiguration.decode("""
        regions:
          - {identifier: lobby, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1, minor: 2}
        sources:
          - gateway: {file: \(path), speed: 1000}
        """, path: "test.yaml")
        let store = try RegionStore(path: temporaryStorePath())
        let service = MonitoringService(store: store, sources: configuration.initialSourceStatuses)
        try await service.start(regions: try configuration.monitoredRegions())
        let runner = SourceRunner(source: configuration.sources[0], configuration: configuration, service: service)
        // 3,000 sightings a tenth of a second apart (≈ 420 KB): the first 300 (≈ 42 KB, less than
        // one read of 256 KiB), then the others once the test has seen the lobby entered, then
        // the pipe is closed.
        var text = ""
        for index in 0..<3_000 {
            text += #"{"scannerID":"hall","uuid":"E2C56DB5DFFB48D2B060D0F5A71096E0","major":1,"minor":2,"rssi":-60,"time":\#(1_425_417_360_000 + index * 100)}"# + "\n"
        }
        let bytes = Array(text.utf8)
        let firstPart = bytes.indices.filter { bytes[$0] == UInt8(ascii: "\n") }[299] + 1
        let release = DispatchSemaphore(value: 0)
        let writer = Thread {
            let descriptor = open(path, O_WRONLY)   // waits for the source to open the pipe
            guard descriptor >= 0 else { return }
            func send(_ part: ArraySlice<UInt8>) {
                var written = part.startIndex
                while written < part.endIndex {
                    let count = part[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                    guard count > 0 else { return }
                    written += count
                }
            }
            send(bytes[..<firstPart])
            release.wait()
            send(bytes[firstPart...])
            close(descriptor)
        }
        writer.start()
        let task = Task { try await runner.run() }
        var released = false
        defer { if !released { release.signal() } }
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, try !store.events().contains(where: Self.lobbyInside) {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try store.events().contains(where: Self.lobbyInside), "nothing replayed while the pipe is open")
        let replayedBeforeTheEnd = runner.activity.status.sightings
        #expect(replayedBeforeTheEnd > 0 && replayedBeforeTheEnd <= 300, "\(replayedBeforeTheEnd) sightings replayed of the first 300")
        release.signal()
        released = true
        try await task.value
        // Every sighting, the first one included (the gzip check's own open took its first bytes).
        #expect(runner.activity.status.sightings == 3_000, "\(runner.activity.status)")
        #expect(runner.activity.status.decodeErrors.isEmpty, "\(runner.activity.status)")
    }

    static func lobbyInside(_ event: StoredEvent) -> Bool {
        event.type == "didDetermineState" && event.region == "lobby" && event.state == "inside"
    }

    static func foundInside(_ event: StoredEvent) -> Bool {
        event.type == "didDetermineState" && event.region == "museum" && event.state == "inside"
    }

    @Test("A source that cannot start reports why: unknown scenario, bad device, missing file", arguments: [
        (ServiceSource.simulator(.init(scenario: "nowhere")), "'nowhere' is neither a built-in scenario"),
        (.hci(.init(device: "bogus:1")), "hci source 'bogus:1'"),
        (.gateway(.init(file: "/nonexistent/run.json")), "/nonexistent/run.json"),
    ])
    func unusableSource(source: ServiceSource, expected: String) async throws {
        let service = MonitoringService(store: try RegionStore(path: temporaryStorePath()), sources: [:])
        let runner = SourceRunner(source: source, configuration: ServiceConfiguration(sources: [source]), service: service)
        let error = await #expect(throws: RegionKitError.self) { try await runner.run() }
        #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
    }
}

@Suite("Gateway replay pacing")
struct GatewayReplayPacingTests {
    @Test("Gaps longer than maxGap are shortened to it; far-apart and out-of-order times neither overflow nor wait backwards")
    func offsets() {
        let times: [Int64] = [
            1_000,                  // the first sighting: offset 0
            1_500,                  // 0.5 s later
            1_400,                  // out of order (beyond the reorder window): no wait
            .max,                   // a far-future timestamp (a damaged file): shortened to 60 s
            .min,                   // then far in the past: no wait, no overflow
            2_000,                  // back in range: a huge gap after .min, shortened to 60 s
        ]
        let pacing = SourceRunner.replayOffsets(times, maximumGap: 60)
        #expect(pacing.offsets == [0, 0.5, 0.5, 60.5, 60.5, 120.5])
        #expect(pacing.shortened == 2)
        #expect(pacing.longest > 9e15)
        // The default keeps a normal recording's timing exactly.
        let regular = SourceRunner.replayOffsets([0, 100, 200, 59_200], maximumGap: ReplaySession.defaultMaximumGap)
        #expect(regular.offsets == [0, 0.1, 0.2, 59.2])
        #expect(regular.shortened == 0)
        #expect(SourceRunner.replayOffsets([], maximumGap: 60).offsets.isEmpty)
    }

    @Test("Fed as it is read: a sighting that arrives over a second after it was due re-anchors the replay, and the next ones keep their recorded spacing from it")
    func lateInputReanchors() {
        var pacer = GatewayReplayPacer(maximumGap: 60)
        #expect(pacer.wait(for: 0, elapsed: 0, speed: 1) == 0)
        #expect(pacer.wait(for: 1_000, elapsed: 0.25, speed: 1) == 0.75)
        // Half a second late: within the slack, replayed now, nothing moves.
        #expect(pacer.wait(for: 2_000, elapsed: 2.5, speed: 1) == 0)
        #expect(pacer.wait(for: 3_000, elapsed: 2.5, speed: 1) == 0.5)
        // The writer paused: due at 4 s, it arrives at 9 s; replayed now, the next one a second later.
        #expect(pacer.wait(for: 4_000, elapsed: 9, speed: 1) == 0)
        #expect(pacer.wait(for: 5_000, elapsed: 9, speed: 1) == 1)
        // At 10×, a second of recording is a tenth of a real second.
        var fast = GatewayReplayPacer(maximumGap: 60)
        #expect(fast.wait(for: 0, elapsed: 0, speed: 10) == 0)
        #expect(abs(fast.wait(for: 1_000, elapsed: 0, speed: 10) - 0.1) < 1e-9)
    }
}

