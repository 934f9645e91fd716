import Foundation

/// A strict parser for one JSON object on one line: the archive's record lines.
///
/// Foundation's `JSONDecoder` took a third of an import's time, and accepts an object that
/// names one key twice (keeping the last, silently). This parser is RFC 8259 for what record
/// lines hold (objects, arrays, strings, numbers, true, false, null), refuses duplicate keys,
/// invalid UTF-8, lone surrogates, raw control characters, NaN and Infinity tokens, leading
/// zeros and trailing garbage, limits nesting to 64, keeps integers that fit Int64 exact, and
/// reads every other number with Swift's exact `Double` parser.
package enum JSONLine {
    package struct SyntaxError: Error, CustomStringConvertible, LocalizedError {
        var offset: Int
        var reason: String
        /// The key whose value is at fault, when the line is well-formed but one value is not one
        /// questbak can keep (a number SQLite would store as another number).
        var key: String?
        /// A well-formed number that cannot be kept, as opposed to text that is not JSON.
        var isValueError = false
        package var description: String { "\(key.map { "\($0) " } ?? "")\(reason) at byte \(offset + 1)" }
        package var errorDescription: String? { description }

        /// What a reader says about its line: the key and what is wrong with its value, or that
        /// the line is no JSON object.
        package var lineReason: String {
            guard let key else { return "not a JSON object: \(description)" }
            return "\(key) \(reason)"
        }
    }

    static let maximumDepth = 64

    /// One JSON value of any kind (with surrounding white space), read as strictly as a line.
    static func parseValue(_ data: Data) throws -> JSONValue {
        try data.withUnsafeBytes { raw in
            var parser = Parser(bytes: raw.bindMemory(to: UInt8.self))
            let value = try parser.parseValue(depth: 1)
            parser.skipWhitespace()
            guard parser.position == parser.bytes.count else { throw parser.error("unexpected text after the value") }
            return value
        }
    }

    /// The object's members in the order written.
    package static func parseObject(_ line: Data) throws -> [(key: String, value: JSONValue)] {
        try line.withUnsafeBytes { raw in try parseObject(raw.bindMemory(to: UInt8.self)) }
    }

    /// The object's members in the order written, from bytes in memory (a line an encoder just
    /// wrote, read without copying it into `Data`).
    package static func parseObject(_ line: UnsafeBufferPointer<UInt8>) throws -> [(key: String, value: JSONValue)] {
        var parser = Parser(bytes: line)
        parser.skipWhitespace()
        guard parser.peek() == UInt8(ascii: "{") else { throw parser.error("expected an object") }
        let members = try parser.parseMembers(depth: 1)
        parser.skipWhitespace()
        guard parser.position == parser.bytes.count else { throw parser.error("unexpected text after the object") }
        return members
    }

    /// The keys an object is expected to have, in order, as the bytes a line spells them with
    /// (no escape needed): `parseValues(_:keys:)` compares a line's keys with them where
    /// `parseObject` makes a `String` of each.
    package struct KeysInOrder: Sendable, Equatable {
        package let names: [String]
        /// Every key's bytes, one after another; `ends[i]` is where key `i` ends.
        private let bytes: [UInt8]
        private let ends: [Int]
        /// For each key, the keys in order of an object its value may be (a composite's elements),
        /// read by position too (`MemberValue.object`); nil for a value read as any other.
        fileprivate let objects: [KeysInOrder?]

        /// Nil when two names are the same (as `String`s compare: the readers by name look keys up
        /// so) or one needs an escape in JSON (a quote, a backslash, a control character), whose
        /// line could not spell it as its bytes. `objects`, by key, the keys of an object that
        /// value may be, to be read in order too.
        package init?(_ names: [String], objects: [Int: KeysInOrder] = [:]) {
            guard Set(names).count == names.count,
                !names.contains(where: { $0.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") } })
            else { return nil }
            self.names = names
            var bytes: [UInt8] = []
            var ends: [Int] = []
            for name in names {
                bytes.append(contentsOf: name.utf8)
                ends.append(bytes.count)
            }
            self.bytes = bytes
            self.ends = ends
            self.objects = names.indices.map { objects[$0] }
        }

        var count: Int { ends.count }

        /// The length of the string token at `position` (its opening quote) when it is key
        /// `index`, unescaped; nil when it is not.
        fileprivate func keyToken(_ index: Int, at position: Int, in line: UnsafeBufferPointer<UInt8>) -> Int? {
            let start = index == 0 ? 0 : ends[index - 1]
            let length = ends[index] - start
            // `"`, the key's bytes, `"`: the key has no quote or backslash, so these bytes are a
            // whole string token that decodes to the key, and no other token does.
            guard position + length + 2 <= line.count, line[position] == UInt8(ascii: "\""),
                line[position + 1 + length] == UInt8(ascii: "\"")
            else { return nil }
            guard length > 0 else { return 2 }
            let same = bytes.withUnsafeBufferPointer { keys in
                memcmp(line.baseAddress! + position + 1, keys.baseAddress! + start, length) == 0
            }
            return same ? length + 2 : nil
        }
    }

    /// A member's value as `parseValues` reads it.
    package enum MemberValue: Equatable {
        /// A string of ASCII written without an escape: where its text lies in the line (the text
        /// is those bytes, which `parseString` would make a `String` of as they are).
        case asciiText(Range<Int>)
        case value(JSONValue)
        /// An object whose keys are exactly `keys`, in that order (as `parseValues` reads a line):
        /// its members' values, in order.
        case object(KeysInOrder, [MemberValue])

        /// The value `parseObject` gives, read from `line` (the line the range is of).
        package func json(in line: UnsafeBufferPointer<UInt8>) -> JSONValue {
            switch self {
            case .asciiText(let range): return .string(String(decoding: UnsafeBufferPointer(rebasing: line[range]), as: UTF8.self))
            case .value(let value): return value
            case .object(let keys, let values):
                // The keys are distinct (`KeysInOrder`): each is kept, as `parseValue` keeps them.
                var members: [String: JSONValue] = [:]
                for (name, value) in zip(keys.names, values) { members[name] = value.json(in: line) }
                return .object(members)
            }
        }

        /// The member named `name` of this object, which is key `position` when the object was
        /// read in order; nil when this is no object or has no such member.
        package func member(_ name: String, at position: Int, in line: UnsafeBufferPointer<UInt8>) -> MemberValue? {
            if case .object(_, let values) = self { return values[position] }
            guard case .object(let members) = json(in: line), let value = members[name] else { return nil }
            return .value(value)
        }

        /// What a property of `kind` stores of this member: `ValueCoding.encode` of
        /// `ValueJSON.value(json(in: line), as: kind, exactSpelling:)`, the one step both line
        /// readers take for an attribute's value (TimeQuest's `LegacyArchive`, another app's
        /// `ModelMemberEncoding.LineDecoder`), its `ValueJSON.TypeMismatch` included. A string of
        /// ASCII goes to a text, date or UUID property from its bytes, without a `String` made of it:
        /// *why that is the same value,* `ValueJSON.value` keeps a string of a text kind as it is
        /// (`keepsStringAsText`, the one predicate both use), whose UTF-8 bytes, these bytes,
        /// `ValueCoding.encode` stores (`storedText`); it reads a date's string by
        /// `ValueJSON.date(text:)` of its UTF-8 bytes, which these bytes are, and a UUID's by
        /// `ValueJSON.uuid(text:)` likewise. No check before
        /// those cases applies to a string (the negative zero is a number's, null is not a string).
        package func storedValue(in line: UnsafeBufferPointer<UInt8>, as kind: AttributeKind, exactSpelling: Bool) throws -> StoredValue {
            if case .asciiText(let range) = self {
                let text = UnsafeBufferPointer(rebasing: line[range])
                if ValueJSON.keepsStringAsText(kind) { return ValueCoding.storedText(text) }
                if kind == .date { return ValueCoding.encode(try ValueJSON.date(text: text, exactSpelling: exactSpelling)) }
                if kind == .uuid { return ValueCoding.encode(try ValueJSON.uuid(text: text, exactSpelling: exactSpelling)) }
                if kind == .binary || kind == .transformable {
                    return ValueCoding.encode(try ValueJSON.binary(text: text, exactSpelling: exactSpelling))
                }
            }
            return ValueCoding.encode(try ValueJSON.value(json(in: line), as: kind, exactSpelling: exactSpelling))
        }
    }

    /// The values of an object whose keys are exactly `keys`, in that order, each written as its
    /// bytes (no escape), a string of ASCII as where it lies; nil for any other line: other keys, more or fewer, in another order, an
    /// escaped key, or text `parseObject` refuses (which its caller then reads with `parseObject`,
    /// for the members or the error). *Why a line read here is the line `parseObject` reads:*
    /// the same `Parser` reads it (white space, each value by `parseValue`, nothing after the
    /// object), and each key token is the key's bytes between quotes, which `parseString` decodes
    /// to that key; the keys are distinct, so the duplicate check `parseObject` makes passes. So
    /// `parseObject` would give these values, with the keys `keys.names`, in this order.
    package static func parseValues(_ line: UnsafeBufferPointer<UInt8>, keys: KeysInOrder) -> [MemberValue]? {
        var parser = Parser(bytes: line)
        parser.skipWhitespace()
        guard parser.peek() == UInt8(ascii: "{") else { return nil }
        guard let values = try? parser.parseValues(keys: keys, depth: 1) else { return nil }
        parser.skipWhitespace()
        return parser.position == parser.bytes.count ? values : nil
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        func error(_ reason: String) -> SyntaxError { SyntaxError(offset: position, reason: reason) }

        func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func skipWhitespace() {
            // A switch, not `[…].contains`: this runs around every key and value.
            while position < bytes.count {
                switch bytes[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        mutating func expect(_ literal: StaticString) throws {
            let count = literal.utf8CodeUnitCount
            guard position + count <= bytes.count,
                (0..<count).allSatisfy({ bytes[position + $0] == literal.utf8Start[$0] })
            else { throw error("invalid literal") }
            position += count
        }

        /// At `{`: the members up to and including the closing `}`.
        mutating func parseMembers(depth: Int) throws -> [(key: String, value: JSONValue)] {
            position += 1
            var members: [(key: String, value: JSONValue)] = []
            // Keys seen so far, compared as bytes: Swift's String equality would call NFC and NFD
            // spellings one key. A record's few keys are compared with each other; past
            // `fewKeys` they are hashed (a line with 160,000 keys is checked in linear time).
            let fewKeys = 16
            var keys: Set<[UInt8]> = []
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                position += 1
                return members
            }
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw error("expected a key") }
                let keyStart = position
                let key = try parseString()
                let repeated: Bool
                if members.count < fewKeys {
                    repeated = members.contains { $0.key.utf8.count == key.utf8.count && $0.key.utf8.elementsEqual(key.utf8) }
                } else {
                    if members.count == fewKeys { keys = Set(members.map { Array($0.key.utf8) }) }
                    repeated = !keys.insert(Array(key.utf8)).inserted
                }
                if repeated { throw SyntaxError(offset: keyStart, reason: "key \"\(key.prefix(60))\" appears twice") }
                skipWhitespace()
                guard peek() == UInt8(ascii: ":") else { throw error("expected ':'") }
                position += 1
                do {
                    members.append((key, try parseValue(depth: depth)))
                } catch var error as SyntaxError where error.key == nil && error.isValueError {
                    // The innermost key names the value (an element of an array names its array).
                    error.key = key
                    throw error
                }
                skipWhitespace()
                switch peek() {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "}"):
                    position += 1
                    return members
                default: throw error("expected ',' or '}'")
                }
            }
        }

        /// At `{`: the members' values when their keys are exactly `keys`, in order, up to and
        /// including the closing `}`; nil at the first key that is not the next of `keys`. The
        /// same steps as `parseMembers`, a key compared where it makes a `String`.
        mutating func parseValues(keys: KeysInOrder, depth: Int) throws -> [MemberValue]? {
            position += 1
            var values: [MemberValue] = []
            values.reserveCapacity(keys.count)
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                position += 1
                return keys.count == 0 ? values : nil
            }
            while true {
                skipWhitespace()
                guard values.count < keys.count, let token = keys.keyToken(values.count, at: position, in: bytes) else { return nil }
                position += token
                skipWhitespace()
                guard peek() == UInt8(ascii: ":") else { throw error("expected ':'") }
                position += 1
                skipWhitespace()
                if let text = asciiText() {
                    values.append(.asciiText(text))
                } else if let object = try objectInOrder(keys.objects[values.count], depth: depth) {
                    values.append(object)
                } else {
                    values.append(.value(try parseValue(depth: depth)))
                }
                skipWhitespace()
                switch peek() {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "}"):
                    position += 1
                    return values.count == keys.count ? values : nil
                default: throw error("expected ',' or '}'")
                }
            }
        }

        /// At an object whose keys are exactly `keys` (nil: none are expected), in order: its
        /// values read as `parseValues` reads a line's, past its closing `}`. At anything else
        /// (another value, other keys, an object as deep as `parseValue` refuses): nil, the position
        /// unchanged, for `parseValue` to read or refuse as always. *Why the same object:* it is
        /// the step `parseValue` takes at `{` (the depth checked, then `parseMembers` one level
        /// deeper) with each key compared as a line's top-level keys are (`parseValues`' argument);
        /// an error thrown here ends the line's reading in order, as any error does, and the line
        /// is read by `parseObject`.
        mutating func objectInOrder(_ keys: KeysInOrder?, depth: Int) throws -> MemberValue? {
            guard let keys, peek() == UInt8(ascii: "{"), depth < JSONLine.maximumDepth else { return nil }
            let start = position
            guard let values = try parseValues(keys: keys, depth: depth + 1) else {
                position = start
                return nil
            }
            return .object(keys, values)
        }

        /// At a string whose bytes are ASCII (0x20 to 0x7F) with no quote or backslash in them:
        /// the range of its text, past its closing quote. At anything else (another value, a
        /// string with an escape, a control character or a byte past ASCII, unterminated): nil,
        /// the position unchanged, for `parseValue` to read or refuse as always.
        mutating func asciiText() -> Range<Int>? {
            guard peek() == UInt8(ascii: "\"") else { return nil }
            var end = position + 1
            while end < bytes.count {
                switch bytes[end] {
                case UInt8(ascii: "\""):
                    defer { position = end + 1 }
                    return (position + 1)..<end
                case UInt8(ascii: "\\"), 0..<0x20, 0x80...: return nil
                default: end += 1
                }
            }
            return nil
        }

        mutating func parseValue(depth: Int) throws -> JSONValue {
            skipWhitespace()
            guard let byte = peek() else { throw error("expected a value") }
            switch byte {
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"):
                try expect("true")
                return .boolean(true)
            case UInt8(ascii: "f"):
                try expect("false")
                return .boolean(false)
            case UInt8(ascii: "n"):
                try expect("null")
                return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
            case UInt8(ascii: "["):
                guard depth < JSONLine.maximumDepth else { throw error("nested deeper than \(JSONLine.maximumDepth)") }
                position += 1
                var elements: [JSONValue] = []
                skipWhitespace()
                if peek() == UInt8(ascii: "]") {
                    position += 1
                    return .array(elements)
                }
                while true {
                    elements.append(try parseValue(depth: depth + 1))
                    skipWhitespace()
                    switch peek() {
                    case UInt8(ascii: ","): position += 1
                    case UInt8(ascii: "]"):
                        position += 1
                        return .array(elements)
                    default: throw error("expected ',' or ']'")
                    }
                }
            case UInt8(ascii: "{"):
                guard depth < JSONLine.maximumDepth else { throw error("nested deeper than \(JSONLine.maximumDepth)") }
                var object: [String: JSONValue] = [:]
                for (key, value) in try parseMembers(depth: depth + 1) { object[key] = value }
                return .object(object)
            default:
                throw error("unexpected character")
            }
        }

        mutating func parseNumber() throws -> JSONValue {
            let start = position
            if peek() == UInt8(ascii: "-") { position += 1 }
            func isDigit(_ byte: UInt8?) -> Bool { byte.map { (48...57).contains($0) } ?? false }
            guard isDigit(peek()) else { throw error("invalid number") }
            if peek() == UInt8(ascii: "0") {
                position += 1
                if isDigit(peek()) { throw error("leading zero in a number") }
            } else {
                while isDigit(peek()) { position += 1 }
            }
            var integral = true
            if peek() == UInt8(ascii: ".") {
                integral = false
                position += 1
                guard isDigit(peek()) else { throw error("invalid number") }
                while isDigit(peek()) { position += 1 }
            }
            if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
                integral = false
                position += 1
                if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
                guard isDigit(peek()) else { throw error("invalid number") }
                while isDigit(peek()) { position += 1 }
            }
            // Read from the bytes (`DecimalText`: the values and nil-ness of `Int64(text)` and
            // `Double(text)`); a `String` is made of the number only for an error's message.
            let digits = UnsafeBufferPointer(rebasing: bytes[start..<position])
            // Numbers that SQLite would give back as another number are refused by their key, never
            // read as the number they round to: an integer has no negative zero (a REAL −0.0 is
            // written with its fraction), and a Double cannot hold 1e-400, which would become 0.
            if integral, digits.count == 2, digits[0] == UInt8(ascii: "-"), digits[1] == UInt8(ascii: "0") {
                throw SyntaxError(offset: start, reason: "is -0, which no integer is (SQLite keeps no negative zero)", isValueError: true)
            }
            if integral, let integer = DecimalText.int64(digits) { return .integer(integer) }
            guard let number = DecimalText.double(digits), number.isFinite else {
                throw SyntaxError(offset: start, reason: "number out of range")
            }
            if number == 0, Self.hasNonZeroDigit(digits) {
                let text = String(decoding: digits, as: UTF8.self)
                throw SyntaxError(
                    offset: start, reason: "is \(text.prefix(40)), too small for a Double: it would be stored as 0", isValueError: true)
            }
            return .number(number)
        }

        /// Whether a number's digits before its exponent hold anything but zeros.
        static func hasNonZeroDigit(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
            text.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }.contains { (49...57).contains($0) }
        }

        /// At `"`: the decoded string, past its closing quote.
        mutating func parseString() throws -> String {
            position += 1
            let start = position
            // The common case, no escapes: one validated view of the bytes.
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
                    position += 1
                    // ASCII (most keys and values) is valid UTF-8 as it is: decoded without
                    // String(validating:), whose generic path costs more than the rest of a string.
                    guard let text = String(validUTF8: slice) else {
                        throw SyntaxError(offset: start, reason: "invalid UTF-8")
                    }
                    return text
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { throw error("control character in a string") }
                position += 1
            }
            var decoded = Array(bytes[start..<position])
            while position < bytes.count {
                let byte = bytes[position]
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    guard let text = String(validating: decoded, as: UTF8.self) else {
                        throw SyntaxError(offset: start, reason: "invalid UTF-8")
                    }
                    return text
                case UInt8(ascii: "\\"):
                    position += 1
                    guard let escape = peek() else { throw error("unterminated string") }
                    position += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                    case UInt8(ascii: "b"): decoded.append(0x08)
                    case UInt8(ascii: "f"): decoded.append(0x0C)
                    case UInt8(ascii: "n"): decoded.append(0x0A)
                    case UInt8(ascii: "r"): decoded.append(0x0D)
                    case UInt8(ascii: "t"): decoded.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try parseHex()
                        if (0xD800...0xDBFF).contains(scalar) {
                            guard peek() == UInt8(ascii: "\\"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u") else {
                                throw error("lone surrogate")
                            }
                            position += 2
                            let low = try parseHex()
                            guard (0xDC00...0xDFFF).contains(low) else { throw error("lone surrogate") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00...0xDFFF).contains(scalar) {
                            throw error("lone surrogate")
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid escape") }
                        decoded.append(contentsOf: String(Character(unicode)).utf8)
                    default:
                        throw error("invalid escape")
                    }
                default:
                    if byte < 0x20 { throw error("control character in a string") }
                    decoded.append(byte)
                    position += 1
                }
            }
            throw error("unterminated string")
        }

        mutating func parseHex() throws -> UInt32 {
            guard position + 4 <= bytes.count else { throw error("invalid \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[position]
                let digit: UInt32
                switch byte {
                case 48...57: digit = UInt32(byte - 48)
                case 65...70: digit = UInt32(byte - 55)
                case 97...102: digit = UInt32(byte - 87)
                default: throw error("invalid \\u escape")
                }
                value = value << 4 | digit
                position += 1
            }
            return value
        }
    }
}
