import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import CoreDataStore
@testable import QuestBakArchive
@testable import QuestBakKit

/// A model archive's record lines are read by position when their keys are exactly those an
/// export writes, in its order, and by name otherwise (`ModelMemberEncoding.LineDecoder`). Both
/// ways must give the same row, or the same error, for every line: lines export wrote from real
/// stores, and each of them taken apart (keys dropped, doubled, swapped, added; values of every
/// other type; composites with a key missing or left over).
final class ModelLineDecoderTests: XCTestCase {
    /// A plan with plain fields, a composite holding a nested composite, a to-one and two to-manys.
    let nested = ModelLayout.EntityPlan(
        name: "Recipe", number: 5, table: "ZRECIPE",
        fields: [
            .init(path: ["cost"], column: "ZCOST", kind: .decimal),
            .init(path: ["createdAt"], column: "ZCREATEDAT", kind: .date),
            .init(path: ["profile", "intensity"], column: "ZINTENSITY", kind: .integer16),
            .init(path: ["profile", "name"], column: "ZNAME1", kind: .string),
            .init(path: ["profile", "origin", "country"], column: "ZCOUNTRY", kind: .string),
            .init(path: ["rating"], column: "ZRATING", kind: .double),
        ],
        toOne: [.init(name: "author", column: "ZAUTHOR")],
        toMany: [
            .init(
                name: "steps", destination: "Step", storage: .destinationColumn(table: "ZSTEP", column: "ZRECIPE1")),
            .init(
                name: "tags", destination: "Tag",
                storage: .joinTable(table: "Z_5TAGS", sourceColumn: "Z_5RECIPES", destinationColumn: "Z_7TAGS")),
        ])

    /// A composite whose elements are not next to each other: export would write it twice (a line
    /// the parser refuses), so its lines are read by name only.
    let split = ModelLayout.EntityPlan(
        name: "Split", number: 2, table: "ZSPLIT",
        fields: [
            .init(path: ["box", "a"], column: "ZA", kind: .integer),
            .init(path: ["plain"], column: "ZPLAIN", kind: .boolean),
            .init(path: ["box", "b"], column: "ZB", kind: .integer),
        ],
        toOne: [], toMany: [])

    func testThePositionsAreTheExportsKeysInItsOrder() {
        let decoder = ModelMemberEncoding.LineDecoder(plan: nested, carriesOpt: true)
        XCTAssertEqual(
            decoder.keysInOrder?.names, ["_pk", "_opt", "cost", "createdAt", "profile", "rating", "author", "steps", "tags"])
        XCTAssertEqual(
            ModelMemberEncoding.LineDecoder(plan: nested, carriesOpt: false).keysInOrder?.names.first(where: { $0 == "_opt" }), nil)
        XCTAssertNil(ModelMemberEncoding.LineDecoder(plan: split, carriesOpt: true).keysInOrder, "a composite written twice")
        XCTAssertNil(ModelMemberEncoding.LineDecoder(plan: nested, carriesOpt: true, byPosition: false).keysInOrder)
    }

