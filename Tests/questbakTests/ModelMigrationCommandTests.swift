import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// `migrate STORE --to NEW_MODEL_STORE`: any app's store moved to the model of its new build, as
/// Core Data's lightweight migration would, with nothing of the old store left behind.
final class ModelMigrationCommandTests: XCTestCase {
    typealias Code = CompiledAttribute.TypeCode
    static let sharedCloudID = "0E0E0E0E-1111-4222-8333-444455556666"

    /// The kitchen-sink model's next version: a new entity that sorts early (renumbering those
    /// after it, and so the join table and hidden column), a renamed attribute, an optional and a
    /// defaulted new one, and a cloudID whose default SwiftData archived once.
    static func nextModel(requiredWithoutDefault: Bool = false) -> CompiledModel {
        var model = AnyAppFixtures.kitchenSinkModel
        model.versionIdentifiers = ["3.0.0"]
        model.entities.append(AnyAppFixtures.entity("Cellar", [AnyAppFixtures.attribute("label", Code.string, optional: true)]))
        if let recipe = model.entities.firstIndex(where: { $0.name == "Recipe" }) {
            var attributes = model.entities[recipe].attributes
            if let memo = attributes.firstIndex(where: { $0.name == "memo" }) {
                attributes[memo].name = "remark"
                attributes[memo].renamingIdentifier = "memo"
            }
            attributes.append(AnyAppFixtures.attribute("notes", Code.string, optional: true))
            attributes.append(AnyAppFixtures.attribute("difficulty", Code.int64, default: .integer(3)))
            attributes.append(AnyAppFixtures.attribute("cloudID", Code.string, default: .string(sharedCloudID)))
            if requiredWithoutDefault { attributes.append(AnyAppFixtures.attribute("rating2", Code.double)) }
            model.entities[recipe].attributes = attributes.sorted { $0.name < $1.name }
        }
        model.entities.sort { $0.name < $1.name }
        return model
    }

    /// A gate's fixtures folder holding a copy of `folder` (a store with its sidecars) as `kitchen-sink`.
    func gateFixtures(in directory: TemporaryTestDirectory, holding folder: URL) throws -> URL {
        let fixtures = directory.path("MigrationFixtures")
        try FileManager.default.createDirectory(at: fixtures, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: folder, to: fixtures.appendingPathComponent("kitchen-sink"))
        return fixtures
    }

    func newBuildStore(_ model: CompiledModel, at url: URL) throws {
        var store = ModelStore(model: model, uuid: "11111111-2222-4333-8444-555555555555", rows: [])
        store.frameworkVersion = 1526
        try ModelStoreWriter.write(store, to: url)
    }

    func pairs(_ store: URL, _ sql: String) throws -> [[Int64]] {
        let queue = try DatabaseQueue(path: store.path)
        defer { try? queue.close() }
        return try queue.read { db in try Row.fetchAll(db, sql: sql).map { [$0[0], $0[1]] } }
    }

    func testAnyAppsStoreMigratesToTheModelOfItsNewBuild() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let next = directory.path("next/default.store")
        try FileManager.default.createDirectory(at: next.deletingLastPathComponent(), withIntermediateDirectories: true)
        try newBuildStore(Self.nextModel(), at: next)
        let output = directory.path("migrated.store")
        let result = try Questbak.run(["migrate", store.path, "--to", next.path, "-o", output.path, "--json"])
        XCTAssertEqual(result.status, 0, result.standardError)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        XCTAssertEqual(report["targetSchemaVersion"] as? String, "3.0.0")
        XCTAssertEqual(
            (report["counts"] as? [String: Int])?["migration.cloudID"], 3,
            "each of the 4 recipes its own cloudID; the first keeps the shared one")

