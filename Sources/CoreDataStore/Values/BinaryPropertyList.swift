import Foundation

/// A property-list value, with the keyed-archive UID type that Foundation does not expose
/// portably.
package indirect enum PropertyListValue: Sendable, Equatable {
    case boolean(Bool)
    case integer(Int64)
    case real(Double)
    case string(String)
    case data(Data)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])
    case uid(UInt64)

    public subscript(key: String) -> PropertyListValue? {
        if case .dictionary(let entries) = self { return entries[key] }
        return nil
    }
}

/// Apple's `bplist00` format.
///
/// Written here rather than through `PropertyListSerialization` for two reasons: dictionary keys
/// come out sorted, so the same metadata always gives the same bytes (fixtures and archives are
/// compared byte for byte), and keyed-archive UIDs, which Core Data's transformable attributes
/// use, round-trip on every platform. The reader bounds-checks every offset: it runs on bytes
/// taken from stores and archives that may be damaged or hostile.
package enum BinaryPropertyList {
    /// Why bytes are not a binary property list this reader accepts.
    public struct FormatError: Error, LocalizedError, Equatable {
        /// What is wrong, and where.
        public var reason: String
        /// The sentence that says why.
        public var errorDescription: String? { "invalid binary property list: \(reason)" }
    }

    // MARK: Writing

    public static func encode(_ root: PropertyListValue) -> Data {
        var objects: [Data] = []
        @discardableResult
        func add(_ value: PropertyListValue) -> Int {
            let index = objects.count
            objects.append(Data())
            var body = Data()
            switch value {
            case .boolean(let flag):
                body.append(flag ? 0x09 : 0x08)
            case .integer(let number):
                body.append(contentsOf: encodedInteger(number))
            case .real(let number):
                body.append(0x23)
                body.append(bigEndian: number.bitPattern)
            case .string(let text):
                if text.utf8.allSatisfy({ $0 < 0x80 }) {
                    body.append(contentsOf: marker(0x50, count: text.utf8.count))
                    body.append(contentsOf: text.utf8)
                } else {
                    let units = Array(text.utf16)
                    body.append(contentsOf: marker(0x60, count: units.count))
                    for unit in units { body.append(bigEndian: unit) }
                }
            case .data(let bytes):
                body.append(contentsOf: marker(0x40, count: bytes.count))
                body.append(bytes)
            case .uid(let number):
                let width = byteWidth(number)
                body.append(0x80 | UInt8(width - 1))
                body.append(contentsOf: bigEndianBytes(number, width: width))
            case .array(let elements):
                let references = elements.map { add($0) }
                body.append(contentsOf: marker(0xA0, count: references.count))
                for reference in references { body.append(bigEndian: UInt32(reference)) }
            case .dictionary(let entries):
                let sorted = entries.sorted { $0.key < $1.key }
                let keyReferences = sorted.map { add(.string($0.key)) }
                let valueReferences = sorted.map { add($0.value) }
                body.append(contentsOf: marker(0xD0, count: sorted.count))
                for reference in keyReferences + valueReferences { body.append(bigEndian: UInt32(reference)) }
            }
            objects[index] = body
            return index
        }
        add(root)
        // Object references are written 4 bytes wide above; patch to the narrowest width that fits.
        let referenceWidth = byteWidth(UInt64(objects.count))
        if referenceWidth < 4 {
            objects = objects.map { narrowReferences(in: $0, to: referenceWidth) }
        }
        var output = Data("bplist00".utf8)
        var offsets: [UInt64] = []
        for object in objects {
            offsets.append(UInt64(output.count))
            output.append(object)
        }
        let offsetTableStart = UInt64(output.count)
        let offsetWidth = byteWidth(offsetTableStart)
        for offset in offsets { output.append(contentsOf: bigEndianBytes(offset, width: offsetWidth)) }
        output.append(contentsOf: [0, 0, 0, 0, 0, 0, UInt8(offsetWidth), UInt8(referenceWidth)])
        output.append(bigEndian: UInt64(objects.count))
        output.append(bigEndian: UInt64(0))
        output.append(bigEndian: offsetTableStart)
        return output
    }

    private static func narrowReferences(in object: Data, to width: Int) -> Data {
        guard let first = object.first, first & 0xF0 == 0xA0 || first & 0xF0 == 0xD0 else { return object }
        let (count, headerLength) = collectionHeader(object)
        let referenceCount = first & 0xF0 == 0xD0 ? count * 2 : count
        var result = Data(object.prefix(headerLength))
        for index in 0..<referenceCount {
            let start = object.startIndex + headerLength + index * 4
            let reference = object[start..<start + 4].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            result.append(contentsOf: bigEndianBytes(reference, width: width))
        }
        return result
    }

    private static func collectionHeader(_ object: Data) -> (count: Int, headerLength: Int) {
        let first = object[object.startIndex]
        if first & 0x0F != 0x0F { return (Int(first & 0x0F), 1) }
        let widthMarker = object[object.startIndex + 1]
        let width = 1 << Int(widthMarker & 0x0F)
        let count = object[(object.startIndex + 2)..<(object.startIndex + 2 + width)].reduce(0) { $0 << 8 | Int($1) }
        return (count, 2 + width)
    }

    private static func marker(_ type: UInt8, count: Int) -> [UInt8] {
        count < 15 ? [type | UInt8(count)] : [type | 0x0F] + encodedInteger(Int64(count))
    }

    private static func encodedInteger(_ number: Int64) -> [UInt8] {
        guard number >= 0 else { return [0x13] + bigEndianBytes(UInt64(bitPattern: number), width: 8) }
        let width = byteWidth(UInt64(number))
        let widthExponent: UInt8 = width == 1 ? 0 : width == 2 ? 1 : width <= 4 ? 2 : 3
        let padded = 1 << Int(widthExponent)
        return [0x10 | widthExponent] + bigEndianBytes(UInt64(number), width: padded)
    }

    private static func byteWidth(_ number: UInt64) -> Int {
        number <= 0xFF ? 1 : number <= 0xFFFF ? 2 : number <= 0xFFFF_FFFF ? 4 : 8
    }

    private static func bigEndianBytes(_ number: UInt64, width: Int) -> [UInt8] {
        (0..<width).reversed().map { UInt8(truncatingIfNeeded: number >> (8 * UInt64($0))) }
    }

    // MARK: Reading

    /// Reads a `bplist00` file.
    ///
    /// Every number taken from the input (trailer fields, offsets, counts, widths, references)
    /// is compared without arithmetic that could overflow: a count is compared with the space
    /// left (`count <= (end - start) / width`), never added to an offset first. Anything that
    /// does not fit throws `FormatError`; nothing traps, and nothing is decoded approximately:
    /// an ASCII string with a byte of 0x80 or more, UTF-16 text with a lone surrogate, a UID
    /// wider than 8 bytes or a dictionary that names a key twice is refused, not repaired.
    public static func decode(_ data: Data) throws -> PropertyListValue {
        let bytes = [UInt8](data)
        guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist0".utf8)) else {
            throw FormatError(reason: "missing bplist header or trailer")
        }
        let trailer = bytes.count - 32
        let offsetWidth = Int(bytes[trailer + 6])
        let referenceWidth = Int(bytes[trailer + 7])
        guard [1, 2, 4, 8].contains(offsetWidth), [1, 2, 4, 8].contains(referenceWidth) else {
            throw FormatError(reason: "bad trailer widths")
        }
        let declaredObjectCount = try readUInt(bytes, trailer + 8, 8)
        let topObject = try readUInt(bytes, trailer + 16, 8)
        let declaredOffsetTable = try readUInt(bytes, trailer + 24, 8)
        guard declaredObjectCount > 0 else { throw FormatError(reason: "no objects") }
        guard topObject < declaredObjectCount else {
            throw FormatError(reason: "top object \(topObject) out of range (\(declaredObjectCount) objects)")
        }
        guard declaredOffsetTable >= 8, declaredOffsetTable <= UInt64(trailer) else {
            throw FormatError(reason: "offset table at \(declaredOffsetTable) lies outside the data")
        }
        // Compared by division: objectCount × offsetWidth may not fit in 64 bits.
        guard declaredObjectCount <= (UInt64(trailer) - declaredOffsetTable) / UInt64(offsetWidth) else {
            throw FormatError(reason: "offset table of \(declaredObjectCount) entries runs past the trailer")
        }
        // Both are now at most bytes.count, so Int holds them.
        let objectCount = Int(declaredObjectCount)
        let offsetTable = Int(declaredOffsetTable)

        func offset(of object: UInt64) throws -> Int {
            guard object < declaredObjectCount else { throw FormatError(reason: "object reference \(object) out of range") }
            let value = try readUInt(bytes, offsetTable + Int(object) * offsetWidth, offsetWidth)
            guard value >= 8, value < declaredOffsetTable else { throw FormatError(reason: "object offset \(value) out of range") }
            return Int(value)
        }
        /// `byteCount` bytes at `start` lie in the object area (before the offset table).
        func within(_ start: Int, _ byteCount: Int) throws {
            guard start >= 0, byteCount >= 0, start <= offsetTable, byteCount <= offsetTable - start else {
                throw FormatError(reason: "object runs past the object area")
            }
        }
        /// `count` items of `width` bytes each, as a byte count that fits the object area.
        func span(_ count: Int, _ width: Int) throws -> Int {
            let (product, overflow) = count.multipliedReportingOverflow(by: width)
            guard !overflow, product <= offsetTable else { throw FormatError(reason: "object of \(count) items runs past the object area") }
            return product
        }
        func length(at position: Int, lowNibble: UInt8) throws -> (count: Int, start: Int) {
            if lowNibble != 0x0F { return (Int(lowNibble), position + 1) }
            try within(position + 1, 1)
            let marker = bytes[position + 1]
            guard marker & 0xF0 == 0x10, marker & 0x0F <= 3 else { throw FormatError(reason: "bad length marker") }
            let width = 1 << Int(marker & 0x0F)
            try within(position + 2, width)
            let count = try readUInt(bytes, position + 2, width)
            // Every item takes at least one byte, so no count can exceed the object area.
            guard count <= UInt64(offsetTable) else { throw FormatError(reason: "length \(count) larger than the data") }
            return (Int(count), position + 2 + width)
        }
        // Shared references can make a small file expand exponentially; bound the work, and the
        // bytes of text and data made, so that a small file cannot ask for gigabytes.
        var visits = 0
        let maximumVisits = 4 * objectCount + 64
        var produced = 0
        let maximumProduced = 8 * bytes.count + (1 << 20)
        func produce(_ byteCount: Int) throws {
            produced += byteCount
            guard produced <= maximumProduced else { throw FormatError(reason: "shared objects expand past \(maximumProduced) bytes") }
        }
        func object(_ reference: UInt64, depth: Int) throws -> PropertyListValue {
            guard depth < 64 else { throw FormatError(reason: "nesting deeper than 64") }
            visits += 1
            guard visits <= maximumVisits else { throw FormatError(reason: "object graph expands too far") }
            let position = try offset(of: reference)
            let marker = bytes[position]
            let low = marker & 0x0F
            switch marker & 0xF0 {
            case 0x00:
                switch marker {
                case 0x08: return .boolean(false)
                case 0x09: return .boolean(true)
                default: throw FormatError(reason: "unsupported marker \(marker)")
                }
            case 0x10:
                guard low <= 3 else { throw FormatError(reason: "integer wider than 8 bytes") }
                let width = 1 << Int(low)
                try within(position + 1, width)
                let raw = try readUInt(bytes, position + 1, width)
                // As Core Foundation reads them: 1, 2 and 4 bytes unsigned, 8 bytes signed.
                return .integer(width == 8 ? Int64(bitPattern: raw) : Int64(raw))
            case 0x20:
                guard low == 2 || low == 3 else { throw FormatError(reason: "unsupported real width") }
                try within(position + 1, 1 << Int(low))
                let raw = try readUInt(bytes, position + 1, 1 << Int(low))
                if low == 3 { return .real(Double(bitPattern: raw)) }
                return .real(Double(Float(bitPattern: UInt32(truncatingIfNeeded: raw))))
            case 0x40:
                let (count, start) = try length(at: position, lowNibble: low)
                try within(start, count)
                try produce(count)
                return .data(Data(bytes[start..<start + count]))
            case 0x50:
                let (count, start) = try length(at: position, lowNibble: low)
                try within(start, count)
                try produce(count)
                let text = bytes[start..<start + count]
                if let index = text.firstIndex(where: { $0 >= 0x80 }) {
                    throw FormatError(
                        reason: "ASCII string holds byte 0x\(String(bytes[index], radix: 16, uppercase: true)) at offset \(index)")
                }
                return .string(String(decoding: text, as: UTF8.self))
            case 0x60:
                let (count, start) = try length(at: position, lowNibble: low)
                try within(start, try span(count, 2))
                try produce(count * 3)
                let units = (0..<count).map { UInt16(bytes[start + 2 * $0]) << 8 | UInt16(bytes[start + 2 * $0 + 1]) }
                if let problem = utf16Problem(units) {
                    throw FormatError(reason: "UTF-16 string at offset \(position) holds \(problem)")
                }
                return .string(String(decoding: units, as: UTF16.self))
            case 0x80:
                // Keyed-archive UIDs; anything wider than 8 bytes would lose its high bytes.
                guard low <= 7 else { throw FormatError(reason: "UID wider than 8 bytes") }
                try within(position + 1, Int(low) + 1)
                return .uid(try readUInt(bytes, position + 1, Int(low) + 1))
            case 0xA0:
                let (count, start) = try length(at: position, lowNibble: low)
                try within(start, try span(count, referenceWidth))
                var elements: [PropertyListValue] = []
                elements.reserveCapacity(count)
                for index in 0..<count {
                    elements.append(try object(try readUInt(bytes, start + index * referenceWidth, referenceWidth), depth: depth + 1))
                }
                return .array(elements)
            case 0xD0:
                let (count, start) = try length(at: position, lowNibble: low)
                try within(start, try span(try span(count, 2), referenceWidth))
                var entries: [String: PropertyListValue] = [:]
                for index in 0..<count {
                    let key = try object(try readUInt(bytes, start + index * referenceWidth, referenceWidth), depth: depth + 1)
                    guard case .string(let name) = key else { throw FormatError(reason: "dictionary key is not a string") }
                    let value = try object(try readUInt(bytes, start + (count + index) * referenceWidth, referenceWidth), depth: depth + 1)
                    // Swift compares strings by canonical equivalence: "é" and "e\u{301}" are one key.
                    guard entries.updateValue(value, forKey: name) == nil else {
                        throw FormatError(reason: "dictionary names the key \(name.debugDescription.prefix(80)) twice")
                    }
                }
                return .dictionary(entries)
            default:
                throw FormatError(reason: "unsupported marker \(marker)")
            }
        }
        return try object(topObject, depth: 0)
    }

    /// What makes UTF-16 code units invalid (a lone or reversed surrogate), or nil when they are valid.
    private static func utf16Problem(_ units: [UInt16]) -> String? {
        var index = 0
        while index < units.count {
            let unit = units[index]
            switch unit {
            case 0xD800...0xDBFF:
                guard index + 1 < units.count, (0xDC00...0xDFFF).contains(units[index + 1]) else {
                    return "a lone high surrogate 0x\(String(unit, radix: 16, uppercase: true)) at unit \(index)"
                }
                index += 2
            case 0xDC00...0xDFFF:
                return "a lone low surrogate 0x\(String(unit, radix: 16, uppercase: true)) at unit \(index)"
            default:
                index += 1
            }
        }
        return nil
    }

    /// A big-endian unsigned number of `width` (at most 8) bytes at `start`.
    private static func readUInt(_ bytes: [UInt8], _ start: Int, _ width: Int) throws -> UInt64 {
        guard start >= 0, width >= 0, width <= 8, start <= bytes.count, width <= bytes.count - start else {
            throw FormatError(reason: "read of \(width) bytes at \(start) runs past the data")
        }
        return bytes[start..<start + width].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}

extension Data {
    mutating func append<T: FixedWidthInteger>(bigEndian value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }
}
