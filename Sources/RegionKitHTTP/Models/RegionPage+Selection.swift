import Foundation
import RegionKitCore

extension RegionPage {
    /// Picks a page's identifiers out of every region's, offered one at a time in any order:
    /// the `limit` first after the cursor, kept in a max-heap so that the whole listing is
    /// neither copied nor sorted (an identifier past the page costs one comparison once the page
    /// is full). `O(n log limit)` for n regions.
    ///
    /// The order is the bytes of each identifier's UTF-8 in NFC, which is Unicode scalar order,
    /// and a prefix is a prefix of those bytes, so the regions of a prefix are one run of that
    /// order. The identifiers offered are regions', which are in NFC already (`BeaconRegion`
    /// and `CircularRegion` keep them so: `Region.canonical(identifier:)`); the query's cursor
    /// and prefix are normalized here. (Swift's `<` on text is not an order: on this toolchain
    /// `"e\u{301}" < "\u{E9}0"` and its converse are both false, and sorting the same
    /// identifiers twice gave two orders.)
    ///
    /// ```swift
    /// var selection = RegionPage.Selection(RegionPage.Query(cursor: "b", limit: 2))
    /// for id in ["d", "a", "c", "e"] { selection.offer(id) }
    /// selection.page   // (["c", "d"], more: true); selection.total == 4, selection.preceding == 1
    /// ```
    struct Selection {
        let limit: Int
        /// The query's cursor and prefix in NFC.
        private let cursor: String?
        private let prefix: String?
        /// Identifiers offered that begin with the prefix, wherever they sort.
        private(set) var total = 0
        /// Of those, how many sort after the cursor.
        private var following = 0
        /// The first identifiers after the cursor so far, at most `limit`; `heap[0]` is the last of them.
        private var heap: [String] = []

        init(_ query: Query) {
            limit = max(query.limit, 0)
            cursor = query.cursor.map(Region.canonical(identifier:))
            prefix = query.prefix.map(Region.canonical(identifier:))
            heap.reserveCapacity(min(limit, 1_024))
        }

        /// Whether `a` comes before `b` (both in NFC): their UTF-8 bytes compared, with `memcmp`
        /// where both are stored contiguously (native strings are). The generic comparison goes
        /// byte by byte through an iterator: `perf` put 26 % of a prefix page at 100,000
        /// identifiers sharing a 12-byte beginning (`café-salle-N`) in `starts(with:)`.
        static func precedes(_ a: String, _ b: String) -> Bool {
            let compared = a.utf8.withContiguousStorageIfAvailable { x in
                b.utf8.withContiguousStorageIfAvailable { y -> Bool in
                    let common = min(x.count, y.count)
                    let order = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
                    return order != 0 ? order < 0 : x.count < y.count
                }
            }
            if let compared, let compared { return compared }
            return a.utf8.lexicographicallyPrecedes(b.utf8)
        }

        /// Whether `text`'s UTF-8 begins with `prefix`'s (`memcmp` as in ``precedes(_:_:)``).
        static func begins(_ text: String, with prefix: String) -> Bool {
            let compared = text.utf8.withContiguousStorageIfAvailable { x in
                prefix.utf8.withContiguousStorageIfAvailable { y -> Bool in
                    x.count >= y.count && (y.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, y.count) == 0)
                }
            }
            if let compared, let compared { return compared }
            return text.utf8.starts(with: prefix.utf8)
        }

        /// Offers a region's identifier (in NFC, as regions keep them).
        mutating func offer(_ identifier: String) {
            if let prefix, !Self.begins(identifier, with: prefix) { return }
            total += 1
            if let cursor, !Self.precedes(cursor, identifier) { return }
            following += 1
            guard limit > 0 else { return }
            if heap.count < limit {
                heap.append(identifier)
                siftUp(heap.count - 1)
            } else if Self.precedes(identifier, heap[0]) {
                heap[0] = identifier
                siftDown(0)
            }
        }

        /// How many of those beginning with the prefix sort at or before the cursor: the regions
        /// of the pages before this one, however many those pages held.
        var preceding: Int { total - following }

        /// The page's identifiers in order, and whether more follow it.
        var page: (identifiers: [String], more: Bool) {
            (heap.sorted(by: Self.precedes), following > heap.count)
        }

        private mutating func siftUp(_ start: Int) {
            var child = start
            while child > 0 {
                let parent = (child - 1) / 2
                guard Self.precedes(heap[parent], heap[child]) else { return }
                heap.swapAt(parent, child)
                child = parent
            }
        }

        private mutating func siftDown(_ start: Int) {
            var parent = start
            while true {
                let left = 2 * parent + 1, right = left + 1
                var last = parent
                if left < heap.count, Self.precedes(heap[last], heap[left]) { last = left }
                if right < heap.count, Self.precedes(heap[last], heap[right]) { last = right }
                guard last != parent else { return }
                heap.swapAt(parent, last)
                parent = last
            }
        }
    }
}