        // The new build opens it without migrating: its hashes are the new model's, its cache the new build's.
        let inspection = try StoreInspection(snapshot: try StoreSnapshot(storeAt: output), candidates: TimeQuestSchemas.versions)
        XCTAssertEqual(inspection.model?.hashesMatch, true)
        XCTAssertEqual(inspection.backup, ArchiveManifest.Source.modelSchema)
        XCTAssertEqual(inspection.versionIdentifiers, ["3.0.0"])
        let source = directory.path("source-copy")
        try FileManager.default.copyItem(at: store.deletingLastPathComponent(), to: source)
        let old = source.appendingPathComponent("default.store")
        // Every record and value moved: the renamed attribute under its new name, links under the new numbers.
        XCTAssertEqual(
            try pairs(output, "SELECT Z_PK, ifnull(length(ZREMARK), -1) FROM ZRECIPE ORDER BY Z_PK"),
            try pairs(old, "SELECT Z_PK, ifnull(length(ZMEMO), -1) FROM ZRECIPE ORDER BY Z_PK"))
        XCTAssertEqual(
            try pairs(output, "SELECT Z_6RECIPES, Z_8TAGS FROM Z_6TAGS ORDER BY 1, 2"),
            try pairs(old, "SELECT Z_5RECIPES, Z_7TAGS FROM Z_5TAGS ORDER BY 1, 2"), "many-to-many links, renumbered")
        XCTAssertEqual(
            try pairs(output, "SELECT Z_PK, ifnull(Z6STEPS, -1) FROM ZSTEP ORDER BY Z_PK"),
            try pairs(old, "SELECT Z_PK, ifnull(Z5STEPS, -1) FROM ZSTEP ORDER BY Z_PK"),
            "links kept on the destination's row, renumbered")
        XCTAssertEqual(try pairs(output, "SELECT DISTINCT Z_ENT, ZDIFFICULTY FROM ZRECIPE"), [[6, 3]], "renumbered, defaulted")
        XCTAssertEqual(
            try pairs(output, "SELECT Z_ENT, count(*) FROM ZINGREDIENT GROUP BY Z_ENT ORDER BY 1"),
            try pairs(old, "SELECT Z_ENT + 1, count(*) FROM ZINGREDIENT GROUP BY Z_ENT ORDER BY 1"), "sub-entities renumbered")
        XCTAssertEqual(
            try pairs(output, "SELECT count(DISTINCT ZCLOUDID), count(*) FROM ZRECIPE"), [[4, 4]], "one cloudID per recipe")
        XCTAssertEqual(
            try pairs(output, "SELECT count(*), 0 FROM sqlitemanager_extras"), [[2, 0]], "another tool's table comes along")
        // And it backs up by its own model, exactly.
        let archive = directory.path("m.qbak")
        XCTAssertEqual(try Questbak.run(["export", output.path, "-o", archive.path, "-q"]).status, 0)
    }

    func testAChangeCoreDataCannotInferIsRefusedNamingTheProperty() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let next = directory.path("next/default.store")
        try FileManager.default.createDirectory(at: next.deletingLastPathComponent(), withIntermediateDirectories: true)
        try newBuildStore(Self.nextModel(requiredWithoutDefault: true), at: next)
        let output = directory.path("migrated.store")
        let result = try Questbak.run(["migrate", store.path, "--to", next.path, "-o", output.path])
        XCTAssertEqual(result.status, 65, result.standardError)
        XCTAssertTrue(result.standardError.contains("Recipe.rating2"), result.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
        // The same store as its own target has nothing to do.
        let same = try Questbak.run(["migrate", store.path, "--to", store.path, "-o", output.path])
        XCTAssertEqual(same.status, 0, same.standardError)
        XCTAssertTrue(same.standardOutput.contains("nothing to do"), same.standardOutput)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
    }
}

