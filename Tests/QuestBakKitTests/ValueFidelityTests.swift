import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// Hostile values inside well-formed stores and archives (issue: data fidelity). Each value is
/// either kept exactly, column by column and byte for byte, or refused with a typed error that
/// names where it is; nothing is cut, substituted or rounded, and nothing is quadratic.
final class ValueFidelityTests: XCTestCase {
    // MARK: Helpers

    /// Exports `store`, imports the archive into a new store and returns both stores' tables.
    @discardableResult
    func roundTrip(_ store: URL, in directory: TemporaryTestDirectory, validate: Bool = false) throws -> (archive: URL, restored: URL) {
        let archive = directory.path("backup-\(UUID().uuidString).qbak")
        _ = try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: .timeQuest(createdAt: 1_767_225_600))
        let restored = directory.path("restored-\(UUID().uuidString).store")
        var options = Importer.Options.timeQuest
        options.validate = validate
        let work = try TemporaryTestDirectory()
        _ = try Importer.run(archive: archive.path, into: restored, options: options, workDirectory: work.url)
        return (archive, restored)
    }

    func importing(_ archive: URL, into target: URL?, options: Importer.Options) throws -> Importer.Result {
        let work = try TemporaryTestDirectory()
        return try Importer.run(archive: archive.path, into: target, options: options, workDirectory: work.url)
    }

    /// A V2 store holding one routine with `values` over a plain one, and `edit` SQL applied after.
    func routineStore(_ values: [String: Value], in directory: TemporaryTestDirectory, sql: [String] = []) throws -> URL {
        var dataset = Dataset(schema: TimeQuestSchemas.v2)
        var routine: [String: Value] = [
            "name": .string("morning"), "displayName": .string("Morning"), "activeDays": .integerArray([1, 2]), "isActive": .boolean(true),
            "createdAt": .date(700_000_000.25), "updatedAt": .date(700_000_001), "cloudID": .string("8F2B6E9A-3C41-4D7E-9A0B-1C2D3E4F5A6B"),
        ]
        routine.merge(values) { $1 }
        dataset.append("Routine", 1, routine)
        let store = directory.path("source-\(UUID().uuidString).store")
        try dataset.write(to: store, uuid: "6D1B2C3A-0000-4000-8000-000000000001")
        if !sql.isEmpty {
            let queue = try DatabaseQueue(path: store.path)
            try queue.write { db in for statement in sql { try db.execute(sql: statement) } }
            try queue.close()
        }
        return store
    }

    func exportedLine(_ store: URL, entity: String = "Routine", in directory: TemporaryTestDirectory) throws -> String {
        let archive = directory.path("line-\(UUID().uuidString).qbak")
        _ = try Exporter.export(
            storeAt: store, to: .file(archive, overwrite: false), options: .timeQuest(createdAt: 1_767_225_600, compression: .none))
        let listing = try Questbak.runTool(["tar", "-xOf", archive.path, "entities/\(entity).jsonl"])
        return String(listing.standardOutput.split(separator: "\n")[1])
    }

    // MARK: 4, 5: text

    func testTextWithNULIsKeptWhole() throws {
        let directory = try TemporaryTestDirectory()
        let store = try routineStore(["displayName": .string("Brush\u{0}teeth")], in: directory)
        XCTAssertTrue(try exportedLine(store, in: directory).contains(#""displayName":"Brush\u0000teeth""#))
        let (_, restored) = try roundTrip(store, in: directory)
        try assertSameTables(store, restored, "NUL")
    }

    func testTextThatIsNotUTF8IsKeptAsItsBytes() throws {
        let directory = try TemporaryTestDirectory()
        let store = try routineStore([:], in: directory, sql: ["UPDATE ZROUTINE SET ZDISPLAYNAME = CAST(X'4361FE80C328' AS TEXT)"])
        XCTAssertTrue(try exportedLine(store, in: directory).contains(#""displayName":{"textBytes":"Q2H+gMMo"}"#))
        let (_, restored) = try roundTrip(store, in: directory)
        try assertSameTables(store, restored, "invalid UTF-8")
    }

    func testNamesThatDifferAfterANULOrInInvalidBytesAreNotDuplicates() throws {
        let directory = try TemporaryTestDirectory()
        var dataset = Dataset(schema: TimeQuestSchemas.v1)
        for (pk, name) in [(1, "Brush\u{0}teeth"), (2, "Brush\u{0}hair")] {
            dataset.append(
                "Routine", Int64(pk),
                [
                    "name": .string(name), "displayName": .string("x"), "activeDays": .integerArray([]), "isActive": .boolean(true),
                    "createdAt": .date(1), "updatedAt": .date(1),
                ])
        }
        dataset.append(
            "Routine", 3,
            [
                "name": .textBytes(Data([0x42, 0xFF])), "displayName": .string("x"), "activeDays": .integerArray([]),
                "isActive": .boolean(true),
                "createdAt": .date(1), "updatedAt": .date(1),
            ])
        dataset.append(
            "Routine", 4,
            [
                "name": .textBytes(Data([0x42, 0xFE])), "displayName": .string("x"), "activeDays": .integerArray([]),
                "isActive": .boolean(true),
                "createdAt": .date(1), "updatedAt": .date(1),
            ])
        let store = directory.path("nul.store")
        try dataset.write(to: store, uuid: "6D1B2C3A-0000-4000-8000-000000000002")
        let (_, restored) = try roundTrip(store, in: directory)
        try assertSameTables(store, restored, "four distinct names")
    }

    func testAnArchiveStringWithAnEscapedNULRestoresWhole() throws {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: "1.0.0")
        builder.members = [.init("Routine", records: [RecordLines.routine(1, ["name": "Brush\u{0}teeth"])])]
        let archive = directory.path("nul.qbak")
        try builder.write(to: archive)
        let restored = directory.path("restored.store")
        _ = try importing(archive, into: restored, options: .timeQuest)
        let queue = try DatabaseQueue(path: restored.path)
        defer { try? queue.close() }
        let stored = try queue.read { try ExactSQL.fetchAll($0, sql: "SELECT ZNAME FROM ZROUTINE") }
        XCTAssertEqual(stored, [[.text(Data("Brush\u{0}teeth".utf8))]])
    }

    // MARK: 6: integers in date columns

    func testIntegerDatesBeyondADoublesPrecisionStayExact() throws {
        let directory = try TemporaryTestDirectory()
        for number in ["9007199254740993", "9223372036854775807", "-9223372036854775808", "2251799813685249"] {
            let store = try routineStore([:], in: directory, sql: ["UPDATE ZROUTINE SET ZUPDATEDAT = \(number)"])
            XCTAssertTrue(try exportedLine(store, in: directory).contains(#""updatedAt":\#(number)"#), number)
            let (_, restored) = try roundTrip(store, in: directory)
            try assertSameTables(store, restored, number)
        }
    }

    func testAnArchiveIntegerBeyondADoubleForADoublePropertyIsRefused() throws {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: "1.0.0")
        builder.fillMissingKeys = false
        builder.members = [
            .init(
                "TaskEstimation",
                records: [RecordLines.estimation(1, session: nil).replacingOccurrences(of: "60.5", with: "9007199254740993")])
        ]
        let archive = directory.path("big.qbak")
        try builder.write(to: archive)
        XCTAssertThrowsError(try importing(archive, into: nil, options: .timeQuest)) { error in
            guard case ArchiveError.invalidLine(_, _, 2, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("estimatedSeconds must be a number a Double holds exactly"), reason)
        }
    }

    func testAnIntegerInAFloatColumnBeyondADoubleIsRefusedByName() throws {
        let directory = try TemporaryTestDirectory()
        var dataset = Dataset(schema: TimeQuestSchemas.v1)
        dataset.append(
            "TaskEstimation", 1,
            [
                "taskDisplayName": .string("t"), "estimatedSeconds": .double(1), "actualSeconds": .double(1),
                "differenceSeconds": .double(0),
                "accuracyPercent": .double(100), "ratingRawValue": .string("spot_on"), "orderIndex": .integer(0), "recordedAt": .date(5),
            ])
        let store = directory.path("float.store")
        try dataset.write(to: store, uuid: "6D1B2C3A-0000-4000-8000-000000000003")
        // A FLOAT column keeps REAL; only a table declared otherwise holds an INTEGER there.
        try editSchema(
            of: store,
            "UPDATE sqlite_master SET sql = replace(sql, 'ZESTIMATEDSECONDS FLOAT', 'ZESTIMATEDSECONDS') WHERE name = 'ZTASKESTIMATION'")
        let queue2 = try DatabaseQueue(path: store.path)
        try queue2.write { try $0.execute(sql: "UPDATE ZTASKESTIMATION SET ZESTIMATEDSECONDS = 9007199254740993") }
        try queue2.close()
        let archive = directory.path("float.qbak")
        XCTAssertThrowsError(try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: .timeQuest(createdAt: 0))) {
            error in
            let text = (error as? LocalizedError)?.errorDescription ?? "\(error)"
            XCTAssertTrue(text.contains("TaskEstimation Z_PK 1") || text.contains("ZESTIMATEDSECONDS"), text)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: archive.path))
    }

    // MARK: 7: whatever export writes, import restores

    func testKeysAtOrBelowZeroRestore() throws {
        let directory = try TemporaryTestDirectory()
        var dataset = Dataset(schema: TimeQuestSchemas.v1)
        for pk in [-5, 0, 3] as [Int64] {
            dataset.append(
                "Routine", pk,
                [
                    "name": .string("r\(pk)"), "displayName": .string("x"), "activeDays": .integerArray([]), "isActive": .boolean(true),
                    "createdAt": .date(1), "updatedAt": .date(1),
                ])
        }
        dataset.append(
            "RoutineTask", 1, ["name": .string("t"), "displayName": .string("t"), "orderIndex": .integer(0), "routine": .integer(-5)])
        dataset.append(
            "RoutineTask", 2, ["name": .string("u"), "displayName": .string("u"), "orderIndex": .integer(1), "routine": .integer(0)])
        let store = directory.path("keys.store")
        try dataset.write(to: store, uuid: "6D1B2C3A-0000-4000-8000-000000000004")
        let (_, restored) = try roundTrip(store, in: directory)
        try assertSameTables(store, restored, "keys ≤ 0")
    }

    func testToOneKeysOfZeroAndMinusOneThatPointNowhereAreOrphans() throws {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: "1.0.0")
        builder.members = [
            .init("Routine", records: [RecordLines.routine(1)]),
            .init(
                "RoutineTask",
                records: [RecordLines.task(1, routine: 0), RecordLines.task(2, routine: -1), RecordLines.task(3, routine: 999)]),
        ]
        let archive = directory.path("orphans.qbak")
        try builder.write(to: archive)
        var options = Importer.Options.timeQuest
        options.validate = true
        let result = try importing(archive, into: directory.path("r.store"), options: options)
        XCTAssertEqual(result.counts["repair.orphan"], 3)
    }

    func testARecordLongerThanTheLineLimitIsRefusedByExportNamingIt() throws {
        let directory = try TemporaryTestDirectory()
        // Control characters are escaped six times longer: 12 MB of them is a 72 MB line.
        let store = try routineStore(["displayName": .string(String(repeating: "\u{1}", count: 12 << 20))], in: directory)
        let archive = directory.path("long.qbak")
        XCTAssertThrowsError(try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: .timeQuest(createdAt: 0))) {
            error in
            guard case StoreError.recordTooLarge(_, "Routine", 1, let bytes, ArchiveManifest.maximumLineBytes) = error else {
                return XCTFail("\(error)")
            }
            XCTAssertGreaterThan(bytes, 72 << 20)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: archive.path))
    }

    func testARecordOfTwentyMegabytesRoundTrips() throws {
        let directory = try TemporaryTestDirectory()
        let store = try routineStore(["displayName": .string(String(repeating: "é", count: 10 << 20))], in: directory)
        let (_, restored) = try roundTrip(store, in: directory)
        try assertSameTables(store, restored, "20 MB name")
    }

    // MARK: 8: one notion of equality in dedup

    func testNFCAndNFDNamesAreTwoRoutinesWhateverSortsBetweenThem() throws {
        for names in [["Caf\u{E9}", "Cafe\u{301}"], ["Caf\u{E9}", "Cafe\u{301}", "Cafg"]] {
            let directory = try TemporaryTestDirectory()
            var builder = ArchiveBuilder(schemaVersion: "1.0.0")
            builder.members = [
                .init(
                    "Routine",
                    records: names.enumerated().map { index, name in
                        RecordLines.routine(index + 1, ["name": name, "createdAt": "2025-01-01T08:00:00Z"])
                    })
            ]
            let archive = directory.path("cafe.qbak")
            try builder.write(to: archive)
            var options = Importer.Options.timeQuest
            options.validate = true
            let result = try importing(archive, into: directory.path("r.store"), options: options)
            XCTAssertNil(result.counts["repair.dedup"], "\(names)")
            XCTAssertEqual(result.entities.first { $0.name == "Routine" }?.written, names.count)
        }
    }

    // MARK: 3: linear time

    func testALineWithManyUnknownKeysIsRefusedInLinearTime() throws {
        var line = #"{"_pk":1"#
        for index in 0..<160_000 { line += #","k\#(index)":0"# }
        line += "}"
        let start = Date()
        let members = try JSONLine.parseObject(Data(line.utf8))
        XCTAssertEqual(members.count, 160_001)
        // Not a timing assertion of the product: a quadratic check takes minutes here (about one
        // on an idle machine); the bound is loose for a loaded CI machine.
        XCTAssertLessThan(Date().timeIntervalSince(start), 45)
    }

    func testDuplicateKeysAreComparedAsBytes() throws {
        XCTAssertThrowsError(try JSONLine.parseObject(Data(#"{"a":1,"a":2}"#.utf8)))
        XCTAssertEqual(try JSONLine.parseObject(Data("{\"Caf\u{E9}\":1,\"Cafe\u{301}\":2}".utf8)).count, 2)
    }

    func testAGroupOfFortyThousandSharingOneNaturalKeyIsLinear() throws {
        var group = DuplicateGroup(key: [])
        // Distinct cloudIDs: every record is a keeper.
        for index in 0..<40_000 {
            XCTAssertNil(group.keeper(for: Int64(index), cloudID: String(format: "00000000-0000-4000-8000-%012d", index)))
        }
        // A record without a cloudID joins the first keeper; one with a known cloudID joins its owner.
        XCTAssertEqual(group.keeper(for: 40_000, cloudID: nil)?.keeper, 0)
        XCTAssertEqual(group.keeper(for: 40_001, cloudID: String(format: "00000000-0000-4000-8000-%012d", 39_999))?.keeper, 39_999)
    }

    func testDuplicateGroupKeepsTheDocumentedRule() {
        var group = DuplicateGroup(key: [])
        let a = "00000000-0000-4000-8000-00000000000A"
        let b = "00000000-0000-4000-8000-00000000000B"
        XCTAssertNil(group.keeper(for: 1, cloudID: nil))  // keeper without an ID
        XCTAssertEqual(group.keeper(for: 2, cloudID: a).map { [$0.keeper, $0.carried == a ? 1 : 0] }, [1, 1])  // carries a to 1
        XCTAssertNil(group.keeper(for: 3, cloudID: b))  // 1 stands for a now: b is a keeper
        XCTAssertEqual(group.keeper(for: 4, cloudID: b)?.keeper, 3)
        XCTAssertEqual(group.keeper(for: 5, cloudID: a)?.keeper, 1)
        XCTAssertEqual(group.keeper(for: 6, cloudID: nil)?.keeper, 1)
    }

    // MARK: 9: dates

    func testValidDatesBefore2001Parse() {
        for (text, seconds) in [
            ("1999-05-01T10:00:00.000Z", -52_754_400.0), ("1999-05-01T10:00:00.5000Z", -52_754_399.5),
            ("1999-05-01T10:00:00.1234567890123456789Z", -52_754_399.876_543_211), ("2001-01-01T00:00:00.000Z", 0),
            ("1970-01-01T00:00:00.0000000000000000000001Z", -978_307_200),
        ] {
            XCTAssertEqual(DateText.secondsSinceReferenceDate(iso8601: text), seconds, text)
        }
        XCTAssertEqual(DateText.secondsSinceReferenceDate(iso8601: "2026-05-01T10:00:00.1234567890123456789Z"), 799_322_400.123_456_789)
    }

    // MARK: 10: nothing left out silently

    func testAnArchiveThatLeavesOutAnEntityIsRefused() throws {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: "2.0.0")
        builder.members = [.init("Routine", records: [])]
        builder.omittedEntities = ["PlayerProfile"]
        let archive = directory.path("no-profile.qbak")
        try builder.write(to: archive)
        XCTAssertThrowsError(try Importer.run(archive: archive.path, into: nil, options: .timeQuest, workDirectory: directory.url)) {
            error in
            XCTAssertTrue("\(error)".contains("PlayerProfile"), "\(error)")
        }
    }

    func testARecordMissingAKeyIsRefusedByName() throws {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: "1.0.0")
        builder.fillMissingKeys = false
        builder.members = [.init("Routine", records: [RecordLines.routine(1, ["displayName": nil])])]
        let archive = directory.path("missing.qbak")
        try builder.write(to: archive)
        XCTAssertThrowsError(try Importer.run(archive: archive.path, into: nil, options: .timeQuest, workDirectory: directory.url)) {
            error in
            guard case ArchiveError.invalidLine(_, "entities/Routine.jsonl", 2, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("displayName is missing"), reason)
        }
    }

    // MARK: 11: Z_OPT kept, the rest reported

    func testZOPTIsKeptAndZMAXRaisesAreReported() throws {
        let directory = try TemporaryTestDirectory()
        let store = try routineStore([:], in: directory, sql: ["UPDATE ZROUTINE SET Z_OPT = 7"])
        let (_, restored) = try roundTrip(store, in: directory)
        try assertSameTables(store, restored, "Z_OPT")

        var builder = ArchiveBuilder(schemaVersion: "1.0.0")
        var member = ArchiveBuilder.Member("Routine", records: [RecordLines.routine(5)])
        member.maximumPrimaryKey = 2
        builder.members = [member]
        let archive = directory.path("zmax.qbak")
        try builder.write(to: archive)
        let result = try importing(archive, into: directory.path("zmax.store"), options: .timeQuest)
        XCTAssertEqual(result.counts["bookkeeping.z-max"], 1)
    }

    func testAVersion1ArchiveWithoutOptRestoresWithOne() throws {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: "1.0.0")
        builder.members = [.init("Routine", records: [RecordLines.routine(1)])]
        let archive = directory.path("v1.qbak")
        try builder.write(to: archive)
        let restored = directory.path("v1.store")
        _ = try importing(archive, into: restored, options: .timeQuest)
        let queue = try DatabaseQueue(path: restored.path)
        defer { try? queue.close() }
        XCTAssertEqual(try queue.read { try Int.fetchOne($0, sql: "SELECT Z_OPT FROM ZROUTINE") }, 1)
    }

    func testRecomputedMetadataIsNoted() throws {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: "1.0.0")
        builder.members = [.init("Routine", records: [RecordLines.routine(1)])]
        builder.carriesMetadata = false
        let archive = directory.path("meta.qbak")
        try builder.write(to: archive)
        let result = try importing(archive, into: directory.path("m.store"), options: .timeQuest)
        XCTAssertEqual(result.notes, ["metadata computed for schema 1.0.0: the archive has no metadata.plist"])
        XCTAssertEqual(result.counts["bookkeeping.metadata"], 1, "a change to the store is an entry of the report")
    }

    func testANullStoreUUIDStaysNull() throws {
        let directory = try TemporaryTestDirectory()
        let store = try routineStore([:], in: directory, sql: ["UPDATE Z_METADATA SET Z_UUID = NULL"])
        let (_, restored) = try roundTrip(store, in: directory)
        try assertSameTables(store, restored, "Z_UUID NULL")
    }

    // MARK: 12 and 2: versions and creation times

    func testAVersionWithATrailingSpaceIsUnknownNotNewer() throws {
        XCTAssertFalse(VersionIdentifier.isNewer("1.0.0 ", than: "2.0.0"))
        XCTAssertFalse(VersionIdentifier.isNewer("1.0", than: "1.0.0"))
        XCTAssertTrue(VersionIdentifier.isNewer("1.10.0", than: "1.9.0"))
        XCTAssertTrue(VersionIdentifier.isNewer("3", than: "2.0.0"))
        let directory = try TemporaryTestDirectory()
        let archive = directory.path("space.qbak")
        try ArchiveBuilder(schemaVersion: "1.0.0 ").write(to: archive)
        XCTAssertThrowsError(try Importer.run(archive: archive.path, into: nil, options: .timeQuest, workDirectory: directory.url)) {
            error in
            guard case ArchiveError.unknownSchemaVersion(_, "1.0.0 ", _) = error else { return XCTFail("\(error)") }
        }
        let store = try routineStore([:], in: directory)
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { db in
            let plist = try XCTUnwrap(Data.fetchOne(db, sql: "SELECT Z_PLIST FROM Z_METADATA"))
            guard case .dictionary(var entries) = try BinaryPropertyList.decode(plist) else {
                return XCTFail("metadata is not a dictionary")
            }
            entries["NSStoreModelVersionIdentifiers"] = .array([.string("2.0.0 ")])
            try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [BinaryPropertyList.encode(.dictionary(entries))])
        }
        try queue.close()
        let snapshot = try StoreSnapshot(storeAt: store)
        XCTAssertThrowsError(
            try snapshot.read { try StoreReader.detectVersion($0, path: store.path, candidates: TimeQuestSchemas.versions) }
        ) {
            error in
            guard case StoreError.unknownVersion = error else { return XCTFail("\(error)") }
        }
    }

    func testCreationTimesOutsideTheManifestsRangeAreRefusedBeforeAnyWork() throws {
        let directory = try TemporaryTestDirectory()
        for seconds in [Int64.min, Int64.max, 253_402_300_800, -62_135_596_801] {
            let archive = directory.path("t.qbak")
            XCTAssertThrowsError(
                try Exporter.export(
                    storeAt: directory.path("does-not-exist.store"), to: .file(archive, overwrite: false),
                    options: .timeQuest(createdAt: seconds))
            ) { error in
                XCTAssertEqual(error as? ArchiveError, .invalidCreationTime(unixSeconds: seconds))
            }
        }
        XCTAssertEqual(Exporter.createdAtText(unixSeconds: 253_402_300_799), "9999-12-31T23:59:59Z")
        XCTAssertEqual(Exporter.createdAtText(unixSeconds: -62_135_596_800), "0001-01-01T00:00:00Z")
    }

    // MARK: Found by the structure-aware fuzzer

    /// A member named " /entities/x.jsonl" printed as "member  /entities/x.jsonl" hid its space.
    func testANameWithLeadingOrTrailingSpaceIsQuotedSoTheSpaceShows() {
        XCTAssertEqual(UntrustedText.display(" /entities/PlayerProfile.jsonl"), #"" /entities/PlayerProfile.jsonl""#)
        XCTAssertEqual(UntrustedText.display("name "), #""name ""#)
        XCTAssertEqual(UntrustedText.display("entities/Routine.jsonl"), "entities/Routine.jsonl")
        XCTAssertEqual(UntrustedText.display(" \u{1B}x"), #"" \u{1B}x""#)
    }

    func testASchemaKindWithControlCharactersIsNotPrintedRaw() throws {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: "1.0.0")
        builder.editManifest = { manifest in
            var source = manifest["source"] as! [String: Any]
            source["schema"] = "timequest\u{1B}[31m\u{0}"
            manifest["source"] = source
        }
        let archive = directory.path("escape.qbak")
        try builder.write(to: archive)
        XCTAssertThrowsError(try importing(archive, into: nil, options: .timeQuest)) { error in
            let text = (error as? LocalizedError)?.errorDescription ?? ""
            XCTAssertFalse(text.unicodeScalars.contains { $0.value < 0x20 }, text)
            XCTAssertTrue(text.contains("\\u{1B}"), text)
        }
    }

    func testAStoreUUIDWithANULIsWrittenWhole() throws {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: "1.0.0")
        builder.editManifest = { manifest in
            var source = manifest["source"] as! [String: Any]
            source["storeUUID"] = "AB\u{0}CD"
            manifest["source"] = source
        }
        let archive = directory.path("uuid.qbak")
        try builder.write(to: archive)
        let restored = directory.path("uuid.store")
        _ = try importing(archive, into: restored, options: .timeQuest)
        let queue = try DatabaseQueue(path: restored.path)
        defer { try? queue.close() }
        XCTAssertEqual(
            try queue.read { try ExactSQL.fetchAll($0, sql: "SELECT Z_UUID FROM Z_METADATA") }, [[.text(Data("AB\u{0}CD".utf8))]])
    }

    func testAStoreUUIDThatDisagreesWithTheMetadataIsKeptAndSaid() throws {
        let directory = try TemporaryTestDirectory()
        let store = try routineStore([:], in: directory, sql: ["UPDATE Z_METADATA SET Z_UUID = 'SOMETHING-ELSE'"])
        let archive = directory.path("disagree.qbak")
        _ = try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: .timeQuest(createdAt: 0))
        let restored = directory.path("disagree.store")
        let result = try importing(archive, into: restored, options: .timeQuest)
        XCTAssertEqual(result.notes.count, 1)
        XCTAssertTrue(result.notes.first?.contains("Z_UUID \"SOMETHING-ELSE\" and the metadata's NSStoreUUID") == true, "\(result.notes)")
        try assertSameTables(store, restored, "kept as it was")
    }

    func testMetadataNamingOtherVersionsIsRecomputedSoTheRestoredStoreExportsAgain() throws {
        let directory = try TemporaryTestDirectory()
        let store = try routineStore([:], in: directory)
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { db in
            let plist = try XCTUnwrap(Data.fetchOne(db, sql: "SELECT Z_PLIST FROM Z_METADATA"))
            guard case .dictionary(var entries) = try BinaryPropertyList.decode(plist) else { return XCTFail("not a dictionary") }
            entries["NSStoreModelVersionIdentifiers"] = .array([.string("2.0.0"), .string("1.0.0")])
            try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [BinaryPropertyList.encode(.dictionary(entries))])
        }
        try queue.close()
        let archive = directory.path("ids.qbak")
        _ = try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: .timeQuest(createdAt: 0))
        let restored = directory.path("ids.store")
        let result = try importing(archive, into: restored, options: .timeQuest)
        XCTAssertEqual(
            result.notes, ["metadata computed for schema 2.0.0: the archive's metadata names version identifiers other than 2.0.0"])
        XCTAssertNoThrow(
            try Exporter.export(
                storeAt: restored, to: .file(directory.path("again.qbak"), overwrite: false), options: .timeQuest(createdAt: 0)))
    }

    func testNegativeZeroIsRefusedNotTurnedIntoZero() throws {
        let directory = try TemporaryTestDirectory()
        for spelling in ["-0.0", "-1e-400", "1e-400", "-0"] {
            var builder = ArchiveBuilder(schemaVersion: "1.0.0")
            builder.fillMissingKeys = false  // every key is there, and re-serializing would rewrite the number
            builder.members = [
                .init("TaskEstimation", records: [RecordLines.estimation(1, session: nil).replacingOccurrences(of: "60.5", with: spelling)])
            ]
            let archive = directory.path("zero.qbak")
            try? FileManager.default.removeItem(at: archive)
            try builder.write(to: archive)
            XCTAssertThrowsError(try importing(archive, into: nil, options: .timeQuest)) { error in
                guard case ArchiveError.invalidLine(_, _, 2, let reason) = error else { return XCTFail("\(error)") }
                // −0.0 is no number SQLite keeps; ±1e-400 would be 0 and -0 is no integer: each by its key.
                XCTAssertTrue(
                    reason.contains("estimatedSeconds must be a number SQLite can keep") || reason.hasPrefix("estimatedSeconds is "), reason
                )
            }
        }
    }

    func testAHeaderWithAKeyGivenTwiceIsRefused() throws {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: "1.0.0")
        var member = ArchiveBuilder.Member("Routine", records: [RecordLines.routine(1)])
        member.header = #"{"schemaVersion":"1.0.0","entity":"Routine","count":1,"count":7}"#
        builder.members = [member]
        let archive = directory.path("header.qbak")
        try builder.write(to: archive)
        XCTAssertThrowsError(try importing(archive, into: nil, options: .timeQuest)) { error in
            guard case ArchiveError.invalidLine(_, "entities/Routine.jsonl", 1, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("appears twice"), reason)
        }
    }

    func testOptInAVersion1ArchiveIsAnUnknownProperty() throws {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: "1.0.0")
        builder.members = [.init("Routine", records: [RecordLines.routine(1, ["_opt": "garbage"])])]
        let archive = directory.path("opt.qbak")
        try builder.write(to: archive)
        XCTAssertThrowsError(try importing(archive, into: nil, options: .timeQuest)) { error in
            guard case ArchiveError.invalidLine(_, _, 2, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("unknown property _opt"), reason)
        }
    }

    // MARK: The property: whatever questbak exports, it restores exactly

    /// Hostile values a column of each kind can hold, as a careful attacker would pick them.
    static func hostileValues(_ kind: AttributeKind) -> [Value] {
        switch kind {
        case .integer, .integer16, .integer32: return [.integer(0), .integer(-1), .integer(.max), .integer(.min), .integer(1 << 53 + 1)]
        case .decimal:
            return [
                .decimal("0"), .decimal("100"), .decimal("-9223372036854775808"), .decimal("12.5"), .decimal("1e-07"), .decimal("1e+20"),
            ]
        case .boolean: return [.boolean(true), .boolean(false)]
        case .double, .float:
            return [
                .double(-0.0), .double(.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude), .double(.infinity), .double(-.infinity),
                .double(0.1 + 0.2), .double(1e-300),
            ]
        case .date:
            return [
                .date(-0.0), .date(-63_113_904_000), .date(252_423_993_599.999), .date(1e300), .date(-1e-300), .date(.infinity),
                .date(0.123456789012345678),
                .date(-978_307_200.5), .integerDate(.max), .integerDate(.min), .integerDate(1 << 53 + 1), .date(Double(1 << 52)),
            ]
        case .string, .uri:
            return [
                .string(""), .string("\u{0}"), .string("a\u{0}b\u{0}"), .string("\u{1}\u{1F}\u{7F}\"\\"),
                .string("e\u{301} \u{E9} \u{202E}rtl\u{200F} 👩‍👩‍👧"),
                .string("\u{FFFF}\u{10FFFF}"), .textBytes(Data([0xFF])), .textBytes(Data([0xC3, 0x28, 0x00, 0xED, 0xA0, 0x80])),
                .string(String(repeating: "x", count: 100_000)),
            ]
        case .uuid: return [.uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))]
        case .binary, .transformable, .objectID: return [.binary(Data()), .binary(Data([0, 0xFF, 0]))]
        case .composite: return []
        case .integerArray: return [.integerArray([]), .integerArray([.min, .max, 0])]
        case .stringArray: return [.stringArray([]), .stringArray(["\u{0}", "é"])]
        }
    }

    func testEveryGeneratedHostileStoreRestoresByteForByte() throws {
        for seed in 1...6 as ClosedRange<UInt64> {
            var random = SeededGenerator(seed: seed)
            let schema = seed % 2 == 0 ? TimeQuestSchemas.v2 : TimeQuestSchemas.v1
            var dataset = Dataset(schema: schema)
            var keys: [String: [Int64]] = [:]
            for entity in schema.entities {
                let count = schema.identity(of: entity.name).singletonCloudID != nil ? 1 : Int.random(in: 1...6, using: &random)
                // Keys as a store may hold them: gaps, zero and negative ones included.
                var used: Set<Int64> = []
                while used.count < count { used.insert([-3, 0, 1, 2, 5, 1_000, Int64.max - 1].randomElement(using: &random)!) }
                keys[entity.name] = used.sorted()
            }
            for entity in schema.entities {
                for (index, primaryKey) in (keys[entity.name] ?? []).enumerated() {
                    var values: [String: Value] = [:]
                    for attribute in entity.attributes {
                        if attribute.name == "cloudID" {
                            values["cloudID"] = .string(schema.identity(of: entity.name).singletonCloudID ?? random.uuidString())
                        } else if schema.identity(of: entity.name).naturalKey.contains(attribute.name) {
                            // Natural keys stay distinct (duplicates would need repairs) but hostile.
                            let pool = Self.hostileValues(attribute.kind)
                            switch pool[index % pool.count] {
                            case .string(let text): values[attribute.name] = .string(text + "#\(index)")
                            case .textBytes(let bytes): values[attribute.name] = .textBytes(bytes + Data("#\(index)".utf8))
                            default:
                                values[attribute.name] =
                                    attribute.kind == .date ? .date(Double(index) * 1_000.5 - 3e9) : .integer(Int64(index))
                            }
                        } else {
                            values[attribute.name] = Self.hostileValues(attribute.kind).randomElement(using: &random)!
                        }
                    }
                    for relationship in entity.toOneRelationships {
                        let parents = keys[relationship.destination] ?? []
                        values[relationship.name] = Bool.random(using: &random) ? .null : .integer(parents.randomElement(using: &random)!)
                    }
                    var record = EntityRecord(primaryKey: primaryKey, values: values)
                    record.opt = [1, 2, 0, -1, nil, .max].randomElement(using: &random)!
                    dataset.records[entity.name, default: []].append(record)
                }
            }
            let directory = try TemporaryTestDirectory()
            let store = directory.path("hostile-\(seed).store")
            try dataset.write(to: store, uuid: random.uuidString())
            let (archive, restored) = try roundTrip(store, in: directory)
            try assertSameTables(store, restored, "seed \(seed)")
            // And the archive of the restored store is the archive of the source, byte for byte.
            let again = directory.path("again.qbak")
            _ = try Exporter.export(storeAt: restored, to: .file(again, overwrite: false), options: .timeQuest(createdAt: 1_767_225_600))
            XCTAssertEqual(try Data(contentsOf: archive), try Data(contentsOf: again), "seed \(seed)")
        }
    }
}
