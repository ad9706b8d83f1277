extension HookConfiguration {
    /// `text` (a webhook URL, or a hook name `webhook:URL`) as logs and messages may show it: its
    /// scheme, host and port, then `/…` and a short hash of the URL without its user information in place of everything
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
        guard let at = authority.lastIndex(of: "@") else {
            // No user information before the path, but an "@" after it: a password holding "/",
            // "?" or "#" (the authority ended inside it: `bob:s3cr/et@host` showed `bob:s3cr`),
            // or an "@" in the path. Which one cannot be told: nothing of it is shown.
            if let later = rest.lastIndex(of: "@") {
                return String(text[..<scheme.upperBound]) + "… (#\(fingerprint(String(rest[rest.index(after: later)...]))))"
            }
            // `name:text` that is no port (`alice:S3CRET/…` with its "@" lost): nothing of it shown.
            if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]"),
               !authority[authority.index(after: colon)...].allSatisfy(\.isNumber) {
                return String(text[..<scheme.upperBound]) + "… (#\(fingerprint(String(rest[authorityEnd...]))))"
            }
            // Nothing but a host and port: nothing to hide.
            if authorityEnd == rest.endIndex { return text }
            return String(text[..<scheme.upperBound]) + authority + "/… (#\(fingerprint(text)))"
        }
        // The fingerprint leaves the user information out: a weak password could otherwise be
        // confirmed by hashing guesses against a log line.
        let host = authority[authority.index(after: at)...]
        let withoutCredentials = String(text[..<scheme.upperBound]) + String(rest[authority.index(after: at)...])
        return String(text[..<scheme.upperBound]) + host + "/… (#\(fingerprint(withoutCredentials)))"
    }

    /// Eight hex digits of FNV-1a over `text`'s bytes: stable across runs, for telling URLs apart.
    static func fingerprint(_ text: String) -> String {
        var hash: UInt32 = 2_166_136_261
        for byte in text.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
