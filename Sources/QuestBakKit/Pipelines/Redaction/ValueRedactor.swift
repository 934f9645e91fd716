import CoreDataStore
import Crypto
import Foundation
import GRDB
import QuestBakArchive

/// How one column's values are replaced. Named by a short word, which is also how the copy's SQL
/// names it to the `questbak_redact` function.
enum RedactionRule: String, Sendable, CaseIterable {
    /// Text: letters become letters of the same case, digits digits, the rest of ASCII (spaces,
    /// punctuation) stays and any other character becomes a letter, so the length and the shape
    /// stay. A UUID in text becomes a UUID (the same one its bytes become).
    case text
    /// 16 bytes become 16 other bytes of a version-4 UUID (text UUIDs as for `text`).
    case uuid
    /// Seconds since 2001 move by the store's one offset.
    case date
    /// Bytes: a property list has its strings and data replaced and is written again (a keyed
    /// archive stays one the app decodes); an external-storage reference gets the file's new name;
    /// anything else becomes as many bytes derived from it.
    case binary
    /// Integers of at most 16, 32 or 64 bits, under number scrambling: the same number of digits.
    case integer16, integer32, integer64
    /// A non-integer number, under number scrambling: scaled by the store's one factor.
    case real
    /// Whatever SQLite holds, by its storage class: TEXT as `text`, a 16-byte BLOB as `uuid`,
    /// other BLOBs as `binary`, numbers kept (integers may be keys; reals scaled when scrambling).
    case storageClass = "class"
    /// As `storageClass`, and numbers are dates (a TIMESTAMP or DATE column).
    case storageClassDate = "class-date"
}

/// Replaces values deterministically under a key. One instance serves a whole store, so a value
/// gets one replacement wherever it occurs, and two different values never share one. It is used
/// by SQLite through a function, on the one connection that copies the store.
final class ValueRedactor: @unchecked Sendable {
    let key: RedactionKey
    let scrambleNumbers: Bool
    let dateOffset: Double
    let numberFactor: Double
    private let lock = NSLock()
    private var texts = InjectiveMap<Data, String>(refusesIdentity: true)
    private var uuids = InjectiveMap<Data, Data>(refusesIdentity: true)
    private var blobs = InjectiveMap<Data, Data>(refusesIdentity: true)
    private var integers: [RedactionRule: InjectiveMap<Int64, Int64>] = [:]
    /// External-storage file names met in references, original to replacement.
    private(set) var externalNames: [String: String] = [:]

    init(key: RedactionKey, scrambleNumbers: Bool) {
        self.key = key
        self.scrambleNumbers = scrambleNumbers
        dateOffset = key.dateOffset
        numberFactor = key.numberFactor
    }

    /// Candidates refused because another value already had them, over all kinds.
    var collisions: Int {
        lock.withLock { texts.collisions + uuids.collisions + blobs.collisions + integers.values.map(\.collisions).reduce(0, +) }
    }

    /// The SQL function `questbak_redact(value, rule)` over this redactor.
    var sqlFunction: DatabaseFunction {
        DatabaseFunction("questbak_redact", argumentCount: 2, pure: false) { [self] arguments in
            guard let name = String.fromDatabaseValue(arguments[1]), let rule = RedactionRule(rawValue: name) else {
                throw DatabaseError(message: "questbak_redact: unknown rule")
            }
            return try lock.withLock { try redact(arguments[0], rule: rule) }
        }
    }

    private func redact(_ value: DatabaseValue, rule: RedactionRule) throws -> (any DatabaseValueConvertible)? {
        switch (value.storage, rule) {
        case (.null, _): return nil
        case (.string(let text), _): return try redactText(text)
        case (.blob(let bytes), .uuid),
            (.blob(let bytes), .storageClass) where bytes.count == 16,
            (.blob(let bytes), .storageClassDate) where bytes.count == 16:
            return bytes.count == 16 ? try redactUUID(bytes) : try redactBytes(bytes)
        case (.blob(let bytes), _): return try redactBytes(bytes)
        case (.double(let number), .date), (.double(let number), .storageClassDate): return number + dateOffset
        case (.int64(let number), .date), (.int64(let number), .storageClassDate): return number &+ Int64(dateOffset)
        case (.double(let number), _): return scrambleNumbers ? number * numberFactor : number
        case (.int64(let number), .integer16), (.int64(let number), .integer32), (.int64(let number), .integer64):
            return scrambleNumbers ? try scramble(number, rule: rule) : number
        case (.int64(let number), _): return number
        }
    }

