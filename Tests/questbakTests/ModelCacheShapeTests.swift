import Foundation
import QuestBakTestSupport
import XCTest

/// Issue #23, section 2: a model cache that uses any form Core Data writes (proxies for inherited
/// properties, abstract entities, an NSArray default, NSFlagsKey bits, compound and fetch indexes)
/// is read in full, its hashes are the metadata's, and the store is backed up typed by its model,
/// then restored exactly.
final class ModelCacheShapeTests: XCTestCase {
    func testEveryModelCacheShapeIsReadInFullAndBackedUpByItsModel() throws {
        XCTAssertEqual(ModelCacheShapes.names.count, 5)
        for name in ModelCacheShapes.names {
            let directory = try TemporaryTestDirectory()
            let store = try ModelCacheShapes.make(name, in: directory.url)
            let inspect = try Questbak.run(["inspect", store.path, "--json"])
            XCTAssertEqual(inspect.status, 0, "\(name): \(inspect.standardError)")
            let json = try XCTUnwrap(JSONSerialization.jsonObject(with: inspect.outputData) as? [String: Any], name)
            let model = try XCTUnwrap(json["model"] as? [String: Any], name)
            XCTAssertEqual(model["hashesMatch"] as? Bool, true, "\(name): \(model["differingEntities"] ?? "")")
            XCTAssertEqual(model["notes"] as? [String], [], "\(name): everything in the cache is read")
            XCTAssertEqual(json["backup"] as? String, "model", "\(name): \(json["backupReason"] ?? "")")
            XCTAssertEqual(json["warnings"] as? [String], [], name)

            let text = try Questbak.run(["inspect", store.path])
            XCTAssertTrue(
                text.standardOutput.contains("backup:              by the store's own model"), "\(name): \(text.standardOutput)")
        }
    }

    func testEveryModelCacheShapeRoundTripsExactlyThroughItsModel() throws {
        for name in ModelCacheShapes.names {
            let directory = try TemporaryTestDirectory()
            let folder = directory.path("source")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = try ModelCacheShapes.make(name, in: folder)
            let archive = directory.path("backup.qbak")
            let export = try Questbak.run(["export", store.path, "-o", archive.path, "--json"])
            XCTAssertEqual(export.status, 0, "\(name): \(export.standardError)")
            let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: export.outputData) as? [String: Any], name)
            XCTAssertEqual(summary["schema"] as? String, "model", "\(name): \(summary["warnings"] ?? "")")
            XCTAssertEqual(summary["warnings"] as? [String], [], name)

            let manifest = try Questbak.run(["inspect", archive.path, "--json"])
            XCTAssertEqual(manifest.status, 0, "\(name): \(manifest.standardError)")
            let verification = try XCTUnwrap(JSONSerialization.jsonObject(with: manifest.outputData) as? [String: Any], name)
            let source = (verification["manifest"] as? [String: Any])?["source"] as? [String: Any]
            XCTAssertEqual(source?["schema"] as? String, "model", name)

            let target = directory.path("restored/default.store")
            let restore = try Questbak.run(["import", archive.path, "--into", target.path])
            XCTAssertEqual(restore.status, 0, "\(name): \(restore.standardError)")
            XCTAssertEqual(try dump(target), try dump(store), "\(name): the restored store is the store")

