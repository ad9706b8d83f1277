import RegionKitCore

extension RegionPage {
    /// Picks a page's identifiers out of every region's, offered one at a time in any order:
    /// the `limit` first after the cursor, kept in a max-heap so that the whole listing is
    /// neither copied nor sorted (an identifier past the page costs one comparison once the page
    /// is full). `O(n log limit)` for n regions.
    ///
    /// The order is the bytes of each identifier's UTF-8 in NFC (``Region/canonical(identifier:)``),
    /// which is Unicode scalar order, and a prefix is a prefix of those bytes, so the regions of
    /// a prefix are one run of that order. (Swift's `<` on text is not an order here: on this
    /// toolchain `"e\u{301}" < "\u{E9}0"` and its converse are both false, and sorting the same
    /// identifiers twice gave two orders.)
    ///
    /// ```swift
    /// var selection = RegionPage.Selection(RegionPage.Query(cursor: "b", limit: 2))
    /// for id in ["d", "a", "c", "e"] { selection.offer(id) }
    /// selection.page   // (["c", "d"], more: true); selection.total == 4
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
        /// The first identifiers after the cursor so far (in NFC, and as offered), at most
        /// `limit`; `heap[0]` is the last of them.
        private var heap: [(key: String, identifier: String)] = []

        init(_ query: Query) {
            limit = max(query.limit, 0)
            cursor = query.cursor.map(Region.canonical(identifier:))
            prefix = query.prefix.map(Region.canonical(identifier:))
            heap.reserveCapacity(min(limit, 1_024))
        }

        /// Whether `a` comes before `b` (both in NFC): their UTF-8 bytes compared.
        static func precedes(_ a: String, _ b: String) -> Bool {
            a.utf8.lexicographicallyPrecedes(b.utf8)
        }

        mutating func offer(_ identifier: String) {
            let key = Region.canonical(identifier: identifier)
            if let prefix, !key.utf8.starts(with: prefix.utf8) { return }
            total += 1
            if let cursor, !Self.precedes(cursor, key) { return }
            following += 1
            guard limit > 0 else { return }
            if heap.count < limit {
                heap.append((key, identifier))
                siftUp(heap.count - 1)
            } else if Self.precedes(key, heap[0].key) {
                heap[0] = (key, identifier)
                siftDown(0)
            }
        }

        /// The page's identifiers (as offered) in order, and whether more follow it.
        var page: (identifiers: [String], more: Bool) {
            (heap.sorted { Self.precedes($0.key, $1.key) }.map(\.identifier), following > heap.count)
        }

        private mutating func siftUp(_ start: Int) {
            var child = start
            while child > 0 {
                let parent = (child - 1) / 2
                guard Self.precedes(heap[parent].key, heap[child].key) else { return }
                heap.swapAt(parent, child)
                child = parent
            }
        }

        private mutating func siftDown(_ start: Int) {
            var parent = start
            while true {
                let left = 2 * parent + 1, right = left + 1
                var last = parent
                if left < heap.count, Self.precedes(heap[last].key, heap[left].key) { last = left }
                if right < heap.count, Self.precedes(heap[last].key, heap[right].key) { last = right }
                guard last != parent else { return }
                heap.swapAt(parent, last)
                parent = last
            }
        }
    }
}
