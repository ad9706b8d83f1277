import Yams

/// Where in a YAML (or JSON) text a decoding error is: the line and column of the key (or list
/// item) its coding path ends at, found by walking the composed node tree.
///
/// ```swift
/// do { _ = try YAMLDecoder().decode(Settings.self, from: text) }
/// catch let error as DecodingError { print(YAMLLocation.of(error, in: text) ?? "?") }   // (line: 4, column: 3)
/// ```
public enum YAMLLocation {
    /// The 1-based line and column of the node the error's coding path names (as far as the path
    /// exists in the text), or nil when the text does not compose.
    public static func of(_ error: DecodingError, in text: String) -> (line: Int, column: Int)? {
        let context: DecodingError.Context
        switch error {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c): context = c
        case .keyNotFound(_, let c): context = c
        @unknown default: return nil
        }
        return of(path: context.codingPath, in: text)
    }

    /// The 1-based line and column of `path` in `text` (the deepest part of it that exists).
    public static func of(path: [any CodingKey], in text: String) -> (line: Int, column: Int)? {
        guard let root = try? Yams.compose(yaml: text) else { return nil }
        var node = root
        var mark = root.mark
        for key in path {
            if let sequence = node.sequence, let index = key.intValue {
                guard index < sequence.count else { break }
                node = sequence[index]
                mark = node.mark
            } else if let mapping = node.mapping {
                guard let pair = mapping.first(where: { $0.key.string == key.stringValue }) else { break }
                mark = pair.key.mark
                node = pair.value
            } else {
                break
            }
        }
        return mark.map { ($0.line, $0.column) }
    }

    /// A YAML syntax error as `path:line:column: problem`.
    public static func describe(_ error: YamlError, path: String) -> String {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
             .composer(let context, let problem, let mark, _):
            return "\(path):\(mark.line):\(mark.column): not valid YAML: \(context.map { "\($0.text) " } ?? "")\(problem)"
        case .reader(let problem, let offset, _, let yaml):
            if let offset, let location = Self.lineAndColumn(offset: offset, in: yaml) {
                return "\(path):\(location.line):\(location.column): not valid YAML: \(problem)"
            }
            return "\(path): not valid YAML: \(problem)"
        case .duplicatedKeysInMapping(let duplicates, let context):
            return "\(path):\(context.mark.line):\(context.mark.column): duplicate key(s) \(duplicates.sorted().map { "'\($0)'" }.joined(separator: ", ")) in one mapping"
        default:
            return "\(path): not valid YAML: \(error)"
        }
    }

    private static func lineAndColumn(offset: Int, in text: String) -> (line: Int, column: Int)? {
        var line = 1, column = 1, seen = 0
        for scalar in text.unicodeScalars {
            if seen == offset { return (line, column) }
            if scalar == "\n" { line += 1; column = 1 } else { column += 1 }
            seen += 1
        }
        return seen == offset ? (line, column) : nil
    }
}
