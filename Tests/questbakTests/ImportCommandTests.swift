import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures

final class ImportCommandTests: XCTestCase {
    // MARK: Helpers

    func report(_ result: CommandResult, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any], result.standardError, file: file, line: line)
    }

    /// The report's entries as text (strings bare, anything else as JSON), without the fields
    /// a test does not pin.
    func entries(_ report: [String: Any], dropping: Set<String> = []) -> [[String: String]] {
        (report["entries"] as? [[String: Any]] ?? []).map { entry in
            var cleaned: [String: String] = [:]
            for (key, value) in entry where !dropping.contains(key) {
                if let text = value as? String {
                    cleaned[key] = text
                } else if let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys]) {
                    cleaned[key] = String(decoding: data, as: UTF8.self)
                }
            }
            return cleaned
        }
    }

    /// Query results as text, NULL as "NULL": compared with plain string literals.
    func rows(_ store: URL, _ sql: String) throws -> [[String]] {
        var configuration = Configuration()
        configuration.readonly = true
        return try DatabaseQueue(path: store.path, configuration: configuration).read { db in
            try Row.fetchAll(db, sql: sql).map { row in
                row.databaseValues.map { value in
                    switch value.storage {
                    case .null: return "NULL"
                    case .int64(let number): return String(number)
                    case .double(let number): return String(number)
                    case .string(let text): return text
                    case .blob(let data): return data.base64EncodedString()
                    }
                }
            }
        }
    }

    func v1Archive(_ members: [ArchiveBuilder.Member], in directory: TemporaryTestDirectory, name: String = "crafted.qbak") throws -> URL {
        var builder = ArchiveBuilder(schemaVersion: "1.0.0")
        builder.members = members
        let url = directory.path(name)
        try builder.write(to: url)
        return url
    }

    // MARK: Repairs, one rule at a time, reports checked exactly

    func testOrphansAreKeptWithANilRelationship() throws {
        let directory = try TemporaryTestDirectory()
        let archive = try v1Archive(
            [
                .init("Routine", records: [RecordLines.routine(1)]),
                .init("RoutineTask", records: [RecordLines.task(1, routine: 1), RecordLines.task(2, routine: 7)]),
                .init("GameSession", records: [RecordLines.session(1, routine: 1)]),
                .init("TaskEstimation", records: [RecordLines.estimation(1, session: 4)]),
            ], in: directory)
        let store = directory.path("restored.store")
        let result = try Questbak.run(["import", archive.path, "--into", store.path, "--validate", "--json"])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(
            entries(try report(result)),
            [
                ["_pk": "2", "entity": "RoutineTask", "field": "routine", "kind": "repair", "old": "7", "new": "null", "rule": "orphan"],
                [
                    "_pk": "1", "entity": "TaskEstimation", "field": "session", "kind": "repair", "old": "4", "new": "null",
                    "rule": "orphan",
                ],
            ])
        XCTAssertEqual(try rows(store, "SELECT Z_PK, ZROUTINE FROM ZROUTINETASK ORDER BY Z_PK"), [["1", "1"], ["2", "NULL"]])
        XCTAssertEqual(try rows(store, "SELECT count(*) FROM ZTASKESTIMATION WHERE ZSESSION IS NULL"), [["1"]])
    }

    func testMissingValuesGetTheV2DefaultAndDatesTheArchiveTime() throws {
        let directory = try TemporaryTestDirectory()
        let archive = try v1Archive(
            [
                .init("Routine", records: [RecordLines.routine(1, ["name": nil, "isActive": NSNull()])]),
                .init(
                    "TaskEstimation",
                    records: [
                        RecordLines.estimation(1, session: nil, ["ratingRawValue": nil, "recordedAt": NSNull(), "estimatedSeconds": nil])
                    ]),
            ], in: directory)
        let store = directory.path("restored.store")
        let result = try Questbak.run(["import", archive.path, "--into", store.path, "--validate", "--json"])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(
            entries(try report(result)),
            [
                ["_pk": "1", "entity": "Routine", "field": "name", "kind": "repair", "old": "null", "new": "", "rule": "default"],
                ["_pk": "1", "entity": "Routine", "field": "isActive", "kind": "repair", "old": "null", "new": "true", "rule": "default"],
                [
                    "_pk": "1", "entity": "TaskEstimation", "field": "estimatedSeconds", "kind": "repair", "old": "null", "new": "0",
                    "rule": "default",
                ],
                [
                    "_pk": "1", "entity": "TaskEstimation", "field": "ratingRawValue", "kind": "repair", "old": "null", "new": "way_off",
                    "rule": "default",
                ],
                [
                    "_pk": "1", "entity": "TaskEstimation", "field": "recordedAt", "kind": "repair", "old": "null",
                    "new": "2026-01-01T00:00:00Z", "rule": "default",
                ],
            ])
        // --now decides what Date.now becomes.
        let withNow = try Questbak.run(["import", archive.path, "--validate", "--json", "--now", "2030-05-06T07:08:09Z"])
        XCTAssertEqual(withNow.status, 2)
        XCTAssertTrue(entries(try report(withNow)).contains { $0["field"] == "recordedAt" && $0["new"] == "2030-05-06T07:08:09Z" })
    }

    func testDuplicatesCollapseIntoTheLowestKeyAndChildrenFollow() throws {
        let directory = try TemporaryTestDirectory()
        // Session 11 is session 1 synced twice (the fixture's startedAt for pk 11 equals pk 1's);
        // each copy has estimations, and estimations 1 and 3 are also one estimation.
        let duplicateSessions = try v1Archive(
            [
                .init("Routine", records: [RecordLines.routine(1)]),
                .init(
                    "GameSession",
                    records: [
                        RecordLines.session(1, routine: 1), RecordLines.session(11, routine: 1, ["startedAt": "2025-03-02T07:00:00Z"]),
                    ]),
                .init(
                    "TaskEstimation",
                    records: [
                        RecordLines.estimation(1, session: 1), RecordLines.estimation(2, session: 11, ["taskDisplayName": "Other"]),
                        RecordLines.estimation(
                            3, session: 11, ["taskDisplayName": "Task 1", "recordedAt": "2025-03-01T07:01:00Z", "actualSeconds": 99.5]),
                    ]),
            ], in: directory, name: "dups.qbak")
        let store = directory.path("restored.store")
        let result = try Questbak.run(["import", duplicateSessions.path, "--into", store.path, "--validate", "--json"])
        XCTAssertEqual(result.status, 0, result.standardError)
        let found = entries(try report(result), dropping: ["old"])
        XCTAssertEqual(
            found,
            [
                ["_pk": "11", "entity": "GameSession", "kind": "repair", "new": "1", "rule": "dedup"],
                ["_pk": "2", "entity": "TaskEstimation", "field": "session", "kind": "repair", "new": "1", "rule": "repoint"],
                ["_pk": "3", "entity": "TaskEstimation", "field": "session", "kind": "repair", "new": "1", "rule": "repoint"],
                ["_pk": "3", "entity": "TaskEstimation", "kind": "repair", "new": "1", "rule": "dedup"],
            ])
        // The dropped duplicate is reported in full, so nothing it held is lost silently.
        let dropped = try XCTUnwrap((try report(result)["entries"] as? [[String: Any]])?.last?["old"] as? [String: Any])
        XCTAssertEqual(dropped["actualSeconds"] as? Double, 99.5)
        XCTAssertEqual(try rows(store, "SELECT Z_PK, ZSESSION FROM ZTASKESTIMATION ORDER BY Z_PK"), [["1", "1"], ["2", "1"]])
        XCTAssertEqual(try rows(store, "SELECT Z_PK FROM ZGAMESESSION"), [["1"]])
    }

    func testProfilesMergeIntoOne() throws {
        let directory = try TemporaryTestDirectory()
        let archive = try v1Archive(
            [
                .init(
                    "PlayerProfile",
                    records: [
                        RecordLines.profile(
                            3,
                            [
                                "totalXP": 100, "currentStreak": 8, "lastPlayedDate": "2025-03-01T07:00:00Z",
                                "createdAt": "2025-01-05T00:00:00Z",
                            ]),
                        RecordLines.profile(
                            5,
                            [
                                "totalXP": 900, "currentStreak": 2, "lastPlayedDate": "2025-04-01T07:00:00Z",
                                "createdAt": "2025-01-01T00:00:00Z", "soundEnabled": false,
                            ]),
                    ])
            ], in: directory)
        let store = directory.path("restored.store")
        let result = try Questbak.run(["import", archive.path, "--into", store.path, "--validate", "--json", "--to-version", "2.0.0"])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(
            entries(try report(result), dropping: ["old", "cloudID"]),
            [
                [
                    "_pk": "3", "entity": "PlayerProfile", "field": "createdAt", "kind": "repair", "new": "2025-01-01T00:00:00Z",
                    "rule": "merge",
                ],
                [
                    "_pk": "3", "entity": "PlayerProfile", "field": "lastPlayedDate", "kind": "repair", "new": "2025-04-01T07:00:00Z",
                    "rule": "merge",
                ],
                ["_pk": "3", "entity": "PlayerProfile", "field": "totalXP", "kind": "repair", "new": "900", "rule": "merge"],
                ["_pk": "5", "entity": "PlayerProfile", "kind": "repair", "new": "3", "rule": "dedup"],
                [
                    "_pk": "3", "entity": "PlayerProfile", "field": "cloudID", "kind": "migration", "new": "singleton-player-profile",
                    "rule": "cloudID",
                ],
                [
                    "_pk": "1", "entity": "Z_METADATA", "field": "Z_PLIST", "kind": "bookkeeping", "rule": "metadata",
                    "new": "metadata computed for schema 2.0.0: the store is written as schema 2.0.0, not 1.0.0",
                ],
            ])
        XCTAssertEqual(
            try rows(store, "SELECT Z_PK, ZTOTALXP, ZCURRENTSTREAK, ZSOUNDENABLED, ZCLOUDID FROM ZPLAYERPROFILE"),
            [["3", "900", "8", "1", "singleton-player-profile"]])
    }

    func testCloudIDsAreRegeneratedDeterministically() throws {
        let directory = try TemporaryTestDirectory()
        let good = "6F9619FF-8B86-4011-B42D-00C04FC964FF"
        var builder = ArchiveBuilder(schemaVersion: "2.0.0")
        builder.members = [
            .init(
                "Routine",
                records: [
                    RecordLines.routine(1, ["cloudID": good]),
                    RecordLines.routine(2, ["cloudID": good, "name": "other"]),  // same ID, another record: the migration bug
                    RecordLines.routine(3, ["cloudID": ""]),
                    RecordLines.routine(4, ["cloudID": "not-a-uuid"]),
                    RecordLines.routine(5, ["cloudID": nil]),
                ]),
            .init("PlayerProfile", records: [RecordLines.profile(1, ["cloudID": good])]),
        ]
        let archive = directory.path("v2.qbak")
        try builder.write(to: archive)
        let first = try Questbak.run(["import", archive.path, "--validate", "--json"])
        XCTAssertEqual(first.status, 2, first.standardError)
        let changes = entries(try report(first), dropping: ["cloudID"])
        XCTAssertEqual(
            changes.map { [$0["entity"], $0["_pk"], $0["old"], $0["kind"]] },
            [
                ["PlayerProfile", "1", good, "repair"],
                ["Routine", "2", good, "repair"], ["Routine", "3", "", "repair"], ["Routine", "4", "not-a-uuid", "repair"],
                ["Routine", "5", "null", "repair"],
            ])
        let generated = changes.dropFirst().compactMap { $0["new"] }
        XCTAssertEqual(Set(generated).count, 4)
        XCTAssertFalse(generated.contains(good))
        XCTAssertTrue(generated.allSatisfy { UUID(uuidString: $0) != nil && Array($0)[14] == "5" }, "UUIDv5: \(generated)")
        // The same backup restored twice (two devices) gives the same IDs; --random-ids does not.
        let second = try Questbak.run(["import", archive.path, "--validate", "--json"])
        XCTAssertEqual(entries(try report(second)), entries(try report(first)))
        let random = try Questbak.run(["import", archive.path, "--validate", "--json", "--random-ids"])
        XCTAssertNotEqual(Array(entries(try report(random)).compactMap { $0["new"] }.dropFirst()), generated)
    }

    /// Records with different well-formed cloudIDs are two records for CloudKit, whatever their
    /// natural key; a keeper without a cloudID takes the one of the duplicate it absorbs.
    func testDedupNeverJoinsTwoCloudIDs() throws {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: "2.0.0")
        let x = "6F9619FF-8B86-4011-B42D-00C04FC964FF"
        let y = "0E984725-C51C-4BF4-9960-E1C80E27ABA0"
        builder.members = [
            .init(
                "Routine",
                records: [
                    RecordLines.routine(1, ["cloudID": nil]), RecordLines.routine(2, ["cloudID": x]),
                    RecordLines.routine(3, ["cloudID": y]),
                ].map {
                    $0.replacingOccurrences(of: "\"name\":\"r2\"", with: "\"name\":\"r1\"").replacingOccurrences(
                        of: "\"name\":\"r3\"", with: "\"name\":\"r1\""
                    )
                    .replacingOccurrences(of: "2025-01-03T08:00:00Z", with: "2025-01-02T08:00:00Z").replacingOccurrences(
                        of: "2025-01-04T08:00:00Z", with: "2025-01-02T08:00:00Z")
                })
        ]
        let archive = directory.path("v2.qbak")
        try builder.write(to: archive)
        let store = directory.path("restored.store")
        let result = try Questbak.run(["import", archive.path, "--into", store.path, "--validate", "--json", "--keep-distinct-ids"])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(
            entries(try report(result), dropping: ["old"]).map { [$0["rule"], $0["_pk"], $0["field"], $0["new"]] },
            [
                ["dedup", "2", nil, "1"], ["merge", "1", "cloudID", x],
            ])
        XCTAssertEqual(try rows(store, "SELECT Z_PK, ZCLOUDID FROM ZROUTINE ORDER BY Z_PK"), [["1", x], ["3", y]])

        // By default the natural key is the identity: the copy under a fresh UUID is the same
        // routine, dropped and reported with its cloudID, so the app can delete it from CloudKit.
        let merged = directory.path("merged.store")
        let identity = try Questbak.run(["import", archive.path, "--into", merged.path, "--validate", "--json"])
        XCTAssertEqual(identity.status, 0, identity.standardError)
        XCTAssertEqual(
            entries(try report(identity), dropping: ["old"]).map { [$0["rule"], $0["_pk"], $0["cloudID"], $0["new"]] },
            [["dedup", "2", x, "1"], ["merge", "1", x, x], ["dedup", "3", y, "1"]])
        XCTAssertEqual(try rows(merged, "SELECT Z_PK, ZCLOUDID FROM ZROUTINE ORDER BY Z_PK"), [["1", x]])
    }

    // MARK: Verification failures

    func testEachVerificationFailureHasAClearMessageAndStatus() throws {
        let directory = try TemporaryTestDirectory()
        let routine = ArchiveBuilder.Member("Routine", records: [RecordLines.routine(1)])
        func attempt(_ name: String, _ edit: (inout ArchiveBuilder) -> Void, status: Int32, message: String, flags: [String] = []) throws {
            var builder = ArchiveBuilder(schemaVersion: "1.0.0")
            builder.members = [routine]
            edit(&builder)
            let archive = directory.path("\(name).qbak")
            try builder.write(to: archive)
            let store = directory.path("\(name).store")
            let result = try Questbak.run(["import", archive.path, "--into", store.path, "--validate"] + flags)
            XCTAssertEqual(result.status, status, "\(name): \(result.standardError)")
            XCTAssertTrue(result.standardError.contains(message), "\(name): \(result.standardError)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: store.path), name)
        }
        try attempt("checksum", { $0.damageMember = { _, data in data[data.count - 3] ^= 1 } }, status: 65, message: "has SHA-256")
        try attempt(
            "count",
            {
                $0.editManifest = { m in
                    var e = m["entities"] as! [[String: Any]]
                    e[0]["count"] = 2
                    m["entities"] = e
                }
            }, status: 65, message: "header has count 1, the manifest says 2")
        try attempt(
            "format-version", { $0.formatVersion = 4 }, status: 69,
            message: "archive format version 4 is newer than this questbak reads (up to 3); upgrade questbak")
        try attempt(
            "schema-version", { $0.schemaVersion = "3.0.0" }, status: 69,
            message:
                "schema version 3.0.0 is newer than this questbak knows (supported: 1.0.0, 2.0.0); a newer questbak may read it (upgrade questbak, or pass --allow-newer"
        )
        try attempt(
            "type", { $0.members = [.init("Routine", records: [RecordLines.routine(1, ["isActive": "yes"])])] }, status: 65,
            message: "entities/Routine.jsonl line 2: isActive must be a boolean, found a string")
        try attempt(
            "date", { $0.members = [.init("Routine", records: [RecordLines.routine(1, ["createdAt": "yesterday"])])] }, status: 65,
            message: "line 2: createdAt must be an ISO 8601 UTC date")
        try attempt(
            "unknown", { $0.members = [.init("Routine", records: [RecordLines.routine(1, ["colour": "red"])])] }, status: 65,
            message: "unknown property colour for Routine in schema 1.0.0")
        try attempt(
            "duplicate-pk", { $0.members = [.init("Routine", records: [RecordLines.routine(1), RecordLines.routine(1)])] }, status: 65,
            message: "line 3: _pk 1 appears more than once")
        try attempt(
            "not-json", { $0.members = [.init("Routine", records: ["{\"_pk\": 1,"])] }, status: 65, message: "line 2: not a JSON object")
        try attempt("generic", { $0.schemaKind = "generic" }, status: 65, message: "a generic archive must list the store's statements")
        try attempt(
            "unknown-entity", { $0.members = [.init("Spaceship", records: [])] }, status: 65,
            message: "entity Spaceship is not part of schema 1.0.0")
    }

    func testAMissingSchemaVersionReadsAsV1() throws {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: nil)
        builder.members = [.init("Routine", records: [RecordLines.routine(1)])]
        let archive = directory.path("old.qbak")
        try builder.write(to: archive)
        let store = directory.path("restored.store")
        let result = try Questbak.run(["import", archive.path, "--into", store.path, "--json"])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(try report(result)["sourceSchemaVersion"] as? String, "1.0.0")
    }

    func testANewerSchemaWithAllowNewerKeepsWhatItCannotStoreInTheReport() throws {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: "3.0.0")
        builder.members = [
            .init("Routine", records: [RecordLines.routine(1, ["cloudID": "6F9619FF-8B86-4011-B42D-00C04FC964FF", "colour": "red"])]),
            .init("Badge", records: [#"{"_pk":1,"title":"Early bird"}"#]),
        ]
        let archive = directory.path("v3.qbak")
        try builder.write(to: archive)
        let store = directory.path("restored.store")
        let result = try Questbak.run(["import", archive.path, "--into", store.path, "--allow-newer", "--json"])
        XCTAssertEqual(result.status, 0, result.standardError)
        let found = entries(try report(result), dropping: ["cloudID"])
        XCTAssertTrue(
            found.contains([
                "_pk": "1", "entity": "Routine", "field": "colour", "kind": "unstorable", "old": "red", "rule": "unknown-property",
            ]), "\(found)")
        XCTAssertTrue(
            found.contains([
                "_pk": "1", "entity": "Badge", "kind": "unstorable", "old": #"{"_pk":1,"title":"Early bird"}"#, "rule": "unknown-property",
            ]), "\(found)")
        XCTAssertEqual(try rows(store, "SELECT ZNAME FROM ZROUTINE"), [["r1"]])
    }

    // MARK: Modes

    func testWithoutValidateAnArchiveThatNeedsRepairsIsRefused() throws {
        let directory = try TemporaryTestDirectory()
        let archive = directory.path("a.qbak")
        XCTAssertEqual(try Questbak.run(["export", try directory.copyFixture("v1-anomalies").path, "-o", archive.path, "-q"]).status, 0)
        let store = directory.path("restored.store")
        let refused = try Questbak.run(["import", archive.path, "--into", store.path])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(
            refused.standardError.contains("needs repairs (3 repair.dedup, 4 repair.merge, 1 repair.orphan); nothing was written"),
            refused.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path))
        XCTAssertEqual(try Questbak.run(["import", archive.path, "--validate"]).status, 2)
        let clean = directory.path("clean.qbak")
        XCTAssertEqual(try Questbak.run(["export", try directory.copyFixture("v1-typical").path, "-o", clean.path, "-q"]).status, 0)
        let validated = try Questbak.run(["import", clean.path, "--validate"])
        XCTAssertEqual(validated.status, 0, validated.standardError)
        XCTAssertTrue(validated.standardOutput.contains("no repairs needed"), validated.standardOutput)
    }

    func testDryRunReportsWhatTheRealRunDoes() throws {
        let directory = try TemporaryTestDirectory()
        let archive = directory.path("a.qbak")
        XCTAssertEqual(try Questbak.run(["export", try directory.copyFixture("v1-anomalies").path, "-o", archive.path, "-q"]).status, 0)
        let store = directory.path("restored.store")
        let dry = try report(
            try Questbak.run(["import", archive.path, "--into", store.path, "--validate", "--to-version", "2.0.0", "--dry-run", "--json"]))
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path))
        let real = try report(
            try Questbak.run(["import", archive.path, "--into", store.path, "--validate", "--to-version", "2.0.0", "--json"]))
        XCTAssertEqual(dry["dryRun"] as? Bool, true)
        XCTAssertEqual(real["dryRun"] as? Bool, false)
        XCTAssertEqual(dry["counts"] as? [String: Int], real["counts"] as? [String: Int])
        XCTAssertEqual(
            dry["counts"] as? [String: Int],
            ["migration.cloudID": 29, "repair.dedup": 3, "repair.merge": 4, "repair.orphan": 1, "bookkeeping.metadata": 1])
        XCTAssertEqual(NSArray(array: dry["entities"] as! [Any]), NSArray(array: real["entities"] as! [Any]))
        XCTAssertEqual(entries(dry), entries(real))
    }

    func testExportImportExportGivesIdenticalEntityMembers() throws {
        for name in ["v1-typical", "v1-edge-cases", "v1-wal", "v2-typical"] {
            let directory = try TemporaryTestDirectory()
            let first = directory.path("first.qbak")
            XCTAssertEqual(
                try Questbak.run(["export", try directory.copyFixture(name).path, "-o", first.path, "-q", "--compression", "none"]).status,
                0)
            let store = directory.path("restored/default.store")
            try FileManager.default.createDirectory(at: store.deletingLastPathComponent(), withIntermediateDirectories: true)
            let imported = try Questbak.run(["import", first.path, "--into", store.path, "-q"])
            XCTAssertEqual(imported.status, 0, "\(name): \(imported.standardError)")
            XCTAssertEqual(
                try FileManager.default.contentsOfDirectory(atPath: store.deletingLastPathComponent().path), ["default.store"],
                "no -wal, -shm or temporary file left")
            let second = directory.path("second.qbak")
            XCTAssertEqual(try Questbak.run(["export", store.path, "-o", second.path, "-q", "--compression", "none"]).status, 0)
            let one = try Questbak.runTool(["tar", "-xOf", first.path, "--wildcards", "entities/*"])
            let two = try Questbak.runTool(["tar", "-xOf", second.path, "--wildcards", "entities/*"])
            XCTAssertFalse(one.outputData.isEmpty)
            XCTAssertEqual(one.outputData, two.outputData, "\(name): entity members differ after a round trip")
            let metadataOne = try Questbak.runTool(["tar", "-xOf", first.path, "store/metadata.plist"]).outputData
            let metadataTwo = try Questbak.runTool(["tar", "-xOf", second.path, "store/metadata.plist"]).outputData
            XCTAssertEqual(metadataOne, metadataTwo, "\(name): the metadata travels byte for byte")
            let check = try Questbak.run(["inspect", store.path, "--json"])
            XCTAssertEqual(try report(check)["hashesMatchVersion"] as? String, name.hasPrefix("v1") ? "1.0.0" : "2.0.0")
        }
    }

    /// Archives of format 1 (the corpus's) and 2 restore through the one path: the digests the
    /// import reports are those an export of the restored store lists, as the store's own schema
    /// and as a later one (`--to-version`), and the store is made by the same statements as a
    /// store of that version (the fixtures').
    func testFormat1And2ArchivesRestoreToTheStoreTheirReExportDescribes() throws {
        let directory = try TemporaryTestDirectory()
        let formatTwo = directory.path("v1-typical.qbak")
        XCTAssertEqual(try Questbak.run(["export", try directory.copyFixture("v1-typical").path, "-o", formatTwo.path, "-q"]).status, 0)
        let formatOne = Repository.root.appendingPathComponent("Tests/Corpus/archive/accepted-v1-typical.zstd.qbak")
        func statements(_ store: URL) throws -> [[String]] {
            try rows(store, "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
        }
        for (index, (archive, version)) in [(formatOne, "1.0.0"), (formatOne, "2.0.0"), (formatTwo, "1.0.0"), (formatTwo, "2.0.0")]
            .enumerated()
        {
            let store = directory.path("restored-\(index).store")
            let imported = try Questbak.run([
                "import", archive.path, "--into", store.path, "--validate", "--to-version", version, "--now", "2026-01-01T00:00:00Z",
                "--json",
            ])
            XCTAssertEqual(imported.status, 0, imported.standardError)
            let reported = try XCTUnwrap(try report(imported)["entities"] as? [[String: Any]])
            XCTAssertEqual(reported.count, 5, "\(archive.lastPathComponent) as \(version)")
            let again = directory.path("again-\(index).qbak")
            XCTAssertEqual(try Questbak.run(["export", store.path, "-o", again.path, "-q", "--compression", "none"]).status, 0)
            let manifest = try XCTUnwrap(
                JSONSerialization.jsonObject(with: try Questbak.runTool(["tar", "-xOf", again.path, "manifest.json"]).outputData)
                    as? [String: Any])
            XCTAssertEqual(manifest["schemaVersion"] as? String, version)
            let listed = Dictionary(
                uniqueKeysWithValues: (manifest["entities"] as? [[String: Any]] ?? []).map {
                    ($0["name"] as? String ?? "", "\($0["count"] ?? "") \($0["sha256"] ?? "")")
                })
            for entity in reported {
                let name = entity["name"] as? String ?? ""
                XCTAssertEqual(
                    listed[name], "\(entity["written"] ?? "") \(entity["sha256"] ?? "")",
                    "\(archive.lastPathComponent) as \(version): \(name)")
            }
            let fixture = Repository.fixtures.appendingPathComponent(
                version == "1.0.0" ? "v1-typical/default.store" : "v2-typical/default.store")
            var configuration = Configuration()
            configuration.readonly = true
            let fixtureStatements = try DatabaseQueue(path: "file:\(fixture.path)?immutable=1", configuration: configuration).read { db in
                try Row.fetchAll(db, sql: "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid").map {
                    [$0[0] as String, $0[1] as String, $0[2] as String]
                }
            }
            XCTAssertEqual(try statements(store), fixtureStatements, "\(archive.lastPathComponent) as \(version)")
        }
    }

    func testAV1FixtureImportedAsV2KeepsEveryValue() throws {
        let directory = try TemporaryTestDirectory()
        let source = try directory.copyFixture("v1-edge-cases")
        let archive = directory.path("v1.qbak")
        XCTAssertEqual(try Questbak.run(["export", source.path, "-o", archive.path, "-q"]).status, 0)
        let store = directory.path("v2.store")
        let result = try Questbak.run(["import", archive.path, "--into", store.path, "--to-version", "2.0.0", "--json"])
        XCTAssertEqual(result.status, 0, result.standardError)
        let counts = try report(result)["counts"] as? [String: Int]
        // Only cloudIDs are added, and the metadata is computed for V2 (an entry of the report).
        XCTAssertEqual(counts, ["migration.cloudID": 13, "bookkeeping.metadata": 1], "\(String(describing: counts))")
        for table in ["ZROUTINE", "ZROUTINETASK", "ZGAMESESSION", "ZTASKESTIMATION", "ZPLAYERPROFILE"] {
            let columns = try rows(source, "SELECT group_concat(name) FROM pragma_table_info('\(table)')")[0][0]
            XCTAssertEqual(
                try rows(store, "SELECT \(columns) FROM \(table) ORDER BY Z_PK"),
                try rows(source, "SELECT \(columns) FROM \(table) ORDER BY Z_PK"), table)
            XCTAssertEqual(try rows(store, "SELECT count(*) - count(DISTINCT ZCLOUDID) FROM \(table)"), [["0"]], table)
        }
        XCTAssertEqual(try rows(store, "SELECT ZCLOUDID FROM ZPLAYERPROFILE"), [["singleton-player-profile"]])
        let inspection = try report(try Questbak.run(["inspect", store.path, "--json"]))
        XCTAssertEqual(inspection["hashesMatchVersion"] as? String, "2.0.0")
        XCTAssertEqual(inspection["uuid"] as? String, "3C0A9E61-0D4E-4C5B-9B53-6E1F0F1A0002", "the store keeps its identity")
    }

    func testReplaceKeepsTheOldStoreAsABackup() throws {
        let directory = try TemporaryTestDirectory()
        let archive = directory.path("typical.qbak")
        XCTAssertEqual(try Questbak.run(["export", try directory.copyFixture("v1-typical").path, "-o", archive.path, "-q"]).status, 0)
        let target = try directory.copyFixture("v1-wal")
        let folder = target.deletingLastPathComponent()
        let old = try ["", "-wal", "-shm"].map { try Data(contentsOf: URL(fileURLWithPath: target.path + $0)) }
        let exists = try Questbak.run(["import", archive.path, "--into", target.path])
        XCTAssertEqual(exists.status, 73)
        XCTAssertTrue(exists.standardError.contains("already exists (use --replace"), exists.standardError)
        let result = try Questbak.run(["import", archive.path, "--into", target.path, "--replace", "--json"])
        XCTAssertEqual(result.status, 0, result.standardError)
        let backup = try XCTUnwrap(try report(result)["backup"] as? String)
        XCTAssertTrue(backup.hasPrefix(target.path + ".questbak-backup-"))
        XCTAssertEqual(
            try ["", "-wal", "-shm"].map { try Data(contentsOf: URL(fileURLWithPath: backup + $0)) }, old,
            "the backup is the old store byte for byte")
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasSuffix(".dump") })
        let backupName = URL(fileURLWithPath: backup).lastPathComponent
        XCTAssertEqual(left, ["default.store", backupName, backupName + "-wal", backupName + "-shm"], "no old -wal beside the new store")
        XCTAssertEqual(try rows(target, "SELECT count(*) FROM ZTASKESTIMATION"), [["36"]])
        XCTAssertEqual(
            try rows(URL(fileURLWithPath: backup), "SELECT count(*) FROM ZTASKESTIMATION"), [["8"]], "the backup opens with its WAL rows")
    }

    func testAFailedImportLeavesTheTargetByteIdentical() throws {
        let directory = try TemporaryTestDirectory()
        let target = try directory.copyFixture("v1-wal")
        let folder = target.deletingLastPathComponent()
        let before = try DirectoryState(of: folder)
        var builder = ArchiveBuilder(schemaVersion: "1.0.0")
        builder.members = [.init("Routine", records: [RecordLines.routine(1), RecordLines.routine(2, ["isActive": 3])])]
        let archive = directory.path("bad.qbak")
        try builder.write(to: archive)
        let result = try Questbak.run(["import", archive.path, "--into", target.path, "--replace", "--validate"])
        XCTAssertEqual(result.status, 65, result.standardError)
        XCTAssertEqual(try DirectoryState(of: folder), before)
    }

    func testAStaleWALWithoutItsStoreIsRefused() throws {
        let directory = try TemporaryTestDirectory()
        let archive = directory.path("a.qbak")
        XCTAssertEqual(try Questbak.run(["export", try directory.copyFixture("v1-typical").path, "-o", archive.path, "-q"]).status, 0)
        let target = directory.path("new.store")
        try Data("old wal".utf8).write(to: URL(fileURLWithPath: target.path + "-wal"))
        let result = try Questbak.run(["import", archive.path, "--into", target.path])
        XCTAssertEqual(result.status, 73)
        XCTAssertTrue(result.standardError.contains("new.store-wal exists without its store"), result.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path))
    }

    func testImportsFromStandardInput() throws {
        let directory = try TemporaryTestDirectory()
        let exported = try Questbak.run(["export", try directory.copyFixture("v2-typical").path, "-o", "-", "-q"])
        let store = directory.path("restored.store")
        let result = try Questbak.run(["import", "-", "--into", store.path, "-q"], input: exported.outputData)
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(try rows(store, "SELECT count(*) FROM ZTASKESTIMATION"), [["24"]])
    }

    /// A format 2 archive whose lines another tool spelled otherwise (a space inside lines of one
    /// member, as valid JSON as before) restores as the archive an export wrote does: the
    /// read-back proves such a store by an encoding of what the transaction wrote, not by the
    /// archive's digests, which its bytes do not have; the report is that of the export's archive.
    /// Every record line respelled is seen by the first; all but the first, only by the read-back,
    /// after which the archive is restored again.
    func testAFormat2ArchiveSpelledOtherwiseRestoresAsTheExportsArchiveDoes() throws {
        let directory = try TemporaryTestDirectory()
        let exported = directory.path("exported.qbak")
        XCTAssertEqual(try Questbak.run(["export", try directory.copyFixture("v2-typical").path, "-o", exported.path, "-q"]).status, 0)
        func respelled(_ name: String, from first: Int) throws -> URL {
            let url = directory.path(name)
            try ArchiveRepack.repack(exported, to: url) { folder in
                let member = folder.appendingPathComponent("entities/TaskEstimation.jsonl")
                let lines = try String(contentsOf: member, encoding: .utf8).components(separatedBy: "\n")
                // Line 0 is the member's header, line 1 its first record.
                let respelled = lines.enumerated().map { line in
                    line.offset >= first && line.element.hasPrefix("{\"_pk\":") ? "{ " + line.element.dropFirst() : line.element
                }
                try respelled.joined(separator: "\n").write(to: member, atomically: true, encoding: .utf8)
            }
            return url
        }
        var reports: [[String: Any]] = []
        var stores: [URL] = []
        for (name, archive) in [
            ("exported", exported), ("every", try respelled("every.qbak", from: 1)), ("later", try respelled("later.qbak", from: 2)),
        ] {
            let store = directory.path("\(name)/default.store")
            // Made first, so that no note names the folder.
            try FileManager.default.createDirectory(at: store.deletingLastPathComponent(), withIntermediateDirectories: true)
            let result = try Questbak.run(["import", archive.path, "--validate", "--into", store.path, "--json"])
            XCTAssertEqual(result.status, 0, "\(name): \(result.standardError)")
            var json = try report(result)
            json["source"] = nil
            json["target"] = nil
            reports.append(json)
            stores.append(store)
        }
        for index in [1, 2] {
            XCTAssertEqual(
                try JSONSerialization.data(withJSONObject: reports[index], options: .sortedKeys),
                try JSONSerialization.data(withJSONObject: reports[0], options: .sortedKeys))
        }
        for table in ["ZTASKESTIMATION", "ZGAMESESSION", "Z_PRIMARYKEY"] {
            for index in [1, 2] {
                XCTAssertEqual(
                    try rows(stores[index], "SELECT * FROM \(table) ORDER BY 1"), try rows(stores[0], "SELECT * FROM \(table) ORDER BY 1"))
            }
        }
        XCTAssertEqual(try rows(stores[2], "SELECT count(*) FROM ZTASKESTIMATION"), [["24"]])
    }

    /// --template: the new store takes the template's metadata (hashes, framework version, any
    /// other keys) and keeps the archive's store UUID.
    func testATemplateSuppliesTheMetadata() throws {
        let directory = try TemporaryTestDirectory()
        let archive = directory.path("v1.qbak")
        XCTAssertEqual(try Questbak.run(["export", try directory.copyFixture("v1-typical").path, "-o", archive.path, "-q"]).status, 0)
        let template = try directory.copyFixture("v2-typical")
        let store = directory.path("restored.store")
        let result = try Questbak.run(["import", archive.path, "--into", store.path, "--to-version", "2.0.0", "--template", template.path])
        XCTAssertEqual(result.status, 0, result.standardError)
        let inspection = try report(try Questbak.run(["inspect", store.path, "--json"]))
        XCTAssertEqual(inspection["hashesMatchVersion"] as? String, "2.0.0")
        XCTAssertEqual(inspection["uuid"] as? String, "3C0A9E61-0D4E-4C5B-9B53-6E1F0F1A0001", "the archive's store keeps its identity")
        let mismatched = try Questbak.run([
            "import", archive.path, "--into", directory.path("other.store").path, "--template", template.path,
        ])
        XCTAssertEqual(mismatched.status, 65, mismatched.standardError)
        XCTAssertTrue(
            mismatched.standardError.contains("cannot use as a template: its model hashes are not those of schema 1.0.0"),
            mismatched.standardError)
    }

    /// A migration rebuilds the model keys of the metadata and keeps the others.
    func testMetadataKeysQuestbakDoesNotComputeAreKept() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        try DatabaseQueue(path: store.path).write { db in
            let plist = try XCTUnwrap(Data.fetchOne(db, sql: "SELECT Z_PLIST FROM Z_METADATA"))
            let text = try XCTUnwrap(
                String(
                    data: try Questbak.runTool([
                        "python3", "-c",
                        """
                        import plistlib, sys, base64
                        p = plistlib.loads(base64.b64decode('\(plist.base64EncodedString())'))
                        p['NSPersistenceMaximumFrameworkVersion'] = 1600
                        sys.stdout.write(base64.b64encode(plistlib.dumps(p, fmt=plistlib.FMT_BINARY)).decode())
                        """,
                    ]).outputData, encoding: .utf8))
            try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [Data(base64Encoded: text)!])
        }
        let migrated = directory.path("v2.store")
        XCTAssertEqual(try Questbak.run(["migrate", store.path, "-o", migrated.path, "-q"]).status, 0)
        let plist = try XCTUnwrap(
            try DatabaseQueue(path: migrated.path).read { try Data.fetchOne($0, sql: "SELECT Z_PLIST FROM Z_METADATA") })
        let decoded = try XCTUnwrap(PropertyListSerialization.propertyList(from: plist, format: nil) as? [String: Any])
        XCTAssertEqual((decoded["NSPersistenceMaximumFrameworkVersion"] as? NSNumber)?.intValue, 1600)
        XCTAssertEqual(decoded["NSStoreModelVersionIdentifiers"] as? [String], ["2.0.0"])
    }

    func testAnUnreadableArchiveIsMissingInput() throws {
        let directory = try TemporaryTestDirectory()
        let archive = directory.path("secret.qbak")
        XCTAssertEqual(try Questbak.run(["export", try directory.copyFixture("v1-typical").path, "-o", archive.path, "-q"]).status, 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: archive.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.url.path)
        let result = try Questbak.run(["inspect", archive.path], prefix: Questbak.unprivileged)
        if !Questbak.unprivileged.isEmpty {
            XCTAssertEqual(result.status, 66, result.standardError)
            XCTAssertTrue(
                result.standardError.lowercased().contains("secret.qbak: cannot be read: permission denied"), result.standardError)
        }
    }

    /// A report that cannot be written stops the command before it changes anything, instead of
    /// after a replace whose backup it would then not name.
    func testAReportPathThatCannotBeWrittenStopsTheCommandFirst() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-wal")
        let archive = directory.path("typical.qbak")
        XCTAssertEqual(
            try Questbak.run(["export", Repository.fixtures.appendingPathComponent("v1-typical/default.store").path, "-o", archive.path])
                .status, 0)
        let before = try DirectoryState(of: store.deletingLastPathComponent())
        let badReport = directory.path("missing-folder/report.json").path
        for arguments in [
            ["import", archive.path, "--into", store.path, "--replace", "--report", badReport],
            ["migrate", store.path, "--in-place", "--report", badReport],
        ] {
            let result = try Questbak.run(arguments)
            XCTAssertEqual(result.status, 73, "\(arguments): \(result.standardError)")
            XCTAssertEqual(try DirectoryState(of: store.deletingLastPathComponent()), before, "\(arguments)")
        }
    }

    func testUsageErrors() throws {
        XCTAssertEqual(try Questbak.run(["import", "x.qbak"]).status, 64)
        XCTAssertEqual(try Questbak.run(["import", "x.qbak", "--validate", "--replace"]).status, 64)
    }
}
