extension HookConfiguration {
    /// `text` (a webhook URL, or a hook name `webhook:URL`) as logs and messages may show it: its
    /// scheme, host and port, then `/…` and a short hash of the whole URL in place of everything
    /// that may carry a secret — the user information, and the path and query, where webhook
    /// services put their tokens (Home Assistant's `/api/webhook/<id>`, Slack's
    /// `/services/…/<token>`, `?token=`). The hash tells two webhooks of one host apart. A
    /// command hook's name is returned as it is (the user's own line).
    ///
    /// ```swift
    /// HookConfiguration.redacted("webhook:https://user:pw@hooks.example/in?token=abc")   // "webhook:https://hooks.example/… (#1a2b3c4d)"
    /// ```
    public static func redacted(_ text: String) -> String {
        if text.hasPrefix("command:") { return text }
        guard let scheme = text.range(of: "://") else { return text }
        let rest = text[scheme.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let host = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        // Nothing but a host and port: nothing to hide.
        if host.endIndex == authority.endIndex, host.startIndex == authority.startIndex, authorityEnd == rest.endIndex { return text }
        return String(text[..<scheme.upperBound]) + host + "/… (#\(fingerprint(text)))"
    }

    /// Eight hex digits of FNV-1a over `text`'s bytes: stable across runs, for telling URLs apart.
    static func fingerprint(_ text: String) -> String {
        var hash: UInt32 = 2_166_136_261
        for byte in text.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