            let again = try Questbak.run(["export", target.path, "-o", directory.path("again.qbak").path, "--json"])
            XCTAssertEqual(again.status, 0, "\(name): \(again.standardError)")
            let second = try XCTUnwrap(JSONSerialization.jsonObject(with: again.outputData) as? [String: Any], name)
            XCTAssertEqual(second["schema"] as? String, "model", name)
        }
    }

    func testInspectNamesWhatEntersTheHashBesidesTypes() throws {
        let directory = try TemporaryTestDirectory()
        let store = try ModelCacheShapes.make("binary attributes with storage flags", in: directory.url)
        let text = try Questbak.run(["inspect", store.path])
        XCTAssertEqual(text.status, 0, text.standardError)
        XCTAssertTrue(
            text.standardOutput.contains(
                "attributes:    caption: String? (preserved on deletion), full: Data? (external storage), original: Data? (external storage, preserved on deletion), thumbnail: Data?"
            ), text.standardOutput)
    }

    /// Issue #23, section 8: the rows of a table that sub-entities share are counted by entity.
    func testInspectExplainsASubEntitySplit() throws {
        let directory = try TemporaryTestDirectory()
        let store = try ModelCacheShapes.make("abstract parent with inherited properties", in: directory.url)
        let text = try Questbak.run(["inspect", store.path])
        XCTAssertEqual(text.status, 0, text.standardError)
        XCTAssertTrue(text.standardOutput.contains("Ingredient 6 rows = Liquid 3 + Syrup 1 + Solid 2"), text.standardOutput)
        XCTAssertTrue(text.standardOutput.contains("  Ingredient (abstract)"), text.standardOutput)
        XCTAssertTrue(
            text.standardOutput.contains(
                "  Syrup (a Liquid)\n    inherits:      milliliters, name, position, recipe\n    transient:     displayName"),
            text.standardOutput)
        XCTAssertFalse(text.standardOutput.contains("Recipe 2 rows ="), "a table of one entity is not split")

        let kitchenSink = try directory.copyFixture("AnyApp/kitchen-sink")
        let fixture = try Questbak.run(["inspect", kitchenSink.path])
        XCTAssertTrue(fixture.standardOutput.contains("Ingredient 6 rows = Liquid 4 + Solid 2"), fixture.standardOutput)

        // A row of no entity of the table is counted apart, under the Z_ENT it has.
        _ = try Questbak.runTool([
            "sqlite3", store.path, "INSERT INTO ZINGREDIENT (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (7, 9, 1, 'stray')",
        ])
        let json = try Questbak.run(["inspect", store.path, "--json"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: json.outputData) as? [String: Any])
        let ingredient = try XCTUnwrap((object["entities"] as? [[String: Any]])?.first { $0["name"] as? String == "Ingredient" })
        let split = try XCTUnwrap(ingredient["rowsByEntity"] as? [[String: Any]])
        XCTAssertEqual(split.map { "\($0["name"] ?? "") \($0["rows"] ?? "")" }, ["Liquid 3", "Syrup 1", "Solid 2", "Z_ENT 9 1"])
    }

    /// A new build that adds an attribute to the abstract parent (so to every sub-entity's
    /// inherited properties) and one to a sub-entity: `migrate --to` its store gives a store whose
    /// hashes are its model's, still backed up by that model, its rows where they were.
    func testALightweightMigrationThroughInheritedPropertiesKeepsTheModelsHashes() throws {
        let directory = try TemporaryTestDirectory()
        let name = "abstract parent with inherited properties"
        let store = try ModelCacheShapes.make(name, in: directory.url)
        let next = directory.path("next")
        try FileManager.default.createDirectory(at: next, withIntermediateDirectories: true)
        let nextStore = try ModelCacheShapes.makeNextBuild(of: name, in: next)
        let output = directory.path("out/default.store")
        try FileManager.default.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
        let migrate = try Questbak.run(["migrate", store.path, "--to", nextStore.path, "-o", output.path])
        XCTAssertEqual(migrate.status, 0, migrate.standardError)
        let inspect = try Questbak.run(["inspect", output.path, "--json"])
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: inspect.outputData) as? [String: Any])
        let model = try XCTUnwrap(json["model"] as? [String: Any])
        XCTAssertEqual(model["hashesMatch"] as? Bool, true, "\(model["differingEntities"] ?? "")")
        XCTAssertEqual(json["versionIdentifiers"] as? [String], ["2.0.0"])
        XCTAssertEqual(json["backup"] as? String, "model", "\(json["backupReason"] ?? "")")
        let text = try Questbak.run(["inspect", output.path]).standardOutput
        XCTAssertTrue(text.contains("Ingredient 6 rows = Liquid 3 + Syrup 1 + Solid 2"), text)
        XCTAssertTrue(text.contains("inherits:      milliliters, name, position, recipe, zest"), text)
    }

    /// Every table row by row, and every statement, as text: what makes two stores one. Read from
    /// a copy (with its -wal), since sqlite3 checkpoints what it opens.
    func dump(_ store: URL) throws -> String {
        let copy = try TemporaryTestDirectory()
        let target = copy.path("copy.store")
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: store.path + suffix) {
            try FileManager.default.copyItem(atPath: store.path + suffix, toPath: target.path + suffix)
        }
        let result = try Questbak.runTool(["sqlite3", target.path, ".dump"])
        XCTAssertEqual(result.status, 0, result.standardError)
        return result.standardOutput
    }
}