extension ModelMigrationCommandTests {
    /// The gate for any app: fixture stores of the old model, the new build's store as --to;
    /// golden dumps recorded once, then every check passes, and a dropped row or link, or a
    /// new model Core Data cannot migrate to, fails with a reason.
    func testTheGateChecksAnyAppsFixturesAgainstTheNewBuildsModel() throws {
        let directory = try TemporaryTestDirectory()
        let fixtures = try gateFixtures(in: directory, holding: Repository.fixtures.appendingPathComponent("AnyApp/kitchen-sink"))
        let next = directory.path("next.store")
        try newBuildStore(Self.nextModel(), at: next)
        let gate = ["verify-migration", "--fixtures", fixtures.path, "--to", next.path]

        let recorded = try Questbak.run(gate + ["--record"])
        XCTAssertEqual(recorded.status, 3, "record mode always fails: \(recorded.standardOutput)")
        XCTAssertTrue(
            FileManager.default.fileExists(atPath: fixtures.appendingPathComponent("kitchen-sink/default.store.expected-3.0.0.dump").path))
        let passed = try Questbak.run(gate)
        XCTAssertEqual(passed.status, 0, passed.standardOutput + passed.standardError)
        XCTAssertTrue(passed.standardOutput.contains("5 passed, 0 failed"), passed.standardOutput)
        for name in ["migrate", "golden", "invariants", "valid", "round-trip"] {
            XCTAssertTrue(passed.standardOutput.contains("ok   kitchen-sink/default.store: \(name)"), passed.standardOutput)
        }

        // A dropped record and a dropped many-to-many link: the golden dump says which.
        let store = fixtures.appendingPathComponent("kitchen-sink/default.store")
        try DatabaseQueue(path: store.path).write { db in
            try db.execute(sql: "DELETE FROM ZSTEP WHERE Z_PK = 5")
            try db.execute(sql: "DELETE FROM Z_5TAGS WHERE Z_5RECIPES = 2")
        }
        let dropped = try Questbak.run(gate)
        XCTAssertEqual(dropped.status, 3, dropped.standardOutput)
        XCTAssertTrue(dropped.standardOutput.contains("FAIL kitchen-sink/default.store: golden"), dropped.standardOutput)

        // A new build whose model adds a required attribute without a default.
        let broken = directory.path("broken.store")
        try newBuildStore(Self.nextModel(requiredWithoutDefault: true), at: broken)
        let refused = try Questbak.run(["verify-migration", "--fixtures", fixtures.path, "--to", broken.path])
        XCTAssertEqual(refused.status, 3, refused.standardOutput)
        XCTAssertTrue(refused.standardOutput.contains("FAIL kitchen-sink/default.store: migrate"), refused.standardOutput)
        XCTAssertTrue(refused.standardOutput.contains("Recipe.rating2"), refused.standardOutput)
    }
}

extension ModelMigrationCommandTests {
    /// Version 4.0.0: 3.0.0 with `remark` renamed again, to `comment`, and a new optional attribute.
    static func fourthModel() -> CompiledModel {
        var model = nextModel()
        model.versionIdentifiers = ["4.0.0"]
        if let recipe = model.entities.firstIndex(where: { $0.name == "Recipe" }),
            let remark = model.entities[recipe].attributes.firstIndex(where: { $0.name == "remark" })
        {
            model.entities[recipe].attributes[remark].name = "comment"
            model.entities[recipe].attributes[remark].renamingIdentifier = "remark"
            model.entities[recipe].attributes.append(AnyAppFixtures.attribute("season", Code.string, optional: true))
            model.entities[recipe].attributes.sort { $0.name < $1.name }
        }
        return model
    }

    /// A chain of models, as a staged migration runs it: 2.1.0 → 3.0.0 → 4.0.0, each step checked;
    /// a store of a model outside the chain is an unknown model version, as Core Data says.
    func testAChainMigratesStepByStepAndAnUnknownVersionIsNamed() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let (first, second, third) = (directory.path("v2.1.store"), directory.path("v3.store"), directory.path("v4.store"))
        try newBuildStore(AnyAppFixtures.kitchenSinkModel, at: first)
        try newBuildStore(Self.nextModel(), at: second)
        try newBuildStore(Self.fourthModel(), at: third)
        let output = directory.path("migrated.store")
        let result = try Questbak.run([
            "migrate", store.path, "--through", first.path, "--through", second.path, "--to", third.path, "-o", output.path,
        ])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(result.standardOutput.contains("from schema 2.1.0 to 4.0.0"), result.standardOutput)
        let source = directory.path("source")
        try FileManager.default.copyItem(at: store.deletingLastPathComponent(), to: source)
        XCTAssertEqual(
            try pairs(output, "SELECT Z_PK, ifnull(length(ZCOMMENT), -1) FROM ZRECIPE ORDER BY Z_PK"),
            try pairs(source.appendingPathComponent("default.store"), "SELECT Z_PK, ifnull(length(ZMEMO), -1) FROM ZRECIPE ORDER BY Z_PK"),
            "renamed twice, kept")
        XCTAssertEqual(
            try StoreInspection(snapshot: try StoreSnapshot(storeAt: output), candidates: TimeQuestSchemas.versions).versionIdentifiers,
            ["4.0.0"])

