import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// The gate predicts what the new build would refuse at launch (Core Data's 134110): a migrated
/// record invalid under the new model fails the `valid` check, naming the entity, `_pk`s and
/// property. One failing fixture per kind of invalid record.
extension ModelMigrationCommandTests {
    /// Runs the gate on a kitchen-sink fixture edited by `sql`, against 3.0.0 changed by `change`.
    func gateOutput(fixtureSQL sql: String?, change: (inout CompiledModel) -> Void) throws -> CommandResult {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        if let sql {
            let queue = try DatabaseQueue(path: store.path)
            try queue.write { try $0.execute(sql: sql) }
            try queue.close()
        }
        let fixtures = try gateFixtures(in: directory, holding: store.deletingLastPathComponent())
        var model = Self.nextModel()
        change(&model)
        let next = directory.path("next.store")
        try newBuildStore(model, at: next)
        _ = try Questbak.run(["verify-migration", "--fixtures", fixtures.path, "--to", next.path, "--record"])
        return try Questbak.run(["verify-migration", "--fixtures", fixtures.path, "--to", next.path])
    }

    func recipe(_ model: inout CompiledModel, _ edit: (inout CompiledEntity) -> Void) {
        if let index = model.entities.firstIndex(where: { $0.name == "Recipe" }) { edit(&model.entities[index]) }
    }

    func assertInvalid(_ result: CommandResult, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.status, 3, result.standardOutput + result.standardError, file: file, line: line)
        XCTAssertTrue(
            result.standardOutput.contains("FAIL kitchen-sink/default.store: valid"), result.standardOutput, file: file, line: line)
        XCTAssertTrue(result.standardOutput.contains(expected), result.standardOutput, file: file, line: line)
    }

    func testAValidMigrationPassesTheValidityCheck() throws {
        let result = try gateOutput(fixtureSQL: nil) { _ in }
        XCTAssertEqual(result.status, 0, result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("ok   kitchen-sink/default.store: valid (every record valid"), result.standardOutput)
    }

    /// A required attribute that holds NULL (an older build or another tool wrote it); making an
    /// optional attribute required without a default is refused before, as not lightweight.
    func testANullInARequiredAttributeWithoutADefault() throws {
        let result = try gateOutput(fixtureSQL: "UPDATE ZRECIPE SET ZKEYWORDS = NULL WHERE Z_PK IN (2, 3)") { _ in }
        assertInvalid(result, "Recipe _pk 2, 3 keywords: NULL in a required attribute without a default")
        let optionalMadeRequired = try gateOutput(fixtureSQL: nil) { model in
            self.recipe(&model) { entity in
                if let link = entity.attributes.firstIndex(where: { $0.name == "link" }) { entity.attributes[link].isOptional = false }
            }
        }
        XCTAssertEqual(optionalMadeRequired.status, 3)
        XCTAssertTrue(optionalMadeRequired.standardOutput.contains("Recipe.link: becomes required without a default"))
    }

    func testAValueOutOfItsTypesRange() throws {
        let result = try gateOutput(fixtureSQL: "UPDATE ZRECIPE SET ZRATINGCOUNT = 40000 WHERE Z_PK = 1") { _ in }
        assertInvalid(result, "Recipe _pk 1 ratingCount: a value outside the range of integer16")
    }

    func testARequiredToOneThatIsEmptyOrDangling() throws {
        let result = try gateOutput(fixtureSQL: "UPDATE ZRECIPE SET ZAUTHOR = 99 WHERE Z_PK = 2") { model in
            self.recipe(&model) { entity in
                if let author = entity.relationships.firstIndex(where: { $0.name == "author" }) {
                    entity.relationships[author].isOptional = false
                    entity.relationships[author].minCount = 1
                }
            }
        }
        assertInvalid(result, "Recipe _pk 2, 3 author: a required to-one that is empty or names no Author")
    }

    /// A new uniqueness constraint that old records break: the migration itself is refused, as
    /// Core Data's would be, naming the records (not SQLite's first failed insert), and the store
    /// holding the same records restores and passes where the constraint holds.
    func testRecordsEqualInANewUniquenessConstraint() throws {
        let result = try gateOutput(fixtureSQL: "UPDATE ZRECIPE SET ZNAME = 'Negroni' WHERE Z_PK = 3") { model in
            self.recipe(&model) { $0.uniqueTuples.append(["name"]) }
        }
        XCTAssertEqual(result.status, 3, result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("FAIL kitchen-sink/default.store: migrate"), result.standardOutput)
        XCTAssertTrue(
            result.standardOutput.contains("Recipe _pk 1, 3 name: records equal in a uniqueness constraint"), result.standardOutput)
        XCTAssertFalse(result.standardOutput.contains("SQLite error"), result.standardOutput)
        let distinct = try gateOutput(fixtureSQL: nil) { model in self.recipe(&model) { $0.uniqueTuples.append(["name"]) } }
        XCTAssertEqual(distinct.status, 0, distinct.standardOutput)
    }
}
