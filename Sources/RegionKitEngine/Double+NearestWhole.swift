extension Double {
    /// `rounded()` (to the nearest whole number, ties away from zero) of a value in (0, 2⁵²],
    /// without the libm call `rounded()` compiles to on x86-64 builds without SSE 4.1 (once or
    /// twice per sighting: the stream estimator's periodic view, which every detector keeps). Exact there: the fraction `self − whole` is
    /// computed without rounding (both lie in one binade or `whole` is 0), and `whole + 1` is a
    /// whole number below 2⁵³. Other values (zeros, negative, larger, NaN) go through `rounded()`.
    ///
    /// ```swift
    /// 2.5.nearestWhole    // 3
    /// 2.4999.nearestWhole // 2
    /// ```
    @inline(__always)
    var nearestWhole: Double {
        guard self > 0, self <= 0x1p52 else { return rounded() }   // (−0 keeps its sign there)
        let whole = Double(Int64(self))   // toward zero
        return self - whole >= 0.5 ? whole + 1 : whole
    }
}