    func testHandWrittenLinesAndTheirVariantsReadTheSameBothWays() throws {
        let lines = [
            #"{"_pk":3,"_opt":2,"cost":"12.5","createdAt":"2026-01-01T00:00:00.123456Z","profile":{"intensity":7,"name":"x","origin":{"country":"Italy"}},"rating":4.75,"author":null,"steps":[1,2],"tags":[1,4]}"#,
            #"{"_pk":4,"_opt":null,"cost":null,"createdAt":null,"profile":{"intensity":null,"name":null,"origin":{"country":null}},"rating":null,"author":9,"steps":[],"tags":[]}"#,
        ]
        var compared = 0
        for line in lines {
            XCTAssertNoThrow(try ModelMemberEncoding.LineDecoder(plan: nested, carriesOpt: true).decode(Data(line.utf8)), line)
            XCTAssertTrue(Self.readsByPosition(line, plan: nested), line)
            compared += try assertReadTheSameBothWays(line, plan: nested)
        }
        compared += try assertReadTheSameBothWays(#"{"_pk":1,"_opt":1,"box":{"a":1,"b":2},"plain":true}"#, plan: split)
        XCTAssertGreaterThan(compared, 300)
    }

    /// Every entity of every store shape that has a model: its lines as export writes them, and
    /// each taken apart, read the same both ways.
    func testLinesOfEveryStoreShapeAndTheirVariantsReadTheSameBothWays() throws {
        var entities = 0
        var compared = 0
        var composites = 0
        var readByPosition = 0
        for shape in StoreShapes.all {
            let directory = try TemporaryTestDirectory("questbak-line-decoder")
            let folder = directory.path("source")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = try shape.make(folder)
            let lines: [(ModelLayout.EntityPlan, [Data])]
            do {
                lines = try StoreSnapshot(storeAt: store).read { db in
                    guard let cache = try StoreReader.modelCache(db) else { return [] }
                    let layout = try ModelLayout(db, model: try ModelCacheDecoder.decode(cache))
                    guard layout.problems.isEmpty else { return [] }
                    return try layout.entities.map { plan in
                        var lines: [Data] = []
                        _ = try ModelMemberEncoding.encode(db, plan: plan, schemaVersion: "1", path: store.path) { line in
                            // The header is no record; a few records of each entity are enough.
                            if lines.count < 6 { lines.append(Data(line.dropLast())) }
                        }
                        return (plan, Array(lines.dropFirst()))
                    }
                }
            } catch {
                continue  // a store its model does not describe is backed up by its tables
            }
            for (plan, records) in lines where !records.isEmpty {
                entities += 1
                if plan.fields.contains(where: { $0.path.count > 1 }) { composites += 1 }
                for line in records.prefix(2) {
                    let text = String(decoding: line, as: UTF8.self)
                    XCTAssertNoThrow(
                        try ModelMemberEncoding.LineDecoder(plan: plan, carriesOpt: true).decode(line), "\(shape.name): \(text)")
                    // The lines as written are read by position: else this compares one way with itself.
                    if Self.readsByPosition(text, plan: plan) { readByPosition += 1 }
                    compared += try assertReadTheSameBothWays(text, plan: plan, shape: shape.name)
                }
            }
        }
        // A comparison of no lines, or of none with composites, proves nothing.
        XCTAssertGreaterThan(entities, 10)
        XCTAssertGreaterThan(composites, 0)
        XCTAssertGreaterThan(compared, 1000)
        XCTAssertGreaterThan(readByPosition, 20)
    }

    /// Whether `line` is read by position (`parseValues` takes it), not left to the reading by name.
    private static func readsByPosition(_ line: String, plan: ModelLayout.EntityPlan) -> Bool {
        guard let keys = ModelMemberEncoding.LineDecoder(plan: plan, carriesOpt: true).keysInOrder else { return false }
        return Array(line.utf8).withUnsafeBufferPointer { JSONLine.parseValues($0, keys: keys) } != nil
    }

    /// Generated lines: lines of every kind a field takes, each edited one to three bytes at a
    /// time by a seeded generator, read both ways.
    func testGeneratedEditsOfLinesReadTheSameBothWays() throws {
        let plan = ModelLayout.EntityPlan(
            name: "Every", number: 3, table: "ZEVERY",
            fields: [
                .init(path: ["amount"], column: "ZAMOUNT", kind: .integer16),
                .init(path: ["big"], column: "ZBIG", kind: .integer),
                .init(path: ["born"], column: "ZBORN", kind: .date),
                .init(path: ["cost"], column: "ZCOST", kind: .decimal),
                .init(path: ["flag"], column: "ZFLAG", kind: .boolean),
                .init(path: ["id"], column: "ZID", kind: .uuid),
                .init(path: ["link"], column: "ZLINK", kind: .uri),
                .init(path: ["name"], column: "ZNAME", kind: .string),
                .init(path: ["photo"], column: "ZPHOTO", kind: .binary),
                .init(path: ["ratio"], column: "ZRATIO", kind: .float),
                .init(path: ["score"], column: "ZSCORE", kind: .double),
            ],
            toOne: [.init(name: "owner", column: "ZOWNER")],
            toMany: [.init(name: "parts", destination: "Part", storage: .destinationColumn(table: "ZPART", column: "Z3PARTS"))])
        let lines = [
            #"{"_pk":1,"_opt":1,"amount":-32768,"big":9223372036854775807,"born":"1815-12-10T00:00:00Z","cost":"12.5","flag":true,"id":"D1243318-E0D6-494D-926C-5273098E1EF4","link":"https://example.com/a?b=1","name":"Stir with ice","photo":"AQID","ratio":0.10000000149011612,"score":-2.5e-07,"owner":2,"parts":[1,2,30]}"#,
            #"{"_pk":2,"_opt":null,"amount":null,"big":null,"born":null,"cost":null,"flag":null,"id":null,"link":null,"name":null,"photo":null,"ratio":null,"score":null,"owner":null,"parts":[]}"#,
            #"{"_pk":3,"_opt":7,"amount":1,"big":1,"born":"2026-01-01T00:00:00.5Z","cost":"100","flag":false,"id":"00000000-0000-0000-0000-000000000000","link":{"textBytes":"/w=="},"name":"Strain\tover ice\n \u00e9 \"x\"","photo":"","ratio":"Infinity","score":"-Infinity","owner":1,"parts":[5]}"#,
        ]
        let byPosition = ModelMemberEncoding.LineDecoder(plan: plan, carriesOpt: true)
        let byName = ModelMemberEncoding.LineDecoder(plan: plan, carriesOpt: true, byPosition: false)
        var compared = 0
        var rows = 0
        for (number, line) in lines.enumerated() {
            XCTAssertTrue(Self.readsByPosition(line, plan: plan), line)
            compared += try assertReadTheSameBothWays(line, plan: plan)
            for variant in LineVariants.mutations(of: line, count: 1500, seed: UInt64(number + 1) &* 0x9E37_79B9) {
                let outcome = Self.outcome(byPosition, Data(variant))
                XCTAssertEqual(outcome, Self.outcome(byName, Data(variant)), String(decoding: variant, as: UTF8.self))
                if outcome.hasPrefix("row") { rows += 1 }
                compared += 1
            }
        }
        // Edits that leave a line readable (a digit for a digit, a letter of a text) are among them.
        XCTAssertGreaterThan(rows, 200)
        XCTAssertGreaterThan(compared, 4500)
    }

    /// `MemberValue.storedValue` gives what `ValueCoding.encode(ValueJSON.value(…))` gives, or the
    /// same mismatch, for a string read as where it lies (ASCII texts of every kind's forms) and
    /// for any other value, with and without the exact spelling.
    func testAStoredValueFromTheBytesIsTheParsedValuesStoredValue() throws {
        let kinds: [AttributeKind] = [
            .integer, .integer16, .integer32, .decimal, .double, .float, .boolean, .date, .string, .uri, .uuid, .binary,
            .transformable, .integerArray, .stringArray,
        ]
        let texts =
            [
                "", "x", "12.5", "1e-07", "Infinity", "-Infinity", "NaN", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00.500Z",
                "2026-01-01T00:00:00.5Z", "1815-12-10T00:00:00Z", "2026-13-01T00:00:00Z", "0001-01-01T00:00:00Z",
                "d1243318-e0d6-494d-926c-5273098e1ef4", "D1243318-E0D6-494D-926C-5273098E1EF4", "AQID", "AQI=", "AQJ=", " ~!", "\u{7F}",
                // UUIDs as questbak writes them (read from their bytes), and spellings one step off.
                "00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "D1243318-e0d6-494D-926C-5273098E1EF4",
                "{D1243318-E0D6-494D-926C-5273098E1EF4}", "D1243318E0D6494D926C5273098E1EF4", "D1243318-E0D6-494D-926C-5273098E1EF",
                "D1243318-E0D6-494D-926C-5273098E1EF4A", "D1243318-E0D6-494D-926C5-273098E1EF4", "D1243318+E0D6-494D-926C-5273098E1EF4",
                "G1243318-E0D6-494D-926C-5273098E1EF4", "D1243318-E0D6-494D-926C-5273098E1EF ", " D1243318-E0D6-494D-926C-5273098E1EF",
                "D1243318-E0D6-494D-926C-5273098E1EFG", "D1243318-E0D6-494D-926C-5273098E1EF@", "D1243318-E0D6-494D-926C-5273098E1EF`",
                "D1243318-E0D6-494D-926C-5273098E1EF:", "D1243318-E0D6-494D-926C-5273098E1EF/",
            ]
            + (0..<64).flatMap { _ in
                let uuid = UUID().uuidString
                return [uuid, uuid.lowercased()]
            }
        var compared = 0
        for text in texts {
            let line = Array("\"\(text)\"".utf8)
            line.withUnsafeBufferPointer { bytes in
                let member = JSONLine.MemberValue.asciiText(1..<(bytes.count - 1))
                XCTAssertEqual(member.json(in: bytes), .string(text))
                for kind in kinds {
                    for exactSpelling in [true, false] {
                        let parsed = Self.stored {
                            ValueCoding.encode(try ValueJSON.value(.string(text), as: kind, exactSpelling: exactSpelling))
                        }
                        let fromBytes = Self.stored { try member.storedValue(in: bytes, as: kind, exactSpelling: exactSpelling) }
                        XCTAssertEqual(fromBytes, parsed, "\(text) as \(kind) exact \(exactSpelling)")
                        compared += 1
                    }
                }
            }
        }
        let noLine = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
        for json in LineVariants.otherValues + [.number(-0.0), .integer(.max), .string("é")] {
            for kind in kinds {
                let parsed = Self.stored { ValueCoding.encode(try ValueJSON.value(json, as: kind, exactSpelling: true)) }
                let member = Self.stored { try JSONLine.MemberValue.value(json).storedValue(in: noLine, as: kind, exactSpelling: true) }
                XCTAssertEqual(member, parsed, "\(json) as \(kind)")
                compared += 1
            }
        }
        XCTAssertGreaterThan(compared, 800)
    }

    /// A UUID's text read from its bytes (`ValueJSON.uuid(text:)`, which both readers take) gives
    /// what Foundation's reading gave before it: `UUID(uuidString:)`, then, for the exact
    /// spelling, its `uuidString` compared with the text; the same value, or a mismatch.
    func testAUUIDReadFromItsBytesIsFoundationsReading() {
        var texts = [
            "00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "D1243318-E0D6-494D-926C-5273098E1EF4",
            "D1243318-e0d6-494D-926C-5273098E1EF4", "{D1243318-E0D6-494D-926C-5273098E1EF4}", "D1243318E0D6494D926C5273098E1EF4",
            "D1243318-E0D6-494D-926C5-273098E1EF4", "D1243318-E0D6-494D-926C-5273098E1EF4\u{0}", "", "é",
        ]
        for _ in 0..<200 {
            let uuid = UUID().uuidString
            texts += [uuid, uuid.lowercased()]
            // One byte changed to each of the bytes next to the digits' and the dash's ranges.
            var bytes = Array(uuid.utf8)
            bytes[Int.random(in: 0..<36)] = Array("/:@G`g,.-0".utf8).randomElement()!
            texts.append(String(decoding: bytes, as: UTF8.self))
        }
        var read = 0
        for text in texts {
            for exactSpelling in [true, false] {
                var expected = "mismatch"
                if let uuid = UUID(uuidString: text), !exactSpelling || uuid.uuidString == text {
                    expected = "value \(ValueCoding.encode(.uuid(uuid)))"
                }
                var copy = text
                let found = copy.withUTF8 { bytes in
                    Self.stored { ValueCoding.encode(try ValueJSON.uuid(text: bytes, exactSpelling: exactSpelling)) }
                }
                XCTAssertEqual(found.hasPrefix("mismatch") ? "mismatch" : found, expected, "\(text) exact \(exactSpelling)")
                if expected != "mismatch" { read += 1 }
            }
        }
        XCTAssertGreaterThan(read, 400)
    }

    /// Base64 text read from its bytes (`Base64Text.canonicalBytes`, which both readers take for
    /// a binary or transformable value) gives what Foundation's reading gave before it for text
    /// spelled as questbak writes it (`Data(base64Encoded:)`, whose bytes encode to the same
    /// text), and nil for every other text (read then by Foundation, as before).
    func testBase64ReadFromItsBytesIsFoundationsReadingOfTheCanonicalSpelling() {
        var generator = SystemRandomNumberGenerator()
        var texts = [
            "", "=", "==", "===", "====", "A===", "AA==", "AQ==", "AR==", "AQI=", "AQJ=", "AQID", "AQ=D", "A=ID", " AQID", "AQID ",
            "AQ\nID", "AQ-_", "AQ+/", "AQID\u{0}", "AQIDAQ", "AQIDA", "AQIDAQ=", "AQIDAQ==", "AQIDAQ===", "é", "AQIDé=",
        ]
        for length in 0..<48 {
            for _ in 0..<6 {
                let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
                let text = bytes.base64EncodedString()
                texts.append(text)
                guard !text.isEmpty else { continue }
                // One byte replaced by a neighbour of the alphabet's ranges, or by padding, a dash, a space.
                var edited = Array(text.utf8)
                edited[Int.random(in: 0..<edited.count, using: &generator)] = Array("@[`{/:,.-_= AZaz09+".utf8).randomElement(
                    using: &generator)!
                texts.append(String(decoding: edited, as: UTF8.self))
                // The last digit before the padding one step up (an unused bit set, where there are any).
                var raised = Array(text.utf8)
                if let last = raised.lastIndex(where: { $0 != UInt8(ascii: "=") }), raised[last] != UInt8(ascii: "z") {
                    raised[last] += 1
                    texts.append(String(decoding: raised, as: UTF8.self))
                }
                texts.append(String(text.dropLast()))
                texts.append(text + "=")
                texts.append(text.lowercased())
            }
        }
        var read = 0
        for text in texts {
            var foundations: Data?
            if let bytes = Data(base64Encoded: text), bytes.base64EncodedString() == text { foundations = bytes }
            var copy = text
            let found = copy.withUTF8 { Base64Text.canonicalBytes($0) }
            XCTAssertEqual(found, foundations, "\(text.debugDescription)")
            if found != nil { read += 1 }
        }
        XCTAssertGreaterThan(read, 250)
        XCTAssertGreaterThan(texts.count - read, 500)
    }

    /// A composite written as export writes it (its elements' keys in their order) is read by
    /// position, its nested composite too (`JSONLine.MemberValue.object`); written in another
    /// order, or spaced, it is read as any JSON object; every one reads the same both ways.
    func testACompositeInTheExportsOrderIsReadByPosition() throws {
        let decoder = ModelMemberEncoding.LineDecoder(plan: nested, carriesOpt: true)
        let keys = try XCTUnwrap(decoder.keysInOrder)
        let profile = try XCTUnwrap(keys.names.firstIndex(of: "profile"))
        let head = #"{"_pk":3,"_opt":2,"cost":"12.5","createdAt":"2026-01-01T00:00:00.123456Z","profile":"#
        let tail = #","rating":4.75,"author":null,"steps":[1,2],"tags":[1,4]}"#
        let composites: [(text: String, inOrder: Bool)] = [
            (#"{"intensity":7,"name":"x","origin":{"country":"Italy"}}"#, true),
            (#"{ "intensity" : 7 , "name":"Caffè","origin":{ "country":"It\u0061ly" } }"#, true),
            (#"{"name":"x","intensity":7,"origin":{"country":"Italy"}}"#, false),
            (#"{"intensity":7,"origin":{"country":"Italy"},"name":"x"}"#, false),
            (#"{"intensity":7,"name":"x","origin":{"country":"Italy","extra":1}}"#, true),
            (#"{"intensity":7,"name":"x","origin":{"extra":1,"country":"Italy"}}"#, true),
            (#"{"intensity":7,"name":"x","origin":"Italy"}"#, true),
            (#"{"intensity":7,"name":"x"}"#, false),
            (#"{"intensity":7,"name":"x","origin":{"country":"Italy"},"extra":1}"#, false),
        ]
        var objects = 0
        for (composite, inOrder) in composites {
            let line = head + composite + tail
            let members = try XCTUnwrap(Array(line.utf8).withUnsafeBufferPointer { JSONLine.parseValues($0, keys: keys) }, line)
            if case .object = members[profile] {
                objects += 1
                XCTAssertTrue(inOrder, line)
            } else {
                XCTAssertFalse(inOrder, line)
            }
            try assertReadTheSameBothWays(line, plan: nested)
        }
        XCTAssertEqual(objects, 5)
        // The nested composite read in order too, as its level's keys.
        let line = head + composites[0].text + tail
        let members = try XCTUnwrap(Array(line.utf8).withUnsafeBufferPointer { JSONLine.parseValues($0, keys: keys) })
        guard case .object(let outer, let values) = members[profile], case .object(let inner, _) = values[2] else {
            return XCTFail("profile and its origin are read by position")
        }
        XCTAssertEqual(outer.names, ["intensity", "name", "origin"])
        XCTAssertEqual(inner.names, ["country"])
    }

    /// A stored value as text, or the mismatch's.
    private static func stored(_ make: () throws -> StoredValue) -> String {
        do {
            return "value \(try make())"
        } catch let mismatch as ValueJSON.TypeMismatch {
            return "mismatch \(mismatch.expected) / \(mismatch.found)"
        } catch {
            return "other \(error)"
        }
    }

    /// Reads `line` and each of its variants both ways and compares; returns how many were read.
    @discardableResult
    private func assertReadTheSameBothWays(_ line: String, plan: ModelLayout.EntityPlan, shape: String = "") throws -> Int {
        let byPosition = ModelMemberEncoding.LineDecoder(plan: plan, carriesOpt: true)
        let byName = ModelMemberEncoding.LineDecoder(plan: plan, carriesOpt: true, byPosition: false)
        let members = try JSONLine.parseObject(Data(line.utf8))
        var variants = [line] + LineVariants.of(members).map(JSONLineText.text) + LineVariants.spellings(of: line)
        variants.append(line.replacingOccurrences(of: "\"_opt\"", with: "\"_opt2\""))
        for variant in variants {
            XCTAssertEqual(
                Self.outcome(byPosition, Data(variant.utf8)), Self.outcome(byName, Data(variant.utf8)), "\(shape) \(plan.name): \(variant)")
        }
        // Invalid UTF-8 in a key and in a value, and a NUL byte: bytes no `String` literal spells.
        for (from, to) in [("\"_pk\"", [0x22, 0x5F, 0xFF, 0x22]), (":\"", [0x3A, 0x22, 0xC3]), (",", [0x2C, 0x00])] as [(String, [UInt8])] {
            guard let range = line.range(of: from) else { continue }
            let variant = Data(line[..<range.lowerBound].utf8) + Data(to) + Data(line[range.upperBound...].utf8)
            XCTAssertEqual(Self.outcome(byPosition, variant), Self.outcome(byName, variant), "\(shape) \(plan.name): \(line)")
        }
        return variants.count
    }

    /// A row as text, or the error's reason.
    private static func outcome(_ decoder: ModelMemberEncoding.LineDecoder, _ line: Data) -> String {
        do {
            let row = try decoder.decode(line)
            return "row \(row.primaryKey) \(String(describing: row.opt)) \(row.values) \(row.links)"
        } catch let error as ModelMemberEncoding.LineError {
            return "error \(error.reason)"
        } catch {
            return "other \(error)"
        }
    }
}