        // The chain's report holds every step's entries, not only the last step's (it held only
        // the last one's): what the first step alone reports is in it.
        let chainReport = directory.path("chain-report.json")
        let firstStepReport = directory.path("first-step-report.json")
        XCTAssertEqual(
            try Questbak.run([
                "migrate", store.path, "--through", first.path, "--through", second.path, "--to", third.path, "-o",
                directory.path("chain.store").path, "--report", chainReport.path,
            ]).status, 0)
        XCTAssertEqual(
            try Questbak.run([
                "migrate", store.path, "--through", first.path, "--to", second.path, "-o", directory.path("step.store").path,
                "--report", firstStepReport.path,
            ]).status, 0)
        func entries(_ report: URL) throws -> [[String: Any]] {
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [String: Any]
            return object?["entries"] as? [[String: Any]] ?? []
        }
        let firstStep = try entries(firstStepReport).map { "\($0["entity"] ?? "")|\($0["field"] ?? "")|\($0["rule"] ?? "")" }
        XCTAssertFalse(firstStep.isEmpty, "the first step reports nothing: the check would check nothing")
        let chain = try entries(chainReport).map { "\($0["entity"] ?? "")|\($0["field"] ?? "")|\($0["rule"] ?? "")" }
        for entry in Set(firstStep) {
            XCTAssertEqual(
                chain.filter { $0 == entry }.count, firstStep.filter { $0 == entry }.count, "the chain's report lacks \(entry)")
        }

        let other = try directory.copyFixture("AnyApp/bennie-game")
        let unknown = try Questbak.run([
            "migrate", other.path, "--through", first.path, "--through", second.path, "--to", third.path, "-o",
            directory.path("o.store").path,
        ])
        XCTAssertEqual(unknown.status, 65, unknown.standardError)
        XCTAssertTrue(
            unknown.standardError.contains("unknown model version: its model (1.0.0) is none of the given models (2.1.0, 3.0.0, 4.0.0)"),
            unknown.standardError)

        // The gate runs the chain for every fixture and names an unknown version the same way.
        let fixtures = try gateFixtures(in: directory, holding: store.deletingLastPathComponent())
        let gate = ["verify-migration", "--fixtures", fixtures.path, "--through", first.path, "--through", second.path, "--to", third.path]
        XCTAssertEqual(try Questbak.run(gate + ["--record"]).status, 3)
        let passed = try Questbak.run(gate)
        XCTAssertEqual(passed.status, 0, passed.standardOutput)
        try FileManager.default.copyItem(at: other.deletingLastPathComponent(), to: fixtures.appendingPathComponent("bennie-game"))
        let failed = try Questbak.run(gate)
        XCTAssertEqual(failed.status, 3, failed.standardOutput)
        XCTAssertTrue(failed.standardOutput.contains("FAIL bennie-game/default.store: migrate"), failed.standardOutput)
        XCTAssertTrue(failed.standardOutput.contains("unknown model version"), failed.standardOutput)
    }
}

extension ModelMigrationCommandTests {
    /// A removed attribute is inferred as Core Data infers it: the migration drops its values and
    /// reports each one; the gate, whose job is that nothing is lost, fails and says how many.
    func testARemovedAttributeIsDroppedAsCoreDataDoesReportedAndTheGateFails() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        var model = Self.nextModel()
        if let recipe = model.entities.firstIndex(where: { $0.name == "Recipe" }) {
            model.entities[recipe].attributes.removeAll { $0.name == "sweetness" }
        }
        let next = directory.path("next.store")
        try newBuildStore(model, at: next)
        let output = directory.path("migrated.store")
        let report = directory.path("report.json")
        let result = try Questbak.run(["migrate", store.path, "--to", next.path, "-o", output.path, "--report", report.path])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(result.standardOutput.contains("4 unstorable.unknown-property"), result.standardOutput)
        let text = try String(contentsOf: report, encoding: .utf8)
        XCTAssertTrue(text.contains(#""field":"sweetness""#), text)

        let fixtures = try gateFixtures(in: directory, holding: store.deletingLastPathComponent())
        let gate = try Questbak.run(["verify-migration", "--fixtures", fixtures.path, "--to", next.path])
        XCTAssertEqual(gate.status, 3, gate.standardOutput)
        XCTAssertTrue(
            gate.standardOutput.contains("Recipe.sweetness is not in the new model: 4 value(s) dropped by the migration"),
            gate.standardOutput)
    }
}

/// Regression cases from the review of `migrate --to`.
extension ModelMigrationCommandTests {
    /// Migrates a copy of the kitchen sink to `edit` applied to its model (as 3.0.0); returns the
    /// command's result, the migrated store and the source copy.
    func migrateKitchenSink(
        _ directories: inout [TemporaryTestDirectory], _ edit: (inout CompiledModel) -> Void
    ) throws -> (result: CommandResult, output: URL, source: URL) {
        let directory = try TemporaryTestDirectory()
        directories.append(directory)
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        var model = AnyAppFixtures.kitchenSinkModel
        model.versionIdentifiers = ["3.0.0"]
        edit(&model)
        let next = directory.path("next-\(UUID().uuidString).store")
        try newBuildStore(model, at: next)
        let output = directory.path("out-\(UUID().uuidString)/default.store")
        try FileManager.default.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
        let result = try Questbak.run(["migrate", store.path, "--to", next.path, "-o", output.path])
        return (result, output, store)
    }

