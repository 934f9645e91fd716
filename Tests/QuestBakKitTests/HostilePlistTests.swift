import Foundation
import XCTest

@testable import CoreDataStore
@testable import QuestBakFixtures
@testable import QuestBakKit

/// Binary property lists built to break the reader: trailer fields, offsets, counts and widths
/// at the limits of their integer types, strings that would decode only with replacement
/// characters, and graphs that expand. Each must end in a typed error (`BinaryPropertyList.FormatError`,
/// or `TransformableArray.DecodingError` for keyed archives), never a trap, a hang or a silent change.
/// The trailer-overflow cases crashed the process (SIGILL) before the reader compared by division.
final class HostilePlistTests: XCTestCase {
    // MARK: Building hostile plists

    static func bigEndian(_ value: UInt64, width: Int) -> [UInt8] { RawPlist.bigEndian(value, width: width) }

    static func assemble(
        _ objects: [[UInt8]], offsetWidth: Int = 1, referenceWidth: Int = 1, objectCount: UInt64? = nil,
        topObject: UInt64 = 0, offsetTable: UInt64? = nil, offsets: [UInt64]? = nil
    ) -> Data {
        RawPlist.assemble(
            objects, offsetWidth: offsetWidth, referenceWidth: referenceWidth, objectCount: objectCount, topObject: topObject,
            offsetTable: offsetTable, offsets: offsets)
    }

    enum TrailerField: Int {
        case objectCount = 8
        case topObject = 16
        case offsetTable = 24
    }

    /// `data` with one 8-byte trailer field replaced.
    static func replacing(_ field: TrailerField, in data: Data, with value: UInt64) -> Data {
        var bytes = [UInt8](data)
        let start = bytes.count - 32 + field.rawValue
        bytes.replaceSubrange(start..<start + 8, with: bigEndian(value, width: 8))
        return Data(bytes)
    }

    /// The writer's plist of the integers 0..<40: 41 objects, 1-byte offsets and references.
    let forty = BinaryPropertyList.encode(.array((0..<40).map { .integer($0) }))

