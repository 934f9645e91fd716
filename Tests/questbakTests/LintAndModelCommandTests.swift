import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakKit

/// `lint` names what breaks CloudKit's rules; `schema STORE` prints a store's own model in the
/// schema-file format; `check-migration` takes stores as well as files and versions.
final class LintAndModelCommandTests: XCTestCase {
    func testLintNamesEachPropertyThatBreaksCloudKitsRules() throws {
        let v2 = try Questbak.run(["lint", "2.0.0"])
        XCTAssertEqual(v2.status, 2, v2.standardError)
        XCTAssertEqual(
            v2.standardOutput.split(separator: "\n").filter { $0.contains("required-relationship") }.count, 3,
            "TimeQuest V2's to-many relationships are not optional: \(v2.standardOutput)")
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/bennie-game")
        let result = try Questbak.run(["lint", store.path, "--json"])
        XCTAssertEqual(result.status, 2, result.standardError)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        let findings = try XCTUnwrap(report["findings"] as? [[String: Any]])
        XCTAssertTrue(
            findings.contains {
                $0["entity"] as? String == "PlayerData" && $0["rule"] as? String == "unique-constraint" && $0["property"] as? String == "id"
            },
            "\(findings)")
    }

    func testACloudKitReadyModelIsClean() throws {
        let directory = try TemporaryTestDirectory()
        let file = directory.path("ready.json")
        try Data(
            #"""
            {"versionIdentifier": "1.0.0", "entities": [
              {"name": "Folder", "attributes": [{"name": "name", "type": "string", "default": {"value": ""}}],
               "relationships": [{"name": "notes", "destination": "Note", "inverse": "folder", "toMany": true, "optional": true}]},
              {"name": "Note", "attributes": [{"name": "text", "type": "string", "optional": true}],
               "relationships": [{"name": "folder", "destination": "Folder", "inverse": "notes"}]}]}
            """#.utf8
        ).write(to: file)
        let result = try Questbak.run(["lint", file.path])
        XCTAssertEqual(result.status, 0, result.standardOutput + result.standardError)
        XCTAssertTrue(result.standardOutput.contains("no property breaks CloudKit's rules"), result.standardOutput)
    }

    func testAModelThatCannotBeReadIsRefusedNotPassed() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        try DatabaseQueue(path: store.path).write { try $0.execute(sql: "DELETE FROM Z_MODELCACHE") }
        let result = try Questbak.run(["lint", store.path])
        XCTAssertEqual(result.status, 65, result.standardError)
        XCTAssertTrue(result.standardError.contains("its model is not known: it has no model cache"), result.standardError)
        XCTAssertEqual(try Questbak.run(["lint", directory.path("missing.store").path]).status, 66)
        XCTAssertEqual(try Questbak.run(["schema", store.path]).status, 65)
    }

    /// A store's own model, printed as a schema file, reads back as the same model: its hashes are
    /// the store's, and checking it against the store finds a lightweight (empty) migration.
    func testSchemaOfAStoreRoundTripsThroughTheSchemaFileFormat() throws {
        for fixture in ["AnyApp/kitchen-sink", "AnyApp/bennie-game", "v2-typical"] {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture(fixture)
            let printed = try Questbak.run(["schema", store.path])
            XCTAssertEqual(printed.status, 0, printed.standardError)
            let file = directory.path("model.json")
            try printed.outputData.write(to: file)
            let reloaded = try Schema.load(from: file)
            let metadata = try StoreSnapshot(storeAt: store).read { try StoreReader.metadata($0, path: store.path) }
            XCTAssertEqual(ModelVersion(schema: reloaded).hashes.entityHashes, metadata.entityHashes, fixture)
            let check = try Questbak.run(["check-migration", file.path, "--from", store.path])
            XCTAssertEqual(check.status, 0, "\(fixture): \(check.standardError)")
        }
    }

    func testCheckMigrationBetweenAStoreAndAProposedModelNamesWhatIsNotLightweight() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/bennie-game")
        var schema = Schema(model: try CompiledModel.model(ofStoreAt: store))
        let player = try XCTUnwrap(schema.entities.firstIndex { $0.name == "PlayerData" })
        schema.entities[player].attributes.append(Attribute("nickname", .string))
        schema.versionIdentifier = "2.0.0"
        let file = directory.path("next.json")
        try schema.jsonData().write(to: file)
        let result = try Questbak.run(["check-migration", file.path, "--from", store.path])
        XCTAssertEqual(result.status, 65, result.standardError)
        XCTAssertTrue(result.standardError.contains("PlayerData.nickname"), result.standardError)
    }

    /// The examples in `lint`'s help (and so in the man page) run as written, with the statuses they state.
    func testLintsDocumentedExamplesRunAsWritten() throws {
        let directory = try TemporaryTestDirectory()
        let bin = Questbak.executable.deletingLastPathComponent().path
        for (command, status) in [
            ("questbak lint 2.0.0", 2), ("questbak lint Fixtures/AnyApp/kitchen-sink/default.store --json", 2),
            ("questbak schema 2.0.0 > \(directory.path("v2.json").path) && questbak lint \(directory.path("v2.json").path)", 2),
        ] {
            let script = "cd '\(Repository.root.path)' && PATH='\(bin):'\"$PATH\" && \(command)"
            XCTAssertEqual(try Questbak.runTool(["sh", "-c", script]).status, Int32(status), command)
        }
    }
}
