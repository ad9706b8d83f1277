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
        // A hole moves up instead of swapping: one write per level, and the buffer is checked
        // for uniqueness once, not at every swap.
        elements.withUnsafeMutableBufferPointer { heap in
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard element < heap[parent] else { break }
                heap[child] = heap[parent]
                child = parent
            }
            heap[child] = element
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
        elements.withUnsafeMutableBufferPointer { heap in
            let element = heap[start]
            var parent = start
            while true {
                let left = 2 * parent + 1
                guard left < heap.count else { break }
                let right = left + 1
                let child = right < heap.count && heap[right] < heap[left] ? right : left
                guard heap[child] < element else { break }
                heap[parent] = heap[child]
                parent = child
            }
            heap[parent] = element
        }
    }
}
