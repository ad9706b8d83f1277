/// The version of RegionKit this build is: what `regionkit --version` prints and what the Home
/// Assistant device block reports as its software version.
///
/// Semantic versioning; while the major version is 0, a minor version may change the library's
/// API, the configuration file or the wire formats (each such change is in the commit log).
///
/// ```swift
/// print("RegionKit \(RegionKitVersion.current)")   // RegionKit 0.2.0
/// ```
public enum RegionKitVersion {
    /// This build's version.
    public static let current = "0.2.0"
}
