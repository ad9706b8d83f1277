extension Double {
    /// The value as people write it in options, messages and tables: a whole number without a
    /// fraction (`100`, not `100.0`), anything else as Swift prints it (`0.25`, `1e+300`, `inf`,
    /// `nan`). Whole values beyond ±10¹⁵ are printed as doubles: converting them to an integer
    /// trapped for 2⁶³ and more (`eval replay --flap-window 1e19` stopped with a fatal error).
    ///
    /// ```swift
    /// 5.0.compactDescription      // "5"
    /// 0.25.compactDescription     // "0.25"
    /// 1e300.compactDescription    // "1e+300"
    /// ```
    public var compactDescription: String {
        self == rounded() && abs(self) < 1e15 ? String(Int64(self)) : "\(self)"
    }
}