    func redactText(_ text: String) throws -> String {
        // The empty text says nothing, and has no other text of its length.
        if text.isEmpty { return text }
        if text.utf8.count == 36, let uuid = UUID(uuidString: text) {
            let bytes = withUnsafeBytes(of: uuid.uuid) { Data($0) }
            let replaced = try redactUUID(bytes)
            let formatted = UUID(uuid: replaced.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }).uuidString
            return text.contains(where: { ("a"..."f").contains($0) }) ? formatted.lowercased() : formatted
        }
        let original = Data(text.utf8)
        let scalars = Array(text.unicodeScalars)
        return try texts.replacement(for: original, identity: text) { attempt in
            // After a few tries, one more letter each 64 tries: a shape with few values (one letter)
            // cannot run out.
            let extra = attempt / 64
            let bytes = key.stream("text", seed: original + Self.number(attempt), count: scalars.count + extra)
            var result = String.UnicodeScalarView()
            for (index, scalar) in scalars.enumerated() {
                let byte = bytes[index]
                switch scalar.value {
                case 0x61...0x7A: result.append(Self.letter(byte, base: 0x61))
                case 0x41...0x5A: result.append(Self.letter(byte, base: 0x41))
                case 0x30...0x39: result.append(Unicode.Scalar(0x30 + UInt8(byte % 10)))
                case 0..<0x80: result.append(scalar)
                default: result.append(Self.letter(byte, base: 0x61))
                }
            }
            for index in 0..<extra { result.append(Self.letter(bytes[scalars.count + index], base: 0x61)) }
            return String(result)
        }
    }

    func redactUUID(_ bytes: Data) throws -> Data {
        try uuids.replacement(for: bytes, identity: bytes) { attempt in
            var derived = Array(key.digest("uuid", [bytes, Self.number(attempt)]).prefix(16))
            derived[6] = derived[6] & 0x0F | 0x40
            derived[8] = derived[8] & 0x3F | 0x80
            return Data(derived)
        }
    }

    func redactBytes(_ bytes: Data) throws -> Data {
        if bytes.isEmpty { return bytes }
        if let reference = ExternalReference(bytes) {
            let name = try redactText(reference.name)
            externalNames[reference.name] = name
            return Data([ExternalReference.marker]) + Data(name.utf8)
        }
        if bytes.starts(with: Array("bplist".utf8)), let list = try? BinaryPropertyList.decode(bytes) {
            return BinaryPropertyList.encode(try redactPropertyList(list))
        }
        // A JSON array of strings or integers (SwiftData's encoding of arrays in Codable values):
        // its strings replaced, written again as JSON.
        if bytes.first == UInt8(ascii: "["), let elements = try? TransformableArray.unarchive(bytes) {
            let values: [Any] = try elements.map { element -> Any in
                switch element {
                case .string(let text): return try redactText(text)
                case .integer(let number): return number
                case .real(let number): return number
                default: return "\(element)"
                }
            }
            if let json = try? JSONSerialization.data(withJSONObject: values, options: [.withoutEscapingSlashes]) { return json }
        }
        let seed = Data(SHA256.hash(data: bytes))
        return try blobs.replacement(for: bytes, identity: bytes) { attempt in
            Data(key.stream("bytes", seed: seed + Self.number(attempt), count: bytes.count + attempt / 64))
        }
    }

    /// Every string and every data value replaced, archived dates moved, numbers and structure
    /// kept; a keyed archive's class names and `$null` kept, so it still decodes to the same classes.
    private func redactPropertyList(_ value: PropertyListValue) throws -> PropertyListValue {
        switch value {
        case .string(let text): return text == "$null" ? value : .string(try redactText(text))
        case .data(let bytes): return .data(try redactBytes(bytes))
        case .array(let elements): return .array(try elements.map(redactPropertyList))
        case .dictionary(let entries):
            var result: [String: PropertyListValue] = [:]
            // In key order: which value meets a collision first must not depend on hashing.
            for (name, entry) in entries.sorted(by: { $0.key < $1.key }) {
                if ["$classname", "$classes", "$archiver"].contains(name) {
                    result[name] = entry
                } else if name == "NS.time", case .real(let seconds) = entry {
                    // An archived NSDate (seconds since 2001): moved as the store's dates are.
                    result[name] = .real(seconds + dateOffset)
                } else {
                    result[name] = try redactPropertyList(entry)
                }
            }
            return .dictionary(result)
        case .boolean, .integer, .real, .uid: return value
        }
    }

    /// The same number of digits and sign, within the type's range; zero stays zero.
    private func scramble(_ number: Int64, rule: RedactionRule) throws -> Int64 {
        guard number != 0, number != .min else { return number }
        let maximum: Int64 = rule == .integer16 ? Int64(Int16.max) : rule == .integer32 ? Int64(Int32.max) : Int64.max
        let magnitude = number.magnitude
        var lower: UInt64 = 1
        while lower <= magnitude / 10 { lower *= 10 }
        let upper = min(lower > UInt64.max / 10 ? UInt64.max : lower * 10 - 1, UInt64(maximum))
        let size = upper - lower + 1
        var map = integers[rule] ?? InjectiveMap(refusesIdentity: false)
        defer { integers[rule] = map }
        return try map.replacement(for: number) { attempt in
            // 64 keyed tries, then every value of the range in turn from a keyed start.
            guard UInt64(attempt) < 64 + size else { return nil }
            let digest = key.digest("integer", [Self.number(Int(number)), Self.number(min(attempt, 64))])
            let start = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % size
            let offset = attempt < 64 ? start : (start + UInt64(attempt - 64)) % size
            let replaced = Int64(lower + offset)
            return number < 0 ? -replaced : replaced
        }
    }

    private static func letter(_ byte: UInt8, base: UInt32) -> Unicode.Scalar { Unicode.Scalar(base + UInt32(byte % 26))! }

    private static func number(_ value: Int) -> Data { withUnsafeBytes(of: Int64(value).bigEndian) { Data($0) } }
}

/// A record's reference to an external-storage file: the byte 0x02 and the file's name, a UUID in
/// ASCII (model-cache.md, inference; `ExternalStorage.references` reads the same form).
struct ExternalReference {
    static let marker: UInt8 = 0x02
    var name: String

    init?(_ bytes: Data) {
        guard bytes.count == 37, bytes.first == Self.marker, let name = String(bytes: bytes.dropFirst(), encoding: .ascii),
            UUID(uuidString: name) != nil
        else { return nil }
        self.name = name
    }
}
