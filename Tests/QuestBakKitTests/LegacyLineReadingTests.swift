import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import CoreDataStore
@testable import QuestBakArchive
@testable import QuestBakKit

/// A TimeQuest archive's record lines (format 1 or 2) are read by position when their keys are
/// exactly those an export writes, in its order, and by name otherwise (`LegacyArchive.decode`).
/// Both ways must give the same row, or the same error, for every line: lines export wrote from
/// every TimeQuest fixture, and each of them taken apart (keys dropped, renamed, swapped, added;
/// values of every other type), read as format 2 and 1, as the archive's version and as 2.0.0, and
/// as a newer schema's (`--allow-newer`).
final class LegacyLineReadingTests: XCTestCase {
    /// One way of reading an archive: its format version, the version written, `--allow-newer`.
    struct Reading {
        var formatVersion: Int
        var targetVersion: String?
        var newerSchema = false
    }

    func testLinesOfEveryTimeQuestFixtureAndTheirVariantsReadTheSameBothWays() throws {
        var compared = 0
        var readByPosition = 0
        for fixture in ["v1-typical", "v1-edge-cases", "v1-anomalies", "v1-wal", "v2-typical"] {
            let directory = try TemporaryTestDirectory("questbak-legacy-lines")
            let archive = directory.path("\(fixture).qbak")
            _ = try Exporter.export(
                storeAt: try directory.copyFixture(fixture), to: .file(archive, overwrite: false),
                options: .timeQuest(createdAt: 1_700_000_000))
            var manifest: ArchiveManifest?
            var lines: [(member: ArchiveManifest.EntityMember, line: String)] = []
            var perMember: [String: Int] = [:]
            _ = try ArchiveReader(path: archive.path).read(
                onManifest: { manifest = $0 },
                onRecordLine: { member, lineNumber, line in
                    // The header is no record; a few records of each entity are enough.
                    guard lineNumber > 1, perMember[member.name, default: 0] < 3 else { return }
                    perMember[member.name, default: 0] += 1
                    lines.append((member, String(decoding: line, as: UTF8.self)))
                })
            let exported = try XCTUnwrap(manifest)
            var readings = [Reading(formatVersion: 2), Reading(formatVersion: 1)]
            if exported.effectiveSchemaVersion == "1.0.0" {
                readings += [Reading(formatVersion: 2, targetVersion: "2.0.0"), Reading(formatVersion: 1, targetVersion: "2.0.0")]
            } else {
                readings.append(Reading(formatVersion: 2, newerSchema: true))
            }
            for reading in readings {
                var manifest = exported
                manifest.formatVersion = reading.formatVersion
                var options = Importer.Options.timeQuest
                options.targetVersion = reading.targetVersion
                if reading.newerSchema {
                    manifest.schemaVersion = "9.0.0"
                    options.allowNewer = true
                }
                let legacy = try LegacyArchive(manifest: manifest, archive: archive.path, options: options)
                let layout = try DatabaseQueue().write { db in
                    for statement in try legacy.statements(archive: archive.path) { try db.execute(sql: statement) }
                    try legacy.createEntityKeys(db)
                    return try legacy.layout(db, archive: archive.path)
                }
                let byPosition = legacy.lineColumns(layout)
                let byName = legacy.lineColumns(layout, byPosition: false)
                let name = "\(fixture) format \(reading.formatVersion) as \(reading.targetVersion ?? manifest.effectiveSchemaVersion)"
                for (member, exportedLine) in lines {
                    var members = try JSONLine.parseObject(Data(exportedLine.utf8))
                    // Format 1 has no `_opt`: its lines as such an export wrote them.
                    if reading.formatVersion == 1 { members.removeAll { $0.key == RecordJSON.optKey } }
                    let line = JSONLineText.text(members)
                    // The lines as written are read by position: else this compares one way with itself.
                    if let keys = byPosition.entities[member.name]?.keysInOrder,
                        Array(line.utf8).withUnsafeBufferPointer({ JSONLine.parseValues($0, keys: keys) }) != nil
                    {
                        readByPosition += 1
                    }
                    XCTAssertNil(byName.entities[member.name]?.keysInOrder)
                    let variants = [line] + LineVariants.of(members).map(JSONLineText.text) + Self.spellings(of: line)
                    for variant in variants {
                        XCTAssertEqual(
                            Self.outcome(legacy, variant, member, byPosition), Self.outcome(legacy, variant, member, byName),
                            "\(name) \(member.name): \(variant)")
                    }
                    compared += variants.count
                }
            }
        }
        // A comparison of few lines, or of none read by position, proves nothing.
        XCTAssertGreaterThan(readByPosition, 200)
        XCTAssertGreaterThan(compared, 20_000)
    }

