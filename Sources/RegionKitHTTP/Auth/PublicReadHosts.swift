/// The `Host` names a public server (``HTTPConfiguration/isPublic``) serves reads to without a
/// token: IP addresses, `localhost` (and names under `.localhost`), and the names the operator
/// lists (`http.allowedHosts`).
///
/// A public server on a trusted network is still reachable by any web page a browser on that
/// network opens: with DNS rebinding, a page at `attacker.example` re-points its own name to the
/// daemon's address, and the browser then treats the daemon's answers as same-origin and lets the
/// page read them. Such requests carry the attacker's name in `Host`, never an IP address
/// (rebinding needs a name), so refusing unlisted names stops them; a request presenting the
/// bearer token is checked as usual whatever its `Host`.
///
/// ```swift
/// let hosts = PublicReadHosts(allowed: ["gateway.lan"])
/// hosts.admits("gateway.lan:8080")      // true
/// hosts.admits("192.168.1.20:8080")     // true
/// hosts.admits("attacker.example")      // false
/// ```
struct PublicReadHosts: Sendable {
    /// Lower-cased names, without port.
    let allowed: Set<String>
    /// `*` listed: every name.
    let any: Bool

    init(allowed: [String]) {
        let names = Set(allowed.map { $0.lowercased() })
        self.allowed = names
        any = names.contains("*")
    }

    /// Whether a read without a token may be served to a request whose `Host` is `authority`
    /// (`name[:port]`, `[v6]` with port or not). No `Host` at all (HTTP/1.0) is admitted: every
    /// browser sends one.
    func admits(_ authority: String?) -> Bool {
        guard let authority, !any else { return true }
        guard let name = Self.name(of: authority) else { return false }
        return Self.isAddress(name) || name == "localhost" || name.hasSuffix(".localhost") || allowed.contains(name)
    }

    /// The host part of `authority`, lower-cased, without port or a trailing dot; nil when it is
    /// not `name[:port]` or `[address][:port]`.
    static func name(of authority: String) -> String? {
        var text = Substring(authority.lowercased())
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isASCIIDigit)) else { return nil }
            return String(text[...close])
        }
        if let colon = text.lastIndex(of: ":") {
            guard text[text.index(after: colon)...].allSatisfy(\.isASCIIDigit) else { return nil }
            text = text[..<colon]
        }
        if text.hasSuffix(".") { text = text.dropLast() }
        guard !text.isEmpty, !text.contains(":") else { return nil }
        return String(text)
    }

    /// A dotted-decimal IPv4 address or a bracketed IPv6 one (a name a DNS answer cannot re-point).
    static func isAddress(_ name: String) -> Bool {
        if name.hasPrefix("[") { return name.hasSuffix("]") && name.count > 2 }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            (1...3).contains(part.count) && part.allSatisfy(\.isASCIIDigit) && Int(part)! <= 255
        }
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
