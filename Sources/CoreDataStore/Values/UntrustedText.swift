/// Text from untrusted input (an archive, a store), made safe to print in a message.
package enum UntrustedText {
    /// A name or value taken from an archive or a store, made safe to print: both are untrusted input,
    /// and a member named with terminal escape sequences, bidirectional overrides or a megabyte
    /// of text must not reach a terminal as such. Control and format characters are written as
    /// `\u{…}`, an empty name as `""`, a name that starts or ends with white space in quotes (so
    /// the space shows), and anything longer than 200 characters is cut short.
    package static func display(_ text: String, limit: Int = 200) -> String {
        if text.isEmpty { return "\"\"" }
        if text.first?.isWhitespace == true || text.last?.isWhitespace == true {
            return "\"" + escaped(text, limit: limit) + "\""
        }
        return escaped(text, limit: limit)
    }

    private static func escaped(_ text: String, limit: Int) -> String {
        var output = ""
        var characters = 0
        for scalar in text.unicodeScalars {
            if characters == limit {
                output += "… (\(text.utf8.count) bytes)"
                break
            }
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator:
                output += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default:
                output.unicodeScalars.append(scalar)
            }
            characters += 1
        }
        return output
    }

}
