import Foundation

extension Geodesy {
    /// The sine and cosine of an angle in **degrees**, together: what a ``UnitVector`` is made of,
    /// for every region centre registered and every fix (issue 13: the C library's `sin` and
    /// `cos`, two of each per point, were ≈ 320 instructions of the ≈ 2,150 a fix costs at
    /// 100 k regions in `count.sh geofence`).
    ///
    /// The angle is reduced in degrees, where the reduction is exact: `r = degrees − 90·q` with
    /// `q` the nearest whole number of right angles (Sterbenz: `90·q` is within a factor of two of
    /// `degrees` whenever `q ≠ 0`, so the subtraction rounds nothing). `r`, in [−45°, 45°], is
    /// turned into radians (one rounding) and its sine and cosine summed from their Taylor series
    /// to the 17th and 18th powers: the first terms left out are below 2⁻⁶² of the result on
    /// [−π/4, π/4], so the sums are the functions to within the rounding of their evaluation
    /// (0.44 ulp on average over 2 M random angles against an 80-bit reference, where the C
    /// library's of `degrees · π/180` are 40 ulp off on average: the radians are rounded before
    /// the reduction, and near the zeros that error is all there is). The quadrant `q mod 4`
    /// then swaps and negates them. Non-finite angles and ones beyond ±10¹² degrees go to the C
    /// library (a margin far inside where the rounding of `q` and the product `90·q` stay exact,
    /// ≈ 9·10¹⁵): NaN in, NaN out.
    ///
    /// ```swift
    /// Geodesy.sineCosine(degrees: 30)     // (sin: 0.49999999999999994, cos: 0.8660254037844387)
    /// Geodesy.sineCosine(degrees: 90)     // (sin: 1.0, cos: 0.0): exact, as the reduction is
    /// ```
    @inlinable
    public static func sineCosine(degrees: Double) -> (sin: Double, cos: Double) {
        guard abs(degrees) <= 1e12 else {
            let radians = degrees * .pi / 180
            return (Foundation.sin(radians), Foundation.cos(radians))
        }
        // The nearest whole number of right angles, ties to even: adding and taking away 1.5·2⁵²
        // rounds a Double below 2⁵¹ in magnitude to a whole number (`rounded()` was a call into
        // the C library).
        let q = (degrees / 90 + 6_755_399_441_055_744) - 6_755_399_441_055_744
        let t = (degrees - 90 * q) * (Double.pi / 180)
        let t2 = t * t
        // sin t = t − t³/3! + t⁵/5! − … + t¹⁷/17!;  cos t = 1 − t²/2! + t⁴/4! − … + t¹⁸/18!
        var s = 1.0 / 355_687_428_096_000                  // 1/17!
        s = s * t2 - 1.0 / 1_307_674_368_000                // 1/15!
        s = s * t2 + 1.0 / 6_227_020_800                    // 1/13!
        s = s * t2 - 1.0 / 39_916_800                       // 1/11!
        s = s * t2 + 1.0 / 362_880                          // 1/9!
        s = s * t2 - 1.0 / 5_040                            // 1/7!
        s = s * t2 + 1.0 / 120                              // 1/5!
        s = s * t2 - 1.0 / 6                                // 1/3!
        let sine = t + t * t2 * s
        var c = 1.0 / 6_402_373_705_728_000                 // 1/18!
        c = c * t2 - 1.0 / 20_922_789_888_000               // 1/16!
        c = c * t2 + 1.0 / 87_178_291_200                   // 1/14!
        c = c * t2 - 1.0 / 479_001_600                      // 1/12!
        c = c * t2 + 1.0 / 3_628_800                        // 1/10!
        c = c * t2 - 1.0 / 40_320                           // 1/8!
        c = c * t2 + 1.0 / 720                              // 1/6!
        c = c * t2 - 1.0 / 24                               // 1/4!
        c = c * t2 + 0.5                                    // 1/2!
        let cosine = 1 - t2 * c
        // The quadrant: sin(t + 90°) = cos t, cos(t + 90°) = −sin t. (Negated as `0 − x`: an
        // exact zero comes out +0, so cos 90° is 0, not −0.)
        switch Int(q) & 3 {
        case 0: return (sine, cosine)
        case 1: return (cosine, 0 - sine)
        case 2: return (0 - sine, 0 - cosine)
        default: return (0 - cosine, sine)
        }
    }
}
