import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures

final class MigrationCommandTests: XCTestCase {
    /// A private copy of the repository's Fixtures folder (stores and golden dumps).
    func copyOfFixtures(_ directory: TemporaryTestDirectory) throws -> URL {
        let copy = directory.path("Fixtures")
        try FileManager.default.copyItem(at: Repository.fixtures, to: copy)
        return copy
    }

    func scalar(_ store: URL, _ sql: String) throws -> String? {
        var configuration = Configuration()
        configuration.readonly = true
        return try DatabaseQueue(path: store.path, configuration: configuration).read { try String.fetchOne($0, sql: sql) }
    }

    func testTheGatePassesOnTheRepositoryFixtures() throws {
        let directory = try TemporaryTestDirectory()
        let fixtures = try copyOfFixtures(directory)
        let result = try Questbak.run(["verify-migration", "--fixtures", fixtures.path], environment: ["QUESTBAK_RECORD": "0"])
        XCTAssertEqual(result.status, 0, result.standardOutput)
        XCTAssertTrue(result.standardOutput.hasSuffix("20 passed, 0 failed\n"), result.standardOutput)
        for fixture in ["v1-typical", "v1-edge-cases", "v1-anomalies", "v1-wal"] {
            // The one gate: TimeQuest's fixtures get the launch validity check any app's get.
            for check in ["migrate", "golden", "invariants", "valid", "round-trip"] {
                XCTAssertTrue(
                    result.standardOutput.contains("ok   \(fixture)/default.store: \(check)"),
                    "\(fixture) \(check)\n\(result.standardOutput)")
            }
        }
        XCTAssertFalse(result.standardOutput.contains("v2-typical"), "stores already at the newest version are not migrated")
    }

