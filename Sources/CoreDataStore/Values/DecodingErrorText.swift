import Foundation

/// A `DecodingError` in a sentence a user can act on: which key is missing or wrong, by its path
/// (`entities[0].attributes[4].default`), for manifests and schema files alike.
package enum DecodingErrorText {
    package static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing \(path(context.codingPath + [key]))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "wrong type at \(path(context.codingPath))"
        case DecodingError.dataCorrupted(let context):
            let detail = context.debugDescription.isEmpty ? "" : ": \(context.debugDescription)"
            return context.codingPath.isEmpty ? "invalid JSON\(detail)" : "invalid value at \(path(context.codingPath))\(detail)"
        default:
            return (error as? LocalizedError)?.errorDescription ?? error.localizedDescription
        }
    }

    static func path(_ keys: [CodingKey]) -> String {
        var text = ""
        for key in keys {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text
    }
}
