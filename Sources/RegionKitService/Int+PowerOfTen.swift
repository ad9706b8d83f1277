extension Int {
    /// 1, 10, 100, …: the counts at which a repeated failure is logged again (the first, then
    /// ever more rarely), so one stuck for good is seen without a line per occurrence.
    ///
    /// ```swift
    /// (1...1_000).filter(\.isPowerOfTen)   // [1, 10, 100, 1000]
    /// ```
    var isPowerOfTen: Bool {
        var value = self
        while value >= 10, value % 10 == 0 { value /= 10 }
        return value == 1
    }
}