    /// Lines that `parseValues` must leave to the reading by name, or refuse as `parseObject`
    /// does: keys spelled with escapes, white space around the tokens, a key repeated, text
    /// after the object, a line cut short.
    func testParseValuesReadsOnlyTheKeysAsGivenAndTheObjectParseObjectReads() throws {
        let keys = try XCTUnwrap(JSONLine.KeysInOrder(["_pk", "a", "b"]))
        func values(_ line: String) -> [JSONValue]? {
            Array(line.utf8).withUnsafeBufferPointer { bytes in JSONLine.parseValues(bytes, keys: keys)?.map { $0.json(in: bytes) } }
        }
        // A string of ASCII without escapes is read as where it lies; any other as a value.
        let escaped = Array(#"{"_pk":1,"a":"x y\u0041","b":"\u007f~é"}"#.utf8)
        XCTAssertEqual(
            escaped.withUnsafeBufferPointer { JSONLine.parseValues($0, keys: keys) },
            [.value(.integer(1)), .value(.string("x yA")), .value(.string("\u{7F}~é"))])
        let plain = Array(#"{"_pk":"1","a":"","b":"~ z"}"#.utf8)
        XCTAssertEqual(
            plain.withUnsafeBufferPointer { JSONLine.parseValues($0, keys: keys) },
            [.asciiText(8..<9), .asciiText(16..<16), .asciiText(23..<26)])
        XCTAssertNil(Array(#"{"_pk":1,"a":"x,"b":2}"#.utf8).withUnsafeBufferPointer { JSONLine.parseValues($0, keys: keys) })
        XCTAssertEqual(
            values(#"{"_pk":1,"a":"x","b":[1,{"c":null}]}"#), [.integer(1), .string("x"), .array([.integer(1), .object(["c": .null])])])
        XCTAssertEqual(values(" {\"_pk\" : 1 ,\t\"a\":2,\n\"b\":3 } "), [.integer(1), .integer(2), .integer(3)])
        for other in [
            #"{"_pk":1,"a":2}"#, #"{"_pk":1,"a":2,"b":3,"c":4}"#, #"{"_pk":1,"b":3,"a":2}"#, #"{"_pk":1,"\u0061":2,"b":3}"#,
            #"{"_pk":1,"a":2,"b":3,"b":3}"#, #"{"_pk":1,"a":2,"b":3}x"#, #"{"_pk":1,"a":2,"b":3"#, #"{"_pk":1,"a":2,"b":-0}"#,
            #"{"_pk":1,"a":2,"bb":3}"#, #"{"_pk":1,"a":2,"b"}"#, #"{"_pk":1,"a":2,"b":3,}"#, #"["_pk",1]"#, "{}", "",
        ] {
            XCTAssertNil(values(other), other)
        }
        XCTAssertNil(JSONLine.KeysInOrder(["a", "a"]), "a key twice")
        XCTAssertNil(JSONLine.KeysInOrder(["a", "b\"c"]), "a key that needs an escape")
        XCTAssertEqual(JSONLine.KeysInOrder([])?.names, [])
        XCTAssertEqual(Array("{}".utf8).withUnsafeBufferPointer { JSONLine.parseValues($0, keys: JSONLine.KeysInOrder([])!) }, [])
    }

    /// The row, or the error, that `decode` gives with `columns`.
    private static func outcome(
        _ legacy: LegacyArchive, _ line: String, _ member: ArchiveManifest.EntityMember, _ columns: LegacyArchive.LineColumns
    ) -> String {
        do {
            let decoded = try legacy.decode(line: Data(line.utf8), member: member, lineNumber: 2, archive: "a.qbak", columns: columns)
            let row = decoded.row.map { "\($0.primaryKey) \(String(describing: $0.opt)) \($0.values)" } ?? "none"
            return "\(decoded.entity ?? "-") \(decoded.plan?.name ?? "-") \(row) \(decoded.unstorable)"
        } catch {
            return "error \(error)"
        }
    }

    /// The same line spelled otherwise, or broken: a key with an escape, white space, text
    /// after the object, cut short.
    private static func spellings(of line: String) -> [String] {
        [
            line.replacingOccurrences(of: "\"_pk\"", with: #""\u005fpk""#),
            line.replacingOccurrences(of: ",\"", with: " , \""),
            " " + line + " ",
            line + "x",
            String(line.dropLast()),
            line.replacingOccurrences(of: ":", with: ": ", options: [], range: line.range(of: ":")),
        ]
    }
}
