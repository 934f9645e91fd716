import Foundation

/// Top-level `[Int]` and `[String]` attributes, which SwiftData stores as transformables through
/// `NSSecureUnarchiveFromData`: an `NSKeyedArchiver` binary plist of an `NSArray`.
///
/// No populated row of this kind has been seen in a real store (the spec marks the layout as
/// inference), so decoding also accepts a JSON array, the encoding SwiftData uses for arrays
/// inside Codable structs.
enum TransformableArray {
    struct DecodingError: Error, LocalizedError {
        var reason: String
        var errorDescription: String? { "cannot decode array attribute: \(reason)" }
    }

    static func archive(_ elements: [PropertyListValue]) -> Data {
        // NSKeyedArchiver writes each distinct object once and refers to it by UID; small
        // NSNumbers are tagged pointers, so equal numbers share one entry.
        var objects: [PropertyListValue] = [.string("$null"), .dictionary([:])]
        var uidByElement: [PropertyListValue: UInt64] = [:]
        var references: [PropertyListValue] = []
        for element in elements {
            if let existing = uidByElement[element] {
                references.append(.uid(existing))
            } else {
                let uid = UInt64(objects.count)
                uidByElement[element] = uid
                objects.append(element)
                references.append(.uid(uid))
            }
        }
        let classUID = UInt64(objects.count)
        objects.append(.dictionary(["$classname": .string("NSArray"), "$classes": .array([.string("NSArray"), .string("NSObject")])]))
        objects[1] = .dictionary(["NS.objects": .array(references), "$class": .uid(classUID)])
        return BinaryPropertyList.encode(.dictionary([
            "$archiver": .string("NSKeyedArchiver"),
            "$version": .integer(100_000),
            "$top": .dictionary(["root": .uid(1)]),
            "$objects": .array(objects),
        ]))
    }

    static func unarchive(_ data: Data) throws -> [PropertyListValue] {
        if data.starts(with: Array("bplist".utf8)) {
            let root = try BinaryPropertyList.decode(data)
            guard case .array(let objects)? = root["$objects"], case .uid(let top)? = root["$top"]?["root"] else {
                throw DecodingError(reason: "not a keyed archive")
            }
            func resolve(_ reference: PropertyListValue) throws -> PropertyListValue {
                guard case .uid(let uid) = reference else { return reference }
                guard uid < objects.count else { throw DecodingError(reason: "UID \(uid) out of range") }
                return objects[Int(uid)]
            }
            guard case .array(let references)? = try resolve(.uid(top))["NS.objects"] else {
                throw DecodingError(reason: "root object is not an array")
            }
            return try references.map(resolve)
        }
        if let integers = try? JSONDecoder().decode([Int64].self, from: data) { return integers.map { .integer($0) } }
        if let strings = try? JSONDecoder().decode([String].self, from: data) { return strings.map { .string($0) } }
        throw DecodingError(reason: "neither a keyed archive nor a JSON array of integers or strings")
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
