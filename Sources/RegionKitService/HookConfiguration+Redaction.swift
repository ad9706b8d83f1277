extension HookConfiguration {
    /// `text` (a webhook URL, or a hook name `webhook:URL`) as logs and messages may show it: the
    /// credentials a URL carries — its user information and its query, where webhooks take their
    /// tokens — replaced by `***`. A command hook's name is returned as it is.
    ///
    /// ```swift
    /// HookConfiguration.redacted("webhook:https://user:pw@hooks.example/in?token=abc")   // "webhook:https://***@hooks.example/in?***"
    /// ```
    public static func redacted(_ text: String) -> String {
        if text.hasPrefix("command:") { return text }
        guard let scheme = text.range(of: "://") else { return text }
        var result = String(text[..<scheme.upperBound])
        let rest = text[scheme.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") {
            result += "***" + authority[at...]
        } else {
            result += authority
        }
        let tail = rest[authorityEnd...]
        if let query = tail.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            result += tail[..<query] + "?***"
        } else {
            result += tail
        }
        return result
    }
}