    func edit(_ model: inout CompiledModel, _ entity: String, _ change: (inout CompiledEntity) -> Void) {
        guard let index = model.entities.firstIndex(where: { $0.name == entity }) else { return XCTFail("no \(entity)") }
        change(&model.entities[index])
    }

    func testTheReviewsMigrationCasesKeepEveryValueAndLink() throws {
        let directory = try TemporaryTestDirectory()
        var directories: [TemporaryTestDirectory] = []
        // External-storage files come along with -o.
        var (result, output, source) = try migrateKitchenSink(&directories) { model in
            edit(&model, "Tag") { $0.attributes.append(AnyAppFixtures.attribute("season", Code.string, optional: true)) }
        }
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(
            FileManager.default.fileExists(
                atPath: ExternalStorage.folder(forStore: output).appendingPathComponent(AnyAppFixtures.externalPhotoName).path))

        // A to-many gaining an inverse: its links move from the hidden column to the new foreign key.
        (result, output, source) = try migrateKitchenSink(&directories) { model in
            edit(&model, "Recipe") { entity in
                if let steps = entity.relationships.firstIndex(where: { $0.name == "steps" }) {
                    entity.relationships[steps].inverse = "recipe"
                }
            }
            edit(&model, "Step") { entity in
                entity.relationships.append(AnyAppFixtures.toOne("recipe", "Recipe", inverse: "steps"))
            }
        }
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(
            try pairs(output, "SELECT Z_PK, ifnull(ZRECIPE, -1) FROM ZSTEP ORDER BY Z_PK"),
            try pairs(source, "SELECT Z_PK, ifnull(Z5STEPS, -1) FROM ZSTEP ORDER BY Z_PK"))

        // Relationships renamed with originalName, and an inherited attribute renamed.
        (result, output, source) = try migrateKitchenSink(&directories) { model in
            edit(&model, "Recipe") { entity in
                for (old, new) in [("featuredTag", "highlight"), ("steps", "instructions")] {
                    if let index = entity.relationships.firstIndex(where: { $0.name == old }) {
                        entity.relationships[index].name = new
                        entity.relationships[index].renamingIdentifier = old
                    }
                }
            }
            edit(&model, "Ingredient") { entity in
                if let index = entity.attributes.firstIndex(where: { $0.name == "name" }) {
                    entity.attributes[index].name = "title"
                    entity.attributes[index].renamingIdentifier = "name"
                }
            }
        }
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(
            try pairs(output, "SELECT Z_PK, ifnull(ZHIGHLIGHT, -1) FROM ZRECIPE ORDER BY Z_PK"),
            try pairs(source, "SELECT Z_PK, ifnull(ZFEATUREDTAG, -1) FROM ZRECIPE ORDER BY Z_PK"))
        XCTAssertEqual(
            try pairs(output, "SELECT Z_PK, ifnull(Z5INSTRUCTIONS, -1) FROM ZSTEP ORDER BY Z_PK"),
            try pairs(source, "SELECT Z_PK, ifnull(Z5STEPS, -1) FROM ZSTEP ORDER BY Z_PK"))
        XCTAssertEqual(
            try pairs(output, "SELECT Z_PK, length(ZTITLE) FROM ZINGREDIENT ORDER BY Z_PK"),
            try pairs(source, "SELECT Z_PK, length(ZNAME) FROM ZINGREDIENT ORDER BY Z_PK"), "sub-entity rows keep the renamed value")
        XCTAssertFalse(result.standardOutput.contains("unstorable"), result.standardOutput)

        // A to-many removed: each dropped link is in the report.
        (result, output, source) = try migrateKitchenSink(&directories) { model in
            edit(&model, "Recipe") { entity in entity.relationships.removeAll { $0.name == "steps" } }
        }
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(result.standardOutput.contains("5 unstorable.unknown-property"), result.standardOutput)

        // Going back is refused: the older build could not open the store.
        let store = try directory.copyFixture("AnyApp/bennie-game")
        let older = directory.path("older.store")
        var model = AnyAppFixtures.bennieGameModel
        model.versionIdentifiers = ["0.9.0"]
        edit(&model, "PlayerData") { $0.attributes.removeAll { $0.name == "coins" } }
        try newBuildStore(model, at: older)
        let back = try Questbak.run(["migrate", store.path, "--to", older.path, "-o", directory.path("back.store").path])
        XCTAssertEqual(back.status, 65, back.standardError)
        XCTAssertTrue(back.standardError.contains("cannot migrate schema 1.0.0 back to 0.9.0"), back.standardError)
    }
}

extension ModelMigrationCommandTests {
    /// An entity renamed with its renaming identifier keeps its records and the relationships to
    /// it; an empty composite default is a default (a new required composite is lightweight, and
    /// lint does not flag one); history the source had is said to start empty.
    func testAnEntityRenameAndAnEmptyCompositeDefaultMigrate() throws {
        var directories: [TemporaryTestDirectory] = []
        let (result, output, source) = try migrateKitchenSink(&directories) { model in
            edit(&model, "Author") { entity in
                entity.name = "Writer"
                entity.renamingIdentifier = "Author"
            }
            edit(&model, "Recipe") { entity in
                if let author = entity.relationships.firstIndex(where: { $0.name == "author" }) {
                    entity.relationships[author].destination = "Writer"
                }
                entity.attributes.append(
                    AnyAppFixtures.composite(
                        "serving", default: .dictionary([:]), [AnyAppFixtures.attribute("glass", Code.string, optional: true)]))
                entity.attributes.sort { $0.name < $1.name }
            }
            model.entities.sort { $0.name < $1.name }
        }
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(
            try pairs(output, "SELECT Z_PK, length(ZNAME) FROM ZWRITER ORDER BY Z_PK"),
            try pairs(source, "SELECT Z_PK, length(ZNAME) FROM ZAUTHOR ORDER BY Z_PK"), "the renamed entity keeps its records")
        XCTAssertEqual(
            try pairs(output, "SELECT Z_PK, ifnull(ZAUTHOR, -1) FROM ZRECIPE ORDER BY Z_PK"),
            try pairs(source, "SELECT Z_PK, ifnull(ZAUTHOR, -1) FROM ZRECIPE ORDER BY Z_PK"))
        let lint = try Questbak.run(["lint", output.path])
        XCTAssertFalse(lint.standardOutput.contains("serving"), lint.standardOutput)
        XCTAssertFalse(lint.standardOutput.contains("Recipe.profile"), lint.standardOutput)
    }
}

extension ModelMigrationCommandTests {
    /// What the new build's store does not have of the source's (history rows, its own triggers)
    /// is said, not dropped without a word.
    func testAMigrationSaysWhatItDoesNotCarry() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/bennie-game")
        try DatabaseQueue(path: store.path).write { db in
            try db.execute(sql: "INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE) VALUES (1, 16001, 1, 0)")
            try db.execute(sql: "CREATE TRIGGER audit AFTER UPDATE ON ZPLAYERDATA BEGIN SELECT 1; END")
        }
        let next = Repository.fixtures.appendingPathComponent("Gates/BennieGame/next/default.store")
        let result = try Questbak.run(["migrate", store.path, "--to", next.path, "-o", directory.path("m.store").path])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(
            result.standardOutput.contains("start empty in the migrated store (the source had 1 rows in ACHANGE)"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("the source's CREATE TRIGGER audit"), result.standardOutput)
    }
}
