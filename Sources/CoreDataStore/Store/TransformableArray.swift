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
/// structs, read by the strict JSON parser (`JSONLine`): `JSONDecoder` turns 1.00000000000000001
/// into the integer 1 and accepts `[1,]`, and such changes must be refused, not made. Integers are
/// integer tokens that fit Int64; strings are valid UTF-8 with valid escapes (no lone surrogates).
private enum StrictJSONArray {
    static func parse(_ data: Data) throws -> [PropertyListValue] {
        let refused = TransformableArray.DecodingError.self
        let value: JSONValue
        do {
            value = try JSONLine.parseValue(data)
        } catch let error as JSONLine.SyntaxError {
            throw refused.init(
                reason: "neither a keyed archive nor a JSON array: \(error.reason.contains("UTF-8") ? "invalid UTF-8" : error.description)")
        }
        guard case .array(let elements) = value else { throw refused.init(reason: "neither a keyed archive nor a JSON array") }
        if elements.allSatisfy({ if case .integer = $0 { return true } else { return false } }) {
            return elements.compactMap { if case .integer(let number) = $0 { return .integer(number) } else { return nil } }
        }
        if elements.allSatisfy({ if case .string = $0 { return true } else { return false } }) {
            return elements.compactMap { if case .string(let text) = $0 { return .string(text) } else { return nil } }
        }
        throw refused.init(reason: "neither a keyed archive nor a JSON array of integers or of strings")
    }
}

extension PropertyListValue: Hashable {
    /// Hashes the value as `==` compares it.
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
