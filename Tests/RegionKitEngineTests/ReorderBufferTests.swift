import Testing
@testable import RegionKitEngine

@Suite("ReorderBuffer")
struct ReorderBufferTests {
    @Test func releasesInTimeOrderOnceOlderThanTheWindow() {
        var buffer = ReorderBuffer<String>(window: 2)
        #expect(buffer.insert("a", at: Timestamp(seconds: 1.0)).isEmpty)   // horizon −1.0
        #expect(buffer.insert("b", at: Timestamp(seconds: 0.5)).isEmpty)   // late, within the window
        #expect(buffer.insert("c", at: Timestamp(seconds: 2.4)).isEmpty)   // horizon 0.4 < 0.5
        #expect(buffer.insert("d", at: Timestamp(seconds: 3.2)) == ["b", "a"]) // horizon 1.2
        #expect(buffer.insert("e", at: Timestamp(seconds: 3.0)).isEmpty)
        #expect(buffer.count == 3)
        #expect(buffer.drain() == ["c", "e", "d"])
        #expect(buffer.tooLate == 0)
    }

    /// Found by the hostile-input review: 3 M sightings at one time (1 MB of gzip) were all held.
    @Test("Past its capacity the earliest input is released before its window passed, counted; order is kept")
    func capacityBoundsWhatIsHeld() {
        var buffer = ReorderBuffer<Int>(window: 60, capacity: 4)
        var released: [Int] = []
        for value in 0..<10 { buffer.insert(value, at: Timestamp(seconds: 1)) { released.append($0) } }
        #expect(buffer.count == 4 && released == [0, 1, 2, 3, 4, 5] && buffer.releasedEarly == 6)
        buffer.insert(99, at: Timestamp(seconds: 0.5)) { released.append($0) }
        #expect(buffer.tooLate == 1, "earlier than one released early: late, as any input past the window")
        #expect(released.last == 99 && buffer.releasedEarly == 7, "the earliest held is released early at once: the late one")
        buffer.drain { released.append($0) }
        #expect(released == [0, 1, 2, 3, 4, 5, 99, 6, 7, 8, 9])
        #expect(ReorderBuffer<Int>(window: 1).capacity == 262_144)
    }

    @Test func inputsLaterThanTheWindowAreCountedAndReleasedAtOnce() {
        var buffer = ReorderBuffer<String>(window: 1)
        _ = buffer.insert("a", at: Timestamp(seconds: 5))
        #expect(buffer.insert("b", at: Timestamp(seconds: 7)) == ["a"])
        #expect(buffer.insert("late", at: Timestamp(seconds: 4)) == ["late"])
        #expect(buffer.tooLate == 1)
    }

    @Test func tiesKeepArrivalOrderAndAZeroWindowPassesThrough() {
        var buffer = ReorderBuffer<Int>(window: 0)
        #expect(buffer.insert(1, at: Timestamp(seconds: 1)) == [1])
        var ties = ReorderBuffer<Int>(window: 10)
        for value in 0..<50 { _ = ties.insert(value, at: Timestamp(seconds: Double(value % 3))) }
        let drained = ties.drain()
        #expect(drained == (0..<50).filter { $0 % 3 == 0 } + (0..<50).filter { $0 % 3 == 1 } + (0..<50).filter { $0 % 3 == 2 })
    }

    @Test func sortsALargeShuffledStream() {
        var random = SystemRandomNumberGenerator()
        var buffer = ReorderBuffer<Double>(window: 2)
        var released: [Double] = []
        for index in 0..<5_000 {
            let time = Double(index) * 0.01 + Double.random(in: 0..<1.9, using: &random)
            released += buffer.insert(time, at: Timestamp(seconds: time))
        }
        released += buffer.drain()
        #expect(released.count == 5_000)
        #expect(released == released.sorted())
        #expect(buffer.tooLate == 0)
    }
}

extension ReorderBufferTests {
    struct Stop: Error {}

    @Test func theCallbackFormsReleaseWhatTheArrayFormsDo() {
        var random = SeededRandom(seed: 7)
        var arrays = ReorderBuffer<Int>(window: 1.5)
        var callbacks = ReorderBuffer<Int>(window: 1.5)
        var fromArrays: [Int] = [], fromCallbacks: [Int] = []
        for index in 0..<2_000 {
            let time = Timestamp(seconds: Double(index) * 0.01 + Double.random(in: 0..<2, using: &random))
            fromArrays += arrays.insert(index, at: time)
            callbacks.insert(index, at: time) { fromCallbacks.append($0) }
            #expect(fromArrays == fromCallbacks)
        }
        fromArrays += arrays.drain()
        callbacks.drain { fromCallbacks.append($0) }
        #expect(fromArrays == fromCallbacks && fromCallbacks.count == 2_000)
        #expect(arrays.tooLate == callbacks.tooLate)
    }

    @Test func anErrorFromTheCallbackStopsTheReleaseAndKeepsTheRest() throws {
        var window = ReorderBuffer<String>(window: 10)
        for (name, time) in [("b", 1.0), ("c", 2.0), ("d", 3.0)] { _ = window.insert(name, at: Timestamp(seconds: time)) }
        var seen: [String] = []
        #expect(throws: Stop.self) {
            try window.drain { (name: String) throws(Stop) in
                seen.append(name)
                if name == "c" { throw Stop() }
            }
        }
        #expect(seen == ["b", "c"])   // "c" was handed over when the callback threw
        #expect(window.drain() == ["d"])
    }
}
