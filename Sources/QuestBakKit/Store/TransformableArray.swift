import Foundation

/// Top-level `[Int]` and `[String]` attributes, which SwiftData stores as transformables through
/// `NSSecureUnarchiveFromData`: an `NSKeyedArchiver` binary plist of an `NSArray`.
///
/// No populated row of this kind has been seen in a real store (the spec marks the layout as
/// inference), so decoding also accepts a JSON array, the encoding SwiftData uses for arrays
/// inside Codable structs.
package enum TransformableArray {
    package struct DecodingError: Error, LocalizedError {
        var reason: String
        package var errorDescription: String? { "cannot decode array attribute: \(reason)" }
    }

    package static func archive(_ elements: [PropertyListValue]) -> Data {
        // NSKeyedArchiver writes each distinct object once and refers to it by UID; small
        // NSNumbers are tagged pointers, so equal numbers share one entry.
        var objects: [PropertyListValue] = [.string("$null"), .dictionary([:])]
        // Keyed by exact content: Swift's String equality is canonical equivalence, under which
        // "é" (U+00E9) and "e\u{301}" are equal, and sharing one object would change the second.
        var uidByElement: [ExactElement: UInt64] = [:]
        var references: [PropertyListValue] = []
        for element in elements.map(ExactElement.init) {
            if let existing = uidByElement[element] {
                references.append(.uid(existing))
            } else {
                let uid = UInt64(objects.count)
                uidByElement[element] = uid
                objects.append(element.value)
                references.append(.uid(uid))
            }
        }
        let classUID = UInt64(objects.count)
        objects.append(.dictionary(["$classname": .string("NSArray"), "$classes": .array([.string("NSArray"), .string("NSObject")])]))
        objects[1] = .dictionary(["NS.objects": .array(references), "$class": .uid(classUID)])
        return BinaryPropertyList.encode(
            .dictionary([
                "$archiver": .string("NSKeyedArchiver"),
                "$version": .integer(100_000),
                "$top": .dictionary(["root": .uid(1)]),
                "$objects": .array(objects),
            ]))
    }

    /// A property-list value compared by its exact bytes, for sharing equal elements.
    private struct ExactElement: Hashable {
        var value: PropertyListValue

        init(_ value: PropertyListValue) { self.value = value }

        static func == (lhs: Self, rhs: Self) -> Bool {
            switch (lhs.value, rhs.value) {
            case (.string(let left), .string(let right)): return left.utf8.elementsEqual(right.utf8)
            // 0.0 == -0.0, and NaN is not equal to itself: compare the bits.
            case (.real(let left), .real(let right)): return left.bitPattern == right.bitPattern
            default: return lhs.value == rhs.value
            }
        }

        func hash(into hasher: inout Hasher) {
            switch value {
            case .string(let text):
                hasher.combine(0xFF as UInt8)
                for byte in text.utf8 { hasher.combine(byte) }
            case .real(let number):
                hasher.combine(0xFE as UInt8)
                hasher.combine(number.bitPattern)
            default:
                hasher.combine(value)
            }
        }
    }

    /// Class names whose keyed archives list their elements, in order, under `NS.objects`.
    private static let arrayClassNames: Set<String> = ["NSArray", "NSMutableArray"]

    package static func unarchive(_ data: Data) throws -> [PropertyListValue] {
        if data.starts(with: Array("bplist".utf8)) {
            let root = try BinaryPropertyList.decode(data)
            guard case .array(let objects)? = root["$objects"], case .uid(let top)? = root["$top"]?["root"] else {
                throw DecodingError(reason: "not a keyed archive")
            }
            func resolve(_ reference: PropertyListValue) throws -> PropertyListValue {
                guard case .uid(let uid) = reference else { return reference }
                // A UID is 8 bytes at most in the reader; compared as UInt64, never converted first.
                guard uid < UInt64(objects.count) else { throw DecodingError(reason: "UID \(uid) out of range (\(objects.count) objects)") }
                return objects[Int(uid)]
            }
            let array = try resolve(.uid(top))
            guard case .array(let references)? = array["NS.objects"] else {
                throw DecodingError(reason: "root object is not an array")
            }
            // NSSet and NSOrderedSet archive their elements under NS.objects too, and NSDictionary
            // its values: only an array's are an array's, in order.
            guard let classReference = array["$class"], case .uid = classReference,
                case .dictionary(let classInfo) = try resolve(classReference)
            else {
                throw DecodingError(reason: "root object has no class")
            }
            let className: String? = { if case .string(let name)? = classInfo["$classname"] { return name } else { return nil } }()
            let ancestors: [String] = {
                guard case .array(let names)? = classInfo["$classes"] else { return [] }
                return names.compactMap { if case .string(let name) = $0 { return name } else { return nil } }
            }()
            guard let className, arrayClassNames.contains(className) || ancestors.contains("NSArray") else {
                throw DecodingError(
                    reason:
                        "root object is \(className.map { "an \($0.debugDescription.prefix(80))" } ?? "of no named class"), not an NSArray")
            }
            return try references.enumerated().map { index, reference in
                // UID 0 is `$null`, nil: an NSArray cannot hold it, and it is not the text "$null".
                if case .uid(0) = reference { throw DecodingError(reason: "element \(index) is $null") }
                return try resolve(reference)
            }
        }
        return try StrictJSONArray.parse(data)
    }
}