    /// Decoding must throw a FormatError whose reason contains `expected` (when given).
    func assertRefused(_ data: Data, _ expected: String? = nil, _ message: String = "", file: StaticString = #filePath, line: UInt = #line)
    {
        XCTAssertThrowsError(try BinaryPropertyList.decode(data), message, file: file, line: line) { error in
            guard let error = error as? BinaryPropertyList.FormatError else {
                return XCTFail("\(message): not a FormatError: \(error)", file: file, line: line)
            }
            if let expected {
                XCTAssertTrue(error.reason.contains(expected), "\(message): \(error.reason)", file: file, line: line)
            }
        }
    }

    // MARK: Trailer

    /// The reported crash: offset table position + objectCount × offsetSize overflowed UInt64.
    func testOffsetTablePositionThatOverflowsThrows() {
        XCTAssertNoThrow(try BinaryPropertyList.decode(forty))
        assertRefused(Self.replacing(.offsetTable, in: forty, with: UInt64.max - 15), "offset table")
    }

    func testOffsetTablePositionAtIntegerLimitsThrows() {
        for value in [UInt64.max, UInt64.max - 7, UInt64.max - 40, UInt64(Int64.max), UInt64(Int64.max) + 1, 0, 7] {
            assertRefused(Self.replacing(.offsetTable, in: forty, with: value), "offset table", "offset table at \(value)")
        }
        // One byte too far: the last entry would overlap the trailer.
        let table = UInt64(forty.count - 32 - 41)
        assertRefused(Self.replacing(.offsetTable, in: forty, with: table + 1), nil, "offset table at \(table + 1)")
    }

    func testHugeObjectCountThrows() {
        // 2^61 × 8 and 2^63 × 2 are 2^64: a multiplication that overflows if done first.
        for value in [UInt64.max, UInt64.max - 7, 1 << 63, UInt64(Int64.max), 1 << 61, 1 << 62, UInt64(forty.count), 42] {
            assertRefused(Self.replacing(.objectCount, in: forty, with: value), "offset table", "object count \(value)")
            let wide = Self.assemble([[0x10, 1]], offsetWidth: 8, objectCount: value)
            assertRefused(wide, "offset table", "object count \(value), 8-byte offsets")
        }
        assertRefused(Self.replacing(.objectCount, in: forty, with: 0), "no objects")
    }

    func testHugeTopObjectThrows() {
        for value in [UInt64.max, UInt64(Int64.max) + 1, UInt64(Int64.max), 41] {
            assertRefused(Self.replacing(.topObject, in: forty, with: value), "top object", "top object \(value)")
        }
    }

    func testBadTrailerWidthsThrow() {
        for (offsetWidth, referenceWidth) in [(0, 1), (3, 1), (16, 1), (255, 1), (1, 0), (1, 3), (1, 16), (1, 255)] {
            assertRefused(
                Self.assemble([[0x10, 1]], offsetWidth: offsetWidth, referenceWidth: referenceWidth), "widths",
                "\(offsetWidth)/\(referenceWidth)")
        }
    }

    // MARK: Offsets and references

    func testObjectOffsetsAtIntegerLimitsThrow() {
        for offset in [UInt64.max, UInt64(Int64.max), UInt64(Int64.max) + 1, 0, 7] {
            assertRefused(
                Self.assemble([[0xA1, 1], [0x10, 5]], offsetWidth: 8, offsets: [8, offset]), "offset", "element offset \(offset)")
            assertRefused(
                Self.assemble([[0xA1, 1], [0x10, 5]], offsetWidth: 8, offsets: [offset, 10]), "offset", "top offset \(offset)")
        }
        // An offset that points into the offset table itself.
        assertRefused(Self.assemble([[0xA1, 1], [0x10, 5]], offsets: [8, 12]), "offset")
    }

    func testReferencesAtIntegerLimitsThrow() {
        for reference in [UInt64.max, UInt64(Int64.max) + 1, UInt64(Int64.max), 2] {
            let array = [0xA1] + Self.bigEndian(reference, width: 8)
            assertRefused(Self.assemble([array, [0x10, 1]], referenceWidth: 8), "reference", "reference \(reference)")
        }
        // Dictionary references too, keys and values.
        assertRefused(Self.assemble([[0xD1, 9, 2], [0x51, 0x61], [0x10, 1]]), "reference")
        assertRefused(Self.assemble([[0xD1, 1, 9], [0x51, 0x61], [0x10, 1]]), "reference")
    }

    /// Lengths written as an extra integer (low nibble 0xF) with 8-byte counts near UInt64.max,
    /// for every counted type: data, ASCII, UTF-16, array, dictionary.
    func testCountMarkersNearUInt64MaxThrow() {
        for type: UInt8 in [0x4F, 0x5F, 0x6F, 0xAF, 0xDF] {
            for count: UInt64 in [UInt64.max, UInt64.max / 2, 1 << 63, UInt64(Int64.max), 1 << 62, 1 << 61, 1 << 60, 1000] {
                let object = [type, 0x13] + Self.bigEndian(count, width: 8) + [0, 0]
                assertRefused(Self.assemble([object], referenceWidth: 8), nil, "type \(type) count \(count)")
            }
            // A length marker that is not an integer, one wider than 8 bytes, one cut off.
            assertRefused(Self.assemble([[type, 0x23, 0, 0, 0, 0, 0, 0, 0, 1]]), "length marker")
            assertRefused(Self.assemble([[type, 0x14] + [UInt8](repeating: 0, count: 15) + [1]]), "length marker")
            assertRefused(Self.assemble([[type, 0x13, 0, 0]]), nil, "type \(type), truncated count")
        }
    }

    func testObjectsRunningPastTheObjectAreaThrow() {
        assertRefused(Self.assemble([[0x13, 0, 0, 0]]), "past the object area")  // 8-byte integer, 3 bytes
        assertRefused(Self.assemble([[0x23, 0, 0]]), "past the object area")  // double, 2 bytes
        assertRefused(Self.assemble([[0x22, 0]]), "past the object area")  // float, 1 byte
        assertRefused(Self.assemble([[0x45, 1, 2]]), "past the object area")  // 5 bytes of data, 2 present
        assertRefused(Self.assemble([[0x63, 0, 0x61, 0]]), "past the object area")  // 3 UTF-16 units, 1.5 present
        assertRefused(Self.assemble([[0x87, 1]]), "past the object area")  // 8-byte UID, 1 present
        assertRefused(Self.assemble([[0xA4, 0, 0]]), "past the object area")  // 4 references, 2 present
        assertRefused(Self.assemble([[0x14] + [UInt8](repeating: 0, count: 16)]), "wider than 8 bytes")
        assertRefused(Self.assemble([[0x21, 0, 0]]), "real width")
    }

    func testUIDsWiderThanEightBytesThrow() {
        // Read before the fix by dropping the high bytes: a different UID, silently.
        assertRefused(Self.assemble([[0x88, 1, 2, 3, 4, 5, 6, 7, 8, 9]]), "UID wider")
        assertRefused(Self.assemble([[0x8F] + [UInt8](repeating: 0xAB, count: 16)]), "UID wider")
        XCTAssertEqual(try BinaryPropertyList.decode(Self.assemble([[0x87] + Self.bigEndian(UInt64.max, width: 8)])), .uid(UInt64.max))
        XCTAssertEqual(try BinaryPropertyList.decode(Self.assemble([[0x82, 1, 2, 3]])), .uid(0x010203))
    }

    // MARK: Graphs

    /// `length` arrays, each holding the next `referencesEach` times, the last an integer.
    static func chain(_ length: Int, referencesEach: Int) -> [[UInt8]] {
        var objects: [[UInt8]] = []
        for index in 0..<length - 1 {
            let next = UInt8(index + 1)
            objects.append([0xA0 | UInt8(referencesEach)] + [UInt8](repeating: next, count: referencesEach))
        }
        objects.append([0x10, 1])
        return objects
    }

    func testDeepNestingThrows() {
        assertRefused(Self.assemble([[0xA1, 0]]), "nesting")  // an array that holds itself
        assertRefused(Self.assemble([[0xD1, 1, 0], [0x51, 0x61]]))  // a dictionary that holds itself (nesting or visit limit)
        assertRefused(Self.assemble(Self.chain(100, referencesEach: 1)), "nesting")
        XCTAssertNoThrow(try BinaryPropertyList.decode(Self.assemble(Self.chain(60, referencesEach: 1))))
    }

    /// Shared references, each of which is a fresh copy in the decoded value: 60,000 references
    /// to one 64 KiB data object are 3.9 GB from a 200 KB file. Before the limit this took 12 s
    /// and 4 GB of memory; with a larger object it ran the process out of memory.
    func testSharedReferencesCannotExpandWithoutBound() {
        let count = 60_000
        let array: [UInt8] = [0xAF, 0x11] + Self.bigEndian(UInt64(count), width: 2) + [UInt8](repeating: 1, count: count)
        let blob: [UInt8] = [0x4F, 0x12] + Self.bigEndian(65_536, width: 4) + [UInt8](repeating: 0x5A, count: 65_536)
        let blobOffset = UInt64(8 + array.count)
        // Extra offset-table entries raise the object count, and with it the visit limit.
        let data = Self.assemble([array, blob], offsetWidth: 4, offsets: [8, blobOffset] + [UInt64](repeating: blobOffset, count: 15_000))
        let start = Date()
        assertRefused(data, "expand")
        // A hang guard (expanding the shared blob takes minutes), loose for a loaded CI machine.
        XCTAssertLessThan(Date().timeIntervalSince(start), 12)
        // Exponential sharing (each array holds the next twice) stops at the visit limit.
        assertRefused(Self.assemble(Self.chain(40, referencesEach: 2)), "expands too far")
    }

    func testDuplicateDictionaryKeysThrow() {
        // Before: the second value replaced the first, silently.
        assertRefused(Self.assemble([[0xD2, 1, 2, 3, 4], [0x51, 0x61], [0x51, 0x61], [0x10, 1], [0x10, 2]]), "twice")
        // "é" as U+00E9 and as e + U+0301: different bytes, one Swift String key.
        assertRefused(
            Self.assemble([[0xD2, 1, 2, 3, 4], [0x61, 0x00, 0xE9], [0x62, 0x00, 0x65, 0x03, 0x01], [0x10, 1], [0x10, 2]]), "twice")
        assertRefused(Self.assemble([[0xD1, 1, 2], [0x10, 1], [0x10, 2]]), "not a string")
    }

    // MARK: Strings are never altered

    func testASCIIStringWithHighBytesThrows() {
        for byte: UInt8 in [0x80, 0xC3, 0xE9, 0xFF] {
            assertRefused(Self.assemble([[0x53, 0x61, byte, 0x62]]), "ASCII string", "byte \(byte)")
        }
        // NUL and control characters are ASCII, and kept.
        XCTAssertEqual(try BinaryPropertyList.decode(Self.assemble([[0x53, 0x61, 0x00, 0x1B]])), .string("a\u{0}\u{1B}"))
    }

    func testUTF16StringsWithLoneSurrogatesThrow() {
        let hostile: [String: [UInt16]] = [
            "lone high at the end": [0x0061, 0xD800], "lone high before a letter": [0xD83D, 0x0061],
            "lone low": [0xDC00, 0x0061], "reversed pair": [0xDE00, 0xD83D], "two highs": [0xD83D, 0xD83D, 0xDE00],
        ]
        for (name, units) in hostile {
            let object = [0x60 | UInt8(units.count)] + units.flatMap { Self.bigEndian(UInt64($0), width: 2) }
            assertRefused(Self.assemble([object]), "surrogate", name)
        }
        let pair: [UInt16] = [0x0061, 0xD83D, 0xDE00, 0x0000]
        let object = [0x60 | UInt8(pair.count)] + pair.flatMap { Self.bigEndian(UInt64($0), width: 2) }
        XCTAssertEqual(try BinaryPropertyList.decode(Self.assemble([object])), .string("a😀\u{0}"))
    }

    // MARK: Random damage at the limits

    /// Every 8-byte trailer field and every offset-table entry set to values at integer limits.
    func testTrailerAndOffsetFieldsAtLimitsNeverTrap() {
        let sample = BinaryPropertyList.encode(
            .dictionary([
                "text": .string("plain"), "unicode": .string("café ☀️"), "numbers": .array([.integer(-1), .integer(Int64.max)]),
                "blob": .data(Data(count: 300)), "uid": .uid(300), "real": .real(-0.0),
            ]))
        let limits: [UInt64] = [
            0, 1, 7, 8, 0xFF, 0x100, 0xFFFF, 0xFFFF_FFFF, 1 << 32, UInt64(Int64.max), 1 << 63, UInt64.max - 1, UInt64.max,
        ]
        for field in [TrailerField.objectCount, .topObject, .offsetTable] {
            for value in limits {
                _ = try? BinaryPropertyList.decode(Self.replacing(field, in: sample, with: value))
            }
        }
        var bytes = [UInt8](sample)
        let offsetWidth = Int(bytes[bytes.count - 26])
        let table = Int(bytes[(bytes.count - 8)...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        for position in stride(from: table, to: bytes.count - 32, by: offsetWidth) {
            for value: UInt8 in [0x00, 0x07, 0x7F, 0x80, 0xFF] {
                let saved = bytes[position]
                bytes[position] = value
                _ = try? BinaryPropertyList.decode(Data(bytes))
                bytes[position] = saved
            }
        }
        // Every marker byte of every object replaced by every marker with a 0xF (counted) nibble.
        for position in 8..<table {
            for marker: UInt8 in [0x1F, 0x2F, 0x4F, 0x5F, 0x6F, 0x8F, 0xAF, 0xDF, 0x13, 0x88] {
                let saved = bytes[position]
                bytes[position] = marker
                _ = try? BinaryPropertyList.decode(Data(bytes))
                bytes[position] = saved
            }
        }
    }

    // MARK: The writer is unchanged

    /// Fixtures are compared byte for byte: these are the writer's bytes from before the reader's fix.
    func testWriterOutputIsByteIdentical() {
        XCTAssertEqual(
            forty.base64EncodedString(),
            "YnBsaXN0MDCvECgBAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fICEiIyQlJicoEAAQARACEAMQBBAFEAYQBxAIEAkQChALEAwQDRAOEA8QEBAREBIQExAUEBUQFhAXEBgQGRAaEBsQHBAdEB4QHxAgECEQIhAjECQQJRAmECcIMzU3OTs9P0FDRUdJS01PUVNVV1lbXV9hY2VnaWttb3FzdXd5e31/gQAAAAAAAAEBAAAAAAAAACkAAAAAAAAAAAAAAAAAAACD"
        )
        XCTAssertEqual(
            TransformableArray.archive([.integer(2), .integer(3), .integer(2)]).base64EncodedString(),
            "YnBsaXN0MDDUAQIDBAUGGRxZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKlBwgQERJVJG51bGzSCQoLDFYkY2xhc3NaTlMub2JqZWN0c4AEow0OD4ACgAOAAhACEAPSExQVGFgkY2xhc3Nlc1okY2xhc3NuYW1lohYXV05TQXJyYXlYTlNPYmplY3RXTlNBcnJhedEaG1Ryb290gAESAAGGoAgRGyQpMkRKUFVcZ2ltb3FzdXd8hZCTm6Ssr7S2AAAAAAAAAQEAAAAAAAAAHQAAAAAAAAAAAAAAAAAAALs="
        )
    }

    // MARK: Keyed archives (TransformableArray)

    func keyedArchive(_ objects: [PropertyListValue], root: UInt64 = 1) -> Data {
        BinaryPropertyList.encode(
            .dictionary([
                "$archiver": .string("NSKeyedArchiver"), "$version": .integer(100_000),
                "$top": .dictionary(["root": .uid(root)]), "$objects": .array(objects),
            ]))
    }

    let arrayClass: PropertyListValue = .dictionary([
        "$classname": .string("NSArray"), "$classes": .array([.string("NSArray"), .string("NSObject")]),
    ])

    func assertUnarchiveRefused(
        _ data: Data, _ expected: String, _ message: String = "", file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try TransformableArray.unarchive(data), message, file: file, line: line) { error in
            let reason: String
            switch error {
            case let error as TransformableArray.DecodingError: reason = error.reason
            case let error as BinaryPropertyList.FormatError: reason = error.reason
            default: return XCTFail("\(message): untyped \(error)", file: file, line: line)
            }
            XCTAssertTrue(reason.contains(expected), "\(message): \(reason)", file: file, line: line)
        }
    }

    /// The overflow reproduction through the path a store's transformable column takes.
    func testUnarchiveOfOverflowingPlistThrows() {
        let archive = TransformableArray.archive([.integer(1), .integer(2)])
        XCTAssertEqual(try TransformableArray.unarchive(archive), [.integer(1), .integer(2)])
        assertUnarchiveRefused(Self.replacing(.offsetTable, in: archive, with: UInt64.max - 15), "offset table")
        assertUnarchiveRefused(Self.replacing(.offsetTable, in: forty, with: UInt64.max - 15), "offset table")
        assertUnarchiveRefused(Self.replacing(.objectCount, in: archive, with: 1 << 61), "offset table")
    }

    func testUnarchiveOfHostileUIDsThrows() {
        for uid in [UInt64.max, UInt64(Int64.max) + 1, UInt64(Int64.max), 3] {
            let objects: [PropertyListValue] = [
                .string("$null"), .dictionary(["NS.objects": .array([.uid(uid)]), "$class": .uid(2)]), arrayClass,
            ]
            assertUnarchiveRefused(keyedArchive(objects), "out of range", "element UID \(uid)")
            assertUnarchiveRefused(keyedArchive(objects, root: uid), "out of range", "root UID \(uid)")
        }
        // UID 0 is $null (nil): before, the element came back as the text "$null".
        let null: [PropertyListValue] = [.string("$null"), .dictionary(["NS.objects": .array([.uid(0)]), "$class": .uid(2)]), arrayClass]
        assertUnarchiveRefused(keyedArchive(null), "$null")
        assertUnarchiveRefused(keyedArchive(null, root: 0), "not an array")
    }

    func testUnarchiveOfAnotherCollectionThrows() {
        // An NSSet or NSDictionary keeps elements or values under NS.objects too.
        for name in ["NSSet", "NSDictionary", "NSOrderedSet", "NSMutableSet"] {
            let objects: [PropertyListValue] = [
                .string("$null"), .dictionary(["NS.objects": .array([.uid(3)]), "$class": .uid(2)]),
                .dictionary(["$classname": .string(name), "$classes": .array([.string(name), .string("NSObject")])]), .integer(4),
            ]
            assertUnarchiveRefused(keyedArchive(objects), "not an NSArray", name)
        }
        let classless: [PropertyListValue] = [.string("$null"), .dictionary(["NS.objects": .array([.uid(2)])]), .integer(4)]
        assertUnarchiveRefused(keyedArchive(classless), "no class")
        let mutable: [PropertyListValue] = [
            .string("$null"), .dictionary(["NS.objects": .array([.uid(3)]), "$class": .uid(2)]),
            .dictionary([
                "$classname": .string("NSMutableArray"),
                "$classes": .array([.string("NSMutableArray"), .string("NSArray"), .string("NSObject")]),
            ]),
            .integer(4),
        ]
        XCTAssertEqual(try TransformableArray.unarchive(keyedArchive(mutable)), [.integer(4)])
    }

    /// Strings that Swift calls equal (canonically equivalent) but whose bytes differ were
    /// shared as one object by the writer, so the second came back as the first.
    func testCanonicallyEquivalentStringsRoundTripExactly() throws {
        let elements: [PropertyListValue] = [
            .string("e\u{301}"), .string("\u{E9}"), .string("x"), .string("x"), .string("\u{212B}"), .string("\u{C5}"),
        ]
        let decoded = try TransformableArray.unarchive(TransformableArray.archive(elements))
        XCTAssertEqual(decoded.count, elements.count)
        for (found, expected) in zip(decoded, elements) {
            guard case .string(let text) = found, case .string(let wanted) = expected else { return XCTFail("not strings: \(decoded)") }
            XCTAssertEqual(Array(text.utf8), Array(wanted.utf8))
        }
    }

    /// JSON arrays are read strictly: JSONDecoder turned 1.00000000000000001 into 1 and accepted `[1,]`.
    func testJSONArraysAreReadStrictly() throws {
        for text in [
            "[1.00000000000000001]", "[1.0]", "[1e2]", "[1,]", "[01]", "[9223372036854775808]", "[-9223372036854775809]",
            #"["\ud800"]"#, #"["\udc00\ud800"]"#, #"["a\x"]"#, "[\"a\u{1}\"]", "[1,\"a\"]", "[true]", "[null]", "[1] 2", "[[1]]", "{}", "",
        ] {
            assertUnarchiveRefused(Data(text.utf8), "neither a keyed archive nor a JSON array", text)
        }
        assertUnarchiveRefused(Data([0x5B, 0x22, 0xC3, 0x28, 0x22, 0x5D]), "invalid UTF-8")
        XCTAssertEqual(
            try TransformableArray.unarchive(Data(" [ -9223372036854775808 , 0, 9007199254740993 ] ".utf8)),
            [.integer(Int64.min), .integer(0), .integer(9_007_199_254_740_993)])
        XCTAssertEqual(
            try TransformableArray.unarchive(Data(#"["a\u0000b","\ud83d\ude00","\u00e9\/"]"#.utf8)),
            [.string("a\u{0}b"), .string("😀"), .string("é/")])
        XCTAssertEqual(try TransformableArray.unarchive(Data("[]".utf8)), [])
    }
}
