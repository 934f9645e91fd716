import Foundation

/// The one codec between values and JSON: how a `Value` is written in archives, reports, dumps
/// and schema files, and how JSON (parsed by `JSONLine`) is read back as a value of a kind.
///
/// Writing is done by hand, not by `JSONEncoder`, for exactness: Doubles in their shortest
/// round-trip form, dates as ISO 8601 text that round-trips the stored Double bit for bit, text
/// byte for byte (docs/archive-format.md, "Entity members").
package enum ValueJSON {
    /// The one key of the object that stands for TEXT whose bytes are not valid UTF-8.
    package static let textBytesKey = "textBytes"

    package static func append(_ value: Value, to output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .integer(let number): ASCIISpelling.appendInteger(number, to: &output)
        case .boolean(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .double(let number): appendDouble(number, to: &output)
        case .string(let text): appendString(text, to: &output)
        case .textBytes(let bytes):
            // JSON text is UTF-8, so these bytes travel as base64 inside a one-key object.
            output.append(UInt8(ascii: "{"))
            appendString(textBytesKey, to: &output)
            output.append(UInt8(ascii: ":"))
            appendBase64String(bytes, to: &output)
            output.append(UInt8(ascii: "}"))
        case .integerDate(let seconds): ASCIISpelling.appendInteger(seconds, to: &output)
        case .date(let seconds):
            // The ISO text needs no escape (digits, `-`, `T`, `:`, `.`, `Z`): its bytes go between
            // the quotes as they are, without a `String` made of them.
            output.append(UInt8(ascii: "\""))
            if DateText.appendISO8601(secondsSinceReferenceDate: seconds, to: &output) {
                output.append(UInt8(ascii: "\""))
            } else {
                // Out of ISO 8601's range: the stored number itself, which readers also accept.
                output.removeLast()
                appendDouble(seconds, to: &output)
            }
        case .uuid(let uuid): appendUUIDString(uuid, to: &output)
        // A string, so that no JSON reader turns it into a binary double on the way.
        case .decimal(let text): appendString(text, to: &output)
        case .binary(let bytes): appendBase64String(bytes, to: &output)
        case .integerArray(let numbers):
            output.append(UInt8(ascii: "["))
            for (index, number) in numbers.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                ASCIISpelling.appendInteger(number, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .stringArray(let texts):
            output.append(UInt8(ascii: "["))
            for (index, text) in texts.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                appendString(text, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        }
    }

    /// `appendString(bytes.base64EncodedString())`: base64 has no character to escape, so its
    /// digits go between the quotes as they are (`Base64Text`).
    package static func appendBase64String(_ bytes: Data, to output: inout [UInt8]) {
        bytes.withUnsafeBytes { appendBase64String($0, to: &output) }
    }

    /// The same, of bytes lent from a buffer (export's encoder, from SQLite's own).
    package static func appendBase64String(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        Base64Text.append(bytes, to: &output)
        output.append(UInt8(ascii: "\""))
    }

    /// `appendString(uuid.uuidString)`: hexadecimal digits and dashes, nothing to escape.
    package static func appendUUIDString(_ uuid: UUID, to output: inout [UInt8]) {
        withUnsafeBytes(of: uuid.uuid) { appendUUIDString($0, to: &output) }
    }

    /// The same, of a UUID's 16 bytes lent from a buffer.
    package static func appendUUIDString(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        UUID.appendText(of: bytes, to: &output)
        output.append(UInt8(ascii: "\""))
    }

    /// JSON has no infinities; SQLite can store them, so they travel as these strings. NaN has
    /// no spelling: SQLite stores a NaN as NULL, so no store holds one, and it is written `null`.
    package static let nonFiniteSpellings: [String: Double] = ["Infinity": .infinity, "-Infinity": -.infinity]

    package static func appendDouble(_ number: Double, to output: inout [UInt8]) {
        if number.isFinite {
            ShortestSpelling.append(number, to: &output)
        } else if number.isNaN {
            output.append(contentsOf: "null".utf8)
        } else {
            appendString(number > 0 ? "Infinity" : "-Infinity", to: &output)
        }
    }

    /// `text` as a JSON string: `"` and `\` escaped, control characters as `\n`, `\r`, `\t` or
    /// `\u00XX`, everything else (slashes, non-ASCII) as it is. `shortBackspaceAndFormFeed` writes
    /// those two as `\b` and `\f`, as `JSONEncoder` does (`diff`'s listing is in its spelling).
    package static func appendString(_ text: String, to output: inout [UInt8], shortBackspaceAndFormFeed: Bool = false) {
        var text = text
        text.withUTF8 { appendString(utf8: $0, to: &output, shortBackspaceAndFormFeed: shortBackspaceAndFormFeed) }
    }

    /// The same, of text given as its UTF-8 bytes, which must be valid UTF-8 (a `String`'s):
    /// export's encoder writes ASCII text from SQLite's own buffer without a `String` made of it.
    package static func appendString(
        utf8 bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8], shortBackspaceAndFormFeed: Bool = false
    ) {
        output.append(UInt8(ascii: "\""))
        // Runs of bytes that need no escape are copied in one piece: most strings are one run.
        var start = 0
        for index in 0..<bytes.count {
            let byte = bytes[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: "\\\\".utf8)
            case 0x0A: output.append(contentsOf: "\\n".utf8)
            case 0x0D: output.append(contentsOf: "\\r".utf8)
            case 0x09: output.append(contentsOf: "\\t".utf8)
            case 0x08 where shortBackspaceAndFormFeed: output.append(contentsOf: "\\b".utf8)
            case 0x0C where shortBackspaceAndFormFeed: output.append(contentsOf: "\\f".utf8)
            default:
                let hex = Array("0123456789abcdef".utf8)
                output.append(contentsOf: "\\u00".utf8)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            }
            start = index + 1
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<bytes.count]))
        output.append(UInt8(ascii: "\""))
    }

    /// A value's JSON text.
    package static func text(_ value: Value) -> String {
        var bytes: [UInt8] = []
        append(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A Double's shortest round-trip spelling, the bytes `"\(number)"` and `number.description` are
/// made of, appended to a line without making a `String` of them: `Double.write(to:)` hands its
/// digits to the stream's `_writeASCII`, whose default makes a `String` (a heap allocation when
/// longer than 15 bytes, and an interpolation always makes one) that is then copied into the line;
/// this stream copies the digits once. `ShortestSpellingTests` compares it with `"\(number)"`.
package enum ShortestSpelling {
    package static func append(_ number: Double, to output: inout [UInt8]) {
        var sink = Sink()
        // The line's buffer is lent to the stream and taken back (no copy either way).
        swap(&sink.bytes, &output)
        number.write(to: &sink)
        swap(&sink.bytes, &output)
    }

    private struct Sink: TextOutputStream {
        var bytes: [UInt8] = []

        mutating func write(_ string: String) { bytes.append(contentsOf: string.utf8) }

        mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: buffer) }
    }
}