/// A JSON array of integers or of strings, the encoding SwiftData uses for arrays inside Codable
/// structs, read strictly: `JSONDecoder` turns 1.00000000000000001 into the integer 1 and
/// accepts `[1,]`, and such changes must be refused, not made. Integers are integer tokens that
/// fit Int64; strings are valid UTF-8 with valid escapes (no lone surrogates).
private struct StrictJSONArray {
    package let bytes: [UInt8]
    package var position = 0

    package static func parse(_ data: Data) throws -> [PropertyListValue] {
        var parser = StrictJSONArray(bytes: [UInt8](data))
        return try parser.array()
    }

    package func failure(_ reason: String) -> TransformableArray.DecodingError {
        TransformableArray.DecodingError(
            reason: "neither a keyed archive nor a JSON array of integers or strings: \(reason) at byte \(position + 1)")
    }

    package mutating func skipWhitespace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
    }

    package mutating func array() throws -> [PropertyListValue] {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: "[") else { throw failure("expected '['") }
        position += 1
        var elements: [PropertyListValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
        } else {
            while true {
                skipWhitespace()
                guard position < bytes.count else { throw failure("unterminated array") }
                let element: PropertyListValue = bytes[position] == UInt8(ascii: "\"") ? .string(try string()) : .integer(try integer())
                if let first = elements.first {
                    switch (first, element) {
                    case (.integer, .integer), (.string, .string): break
                    default: throw failure("integers and strings mixed")
                    }
                }
                elements.append(element)
                skipWhitespace()
                guard position < bytes.count else { throw failure("unterminated array") }
                if bytes[position] == UInt8(ascii: "]") {
                    position += 1
                    break
                }
                guard bytes[position] == UInt8(ascii: ",") else { throw failure("expected ',' or ']'") }
                position += 1
            }
        }
        skipWhitespace()
        guard position == bytes.count else { throw failure("unexpected text after the array") }
        return elements
    }

    package mutating func integer() throws -> Int64 {
        let start = position
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        let digits = position
        while position < bytes.count, (48...57).contains(bytes[position]) { position += 1 }
        guard position > digits else { throw failure("expected an integer or a string") }
        guard bytes[digits] != UInt8(ascii: "0") || position == digits + 1 else { throw failure("leading zero") }
        if position < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[position]) {
            throw failure("a number that is not an integer")
        }
        guard let number = Int64(String(decoding: bytes[start..<position], as: UTF8.self)) else {
            throw failure("integer out of the 64-bit range")
        }
        return number
    }

    package mutating func string() throws -> String {
        position += 1
        var decoded: [UInt8] = []
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: decoded, as: UTF8.self) else { throw failure("invalid UTF-8 in a string") }
                return text
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { throw failure("unterminated string") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
                        else {
                            throw failure("lone surrogate")
                        }
                        position += 2
                        let low = try hex()
                        guard (0xDC00...0xDFFF).contains(low) else { throw failure("lone surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw failure("lone surrogate")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw failure("invalid escape") }
                    decoded.append(contentsOf: String(unicode).utf8)
                default:
                    throw failure("invalid escape")
                }
            default:
                guard byte >= 0x20 else { throw failure("control character in a string") }
                decoded.append(byte)
            }
        }
        throw failure("unterminated string")
    }

    package mutating func hex() throws -> UInt32 {
        guard position <= bytes.count - 4 else { throw failure("invalid \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case 48...57: digit = UInt32(byte - 48)
            case 65...70: digit = UInt32(byte - 55)
            case 97...102: digit = UInt32(byte - 87)
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }
}

extension PropertyListValue: Hashable {
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .boolean(let v): hasher.combine(v)
        case .integer(let v): hasher.combine(v)
        case .real(let v): hasher.combine(v)
        case .string(let v): hasher.combine(v)
        case .data(let v): hasher.combine(v)
        case .uid(let v): hasher.combine(v)
        case .array(let v): hasher.combine(v)
        case .dictionary(let v): hasher.combine(v)
        }
    }
}
