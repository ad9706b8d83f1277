/// A binary min-heap: the smallest element first, O(log n) push and pop, O(n) heapify.
///
/// The engine's timers, the reorder buffer and the detection sweep's merge of transmitters all
/// order by (time, tie-breaker) through this one type: `package` access, an implementation detail
/// shared inside RegionKit, not API.
///
/// ```swift
/// var heap = MinHeap<Int>()
/// heap.push(3); heap.push(1); heap.push(2)
/// heap.popMin() // 1
/// heap.min      // 2
/// ```
package struct MinHeap<Element: Comparable>: Sendable where Element: Sendable {
    /// The elements in heap order (the first is the smallest; the rest are not sorted).
    package private(set) var elements: [Element] = []

    package init() {}

    package var count: Int { elements.count }
    package var isEmpty: Bool { elements.isEmpty }
    /// The smallest element, if any.
    package var min: Element? { elements.first }

    package mutating func push(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child] < elements[parent] else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the smallest element.
    @discardableResult
    package mutating func popMin() -> Element? {
        guard !elements.isEmpty else { return nil }
        let first = elements[0]
        let last = elements.removeLast()
        guard !elements.isEmpty else { return first }
        elements[0] = last
        siftDown(from: 0)
        return first
    }

    /// Replaces the smallest element with `element` (one sift, where a pop and a push take two);
    /// pushes it when the heap is empty.
    package mutating func replaceMin(with element: Element) {
        guard !elements.isEmpty else { return push(element) }
        elements[0] = element
        siftDown(from: 0)
    }

    /// Replaces the contents with `newElements`, heapified in O(n).
    package mutating func rebuild(_ newElements: [Element]) {
        elements = newElements
        guard elements.count > 1 else { return }
        for start in stride(from: elements.count / 2 - 1, through: 0, by: -1) { siftDown(from: start) }
    }

    /// Moves the element at `start` down until neither child is smaller.
    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < elements.count else { return }
            let right = left + 1
            let child = right < elements.count && elements[right] < elements[left] ? right : left
            guard elements[child] < elements[parent] else { return }
            elements.swapAt(child, parent)
            parent = child
        }
    }
}
