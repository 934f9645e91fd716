import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

/// `questbak diff A B`: records matched by identity, migrations' added properties named as such.
final class DiffCommandTests: XCTestCase {
    /// A copy of `store` as `other/default.store` in `directory`, changed by `edit`: the second
    /// device's store of a test.
    private func copy(_ store: URL, into directory: TemporaryTestDirectory, edit: (Database) throws -> Void) throws -> URL {
        let other = directory.path("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        let copy = other.appendingPathComponent("default.store")
        try FileManager.default.copyItem(at: store, to: copy)
        try DatabaseQueue(path: copy.path).write(edit)
        return copy
    }

    func testAStoreAndItsOwnArchiveAreTheSame() throws {
        // bennie-game: AppSettings and ParentSettings name each other (a one-to-one keeps a key on
        // both sides), which once left both, and the videos naming them, unmatched. v1-anomalies:
        // a task names a routine that does not exist (an orphan), which once left it unmatched.
        for fixture in ["v2-typical", "AnyApp/kitchen-sink", "AnyApp/bennie-game", "v1-anomalies"] {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture(fixture)
            let archive = directory.path("a.qbak")
            XCTAssertEqual(try Questbak.run(["export", store.path, "-o", archive.path, "-q"]).status, 0)
            let result = try Questbak.run(["diff", store.path, archive.path])
            XCTAssertEqual(result.status, 0, "\(fixture): \(result.standardOutput)\(result.standardError)")
            XCTAssertEqual(result.standardOutput, "0 added, 0 removed, 0 changed\n")
        }
    }

    /// Two entities that name each other are matched by their other values, under other keys
    /// too; the relationship between them is then compared, and a change to it is a change.
    func testEntitiesThatNameEachOtherAreMatchedAndTheirLinkCompared() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("AnyApp/bennie-game")
        let b = try directory.copyFixture("AnyApp/bennie-game", as: "other")
        try DatabaseQueue(path: b.path).write { db in
            try db.execute(sql: "UPDATE ZPARENTSETTINGS SET Z_PK = Z_PK + 100, ZAPPSETTINGS = ZAPPSETTINGS + 100")
            try db.execute(sql: "UPDATE ZAPPSETTINGS SET Z_PK = Z_PK + 100, ZPARENTSETTINGS = ZPARENTSETTINGS + 100")
            try db.execute(sql: "UPDATE ZAPPROVEDVIDEO SET ZPARENTSETTINGS = ZPARENTSETTINGS + 100")
        }
        let same = try Questbak.run(["diff", a.path, b.path])
        XCTAssertEqual(same.status, 0, same.standardOutput + same.standardError)
        XCTAssertEqual(same.standardOutput, "0 added, 0 removed, 0 changed\n")

        try DatabaseQueue(path: b.path).write { db in
            try db.execute(sql: "UPDATE ZAPPSETTINGS SET ZPARENTSETTINGS = NULL")
        }
        let changed = try Questbak.run(["diff", a.path, b.path])
        XCTAssertEqual(changed.status, 1, changed.standardError)
        XCTAssertTrue(
            changed.standardOutput.contains("AppSettings: 0 added, 0 removed, 1 changed (matched by content)"), changed.standardOutput)
        XCTAssertTrue(changed.standardOutput.hasSuffix("0 added, 0 removed, 1 changed\n"), changed.standardOutput)
    }

    /// A to-one naming no record is the same reference as one naming no record by the same key on
    /// the other side, and another reference than one naming no record by another key.
    func testAnOrphanIsTheSameOnlyWhereItNamesTheSameMissingKey() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("v1-anomalies")
        let b = try directory.copyFixture("v1-anomalies", as: "other")
        let orphan = "SELECT count(*) FROM ZROUTINETASK WHERE ZROUTINE NOT IN (SELECT Z_PK FROM ZROUTINE)"
        XCTAssertEqual(try DatabaseQueue(path: a.path).read { try Int.fetchOne($0, sql: orphan) }, 1, "the fixture has one orphan")
        try DatabaseQueue(path: b.path).write { db in
            try db.execute(sql: "UPDATE ZROUTINETASK SET ZROUTINE = ZROUTINE + 1000 WHERE ZROUTINE NOT IN (SELECT Z_PK FROM ZROUTINE)")
        }
        let result = try Questbak.run(["diff", a.path, b.path])
        XCTAssertEqual(result.status, 1, result.standardError)
        // Its natural key holds the routine it names, so it is another task (as a merge sees it).
        XCTAssertTrue(result.standardOutput.hasPrefix("RoutineTask: 1 added, 1 removed, 0 changed"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.hasSuffix("\n1 added, 1 removed, 0 changed\n"), result.standardOutput)
    }

