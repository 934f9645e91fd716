import Foundation
import GRDB
import QuestBakKit
import QuestBakTestSupport
import XCTest

/// Schema files (`questbak schema` prints them; `check-migration FILE` and `--schema FILE` read
/// them): strict reading, problems located by name, `originalName` for renames, the format doc.
final class SchemaFileTests: XCTestCase {
    /// `questbak schema` (the newest built-in) as a JSON object to edit.
    func printedSchema() throws -> [String: Any] {
        let printed = try Questbak.run(["schema"])
        XCTAssertEqual(printed.status, 0, printed.standardError)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: printed.outputData) as? [String: Any])
    }

    /// `schema` with `edit` applied to the entity named `entity`.
    func editing(_ schema: [String: Any], entity: String, _ edit: (inout [String: Any]) -> Void) throws -> [String: Any] {
        var schema = schema
        var entities = try XCTUnwrap(schema["entities"] as? [[String: Any]])
        let index = try XCTUnwrap(entities.firstIndex { $0["name"] as? String == entity })
        edit(&entities[index])
        schema["entities"] = entities
        return schema
    }

    /// `entity`'s attribute `name` edited.
    func editing(
        _ schema: [String: Any], entity: String, attribute name: String, _ edit: @escaping (inout [String: Any]) -> Void
    ) throws -> [String: Any] {
        try editing(schema, entity: entity) { entity in
            var attributes = entity["attributes"] as! [[String: Any]]
            for index in attributes.indices where attributes[index]["name"] as? String == name { edit(&attributes[index]) }
            entity["attributes"] = attributes
        }
    }

    func write(_ schema: [String: Any], to directory: TemporaryTestDirectory, _ name: String = "schema.json") throws -> URL {
        let url = directory.path(name)
        try JSONSerialization.data(withJSONObject: schema, options: [.sortedKeys, .prettyPrinted]).write(to: url)
        return url
    }

    /// Runs `check-migration` on `schema` and expects it refused (65) with `message` on stderr.
    func assertRefused(_ schema: [String: Any], saying message: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let directory = try TemporaryTestDirectory()
        let url = try write(schema, to: directory)
        let result = try Questbak.run(["check-migration", url.path])
        XCTAssertEqual(result.status, 65, result.standardError, file: file, line: line)
        XCTAssertTrue(result.standardError.contains("\(url.path): not a schema: \(message)"), result.standardError, file: file, line: line)
    }

    // MARK: - Unknown keys

    func testAnUnknownKeyIsRefusedAtTheTopLevel() throws {
        var schema = try printedSchema()
        schema["typo"] = true
        try assertRefused(schema, saying: "top level: unknown key \"typo\" (a schema has versionIdentifier, entities)")
    }

    func testAnUnknownKeyIsRefusedInAnEntity() throws {
        let schema = try editing(try printedSchema(), entity: "Routine") { $0["typo"] = true }
        try assertRefused(schema, saying: "entity Routine: unknown key \"typo\"")
    }

    func testAnUnknownKeyIsRefusedInAnAttribute() throws {
        let schema = try editing(try printedSchema(), entity: "Routine", attribute: "name") { $0["typo"] = true }
        try assertRefused(
            schema,
            saying:
                "entity Routine, attribute name: unknown key \"typo\" (an attribute has name, type, optional, default, originalName, elements, transformer, valueClass, externalStorage, preservesValueOnDeletion, readOnly, versionHashModifier)"
        )
    }

    func testAnUnknownKeyIsRefusedInARelationship() throws {
        let schema = try editing(try printedSchema(), entity: "Routine") { entity in
            var relationships = entity["relationships"] as! [[String: Any]]
            relationships[0]["typo"] = true
            entity["relationships"] = relationships
        }
        try assertRefused(schema, saying: "entity Routine, relationship tasks: unknown key \"typo\"")
    }

    func testAnUnknownKeyIsRefusedInADefault() throws {
        let schema = try editing(try printedSchema(), entity: "Routine", attribute: "name") { $0["default"] = ["value": "", "typo": true] }
        try assertRefused(schema, saying: "entity Routine, attribute name: default: unknown key \"typo\"")
    }

    // MARK: - Problems located by name

    func testABadDefaultIsReportedByEntityAndAttributeName() throws {
        let symbol = try editing(try printedSchema(), entity: "Routine", attribute: "createdAt") { $0["default"] = "yesterday" }
        try assertRefused(
            symbol, saying: "entity Routine, attribute createdAt: default \"yesterday\" is not \"now\", \"uuidString\" or {\"value\": …}")
        let literal = try editing(try printedSchema(), entity: "Routine", attribute: "createdAt") { $0["default"] = ["value": "tomorrow"] }
        try assertRefused(literal, saying: "entity Routine, attribute createdAt: default {\"value\": …} must hold an ISO 8601 UTC date")
        let misplaced = try editing(try printedSchema(), entity: "Routine", attribute: "name") { $0["default"] = "now" }
        try assertRefused(misplaced, saying: "entity Routine, attribute name: default \"now\" is for date attributes, not string")
    }

    func testOtherProblemsAreReportedByNameToo() throws {
        let type = try editing(try printedSchema(), entity: "Routine", attribute: "isActive") { $0["type"] = "bool" }
        try assertRefused(type, saying: "entity Routine, attribute isActive: type \"bool\" is not one of integer, boolean, double")
        let optional = try editing(try printedSchema(), entity: "Routine", attribute: "isActive") { $0["optional"] = "yes" }
        try assertRefused(optional, saying: "entity Routine, attribute isActive: \"optional\" must be true or false")
        let unnamed = try editing(try printedSchema(), entity: "Routine", attribute: "isActive") { $0["name"] = nil }
        try assertRefused(unnamed, saying: "entity Routine, attributes[4]: missing key \"name\"")
        let rule = try editing(try printedSchema(), entity: "Routine") { entity in
            var relationships = entity["relationships"] as! [[String: Any]]
            relationships[1]["deleteRule"] = "delete"
            entity["relationships"] = relationships
        }
        try assertRefused(
            rule, saying: "entity Routine, relationship sessions: deleteRule \"delete\" is not one of nullify, cascade, deny, noAction")
    }

    // MARK: - Missing files

    func testAMissingSchemaFileIsMissingInput() throws {
        let directory = try TemporaryTestDirectory()
        let missing = directory.path("v3.json")
        let checked = try Questbak.run(["check-migration", missing.path])
        XCTAssertEqual(checked.status, 66, checked.standardError)
        XCTAssertEqual(
            checked.standardError,
            "questbak: error: \(missing.path): no such file, and not a built-in version (1.0.0, 2.0.0); give a store, a schema file (JSON, see `questbak schema`) or a built-in version\n"
        )
        let store = try directory.copyFixture("v1-typical")
        let migrated = try Questbak.run(["migrate", store.path, "-o", directory.path("out.store").path, "--schema", missing.path])
        XCTAssertEqual(migrated.status, 66, migrated.standardError)
        XCTAssertTrue(migrated.standardError.contains("no such schema file"), migrated.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("out.store").path))
        let fixtures = store.deletingLastPathComponent()
        let gate = try Questbak.run(["verify-migration", "--fixtures", fixtures.path, "--schema", missing.path])
        XCTAssertEqual(gate.status, 66, gate.standardError)
        XCTAssertTrue(gate.standardError.contains("no such schema file"), gate.standardError)
        let folder = try Questbak.run(["check-migration", directory.url.path])
        XCTAssertEqual(folder.status, 66, folder.standardError)
        XCTAssertTrue(
            folder.standardError.contains("is a folder; give a store, a schema file (JSON, see `questbak schema`) or a built-in version"),
            folder.standardError)
    }

    // MARK: - Renames: originalName

    /// The newest schema as 3.0.0 with Routine.displayName renamed to title, marked with `key`.
    func renamingSchema(key: String?) throws -> [String: Any] {
        var schema = try editing(try printedSchema(), entity: "Routine", attribute: "displayName") { attribute in
            attribute["name"] = "title"
            if let key { attribute[key] = "displayName" }
        }
        schema["versionIdentifier"] = "3.0.0"
        return schema
    }

    func testOriginalNameMarksARename() throws {
        let directory = try TemporaryTestDirectory()
        let v3 = try write(try renamingSchema(key: "originalName"), to: directory, "v3.json")
        let checked = try Questbak.run(["check-migration", v3.path])
        XCTAssertEqual(checked.status, 0, checked.standardError)
        let store = try directory.copyFixture("v2-typical")
        let migrated = directory.path("v3.store")
        let result = try Questbak.run(["migrate", store.path, "-o", migrated.path, "--schema", v3.path])
        XCTAssertEqual(result.status, 0, result.standardError)
        var configuration = Configuration()
        configuration.readonly = true
        let title = try DatabaseQueue(path: migrated.path, configuration: configuration).read {
            try String.fetchOne($0, sql: "SELECT ZTITLE FROM ZROUTINE WHERE Z_PK = 1")
        }
        XCTAssertEqual(title, "Morning Routine", "renamed, not lost")
    }

    /// `schema` with `added` entities appended, written to a file, and v2-typical migrated to it:
    /// the migrated store, opened read-only.
    func migratedV2Typical(
        to schema: [String: Any], adding added: [[String: Any]], in directory: TemporaryTestDirectory
    ) throws -> (store: URL, queue: DatabaseQueue) {
        var schema = schema
        schema["entities"] = try XCTUnwrap(schema["entities"] as? [[String: Any]]) + added
        let file = try write(schema, to: directory, "v3.json")
        let store = try directory.copyFixture("v2-typical")
        let migrated = directory.path("v3.store")
        let result = try Questbak.run(["migrate", store.path, "-o", migrated.path, "--schema", file.path, "-q"])
        XCTAssertEqual(result.status, 0, result.standardError)
        var configuration = Configuration()
        configuration.readonly = true
        return (migrated, try DatabaseQueue(path: migrated.path, configuration: configuration))
    }

    /// A new version with a parent entity and its sub-entity: the migrated store lays them out as
    /// Core Data does (one table, the parent's, with the sub-entity's columns; `Z_SUPER` the
    /// parent's number), and backs up and restores exactly. Since a schema's superentity reached
    /// the layout, the migration made the sub-entity a table of its own and refused its own result.
    func testANewSubEntityShareItsParentsTableInTheMigratedStore() throws {
        let directory = try TemporaryTestDirectory()
        var schema = try printedSchema()
        schema["versionIdentifier"] = "3.0.0"
        let (migrated, queue) = try migratedV2Typical(
            to: schema,
            adding: [
                ["name": "Animal", "attributes": [["name": "name", "type": "string", "optional": true]]],
                ["name": "Zebra", "superentity": "Animal", "attributes": [["name": "stripes", "type": "integer", "optional": true]]],
            ], in: directory)
        try queue.read { db in
            let keys = try Row.fetchAll(db, sql: "SELECT Z_NAME, Z_ENT, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_NAME IN ('Animal', 'Zebra')")
            XCTAssertEqual(
                keys.map { [$0[0] as String, String($0[1] as Int64), String($0[2] as Int64)] },
                [["Animal", "1", "0"], ["Zebra", "2", "1"]])
            XCTAssertFalse(try db.tableExists("ZZEBRA"), "a sub-entity has no table of its own")
            XCTAssertEqual(Set(try db.columns(in: "ZANIMAL").map(\.name)), ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME", "ZSTRIPES"])
        }
        let exported = try Questbak.run(["export", migrated.path, "-o", directory.path("v3.qbak").path, "--verify", "-q"])
        XCTAssertEqual(exported.status, 0, exported.standardError)
    }

    /// A parent's renamed attribute is renamed once, by the parent, even when a new sub-entity
    /// whose name sorts first lists it among its inherited columns (review: the sub-entity added
    /// the new column, and the parent's rename then failed on a column that already existed).
    func testAParentsRenameIsNotAddedAgainByASubEntityThatSortsFirst() throws {
        let directory = try TemporaryTestDirectory()
        let (_, queue) = try migratedV2Typical(
            to: try renamingSchema(key: "originalName"),
            adding: [
                ["name": "DailyRoutine", "superentity": "Routine", "attributes": [["name": "hour", "type": "integer", "optional": true]]]
            ],
            in: directory)
        try queue.read { db in
            let columns = Set(try db.columns(in: "ZROUTINE").map(\.name))
            XCTAssertTrue(columns.isSuperset(of: ["ZTITLE", "ZHOUR"]), "\(columns)")
            XCTAssertFalse(columns.contains("ZDISPLAYNAME"), "renamed, not kept beside the new column")
            XCTAssertEqual(try String.fetchOne(db, sql: "SELECT ZTITLE FROM ZROUTINE WHERE Z_PK = 1"), "Morning Routine")
        }
    }

    func testRenamedFromIsStillReadButNotWithOriginalName() throws {
        let directory = try TemporaryTestDirectory()
        let old = try write(try renamingSchema(key: "renamedFrom"), to: directory, "old.json")
        XCTAssertEqual(try Questbak.run(["check-migration", old.path]).status, 0, "the deprecated spelling still works")
        var both = try renamingSchema(key: "originalName")
        both = try editing(both, entity: "Routine", attribute: "title") { $0["renamedFrom"] = "displayName" }
        try assertRefused(
            both, saying: "entity Routine, attribute title: give \"originalName\" only (\"renamedFrom\" is its deprecated spelling)")
    }

    func testARenameWithoutOriginalNameSaysWhatToWrite() throws {
        let directory = try TemporaryTestDirectory()
        let v3 = try write(try renamingSchema(key: nil), to: directory, "v3.json")
        let checked = try Questbak.run(["check-migration", v3.path])
        XCTAssertEqual(checked.status, 65)
        XCTAssertTrue(
            checked.standardError.contains(
                "Routine.displayName: removed, or renamed without @Attribute(originalName: \"displayName\") (in a schema file: \"originalName\": \"displayName\" on the renamed attribute)"
            ),
            checked.standardError)
        XCTAssertFalse(checked.standardError.contains("renamedFrom"), checked.standardError)
    }

    func testARenameIsWrittenAsOriginalName() throws {
        var schema = TimeQuestSchemas.v2
        schema.versionIdentifier = "3.0.0"
        let routine = try XCTUnwrap(schema.entities.firstIndex { $0.name == "Routine" })
        let displayName = try XCTUnwrap(schema.entities[routine].attributes.firstIndex { $0.name == "displayName" })
        schema.entities[routine].attributes[displayName].name = "title"
        schema.entities[routine].attributes[displayName].originalName = "displayName"
        let text = String(decoding: try schema.jsonData(), as: UTF8.self)
        XCTAssertTrue(text.contains("\"originalName\" : \"displayName\""), text)
        XCTAssertFalse(text.contains("renamedFrom"), text)
        let directory = try TemporaryTestDirectory()
        let file = directory.path("v3.json")
        try schema.jsonData().write(to: file)
        XCTAssertEqual(try Schema.load(from: file), schema, "what is written reads back the same")
    }

    // MARK: - docs/schema-format.md

    /// The ```json blocks of the format document.
    func documentExamples() throws -> [String] {
        let text = try String(contentsOf: Repository.root.appendingPathComponent("docs/schema-format.md"), encoding: .utf8)
        return text.components(separatedBy: "```json\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
    }

    func testTheFormatDocumentShowsRealOutput() throws {
        let examples = try documentExamples()
        XCTAssertGreaterThanOrEqual(examples.count, 2)
        // The first example is Routine as `questbak schema 2.0.0` prints it.
        let printed = try printedSchema()
        let routine = try XCTUnwrap((printed["entities"] as? [[String: Any]])?.first { $0["name"] as? String == "Routine" })
        let shown = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(examples[0].utf8)) as? [String: Any])
        XCTAssertEqual(NSDictionary(dictionary: shown), NSDictionary(dictionary: routine))
    }

    func testTheFormatDocumentsEditedEntityIsALightweightMigration() throws {
        // The second example is Routine edited for a next version: put in place of Routine in
        // `questbak schema`'s output, with a new versionIdentifier, it is a lightweight change.
        let examples = try documentExamples()
        let edited = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(examples[1].utf8)) as? [String: Any])
        XCTAssertEqual(edited["name"] as? String, "Routine")
        XCTAssertTrue(examples[1].contains("\"originalName\""), examples[1])
        var schema = try editing(try printedSchema(), entity: "Routine") { $0 = edited }
        schema["versionIdentifier"] = "3.0.0"
        let directory = try TemporaryTestDirectory()
        let file = try write(schema, to: directory, "v3.json")
        let checked = try Questbak.run(["check-migration", file.path])
        XCTAssertEqual(checked.status, 0, checked.standardError)
        XCTAssertEqual(checked.standardOutput, "schema 2.0.0 → 3.0.0 is a lightweight migration\n")
    }
}