/// Writes one JSON object by hand, keys in the order given, values through `ValueJSON`.
package struct JSONObjectWriter {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var isEmpty = true

    package init() {}

    private mutating func key(_ name: String) {
        if !isEmpty { bytes.append(UInt8(ascii: ",")) }
        isEmpty = false
        ValueJSON.appendString(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    package mutating func add(_ name: String, _ value: Value) {
        key(name)
        ValueJSON.append(value, to: &bytes)
    }

    /// A member whose value is already JSON text (written by `ValueJSON`); nil leaves it out.
    package mutating func add(_ name: String, json: String?) {
        guard let json else { return }
        key(name)
        bytes.append(contentsOf: json.utf8)
    }

    /// A text member; nil leaves it out.
    package mutating func add(_ name: String, string: String?) {
        guard let string else { return }
        add(name, .string(string))
    }

    /// The object's bytes, closed.
    package var finished: [UInt8] { bytes + [UInt8(ascii: "}")] }
}

/// Any JSON value, as `JSONLine` parses record lines (and `JSONDecoder` schema files), before the
/// schema interprets it. Not `indirect`: its arrays and objects hold their elements on the heap
/// already, and an `indirect` enum put every number, boolean and string of a line in a box of
/// its own (an allocation and a free for each).
package enum JSONValue: Codable, Equatable {
    case null
    case boolean(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .boolean(flag)
        } else if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    package var typeName: String {
        switch self {
        case .null: return "null"
        case .boolean: return "a boolean"
        case .integer: return "an integer"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

extension JSONValue {
    package func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .boolean(let flag): try container.encode(flag)
        case .integer(let number): try container.encode(number)
        case .number(let number): try container.encode(number)
        case .string(let text): try container.encode(text)
        case .array(let elements): try container.encode(elements)
        case .object(let members): try container.encode(members)
        }
    }
}

extension ValueJSON {
    package struct TypeMismatch: Error {
        package var expected: String
        package var found: String
    }

    /// Interprets a JSON value as a property of `kind`; a mismatch names both types.
    ///
    /// Every reader refuses a value the store would give back as another value (a negative zero,
    /// an Int16 beyond its range, a Float beyond Float's). With `exactSpelling`, it also
    /// refuses another spelling of a value than the one export writes (`"60"` for a Double, a
    /// lower-case UUID, a date as a number inside years 0001–9999, `.500` for `.5`, `textBytes`
    /// that are valid UTF-8, a Float's 0.1 for 0.10000000149011612): a reader whose restore proves itself against the archive's own
    /// checksums (format 3) would otherwise find the difference only after writing the store.
    package static func value(_ json: JSONValue, as kind: AttributeKind, exactSpelling: Bool = false) throws -> Value {
        func mismatch(_ expected: String) -> TypeMismatch { TypeMismatch(expected: expected, found: json.typeName) }
        // SQLite keeps no negative zero (a REAL or NUMERIC column stores it as the integer 0), so
        // a store can never give one back: refused rather than changed without a word.
        if case .number(let number) = json, number == 0, number.sign == .minus {
            throw TypeMismatch(expected: "a number SQLite can keep (it stores −0.0 as 0)", found: "−0.0")
        }
        switch (kind, json) {
        case (_, .null): return .null
        case (.integer, .integer(let number)): return .integer(number)
        case (.integer16, .integer(let number)):
            guard Int16(exactly: number) != nil else { throw TypeMismatch(expected: "an Int16 (−32768 to 32767)", found: String(number)) }
            return .integer(number)
        case (.integer32, .integer(let number)):
            guard Int32(exactly: number) != nil else {
                throw TypeMismatch(expected: "an Int32 (−2147483648 to 2147483647)", found: String(number))
            }
            return .integer(number)
        case (.decimal, .string(let text)):
            guard Value.decimalNumber(text) != nil else {
                throw TypeMismatch(expected: "exact decimal text as questbak writes it (\"100\", \"12.5\")", found: quoted(text))
            }
            return .decimal(text)
        case (.boolean, .boolean(let flag)): return .boolean(flag)
        case (.double, .integer(let number)), (.float, .integer(let number)):
            // The store refuses the same integer in a FLOAT column: exact or refused, both ways.
            guard Value.isExactDouble(number) else {
                throw TypeMismatch(expected: "a number a Double holds exactly", found: String(number))
            }
            if exactSpelling { throw TypeMismatch(expected: "a number as questbak writes it (\(Double(number)))", found: String(number)) }
            return try checkedFloat(Double(number), kind, exactSpelling: exactSpelling)
        case (.double, .number(let number)), (.float, .number(let number)):
            return try checkedFloat(number, kind, exactSpelling: exactSpelling)
        case (.double, .string(let text)), (.float, .string(let text)):
            guard let number = nonFiniteSpellings[text] else { throw mismatch("a number") }
            return .double(number)
        case (.date, .string(var text)): return try text.withUTF8 { try date(text: $0, exactSpelling: exactSpelling) }
        case (.date, .integer(let number)):
            let value = Value.date(integer: number)
            if exactSpelling, case .date(let seconds) = value {
                throw TypeMismatch(
                    expected: "an ISO 8601 date (an integer only from 2^51 seconds on)",
                    found: "\(number) (written \(DateText.iso8601(secondsSinceReferenceDate: seconds).map { "\"\($0)\"" } ?? "\(seconds)"))"
                )
            }
            return value
        case (.date, .number(let number)):
            if exactSpelling, let written = DateText.iso8601(secondsSinceReferenceDate: number) {
                throw TypeMismatch(expected: "an ISO 8601 date (a number only outside years 0001–9999): \"\(written)\"", found: "\(number)")
            }
            return .date(number)
        case (_, .string(let text)) where keepsStringAsText(kind): return .string(text)
        case (.string, .object(let members)) where members.count == 1 && members[textBytesKey] != nil,
            (.uri, .object(let members)) where members.count == 1 && members[textBytesKey] != nil:
            guard case .string(let encoded)? = members[textBytesKey], let bytes = base64(encoded, exactSpelling: exactSpelling) else {
                throw TypeMismatch(expected: "{\"\(textBytesKey)\": base64 text}", found: "another value in \(textBytesKey)")
            }
            let value = Value.text(bytes)
            if exactSpelling, case .string = value {
                throw TypeMismatch(
                    expected: "a string (\(textBytesKey) is only for text that is not valid UTF-8)", found: "\(textBytesKey) of valid UTF-8"
                )
            }
            return value
        case (.uuid, .string(var text)): return try text.withUTF8 { try uuid(text: $0, exactSpelling: exactSpelling) }
        case (.binary, .string(var text)), (.transformable, .string(var text)):
            return try text.withUTF8 { try binary(text: $0, exactSpelling: exactSpelling) }
        case (.integerArray, .array(let elements)):
            return .integerArray(
                try elements.map {
                    guard case .integer(let number) = $0 else {
                        throw TypeMismatch(expected: "an array of integers", found: "an array with \($0.typeName)")
                    }
                    return number
                })
        case (.stringArray, .array(let elements)):
            return .stringArray(
                try elements.map {
                    guard case .string(let text) = $0 else {
                        throw TypeMismatch(expected: "an array of strings", found: "an array with \($0.typeName)")
                    }
                    return text
                })
        case (.integer, _), (.integer16, _), (.integer32, _): throw mismatch("an integer")
        case (.decimal, _): throw mismatch("exact decimal text")
        case (.boolean, _): throw mismatch("a boolean")
        case (.double, _), (.float, _): throw mismatch("a number")
        case (.date, _): throw mismatch("an ISO 8601 date")
        case (.string, _), (.uri, _), (.uuid, _), (.binary, _), (.transformable, _): throw mismatch("a string")
        case (.integerArray, _), (.stringArray, _): throw mismatch("an array")
        // A composite is read element by element (its elements are the stored values).
        case (.composite, _), (.objectID, _): throw mismatch("a value of one of its elements")
        }
    }

    /// Whether a property of `kind` keeps a JSON string as its text, as it is (`value(_:as:)`;
    /// a reader that has the string's bytes stores them as they are: `ValueCoding.storedText`).
    package static func keepsStringAsText(_ kind: AttributeKind) -> Bool { kind == .string || kind == .uri }

    /// A text value as an error names it: quoted, its first 40 characters.
    private static func quoted(_ text: String) -> String { "\"\(text.prefix(40))\"" }

    /// A date property's value from a JSON string (its UTF-8 bytes, valid UTF-8): the one reading
    /// of a date's text, which `value(_:as:)` makes of a `String` and a line reader of the bytes
    /// it has, without a `String` made of them. The date is tried before the infinities' names:
    /// text `DateText` reads is ASCII that starts with a digit, never `"Infinity"` or
    /// `"-Infinity"`, so the order changes no result, and a `String` is made only of text that is
    /// no date (and for the exact spelling's check).
    package static func date(text bytes: UnsafeBufferPointer<UInt8>, exactSpelling: Bool) throws -> Value {
        func text() -> String { String(decoding: bytes, as: UTF8.self) }
        if let seconds = DateText.secondsSinceReferenceDate(iso8601: bytes) {
            // The spelling compared as bytes (`iso8601` is the `String` of these bytes), with no
            // `String` made of either unless they differ.
            var written: [UInt8] = []
            written.reserveCapacity(bytes.count)
            if exactSpelling, DateText.appendISO8601(secondsSinceReferenceDate: seconds, to: &written), !written.elementsEqual(bytes) {
                throw TypeMismatch(
                    expected: "the date as questbak writes it (\"\(String(decoding: written, as: UTF8.self))\")", found: quoted(text()))
            }
            return .date(seconds)
        }
        if let number = nonFiniteSpellings[text()] { return .date(number) }
        throw TypeMismatch(expected: "an ISO 8601 UTC date (YYYY-MM-DDTHH:MM:SS[.fraction]Z)", found: quoted(text()))
    }

    /// A UUID property's value from a JSON string (its UTF-8 bytes, valid UTF-8): the one reading
    /// of a UUID's text, which `value(_:as:)` makes of a `String` and a line reader of the bytes
    /// it has. Text spelled as questbak writes a UUID (`uuidString`: 36 bytes, upper-case hex
    /// digits in groups of 8, 4, 4, 4 and 12 joined by `-`) is read here from its bytes, without
    /// a `String` made of it, Foundation's parser, or the spelling made again to compare: a
    /// fifth of the decoding of another app's line with one UUID (docs/performance.md, "another
    /// app's import: the plan once a member, a UUID's text"). *Why the same value or error:*
    /// `UUID(uuidString:)` reads that form (either case of hex digits, the dashes there) to the
    /// bytes its digit pairs spell, the bytes read here; `uuidString` of those bytes is their
    /// digits in upper case in those groups, which is this text, so the exact spelling's check
    /// passes. Any other text (lower case, braces, a dash elsewhere, another length) takes the
    /// path every UUID took before. `ModelLineDecoderTests` compares both on such spellings.
    package static func uuid(text bytes: UnsafeBufferPointer<UInt8>, exactSpelling: Bool) throws -> Value {
        if let read = UUID.read(text: UnsafeRawBufferPointer(bytes)), read.upperCase { return .uuid(read.uuid) }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let uuid = UUID(uuidString: text) else { throw TypeMismatch(expected: "a UUID", found: quoted(text)) }
        if exactSpelling, uuid.uuidString != text {
            throw TypeMismatch(expected: "a UUID in upper case, as questbak writes it (\(uuid.uuidString))", found: quoted(text))
        }
        return .uuid(uuid)
    }

    /// A binary or transformable property's value from a JSON string (its UTF-8 bytes, valid
    /// UTF-8): the one reading of base64 text, which `value(_:as:)` makes of a `String` and a line
    /// reader of the bytes it has. Text spelled as questbak writes it (`Base64Text.canonicalBytes`)
    /// is read from its bytes in one pass; any other takes the path every value took before
    /// (`base64(_:exactSpelling:)`: Foundation's decoding, and for the exact spelling the bytes
    /// encoded again and compared). *Why the same value or error:* canonical text is what
    /// `base64EncodedString()` writes of the bytes it spells, so Foundation decodes it to those
    /// bytes and, encoding them again, writes this text: the exact spelling's check passes, and
    /// without it the value is the same. `ModelLineDecoderTests` compares both on such texts.
    package static func binary(text bytes: UnsafeBufferPointer<UInt8>, exactSpelling: Bool) throws -> Value {
        if let data = Base64Text.canonicalBytes(bytes) { return .binary(data) }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let data = base64(text, exactSpelling: exactSpelling) else {
            throw TypeMismatch(expected: exactSpelling ? "base64 text as questbak writes it" : "base64 text", found: quoted(text))
        }
        return .binary(data)
    }

    /// A number as a Double, or as a Float attribute holds it: 1e300 is beyond any Float, and an
    /// archive's 0.1 (`exactSpelling`) is not what a store gives back (0.10000000149011612). A
    /// schema file's default of 0.1 is the Float nearest it, as in Swift source.
    private static func checkedFloat(_ number: Double, _ kind: AttributeKind, exactSpelling: Bool) throws -> Value {
        guard kind == .float else { return .double(number) }
        if number.isFinite, number.magnitude > Double(Float.greatestFiniteMagnitude) {
            throw TypeMismatch(expected: "a number within Float's range", found: "\(number)")
        }
        if exactSpelling, !Value.isExactFloat(number) {
            throw TypeMismatch(expected: "a number a Float holds exactly (such as 0.10000000149011612)", found: "\(number)")
        }
        return .double(number)
    }

    /// Base64 text's bytes; with `exactSpelling`, only text that is those bytes' base64 as
    /// questbak writes it (padding, no unused bits).
    package static func base64(_ text: String, exactSpelling: Bool) -> Data? {
        guard let bytes = Data(base64Encoded: text) else { return nil }
        return !exactSpelling || bytes.base64EncodedString() == text ? bytes : nil
    }
}

/// A value for `JSONEncoder` (reports, schema files), encoded through this codec's text so every
/// JSON questbak writes spells a value the same way.
package struct EncodableValue: Encodable {
    package var value: Value

    package init(_ value: Value) { self.value = value }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(try JSONValue(text: ValueJSON.text(value)))
    }
}

extension JSONValue {
    /// Parses JSON text (one value) with the strict line parser.
    package init(text: String) throws {
        guard let value = try JSONLine.parseObject(Data("{\"v\":\(text)}".utf8)).first?.value else {
            throw JSONLine.SyntaxError(offset: 0, reason: "no value")
        }
        self = value
    }
}
