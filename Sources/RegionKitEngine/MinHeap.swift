/// A binary min-heap: the smallest element first, O(log n) push and pop, O(n) heapify.
///
/// The engine's timers, the reorder buffer and the detection sweep's merge of transmitters all
/// order by (time, tie-breaker) through this one type: `package` access, an implementation detail
/// shared inside RegionKit, not API. Inlinable (with ``ReorderBuffer``, which is generic and used
/// from other modules): called across a module boundary unspecialised, every push and pop went
/// through generic metadata and value witnesses.
///
/// ```swift
/// var heap = MinHeap<Int>()
/// heap.push(3); heap.push(1); heap.push(2)
/// heap.popMin() // 1
/// heap.min      // 2
/// ```
@usableFromInline
package struct MinHeap<Element: Comparable>: Sendable where Element: Sendable {
    /// The heap's array, reachable from inlinable code (read it as ``elements``).
    @usableFromInline
    var storage: [Element] = []

    /// The elements in heap order (the first is the smallest; the rest are not sorted).
    package var elements: [Element] { storage }

    @inlinable
    package init() {}

    @inlinable
    package var count: Int { storage.count }
    @inlinable
    package var isEmpty: Bool { storage.isEmpty }
    /// The smallest element, if any.
    @inlinable
    package var min: Element? { storage.first }

    @inlinable
    package mutating func push(_ element: Element) {
        storage.append(element)
        var child = storage.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard storage[child] < storage[parent] else { break }
            storage.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the smallest element.
    @discardableResult
    @inlinable
    package mutating func popMin() -> Element? {
        guard !storage.isEmpty else { return nil }
        let first = storage[0]
        let last = storage.removeLast()
        guard !storage.isEmpty else { return first }
        storage[0] = last
        siftDown(from: 0)
        return first
    }

    /// Replaces the smallest element with `element` (one sift, where a pop and a push take two);
    /// pushes it when the heap is empty.
    @inlinable
    package mutating func replaceMin(with element: Element) {
        guard !storage.isEmpty else { return push(element) }
        storage[0] = element
        siftDown(from: 0)
    }

    /// Replaces the contents with `newElements`, heapified in O(n).
    @inlinable
    package mutating func rebuild(_ newElements: [Element]) {
        storage = newElements
        guard storage.count > 1 else { return }
        for start in stride(from: storage.count / 2 - 1, through: 0, by: -1) { siftDown(from: start) }
    }

    /// Moves the element at `start` down until neither child is smaller.
    @inlinable
    mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < storage.count else { return }
            let right = left + 1
            let child = right < storage.count && storage[right] < storage[left] ? right : left
            guard storage[child] < storage[parent] else { return }
            storage.swapAt(child, parent)
            parent = child
        }
    }
}