    /// Two AppSettings alike in every value, told apart only by the ParentSettings each names
    /// (which name them back and differ in a value): with one side's AppSettings keys swapped,
    /// each record is still paired with its counterpart, by its link once the records it names are
    /// paired, not crosswise in `_pk` order.
    func testRecordsAlikeButForWhomTheyNameArePairedByWhomTheyName() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("AnyApp/bennie-game")
        try DatabaseQueue(path: a.path).write { db in
            try db.execute(
                sql: """
                    INSERT INTO ZPARENTSETTINGS SELECT 2, Z_ENT, Z_OPT, ZDAILYTIMELIMITMINUTES + 30, 2, ZLOCKEDACTIVITIES FROM ZPARENTSETTINGS WHERE Z_PK = 1;
                    INSERT INTO ZAPPSETTINGS SELECT 2, Z_ENT, Z_OPT, ZAUDIOENABLED, 2, ZEFFECTSVOLUME, ZLASTDAILYRESET, ZMUSICVOLUME, ZVOICEVOLUME, ZAPPVERSION \
                    FROM ZAPPSETTINGS WHERE Z_PK = 1;
                    UPDATE Z_PRIMARYKEY SET Z_MAX = 2 WHERE Z_NAME IN ('ParentSettings', 'AppSettings');
                    """)
        }
        let b = try copy(a, into: directory) { db in
            // AppSettings 1 and 2 trade keys (matched first, in `_pk` order they would cross), and
            // the links to them follow.
            try db.execute(sql: "UPDATE ZAPPSETTINGS SET Z_PK = -Z_PK")
            try db.execute(sql: "UPDATE ZAPPSETTINGS SET Z_PK = 3 + Z_PK")
            try db.execute(sql: "UPDATE ZPARENTSETTINGS SET ZAPPSETTINGS = 3 - ZAPPSETTINGS WHERE ZAPPSETTINGS IN (1, 2)")
        }
        let result = try Questbak.run(["diff", a.path, b.path])
        XCTAssertEqual(result.status, 0, result.standardOutput + result.standardError)
        XCTAssertEqual(result.standardOutput, "0 added, 0 removed, 0 changed\n")
    }

    func testAV1FixtureAndItsMigratedV2DifferOnlyByTheAddedCloudIDs() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        let migrated = directory.path("v2.store")
        XCTAssertEqual(try Questbak.run(["migrate", store.path, "-o", migrated.path, "-q", "--now", "2026-01-01T00:00:00Z"]).status, 0)
        let result = try Questbak.run(["diff", store.path, migrated.path, "--json"])
        XCTAssertEqual(result.status, 1, result.standardError)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        XCTAssertEqual(document["added"] as? Int, 0)
        XCTAssertEqual(document["removed"] as? Int, 0)
        XCTAssertEqual(document["changed"] as? Int, 0)
        for entity in try XCTUnwrap(document["entities"] as? [[String: Any]]) {
            XCTAssertEqual(entity["fieldsOnlyInB"] as? [String], ["cloudID"], "\(entity)")
            XCTAssertEqual(entity["fieldsOnlyInA"] as? [String], [], "\(entity)")
        }
    }

    /// Two devices' stores: the same routine under other keys is one record (matched by cloudID);
    /// an edited name and a new session are named.
    func testRecordsAreMatchedByIdentityNotByKey() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("v2-typical")
        let b = try copy(a, into: directory) { db in
            try db.execute(sql: "UPDATE ZROUTINE SET Z_PK = Z_PK + 100")
            try db.execute(sql: "UPDATE ZROUTINETASK SET ZROUTINE = ZROUTINE + 100")
            try db.execute(sql: "UPDATE ZGAMESESSION SET ZROUTINE = ZROUTINE + 100")
            try db.execute(sql: "UPDATE ZROUTINE SET ZDISPLAYNAME = 'Renamed' WHERE Z_PK = 101")
            try db.execute(sql: "DELETE FROM ZTASKESTIMATION WHERE Z_PK = 1")
        }
        let result = try Questbak.run(["diff", a.path, b.path])
        XCTAssertEqual(result.status, 1, result.standardError)
        XCTAssertTrue(result.standardOutput.contains("Routine: 0 added, 0 removed, 1 changed (matched by cloudID)"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("displayName \""), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("→ \"Renamed\""), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("TaskEstimation: 0 added, 1 removed"), result.standardOutput)
        // A relationship compares the records it names: RoutineTask and GameSession name the same
        // routines under other keys, and are no change.
        XCTAssertTrue(result.standardOutput.hasSuffix("0 added, 1 removed, 1 changed\n"), result.standardOutput)
        let stat = try Questbak.run(["diff", a.path, b.path, "--stat"])
        XCTAssertFalse(stat.standardOutput.contains("  ~ "), stat.standardOutput)
    }

    /// Stores and archives of two apps have no record in common: refused, not listed as adds and removes.
    func testTwoAppsAreRefusedAsNotTheSameApp() throws {
        let directory = try TemporaryTestDirectory()
        let timeQuest = try directory.copyFixture("v1-typical")
        let other = try directory.copyFixture("AnyApp/kitchen-sink")
        let archive = directory.path("other.qbak")
        XCTAssertEqual(try Questbak.run(["export", other.path, "-o", archive.path, "-q"]).status, 0)
        for (a, b) in [(timeQuest, other), (timeQuest, archive), (archive, timeQuest)] {
            let result = try Questbak.run(["diff", a.path, b.path])
            XCTAssertEqual(result.status, 65, result.standardError)
            XCTAssertTrue(result.standardError.hasPrefix("questbak: error: "), result.standardError)
            XCTAssertTrue(result.standardError.contains("are not the same app"), result.standardError)
            XCTAssertEqual(result.standardOutput, "", "no list of adds and removes")
        }
    }

    /// A model archive names properties, a generic one columns: compared by table and column, the
    /// same store is the same, and a changed value is one change, not every column added and removed.
    func testAModelArchiveAndAGenericArchiveOfOneStoreAreComparedByTable() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let byModel = directory.path("model.qbak")
        XCTAssertEqual(try Questbak.run(["export", store.path, "-o", byModel.path, "-q"]).status, 0)
        // Without its model cache the same store is exported by its tables.
        let tablesStore = try directory.copyFixture("AnyApp/kitchen-sink", as: "tables")
        try DatabaseQueue(path: tablesStore.path).write { db in try db.execute(sql: "DELETE FROM Z_MODELCACHE") }
        let byTables = directory.path("tables.qbak")
        XCTAssertEqual(try Questbak.run(["export", tablesStore.path, "-o", byTables.path, "-q"]).status, 0)
        let manifest = try Questbak.run(["inspect", byTables.path, "--json"])
        XCTAssertTrue(manifest.standardOutput.contains("\"generic\""), manifest.standardOutput)

        let same = try Questbak.run(["diff", byModel.path, byTables.path])
        XCTAssertEqual(same.status, 0, same.standardOutput + same.standardError)
        XCTAssertTrue(same.standardOutput.contains("compared by table and column"), same.standardOutput)
        XCTAssertTrue(same.standardOutput.hasSuffix("0 added, 0 removed, 0 changed\n"), same.standardOutput)

        try DatabaseQueue(path: tablesStore.path).write { db in try db.execute(sql: "UPDATE ZRECIPE SET ZMEMO = 'edited' WHERE Z_PK = 2") }
        let edited = directory.path("edited.qbak")
        XCTAssertEqual(try Questbak.run(["export", tablesStore.path, "-o", edited.path, "-q"]).status, 0)
        let result = try Questbak.run(["diff", byModel.path, edited.path, "--json"])
        XCTAssertEqual(result.status, 1, result.standardError)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        XCTAssertEqual(document["comparedBy"] as? String, "tables")
        XCTAssertEqual(document["added"] as? Int, 0)
        XCTAssertEqual(document["removed"] as? Int, 0)
        XCTAssertEqual(document["changed"] as? Int, 1)
        for entity in try XCTUnwrap(document["entities"] as? [[String: Any]]) {
            XCTAssertEqual(entity["fieldsOnlyInA"] as? [String], [], "\(entity)")
            XCTAssertEqual(entity["fieldsOnlyInB"] as? [String], [], "\(entity)")
            guard entity["name"] as? String == "Recipe" else { continue }
            let changed = try XCTUnwrap(entity["changed"] as? [[String: Any]])
            XCTAssertEqual((changed.first?["fields"] as? [[String: Any]])?.compactMap { $0["field"] as? String }, ["ZMEMO"])
        }
    }

    /// A record whose cloudID differs but whose natural key is the same is one record with a
    /// changed cloudID, as a merge matches it (and supersedes the archive's cloudID), not one
    /// record removed and another added.
    func testRecordsAreMatchedAsAMergeMatchesThem() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("v2-typical")
        let b = try directory.copyFixture("v2-typical", as: "other")
        try DatabaseQueue(path: b.path).write { db in
            try db.execute(sql: "UPDATE ZROUTINE SET ZCLOUDID = '11111111-1111-4111-8111-111111111111' WHERE Z_PK = 1")
        }
        let result = try Questbak.run(["diff", a.path, b.path])
        XCTAssertEqual(result.status, 1, result.standardError)
        XCTAssertTrue(
            result.standardOutput.contains("Routine: 0 added, 0 removed, 1 changed (matched by cloudID, natural key"), result.standardOutput
        )
        XCTAssertTrue(result.standardOutput.hasSuffix("0 added, 0 removed, 1 changed\n"), result.standardOutput)
        let archive = directory.path("b.qbak")
        XCTAssertEqual(try Questbak.run(["export", b.path, "-o", archive.path, "-q"]).status, 0)
        let merge = try Questbak.run(["import", archive.path, "--merge", "--into", a.path, "--dry-run", "--json"])
        XCTAssertEqual(merge.status, 0, merge.standardError)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: merge.outputData) as? [String: Any])
        XCTAssertEqual((document["counts"] as? [String: Int])?["merge.insert"], nil, "the merge inserts nothing either")
        XCTAssertEqual((document["counts"] as? [String: Int])?["merge.supersede"], 1)
    }

    /// Records only one side has are listed by `_pk` as numbers: 2 before 10.
    func testRecordsAreListedByPrimaryKeyAsNumbers() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("v2-typical")
        let b = try directory.copyFixture("v2-typical", as: "full")
        try DatabaseQueue(path: a.path).write { db in try db.execute(sql: "DELETE FROM ZTASKESTIMATION WHERE Z_PK IN (2, 10, 11)") }
        let result = try Questbak.run(["diff", a.path, b.path, "--json"])
        XCTAssertEqual(result.status, 1, result.standardError)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        let estimations = try XCTUnwrap((document["entities"] as? [[String: Any]])?.first { $0["name"] as? String == "TaskEstimation" })
        let added = try XCTUnwrap(estimations["added"] as? [String])
        XCTAssertEqual(added.map { $0.split(separator: " ").prefix(2).joined(separator: " ") }, ["_pk 2", "_pk 10", "_pk 11"])
    }

    /// The listing is written as it is read (added, removed and changed records of one entity
    /// together): every record is in it, in the text and in the JSON, and the counts are its lengths.
    func testTheListingHoldsEveryRecordTheCountsCount() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("v2-typical")
        let b = try directory.copyFixture("v2-typical", as: "other")
        try DatabaseQueue(path: a.path).write { db in try db.execute(sql: "DELETE FROM ZTASKESTIMATION WHERE Z_PK IN (3, 4)") }
        try DatabaseQueue(path: b.path).write { db in
            try db.execute(sql: "DELETE FROM ZTASKESTIMATION WHERE Z_PK IN (5, 6, 7)")
            try db.execute(sql: "UPDATE ZTASKESTIMATION SET ZACTUALSECONDS = ZACTUALSECONDS + 1 WHERE Z_PK > 10")
            try db.execute(sql: "UPDATE ZROUTINE SET ZNAME = ZNAME || ' (edited)'")
        }
        let changedEstimations = try DatabaseQueue(path: b.path).read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM ZTASKESTIMATION WHERE Z_PK > 10") ?? 0
        }
        let json = try Questbak.run(["diff", a.path, b.path, "--json"])
        XCTAssertEqual(json.status, 1, json.standardError)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: json.outputData) as? [String: Any])
        let entities = try XCTUnwrap(document["entities"] as? [[String: Any]])
        XCTAssertEqual(entities.map { $0["name"] as? String ?? "" }, entities.map { $0["name"] as? String ?? "" }.sorted())
        let estimations = try XCTUnwrap(entities.first { $0["name"] as? String == "TaskEstimation" })
        XCTAssertEqual((estimations["added"] as? [String])?.count, 2, "\(estimations)")
        XCTAssertEqual((estimations["removed"] as? [String])?.count, 3, "\(estimations)")
        XCTAssertEqual((estimations["changed"] as? [[String: Any]])?.count, changedEstimations, "\(estimations)")
        let routines = try XCTUnwrap(entities.first { $0["name"] as? String == "Routine" })
        XCTAssertEqual((routines["changed"] as? [[String: Any]])?.count, 3, "\(routines)")
        XCTAssertEqual((routines["added"] as? [String]), [])
        for key in ["added", "removed", "changed"] {
            let listed = entities.map { ($0[key] as? [Any])?.count ?? -1 }.reduce(0, +)
            XCTAssertEqual(document[key] as? Int, listed, key)
        }
        // Sessions may be changed too (their to-many names the estimations): the totals are the listing's.
        let changed = try XCTUnwrap(document["changed"] as? Int)
        XCTAssertGreaterThanOrEqual(changed, changedEstimations + 3)

        let text = try Questbak.run(["diff", a.path, b.path])
        XCTAssertEqual(text.status, 1, text.standardError)
        let lines = text.standardOutput.split(separator: "\n")
        XCTAssertEqual(lines.filter { $0.hasPrefix("  + ") }.count, 2, text.standardOutput)
        XCTAssertEqual(lines.filter { $0.hasPrefix("  - ") }.count, 3, text.standardOutput)
        XCTAssertEqual(lines.filter { $0.hasPrefix("  ~ ") }.count, changed, text.standardOutput)
        XCTAssertTrue(
            text.standardOutput.contains("TaskEstimation: 2 added, 3 removed, \(changedEstimations) changed"), text.standardOutput)
        XCTAssertEqual(
            lines.last.map(String.init),
            "\(document["added"] as? Int ?? -1) added, \(document["removed"] as? Int ?? -1) removed, \(changed) changed")
        let stat = try Questbak.run(["diff", a.path, b.path, "--stat"])
        XCTAssertFalse(
            stat.standardOutput.split(separator: "\n").contains { $0.hasPrefix("  ") && !$0.hasPrefix("  only") }, stat.standardOutput)
    }

    /// An entity whose member is byte for byte the same on both sides is read once; the records
    /// its relationships name are still compared as matched. Here B's first two routines trade
    /// cloudIDs, so B's tasks and sessions (their members unchanged) name, in A's terms, the other
    /// routine: the listing is the one given when those members' bytes differ (by `_opt` only).
    func testAnEntityTheSameByteForByteIsComparedAsOneWhoseBytesDiffer() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("v2-typical")
        let b = try directory.copyFixture("v2-typical", as: "swapped")
        try DatabaseQueue(path: b.path).write { db in
            let rows = try Row.fetchAll(db, sql: "SELECT Z_PK, ZCLOUDID FROM ZROUTINE ORDER BY Z_PK LIMIT 2")
            try db.execute(sql: "UPDATE ZROUTINE SET ZCLOUDID = NULL WHERE Z_PK IN (?, ?)", arguments: [rows[0]["Z_PK"], rows[1]["Z_PK"]])
            try db.execute(sql: "UPDATE ZROUTINE SET ZCLOUDID = ? WHERE Z_PK = ?", arguments: [rows[1]["ZCLOUDID"], rows[0]["Z_PK"]])
            try db.execute(sql: "UPDATE ZROUTINE SET ZCLOUDID = ? WHERE Z_PK = ?", arguments: [rows[0]["ZCLOUDID"], rows[1]["Z_PK"]])
        }
        let tasksOfThem = try DatabaseQueue(path: b.path).read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM ZROUTINETASK WHERE ZROUTINE IN (SELECT Z_PK FROM ZROUTINE ORDER BY Z_PK LIMIT 2)")
        }
        try FileManager.default.copyItem(at: b.deletingLastPathComponent(), to: directory.path("bumped"))
        let bumped = directory.path("bumped").appendingPathComponent(b.lastPathComponent)
        try DatabaseQueue(path: bumped.path).write { db in
            try db.execute(sql: "UPDATE ZROUTINETASK SET Z_OPT = Z_OPT + 1")
            try db.execute(sql: "UPDATE ZGAMESESSION SET Z_OPT = Z_OPT + 1")
        }
        let same = try Questbak.run(["diff", a.path, b.path])
        XCTAssertEqual(same.status, 1, same.standardError)
        XCTAssertGreaterThan(tasksOfThem ?? 0, 0)
        XCTAssertTrue(same.standardOutput.contains("RoutineTask: 0 added, 0 removed, \(tasksOfThem ?? 0) changed"), same.standardOutput)
        let differing = try Questbak.run(["diff", a.path, bumped.path])
        XCTAssertEqual(differing.status, 1, differing.standardError)
        XCTAssertEqual(same.standardOutput, differing.standardOutput)
        // And against itself, every record is its own.
        let itself = try Questbak.run(["diff", b.path, b.path, "--json"])
        XCTAssertEqual(itself.status, 0, itself.standardOutput + itself.standardError)
    }

    /// A member whose manifest gives the other side's SHA-256 is still read to its end and
    /// checked: a damaged copy is refused, not taken for the same records.
    func testADamagedMemberListedWithTheOtherSidesChecksumIsRefused() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v2-typical")
        let archive = directory.path("a.qbak")
        XCTAssertEqual(try Questbak.run(["export", store.path, "-o", archive.path, "--compression", "none", "-q"]).status, 0)
        var bytes = try Data(contentsOf: archive)
        let found = try XCTUnwrap(bytes.range(of: Data("\"close\"".utf8)))
        bytes[found.lowerBound + 3] = UInt8(ascii: "a")
        let damaged = directory.path("damaged.qbak")
        try bytes.write(to: damaged)
        for (a, b) in [(store, damaged), (archive, damaged)] {
            let result = try Questbak.run(["diff", a.path, b.path, "--stat"])
            XCTAssertEqual(result.status, 65, result.standardOutput + result.standardError)
            XCTAssertTrue(result.standardError.contains("has SHA-256"), result.standardError)
            XCTAssertEqual(result.standardOutput, "")
        }
    }

    /// Two strings that differ only after a NUL character are different values (they were bound
    /// up to the NUL and compared equal).
    func testStringsThatDifferAfterANulCharacterDiffer() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("v2-typical")
        let b = try directory.copyFixture("v2-typical", as: "other")
        for (store, ending) in [(a, "one"), (b, "two")] {
            try DatabaseQueue(path: store.path).write { db in
                try db.execute(sql: "UPDATE ZROUTINE SET ZNAME = 'same' || char(0) || '\(ending)' WHERE Z_PK = 1")
            }
        }
        let result = try Questbak.run(["diff", a.path, b.path, "--json"])
        XCTAssertEqual(result.status, 1, result.standardOutput + result.standardError)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        XCTAssertEqual(document["changed"] as? Int, 1, result.standardOutput)
        // And the listing shows both values whole (it showed "same" → "same").
        let text = try Questbak.run(["diff", a.path, b.path])
        XCTAssertEqual(text.status, 1, text.standardError)
        XCTAssertTrue(text.standardOutput.contains(#"name "same\u0000one" → "same\u0000two""#), text.standardOutput)
    }

    /// A cloudID with a NUL character after a well-formed UUID is not well formed: the record is
    /// matched by the next key (it was taken for the UUID before the NUL).
    func testACloudIDWithANulCharacterIsNotWellFormed() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("v2-typical")
        let b = try directory.copyFixture("v2-typical", as: "other")
        for store in [a, b] {
            try DatabaseQueue(path: store.path).write { db in
                try db.execute(sql: "UPDATE ZROUTINE SET ZCLOUDID = ZCLOUDID || char(0) || 'x' WHERE Z_PK = 1")
            }
        }
        let result = try Questbak.run(["diff", a.path, b.path, "--json"])
        XCTAssertEqual(result.status, 0, result.standardOutput + result.standardError)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        let routines = try XCTUnwrap((document["entities"] as? [[String: Any]])?.first { $0["name"] as? String == "Routine" })
        let matchedBy = try XCTUnwrap(routines["matchedBy"] as? String)
        XCTAssertTrue(matchedBy.hasPrefix("cloudID, "), matchedBy)
    }

    /// The listing writes values as JSON, as `JSONEncoder` writes them: strings with every
    /// control character, quotes, backslashes, slashes and non-ASCII text; Doubles of every form
    /// (whole, tiny, huge, subnormal).
    func testTheListingWritesValuesAsJSONEncoderWritesThem() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("v2-typical")
        let b = try directory.copyFixture("v2-typical", as: "other")
        let text = String(decoding: (1..<0x80).map { UInt8($0) }, as: UTF8.self) + " é 😀 \\/ \""
        let numbers: [Double] = [
            1, -3.75, 0.1, 1e-7, 1e21, 123_456_789.125, .leastNonzeroMagnitude, 1.7976931348623157e308, 2.5e-5, 1e16,
            12_345_678_901_234_568,
        ]
        let keys = try DatabaseQueue(path: b.path).write { db -> [Int64] in
            try db.execute(sql: "UPDATE ZROUTINE SET ZNAME = ? WHERE Z_PK = 1", arguments: [text])
            let keys = try Int64.fetchAll(db, sql: "SELECT Z_PK FROM ZTASKESTIMATION ORDER BY Z_PK LIMIT \(numbers.count)")
            for (key, number) in zip(keys, numbers) {
                try db.execute(sql: "UPDATE ZTASKESTIMATION SET ZACTUALSECONDS = ? WHERE Z_PK = ?", arguments: [number, key])
            }
            return keys
        }
        XCTAssertEqual(keys.count, numbers.count)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        func json(_ value: some Encodable) throws -> String { String(decoding: try encoder.encode(value), as: UTF8.self) }
        let result = try Questbak.run(["diff", a.path, b.path])
        XCTAssertEqual(result.status, 1, result.standardError)
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        let name = try json(text)
        XCTAssertTrue(lines.contains { $0.hasPrefix("  ~ _pk 1 ") && $0.contains(" → \(name)") }, result.standardOutput)
        for (key, number) in zip(keys, numbers) {
            let line = try XCTUnwrap(lines.first { $0.hasPrefix("  ~ _pk \(key) ") && $0.contains("actualSeconds") }, "\(key)")
            let expected = try json(number)
            XCTAssertTrue(line.contains("→ \(expected)"), "\(number): \(line)")
        }
    }

    /// The two documented ways to V2 (`migrate`, and `import --validate --to-version 2.0.0` of the
    /// store's backup) give the same records, cloudIDs included, and diff matches every one, as a
    /// merge does.
    func testMigrateAndImportToV2GiveTheSameRecords() throws {
        for fixture in ["v1-typical", "v1-anomalies"] {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture(fixture)
            let now = "2026-01-01T00:00:00Z"
            let migrated = directory.path("migrated.store")
            let migration = try Questbak.run(["migrate", store.path, "-o", migrated.path, "--now", now, "--json"])
            XCTAssertEqual(migration.status, 0, migration.standardError)
            let archive = directory.path("backup.qbak")
            XCTAssertEqual(try Questbak.run(["export", store.path, "-o", archive.path, "-q"]).status, 0)
            let imported = directory.path("imported/default.store")
            let restore = try Questbak.run([
                "import", archive.path, "--validate", "--into", imported.path, "--to-version", "2.0.0", "--now", now, "--json",
            ])
            XCTAssertEqual(restore.status, 0, restore.standardError)
            func cloudIDs(_ output: Data) throws -> Int? {
                let counts = (try JSONSerialization.jsonObject(with: output) as? [String: Any])?["counts"] as? [String: Int]
                return counts?["migration.cloudID"]
            }
            XCTAssertEqual(try cloudIDs(migration.outputData), try cloudIDs(restore.outputData), fixture)
            let diff = try Questbak.run(["diff", migrated.path, imported.path])
            XCTAssertEqual(diff.status, 0, "\(fixture): \(diff.standardOutput)\(diff.standardError)")
            XCTAssertTrue(diff.standardOutput.hasSuffix("0 added, 0 removed, 0 changed\n"), diff.standardOutput)
            // A merge of the import's backup into the migrated store matches every record too.
            let backup = directory.path("imported.qbak")
            XCTAssertEqual(try Questbak.run(["export", imported.path, "-o", backup.path, "-q"]).status, 0)
            let merge = try Questbak.run(["import", backup.path, "--merge", "--into", migrated.path, "--dry-run"])
            XCTAssertEqual(merge.status, 0, merge.standardError)
            XCTAssertTrue(merge.standardOutput.contains("nothing to merge"), "\(fixture): \(merge.standardOutput)")
        }
    }

    /// A store side is read by the exporter's own pass (its record lines parsed in memory), an
    /// archive side from the archive: the two give the same listing, value for value, for
    /// records that differ in every kind of value (strings with NULs and non-ASCII text, Int64
    /// extremes and a large integer, dates, a decimal, doubles and a float, a UUID, binary and
    /// transformable values, a composite, to-one, to-many with and without an inverse, many to
    /// many, sub-entities), and for members the same up to a later record (their first line
    /// the other side's, so first only hashed, then read again) or the same throughout.
    func testAStoreAndItsArchiveGiveTheSameListingForEveryKindOfValue() throws {
        let edits: [(fixture: String, sql: [String])] = [
            (
                "AnyApp/kitchen-sink",
                [
                    """
                    UPDATE ZRECIPE SET ZCALORIES = 9007199254740993, ZCOST = '12.75', ZCREATEDAT = ZCREATEDAT + 0.25, ZRATING = 1e300, \
                    ZSWEETNESS = -0.0, ZCODE = 'NEGRONI' || char(0) || 'x', ZNAME = 'Négroni 🍸' || char(10) || '"q"', \
                    ZNAME2 = 'Caffè', ZIDENTIFIER = X'00112233445566778899AABBCCDDEEFF', ZFLAVORS = CAST('["Anise"]' AS BLOB), \
                    ZKEYWORDS = (SELECT ZKEYWORDS FROM ZRECIPE WHERE Z_PK = 2), ZPHOTO = CAST(ZPHOTO || X'00' AS BLOB), ZAUTHOR = 2, \
                    ZFEATUREDTAG = 3 WHERE Z_PK = 1
                    """,
                    "UPDATE ZRECIPE SET ZCALORIES = -9223372036854775807, ZRATINGCOUNT = 7, ZSERVINGS = NULL WHERE Z_PK = 2",
                    "DELETE FROM Z_5TAGS WHERE Z_5RECIPES = 1 AND Z_7TAGS = 2",
                    "INSERT INTO Z_5TAGS (Z_5RECIPES, Z_7TAGS) VALUES (3, 3)",
                    "UPDATE ZINGREDIENT SET ZMILLILITERS = 30.5, ZISCARBONATED = 1 WHERE Z_PK = 1",
                    "UPDATE ZINGREDIENT SET ZRECIPE = 1, ZCUT = 'zest' WHERE Z_PK = 3",
                    // The first record of each of these is as it was: hashed, then read again.
                    "UPDATE ZSTEP SET Z5STEPS = 1, ZTEXT = 'Garnish' || char(9) || 'twice.', ZSECONDS = 5 WHERE Z_PK = 4",
                    "UPDATE ZTAG SET ZCOLOR = 7, ZLABEL = '日本語' WHERE Z_PK = 3",
                ]
            ),
            (
                "v2-typical",
                [
                    """
                    UPDATE ZTASKESTIMATION SET ZACTUALSECONDS = 1e-7, ZRECORDEDAT = ZRECORDEDAT - 0.5, ZTASKDISPLAYNAME = 'a' || char(0) || 'b' \
                    WHERE Z_PK = (SELECT max(Z_PK) FROM ZTASKESTIMATION)
                    """,
                    "UPDATE ZGAMESESSION SET ZROUTINE = (SELECT min(Z_PK) FROM ZROUTINE) WHERE Z_PK = (SELECT max(Z_PK) FROM ZGAMESESSION)",
                ]
            ),
            ("AnyApp/bennie-game", ["UPDATE ZPLAYERDATA SET ZNAME = ZNAME || ' 🦊' WHERE Z_PK = (SELECT max(Z_PK) FROM ZPLAYERDATA)"]),
            // A photo as TEXT, which the model's Binary cannot hold: that store is exported by
            // its tables, and both sides are compared so. (Read by the exporter's pass, the
            // store's first entities were handed over by the model before the photo was met, and
            // were loaded twice.)
            (
                "AnyApp/kitchen-sink",
                [
                    "UPDATE ZRECIPE SET ZPHOTO = CAST(ZPHOTO AS TEXT) WHERE Z_PK = 1",
                    "UPDATE ZINGREDIENT SET ZCUT = 'zest' WHERE Z_PK = 3",
                ]
            ),
        ]
        for (fixture, sql) in edits {
            let directory = try TemporaryTestDirectory()
            let a = try directory.copyFixture(fixture)
            let b = try directory.copyFixture(fixture, as: "edited")
            try DatabaseQueue(path: b.path).write { db in
                for statement in sql { try db.execute(sql: statement) }
            }
            var archives: [URL] = []
            for (store, name) in [(a, "a.qbak"), (b, "b.qbak")] {
                let archive = directory.path(name)
                let export = try Questbak.run(["export", store.path, "-o", archive.path, "-q"])
                XCTAssertEqual(export.status, 0, "\(fixture): \(export.standardError)")
                archives.append(archive)
            }
            func listing(_ arguments: [String]) throws -> String {
                let result = try Questbak.run(["diff"] + arguments)
                XCTAssertEqual(result.status, 1, "\(fixture) \(arguments): \(result.standardOutput)\(result.standardError)")
                guard arguments.contains("--json") else { return result.standardOutput }
                // The inputs' paths aside.
                var document = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
                document["a"] = nil
                document["b"] = nil
                return String(decoding: try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys]), as: UTF8.self)
            }
            for format in [[], ["--json"]] {
                let byArchives = try listing([archives[0].path, archives[1].path] + format)
                XCTAssertTrue(byArchives.contains("changed"), byArchives)
                for (left, right) in [(a, b), (a, archives[1]), (archives[0], b)] {
                    XCTAssertEqual(
                        try listing([left.path, right.path] + format), byArchives,
                        "\(fixture): \(left.lastPathComponent) \(right.lastPathComponent)")
                }
                // And the other way round.
                XCTAssertEqual(
                    try listing([b.path, a.path] + format), try listing([archives[1].path, archives[0].path] + format), fixture)
            }
        }
    }
}