    func testAMutatedGoldenDumpFailsWithADiff() throws {
        let directory = try TemporaryTestDirectory()
        let fixtures = try copyOfFixtures(directory)
        let golden = fixtures.appendingPathComponent("v1-typical/default.store.expected-2.0.0.dump")
        let text = try String(contentsOf: golden, encoding: .utf8)
        try text.replacingOccurrences(of: "\"name\":\"bedtime\"", with: "\"name\":\"bedtime!\"").write(
            to: golden, atomically: true, encoding: .utf8)
        let result = try Questbak.run(["verify-migration", "--fixtures", fixtures.path])
        XCTAssertEqual(result.status, 3, result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("FAIL v1-typical/default.store: golden"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("- {\"_pk\":3,\"_opt\":1,\"activeDays\":[1,2,3,4,5,6,7]"), result.standardOutput)
        // The −/+ lines say which side is which.
        XCTAssertTrue(result.standardOutput.contains("--- expected (default.store.expected-2.0.0.dump)"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("+++ actual (the migrated store)"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("\"name\":\"bedtime!\""), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("\"name\":\"bedtime\""), result.standardOutput)
        XCTAssertTrue(result.standardOutput.hasSuffix("19 passed, 1 failed\n"), result.standardOutput)
    }

    func testAFixtureWithADroppedRecordFails() throws {
        let directory = try TemporaryTestDirectory()
        let fixtures = try copyOfFixtures(directory)
        let store = fixtures.appendingPathComponent("v1-typical/default.store")
        try DatabaseQueue(path: store.path).write { try $0.execute(sql: "DELETE FROM ZTASKESTIMATION WHERE Z_PK = 7") }
        let result = try Questbak.run(["verify-migration", "--fixtures", fixtures.path])
        XCTAssertEqual(result.status, 3, result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("FAIL v1-typical/default.store: golden"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("- entity TaskEstimation Z_ENT=5 count=36 Z_MAX=36"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("+ entity TaskEstimation Z_ENT=5 count=35 Z_MAX=36"), result.standardOutput)
    }

    /// A golden recorded before the one dump format (TimeQuest's `entity`/`_pk=` lines) fails by
    /// saying so and how to record it again, not with a diff of every line; recorded again, the
    /// gate passes.
    func testAGoldenOfAnEarlierDumpFormatIsRecordedAgain() throws {
        let directory = try TemporaryTestDirectory()
        let fixtures = try copyOfFixtures(directory)
        let golden = fixtures.appendingPathComponent("v1-typical/default.store.expected-2.0.0.dump")
        try "# questbak store dump\nschema 2.0.0\nentity GameSession Z_ENT=1 count=9 Z_MAX=12\n  _pk=1 xpEarned=40\n".write(
            to: golden, atomically: true, encoding: .utf8)
        let result = try Questbak.run(["verify-migration", "--fixtures", fixtures.path], environment: ["QUESTBAK_RECORD": "0"])
        XCTAssertEqual(result.status, 3, result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("FAIL v1-typical/default.store: golden"), result.standardOutput)
        XCTAssertTrue(
            result.standardOutput.contains(
                "default.store.expected-2.0.0.dump is in an earlier dump format: record it again with --record (or QUESTBAK_RECORD=1)"),
            result.standardOutput)
        XCTAssertFalse(result.standardOutput.contains("--- expected"), "no diff of a golden in another form")
        XCTAssertTrue(result.standardOutput.hasSuffix("19 passed, 1 failed\n"), result.standardOutput)
        let json = try Questbak.run(["verify-migration", "--fixtures", fixtures.path, "--json"], environment: ["QUESTBAK_RECORD": "0"])
        XCTAssertTrue(json.standardOutput.contains("\"earlierDumpFormat\" : \"default.store.expected-2.0.0.dump\""), json.standardOutput)

        XCTAssertEqual(try Questbak.run(["verify-migration", "--fixtures", fixtures.path, "--record"]).status, 3)
        let recorded = try String(contentsOf: golden, encoding: .utf8)
        XCTAssertTrue(recorded.hasPrefix("# questbak store dump 2\nmetadata uuid="), recorded)
        XCTAssertEqual(
            recorded,
            try String(
                contentsOf: Repository.fixtures.appendingPathComponent("v1-typical/default.store.expected-2.0.0.dump"), encoding: .utf8))
        let again = try Questbak.run(["verify-migration", "--fixtures", fixtures.path], environment: ["QUESTBAK_RECORD": "0"])
        XCTAssertEqual(again.status, 0, again.standardOutput)
    }

    /// The launch validity check applies to TimeQuest's stores too (one gate): a proposed schema
    /// that makes a to-one required, which no lightweight rule refuses, fails `valid` for a store
    /// holding a record without it, naming the entity, `_pk` and relationship.
    func testTheValidCheckFindsWhatANewTimeQuestSchemaWouldRefuseAtLaunch() throws {
        let directory = try TemporaryTestDirectory()
        let fixtures = try copyOfFixtures(directory)
        let store = fixtures.appendingPathComponent("v1-typical/default.store")
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { try $0.execute(sql: "UPDATE ZROUTINETASK SET ZROUTINE = NULL WHERE Z_PK = 2") }
        try queue.close()
        let printed = try Questbak.run(["schema", "2.0.0"])
        var schema = try XCTUnwrap(JSONSerialization.jsonObject(with: printed.outputData) as? [String: Any])
        schema["versionIdentifier"] = "3.0.0"
        var entities = try XCTUnwrap(schema["entities"] as? [[String: Any]])
        for index in entities.indices where entities[index]["name"] as? String == "RoutineTask" {
            var relationships = try XCTUnwrap(entities[index]["relationships"] as? [[String: Any]])
            for r in relationships.indices where relationships[r]["name"] as? String == "routine" { relationships[r]["optional"] = false }
            entities[index]["relationships"] = relationships
        }
        schema["entities"] = entities
        let v3 = directory.path("v3.json")
        try JSONSerialization.data(withJSONObject: schema).write(to: v3)
        let result = try Questbak.run(["verify-migration", "--fixtures", fixtures.path, "--schema", v3.path])
        XCTAssertEqual(result.status, 3, result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("FAIL v1-typical/default.store: valid"), result.standardOutput)
        XCTAssertTrue(
            result.standardOutput.contains(
                "RoutineTask _pk 2 routine: a required to-one that is empty or names no Routine (Core Data 1580)"),
            result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("ok   v1-edge-cases/default.store: valid"), result.standardOutput)
    }

    /// V2 with one property removed and one retyped: what a careless V3 would do.
    func nonLightweightSchema(in directory: TemporaryTestDirectory) throws -> URL {
        let printed = try Questbak.run(["schema", "2.0.0"])
        XCTAssertEqual(printed.status, 0)
        var schema = try XCTUnwrap(JSONSerialization.jsonObject(with: printed.outputData) as? [String: Any])
        schema["versionIdentifier"] = "3.0.0"
        var entities = try XCTUnwrap(schema["entities"] as? [[String: Any]])
        for index in entities.indices where entities[index]["name"] as? String == "Routine" {
            var attributes = entities[index]["attributes"] as! [[String: Any]]
            attributes.removeAll { $0["name"] as? String == "displayName" }
            entities[index]["attributes"] = attributes
        }
        for index in entities.indices where entities[index]["name"] as? String == "RoutineTask" {
            var attributes = entities[index]["attributes"] as! [[String: Any]]
            for a in attributes.indices where attributes[a]["name"] as? String == "orderIndex" {
                attributes[a]["type"] = "string"
                attributes[a]["default"] = ["value": "0"]
            }
            entities[index]["attributes"] = attributes
        }
        schema["entities"] = entities
        let url = directory.path("v3.json")
        try JSONSerialization.data(withJSONObject: schema, options: [.sortedKeys]).write(to: url)
        return url
    }

    func testANonLightweightSchemaChangeFailsNamingEachProperty() throws {
        let directory = try TemporaryTestDirectory()
        let fixtures = try copyOfFixtures(directory)
        let v3 = try nonLightweightSchema(in: directory)
        let checked = try Questbak.run(["check-migration", v3.path])
        XCTAssertEqual(checked.status, 65)
        XCTAssertTrue(checked.standardError.contains("schema 2.0.0 → 3.0.0 is not a lightweight migration"), checked.standardError)
        XCTAssertTrue(
            checked.standardError.contains("Routine.displayName: removed, or renamed without @Attribute(originalName: \"displayName\")"),
            checked.standardError)
        XCTAssertTrue(checked.standardError.contains("RoutineTask.orderIndex: type changes from integer to string"), checked.standardError)
        let gate = try Questbak.run(["verify-migration", "--fixtures", fixtures.path, "--schema", v3.path])
        XCTAssertEqual(gate.status, 3, gate.standardOutput)
        XCTAssertTrue(gate.standardOutput.contains("FAIL v1-typical/default.store: migrate"), gate.standardOutput)
        XCTAssertTrue(gate.standardOutput.contains("Routine.displayName: removed"), gate.standardOutput)
    }

    func testAProposedVersionThatAddsAnEntityMigratesAndRenumbers() throws {
        let directory = try TemporaryTestDirectory()
        let printed = try Questbak.run(["schema"])
        var schema = try XCTUnwrap(JSONSerialization.jsonObject(with: printed.outputData) as? [String: Any])
        schema["versionIdentifier"] = "3.0.0"
        var entities = try XCTUnwrap(schema["entities"] as? [[String: Any]])
        // "Badge" sorts first, so every existing entity's number moves up by one.
        entities.append([
            "name": "Badge",
            "attributes": [
                ["name": "title", "type": "string", "default": ["value": ""]],
                ["name": "cloudID", "type": "string", "default": "uuidString"],
            ],
        ])
        for index in entities.indices where entities[index]["name"] as? String == "Routine" {
            var attributes = entities[index]["attributes"] as! [[String: Any]]
            attributes.append(["name": "colour", "type": "string", "optional": true])
            attributes.append(["name": "archivedAt", "type": "date", "default": "now"])
            for a in attributes.indices where attributes[a]["name"] as? String == "displayName" {
                attributes[a]["name"] = "title"
                attributes[a]["renamedFrom"] = "displayName"
            }
            entities[index]["attributes"] = attributes
        }
        schema["entities"] = entities
        let v3 = directory.path("v3.json")
        try JSONSerialization.data(withJSONObject: schema).write(to: v3)
        XCTAssertEqual(try Questbak.run(["check-migration", v3.path]).status, 0)

        let store = try directory.copyFixture("v2-typical")
        let migrated = directory.path("v3.store")
        let result = try Questbak.run([
            "migrate", store.path, "-o", migrated.path, "--schema", v3.path, "--now", "2026-02-02T00:00:00Z", "--json",
        ])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(
            try scalar(migrated, "SELECT group_concat(Z_ENT || ':' || Z_NAME, ' ') FROM Z_PRIMARYKEY WHERE Z_ENT < 16000"),
            "1:Badge 2:GameSession 3:PlayerProfile 4:Routine 5:RoutineTask 6:TaskEstimation")
        XCTAssertEqual(try scalar(migrated, "SELECT group_concat(DISTINCT Z_ENT) FROM ZROUTINE"), "4")
        XCTAssertEqual(try scalar(migrated, "SELECT ZTITLE FROM ZROUTINE WHERE Z_PK = 1"), "Morning Routine", "renamed, not lost")
        XCTAssertEqual(try scalar(migrated, "SELECT count(*) FROM ZROUTINE WHERE ZARCHIVEDAT = 791683200 AND ZCOLOUR IS NULL"), "3")
        XCTAssertEqual(try scalar(migrated, "SELECT count(DISTINCT ZCLOUDID) FROM ZTASKESTIMATION"), "24", "V2 cloudIDs are kept")
        // New columns come last, as ALTER TABLE adds them.
        XCTAssertEqual(
            try scalar(migrated, "SELECT group_concat(name, ',') FROM pragma_table_info('ZROUTINE')"),
            "Z_PK,Z_ENT,Z_OPT,ZISACTIVE,ZCREATEDAT,ZUPDATEDAT,ZCLOUDID,ZTITLE,ZNAME,ZACTIVEDAYS,ZARCHIVEDAT,ZCOLOUR")
        let inspection = try Questbak.run(["inspect", migrated.path, "--json"])
        XCTAssertTrue(inspection.standardOutput.contains("\"versionIdentifiers\" : [\n    \"3.0.0\"\n  ]"), inspection.standardOutput)

        // The gate works on a team's own fixture folder and a proposed schema.
        let teamFixtures = directory.path("team")
        try FileManager.default.createDirectory(at: teamFixtures, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: store, to: teamFixtures.appendingPathComponent("device-a.store"))
        let recorded = try Questbak.run(["verify-migration", "--fixtures", teamFixtures.path, "--schema", v3.path, "--record"])
        XCTAssertEqual(recorded.status, 3, "record mode never passes")
        XCTAssertTrue(
            FileManager.default.fileExists(atPath: teamFixtures.appendingPathComponent("device-a.store.expected-3.0.0.dump").path))
        let verified = try Questbak.run(["verify-migration", "--fixtures", teamFixtures.path, "--schema", v3.path])
        XCTAssertEqual(verified.status, 0, verified.standardOutput)
        XCTAssertTrue(verified.standardOutput.hasSuffix("5 passed, 0 failed\n"), verified.standardOutput)
    }

    /// A property that becomes required gets its default where a record had none, as Core Data's
    /// migration fills it, and each record so changed is reported (the migrator before the one
    /// migrator filled them without a word); a value that was there stays.
    func testAPropertyThatBecomesRequiredGetsItsDefaultAndEachChangeIsReported() throws {
        let directory = try TemporaryTestDirectory()
        let printed = try Questbak.run(["schema", "2.0.0"])
        var schema = try XCTUnwrap(JSONSerialization.jsonObject(with: printed.outputData) as? [String: Any])
        schema["versionIdentifier"] = "3.0.0"
        var entities = try XCTUnwrap(schema["entities"] as? [[String: Any]])
        for index in entities.indices where entities[index]["name"] as? String == "RoutineTask" {
            var attributes = try XCTUnwrap(entities[index]["attributes"] as? [[String: Any]])
            for a in attributes.indices where attributes[a]["name"] as? String == "referenceDurationSeconds" {
                attributes[a]["optional"] = false
                attributes[a]["default"] = ["value": 60]
            }
            entities[index]["attributes"] = attributes
        }
        schema["entities"] = entities
        let v3 = directory.path("v3.json")
        try JSONSerialization.data(withJSONObject: schema).write(to: v3)
        XCTAssertEqual(try Questbak.run(["check-migration", v3.path]).status, 0)

        let store = try directory.copyFixture("v2-typical")
        let kept = try XCTUnwrap(try scalar(store, "SELECT group_concat(Z_PK || '=' || ZREFERENCEDURATIONSECONDS) FROM ZROUTINETASK"))
        let empty = try XCTUnwrap(try scalar(store, "SELECT count(*) FROM ZROUTINETASK WHERE ZREFERENCEDURATIONSECONDS IS NULL"))
        XCTAssertNotEqual(empty, "0", "the fixture has tasks without a reference duration")
        let migrated = directory.path("v3.store")
        let report = directory.path("report.json")
        let result = try Questbak.run([
            "migrate", store.path, "-o", migrated.path, "--schema", v3.path, "--json", "--report", report.path,
        ])
        XCTAssertEqual(result.status, 0, result.standardError)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        XCTAssertEqual(document["counts"] as? [String: Int], ["migration.default": Int(empty)!])
        XCTAssertEqual(try scalar(migrated, "SELECT count(*) FROM ZROUTINETASK WHERE ZREFERENCEDURATIONSECONDS IS NULL"), "0")
        XCTAssertEqual(try scalar(migrated, "SELECT count(*) FROM ZROUTINETASK WHERE ZREFERENCEDURATIONSECONDS = 60"), empty)
        XCTAssertEqual(
            try scalar(
                migrated,
                "SELECT group_concat(Z_PK || '=' || ZREFERENCEDURATIONSECONDS) FROM ZROUTINETASK WHERE Z_PK IN "
                    + "(SELECT Z_PK FROM ZROUTINETASK WHERE ZREFERENCEDURATIONSECONDS != 60)"), kept, "values that were there stay")
        let entries = try String(contentsOf: report, encoding: .utf8)
        XCTAssertTrue(entries.contains("\"field\":\"referenceDurationSeconds\""), entries)
    }

    /// A migration to a profile's version alters the store as Core Data's does in place: its
    /// persistent history stays, and nothing says it starts empty.
    func testAVersionMigrationKeepsThePersistentHistory() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        let queue = try DatabaseQueue(path: store.path)
        try queue.write {
            try $0.execute(
                sql: "INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (1, 16003, 1, 'NSCoreDataCoreSpotlightExporter')")
        }
        try queue.close()
        let migrated = directory.path("v2.store")
        let result = try Questbak.run(["migrate", store.path, "-o", migrated.path, "--now", "2026-01-01T00:00:00Z"])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertFalse(result.standardOutput.contains("start empty"), result.standardOutput)
        XCTAssertEqual(try scalar(migrated, "SELECT ZNAME FROM ATRANSACTIONSTRING WHERE Z_PK = 1"), "NSCoreDataCoreSpotlightExporter")
        XCTAssertEqual(try scalar(migrated, "SELECT Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT = 16003"), "TRANSACTIONSTRING")
    }

    /// Records are migrated by entity: a row whose `Z_ENT` is no entity of the store's version
    /// would be left behind, so the store is refused, naming the table, and nothing is written.
    func testAStoreWithARowOfNoEntityIsRefusedNotMigratedWithoutIt() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { try $0.execute(sql: "UPDATE ZROUTINE SET Z_ENT = 99 WHERE Z_PK = 2") }
        try queue.close()
        let output = directory.path("v2.store")
        let result = try Questbak.run(["migrate", store.path, "-o", output.path])
        XCTAssertEqual(result.status, 65, result.standardError)
        XCTAssertTrue(result.standardError.contains("ZROUTINE: 1 row with Z_ENT other than 3 (Routine)"), result.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
    }

    /// Another app's store is no TimeQuest version, whatever version its metadata names: its
    /// "1.0.0" is not TimeQuest's, its "2.1.0" no newer TimeQuest. Once, the first was refused as a
    /// damaged TimeQuest 1.0.0 store and the second as needing a newer questbak.
    func testAnotherAppsStoreIsRefusedAsAnotherAppsNotAsATimeQuestVersion() throws {
        for fixture in ["AnyApp/bennie-game", "AnyApp/kitchen-sink"] {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture(fixture)
            let output = directory.path("v2.store")
            let result = try Questbak.run(["migrate", store.path, "-o", output.path])
            XCTAssertEqual(result.status, 65, "\(fixture): \(result.standardError)")
            XCTAssertTrue(result.standardError.contains("the store is another app's: it has none of the entities"), result.standardError)
            XCTAssertTrue(result.standardError.contains("give --to with a store the app's new build made"), result.standardError)
            XCTAssertFalse(result.standardError.contains("upgrade questbak"), result.standardError)
            XCTAssertFalse(FileManager.default.fileExists(atPath: output.path), fixture)
        }
        // A SQLite file that is no Core Data store is still refused as that, first (review).
        let directory = try TemporaryTestDirectory()
        let plain = directory.path("plain.store")
        try DatabaseQueue(path: plain.path).write { try $0.execute(sql: "CREATE TABLE t (x); INSERT INTO t VALUES (1)") }
        let result = try Questbak.run(["migrate", plain.path, "-o", directory.path("v2.store").path])
        XCTAssertEqual(result.status, 65, result.standardError)
        XCTAssertTrue(result.standardError.contains("not a Core Data / SwiftData store"), result.standardError)
    }

    func testMigrateWritesAV2StoreAndLeavesTheSourceAlone() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-wal")
        let folder = store.deletingLastPathComponent()
        let before = try DirectoryState(of: folder)
        let output = directory.path("v2.store")
        let result = try Questbak.run(["migrate", store.path, "-o", output.path, "--json"])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(try DirectoryState(of: folder), before)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        // Core Data's single default identifies no row: every one of the 18 rows gets its own (the
        // first row of each entity too, as an import of the store's backup to 2.0.0 gives it).
        XCTAssertEqual(report["counts"] as? [String: Int], ["migration.cloudID": 18])
        XCTAssertEqual(try scalar(output, "SELECT count(*) FROM ZTASKESTIMATION"), "8", "rows that were only in the WAL are migrated too")
        for table in ["ZROUTINE", "ZROUTINETASK", "ZGAMESESSION", "ZTASKESTIMATION"] {
            XCTAssertEqual(try scalar(output, "SELECT count(*) - count(DISTINCT ZCLOUDID) FROM \(table)"), "0", table)
        }
        let inspection = try Questbak.run(["inspect", output.path, "--json"])
        XCTAssertTrue(inspection.standardOutput.contains("\"hashesMatchVersion\" : \"2.0.0\""), inspection.standardOutput)

        let again = try Questbak.run(["migrate", output.path, "-o", directory.path("v2b.store").path])
        XCTAssertEqual(again.status, 0, "already at the target version is a no-op: \(again.standardError)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("v2b.store").path))
    }

    func testMigratingAStoreAlreadyAtTheTargetVersionIsANoOp() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v2-typical")
        let folder = store.deletingLastPathComponent()
        let before = try DirectoryState(of: folder)
        let output = directory.path("out.store")
        let report = directory.path("report.json")
        let result = try Questbak.run(["migrate", store.path, "-o", output.path, "--report", report.path])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(result.standardOutput, "\(store.path): already at schema 2.0.0; nothing to do\n")
        XCTAssertEqual(result.standardError, "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path), "nothing is written, not even -o")
        XCTAssertFalse(FileManager.default.fileExists(atPath: report.path), "nor the report")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted(), ["v2-typical"])

        let inPlace = try Questbak.run(["migrate", store.path, "--in-place", "--to-version", "2.0.0"])
        XCTAssertEqual(inPlace.status, 0, inPlace.standardError)
        XCTAssertTrue(inPlace.standardOutput.contains("already at schema 2.0.0; nothing to do"), inPlace.standardOutput)
        XCTAssertEqual(try DirectoryState(of: folder), before, "no backup, no change")

        let json = try Questbak.run(["migrate", store.path, "-o", output.path, "--json"])
        XCTAssertEqual(json.status, 0, json.standardError)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: json.outputData) as? [String: Any])
        XCTAssertEqual(document["sourceSchemaVersion"] as? String, "2.0.0")
        XCTAssertEqual(document["targetSchemaVersion"] as? String, "2.0.0")
        XCTAssertEqual(document["counts"] as? [String: Int], [:])
        XCTAssertEqual(try Questbak.run(["migrate", store.path, "-o", output.path, "--quiet"]).standardOutput, "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
    }

    func testMigrateOntoAnExistingOutputSaysWhatToDoInstead() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        let existing = directory.path("existing.store")
        try Data("keep me".utf8).write(to: existing)
        let result = try Questbak.run(["migrate", store.path, "-o", existing.path])
        XCTAssertEqual(result.status, 73, result.standardError)
        XCTAssertTrue(result.standardError.contains("(choose another -o, or use --in-place to migrate STORE itself)"), result.standardError)
        XCTAssertEqual(try Data(contentsOf: existing), Data("keep me".utf8))
    }

    // MARK: - verify-migration: a gate that checks nothing fails

    func testTheGateFailsOnAnEmptyFixturesFolder() throws {
        let directory = try TemporaryTestDirectory()
        let empty = directory.path("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let result = try Questbak.run(["verify-migration", "--fixtures", empty.path])
        XCTAssertEqual(result.status, 3, result.standardOutput + result.standardError)
        XCTAssertFalse(result.standardOutput.contains("0 passed"), result.standardOutput)
        XCTAssertTrue(result.standardError.contains("questbak: error: nothing to verify in \(empty.path)"), result.standardError)
        XCTAssertTrue(result.standardError.contains("stores of a schema older than 2.0.0"), result.standardError)
        XCTAssertTrue(
            result.standardError.contains("files named *.store directly in that folder or in its subfolders one level down"),
            result.standardError)
        XCTAssertTrue(result.standardError.contains("and found none"), result.standardError)
        // --json and record mode too: nothing checked is never a pass.
        XCTAssertEqual(try Questbak.run(["verify-migration", "--fixtures", empty.path, "--json"]).status, 3)
    }

    func testTheGateFailsWhenEveryStoreIsAlreadyAtTheTargetVersion() throws {
        let directory = try TemporaryTestDirectory()
        let fixtures = directory.path("team")
        try FileManager.default.createDirectory(at: fixtures.appendingPathComponent("device-a"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Repository.fixtures.appendingPathComponent("v2-typical/default.store"),
            to: fixtures.appendingPathComponent("device-a/default.store"))
        let result = try Questbak.run(["verify-migration", "--fixtures", fixtures.path])
        XCTAssertEqual(result.status, 3, result.standardOutput + result.standardError)
        XCTAssertTrue(result.standardError.contains("nothing to verify in \(fixtures.path)"), result.standardError)
        XCTAssertTrue(
            result.standardError.contains("the one store found (device-a/default.store) is already at schema 2.0.0"), result.standardError)
    }

    func testTheGateFailsWhenStoresAreNestedTooDeep() throws {
        let directory = try TemporaryTestDirectory()
        let fixtures = directory.path("team")
        let deep = fixtures.appendingPathComponent("ios17/iphone")
        try FileManager.default.createDirectory(at: deep, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Repository.fixtures.appendingPathComponent("v1-typical/default.store"),
            to: deep.appendingPathComponent("default.store"))
        let result = try Questbak.run(["verify-migration", "--fixtures", fixtures.path])
        XCTAssertEqual(result.status, 3, result.standardOutput + result.standardError)
        XCTAssertTrue(result.standardError.contains("and found none"), result.standardError)
        XCTAssertTrue(
            result.standardError.contains("stores deeper down are not searched: ios17/iphone/default.store"), result.standardError)
    }

    // MARK: - verify-migration: the fixtures folder is checked before anything runs

    func testTheGateNeedsAnExistingFixturesFolder() throws {
        let directory = try TemporaryTestDirectory()
        let missing = directory.path("nope")
        let result = try Questbak.run(["verify-migration", "--fixtures", missing.path])
        XCTAssertEqual(result.status, 66, result.standardError)
        XCTAssertEqual(
            result.standardError, "questbak: error: \(missing.path): no such folder (--fixtures names the folder of fixture stores)\n")
        XCTAssertEqual(result.standardOutput, "")
    }

    func testTheGateRefusesAFileAsItsFixturesFolder() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        let result = try Questbak.run(["verify-migration", "--fixtures", store.path])
        XCTAssertEqual(result.status, 66, result.standardError)
        XCTAssertFalse(result.standardError.contains("NSCocoaErrorDomain"), result.standardError)
        XCTAssertTrue(
            result.standardError.contains("\(store.path): is a file, not a folder; --fixtures expects a folder of fixture stores"),
            result.standardError)
        XCTAssertTrue(result.standardError.contains("such as \(store.deletingLastPathComponent().path)"), result.standardError)
    }

    func testTheGateRequiresFixtures() throws {
        // No silent ./Fixtures: the folder a gate checks is always named.
        let result = try Questbak.run(["verify-migration"])
        XCTAssertEqual(result.status, 64, result.standardOutput + result.standardError)
        XCTAssertTrue(result.standardError.contains("--fixtures"), result.standardError)
    }

    func testMigrateInPlaceKeepsABackup() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        let original = try Data(contentsOf: store)
        let result = try Questbak.run(["migrate", store.path, "--in-place", "--json"])
        XCTAssertEqual(result.status, 0, result.standardError)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        let backup = try XCTUnwrap(report["backup"] as? String)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: backup)), original)
        XCTAssertEqual(try scalar(store, "SELECT count(*) FROM ZTASKESTIMATION WHERE ZCLOUDID IS NOT NULL"), "36")
        XCTAssertEqual(try Questbak.run(["migrate", store.path]).status, 64, "-o or --in-place is required")
    }

    func testSchemaFilesWithUnsafeNamesAndUnknownVersionsAreRefused() throws {
        let directory = try TemporaryTestDirectory()
        let printed = try Questbak.run(["schema"])
        let hostile = String(decoding: printed.outputData, as: UTF8.self).replacingOccurrences(of: "\"name\" : \"colour\"", with: "x")
            .replacingOccurrences(of: "\"name\" : \"displayName\"", with: "\"name\" : \"x INTEGER; DROP TABLE ZROUTINE; --\"")
        let file = directory.path("hostile.json")
        try hostile.write(to: file, atomically: true, encoding: .utf8)
        let result = try Questbak.run(["check-migration", file.path])
        XCTAssertEqual(result.status, 65, result.standardError)
        XCTAssertTrue(
            result.standardError.contains("property name \"x INTEGER; DROP TABLE ZROUTINE; --\" is not a plain identifier"),
            result.standardError)
        XCTAssertEqual(try Questbak.run(["migrate", "x.store", "-o", "y.store", "--to-version", "9.9.9"]).status, 64)
        XCTAssertEqual(try Questbak.run(["schema", "9.9.9"]).status, 64)
        // A relationship whose toMany and maxCount disagree is no model Core Data has: a model
        // knows a to-one by its maxCount of 1 alone.
        let printedTasks = "\"name\" : \"tasks\""
        let source = String(decoding: printed.outputData, as: UTF8.self)
        XCTAssertTrue(source.contains(printedTasks), source)
        for (name, said) in [
            (printedTasks, "toMany is true but maxCount is 1"), ("\"name\" : \"routine\"", "toMany is false but maxCount is 0"),
        ] {
            let contradictory = directory.path("contradictory.json")
            let maxCount = said.hasPrefix("toMany is true") ? 1 : 0
            let text = source.replacingOccurrences(of: name, with: "\"maxCount\" : \(maxCount), \(name)")
            try text.write(to: contradictory, atomically: true, encoding: .utf8)
            let refused = try Questbak.run(["check-migration", contradictory.path])
            XCTAssertEqual(refused.status, 65, refused.standardError)
            XCTAssertTrue(refused.standardError.contains(said), refused.standardError)
        }
    }

    func testSchemaJSONRoundTrips() throws {
        for version in ["1.0.0", "2.0.0"] {
            let printed = try Questbak.run(["schema", version])
            XCTAssertEqual(printed.status, 0)
            let directory = try TemporaryTestDirectory()
            let file = directory.path("schema.json")
            try printed.outputData.write(to: file)
            // A schema printed and read back is the same schema: migrating to it is a no-op check.
            let checked = try Questbak.run(["check-migration", file.path, "--from", version])
            XCTAssertEqual(checked.status, 0, checked.standardError)
        }
        XCTAssertTrue(try Questbak.run(["schema"]).standardOutput.contains("\"singletonCloudID\" : \"singleton-player-profile\""))
    }
}
