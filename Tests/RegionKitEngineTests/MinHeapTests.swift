import Testing
@testable import RegionKitEngine

/// ``MinHeap`` (the engine's timer queue, the reorder buffer, the sweep's merge) against a sorted
/// array: random pushes, pops, minimum replacements and rebuilds, with many equal keys so ties
/// are exercised, and the heap drained in order at the end.
@Suite("Min-heap: push, pop, replaceMin and rebuild against a sorted array")
struct MinHeapTests {
    @Test("random operations give the model's minimum after each, and drain in sorted order", arguments: [1, 2, 3])
    func randomOperations(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        func pick(_ n: Int) -> Int { min(Int(random.uniform() * Double(n)), n - 1) }
        var heap = MinHeap<Int>()
        var model: [Int] = []   // kept sorted
        for step in 0..<5_000 {
            switch pick(10) {
            case 0..<5:
                let value = pick(50)   // few distinct values: ties everywhere
                heap.push(value)
                model.insert(value, at: model.firstIndex { $0 > value } ?? model.count)
            case 5..<7:
                #expect(heap.popMin() == model.first, "step \(step)")
                if !model.isEmpty { model.removeFirst() }
            case 7..<9:
                // The engine's use: the earliest timer moved later (or earlier) in place.
                let value = pick(60)
                heap.replaceMin(with: value)
                if !model.isEmpty { model.removeFirst() }
                model.insert(value, at: model.firstIndex { $0 > value } ?? model.count)
            default:
                if pick(20) == 0 {
                    let values = (0..<pick(40)).map { _ in pick(50) }
                    heap.rebuild(values)
                    model = values.sorted()
                }
            }
            #expect(heap.min == model.first, "step \(step)")
            #expect(heap.count == model.count, "step \(step)")
        }
        var drained: [Int] = []
        while let value = heap.popMin() { drained.append(value) }
        #expect(drained == model)
    }

    @Test("replaceMin on an empty heap pushes")
    func replaceMinOnEmpty() {
        var heap = MinHeap<Int>()
        heap.replaceMin(with: 7)
        #expect(heap.min == 7)
        #expect(heap.count == 1)
    }
}
