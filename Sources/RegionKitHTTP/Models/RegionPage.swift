/// One page of `GET /v1/regions?limit=N&cursor=C&prefix=P`: the regions (monitored, or waiting
/// for their source) whose identifiers follow the cursor, in identifier order, at most `limit`.
/// A daemon of 100,000 regions answered every listing with all of them (27 MB in 0.5–0.8 s), and
/// its dashboard asked for that every 5 seconds.
///
/// Identifiers are ordered by their UTF-8 bytes after canonical (NFC) normalization, which is
/// Unicode scalar order (and for ASCII, byte order); a prefix is a prefix of those bytes. The cursor is the last identifier of the page
/// before (``nextCursor``): a region added or removed meanwhile moves no other region from its
/// page, and one removed can still be a cursor.
///
/// ```swift
/// var query = RegionPage.Query(limit: 100)
/// repeat {
///     let page = try await backend.regionPage(query)
///     show(page.reports)
///     query.cursor = page.nextCursor
/// } while query.cursor != nil
/// ```
public struct RegionPage: Sendable {
    /// What a page holds: at most `limit` regions whose identifiers sort after `cursor` (from the
    /// first when nil) and begin with `prefix` (every one when nil).
    public struct Query: Sendable, Hashable {
        public var cursor: String?
        public var limit: Int
        public var prefix: String?

        public init(cursor: String? = nil, limit: Int, prefix: String? = nil) {
            self.cursor = cursor
            self.limit = limit
            self.prefix = prefix
        }
    }

    /// The page's regions, in identifier order.
    public var reports: [RegionReport]
    /// How many regions the listing holds (those beginning with the query's prefix), on every page.
    public var total: Int
    /// How many of them sort at or before the cursor (the pages before hold them): the page's
    /// first region is number `preceding + 1` of `total`.
    public var preceding: Int
    /// The cursor of the next page (the last identifier of this one), nil on the last page.
    public var nextCursor: String?

    public init(reports: [RegionReport], total: Int, preceding: Int, nextCursor: String?) {
        self.reports = reports
        self.total = total
        self.preceding = preceding
        self.nextCursor = nextCursor
    }
}
