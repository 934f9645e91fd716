import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// A store's own model, read from its `Z_MODELCACHE`, checked against its metadata: the hashes
/// recomputed from the decoded model must be the ones Core Data stored.
final class ModelCacheStoreTests: XCTestCase {
    func store(_ fixture: String, withCache model: CompiledModel, in directory: TemporaryTestDirectory) throws -> URL {
        let store = try directory.copyFixture(fixture)
        let content = try ModelCacheEncoder.encode(model)
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { db in
            try db.execute(sql: "DELETE FROM Z_MODELCACHE")
            try db.execute(sql: "INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)", arguments: [content])
        }
        try queue.close()
        return store
    }

    func testTheDecodedModelsHashesAreTheStoresOwnForEveryVersion() throws {
        for (fixture, schema) in [("v1-typical", TimeQuestSchemas.v1), ("v2-typical", TimeQuestSchemas.v2)] {
            let directory = try TemporaryTestDirectory()
            // The recomputation agrees with questbak's own hashes of the schema, entity by entity.
            XCTAssertEqual(
                ModelVersionHashes(model: CompiledModel(schema: schema)).entityHashes, ModelVersionHashes(schema: schema).entityHashes,
                fixture)
            let store = try store(fixture, withCache: CompiledModel(schema: schema), in: directory)
            let inspection = try StoreInspection(snapshot: try StoreSnapshot(storeAt: store), candidates: TimeQuestSchemas.all)
            let model = try XCTUnwrap(inspection.model, fixture)
            XCTAssertNil(model.problem, fixture)
            XCTAssertEqual(model.entities, 5, fixture)
            XCTAssertEqual(model.versionIdentifiers, [schema.versionIdentifier], fixture)
            XCTAssertTrue(model.hashesMatch, "\(fixture): \(model.differingEntities)")
            let text = try Questbak.run(["inspect", store.path]).standardOutput
            XCTAssertTrue(text.contains("model:               decoded from the store (5 entities), hashes match"), text)
        }
    }

    func testAModelThatDisagreesWithTheMetadataIsNamedEntityByEntity() throws {
        let directory = try TemporaryTestDirectory()
        var model = CompiledModel(schema: TimeQuestSchemas.v2)
        let routine = try XCTUnwrap(model.entities.firstIndex { $0.name == "Routine" })
        model.entities[routine].attributes[0].isOptional.toggle()
        let store = try store("v2-typical", withCache: model, in: directory)
        let summary = try XCTUnwrap(
            try StoreInspection(snapshot: try StoreSnapshot(storeAt: store), candidates: TimeQuestSchemas.all).model)
        XCTAssertFalse(summary.hashesMatch)
        XCTAssertEqual(summary.differingEntities, ["Routine", "checksum", "digest"], "the checksum and digest follow from the hashes")
        let text = try Questbak.run(["inspect", store.path]).standardOutput
        XCTAssertTrue(text.contains("hashes differ for Routine"), text)
        // Export says so too, even under --quiet, and still writes the store as it is.
        let export = try Questbak.run(["export", store.path, "-o", directory.path("a.qbak").path, "-q"])
        XCTAssertEqual(export.status, 0, export.standardError)
        XCTAssertTrue(
            export.standardError.contains(
                "questbak: warning: the store's model cache disagrees with its metadata: hashes differ for Routine"),
            export.standardError)
    }

    func testAStoreWithoutACacheAndOneWithADamagedCacheSaySo() throws {
        let directory = try TemporaryTestDirectory()
        let plain = try directory.copyFixture("v1-typical")
        // As Core Data's stores from before about 2015 are: no compiled model in them.
        try DatabaseQueue(path: plain.path).write { try $0.execute(sql: "DELETE FROM Z_MODELCACHE") }
        XCTAssertNil(try StoreInspection(snapshot: try StoreSnapshot(storeAt: plain), candidates: TimeQuestSchemas.all).model)
        XCTAssertTrue(try Questbak.run(["inspect", plain.path]).standardOutput.contains("model:               none in the store"))
        let damaged = try directory.copyFixture("v2-typical")
        let queue = try DatabaseQueue(path: damaged.path)
        try queue.write { try $0.execute(sql: "UPDATE Z_MODELCACHE SET Z_CONTENT = x'0102030405'") }
        try queue.close()
        let summary = try XCTUnwrap(
            try StoreInspection(snapshot: try StoreSnapshot(storeAt: damaged), candidates: TimeQuestSchemas.all).model)
        XCTAssertNotNil(summary.problem)
        XCTAssertFalse(summary.hashesMatch)
    }
}

/// A decoded model is questbak's schema value: the same hashes, whichever way they are computed,
/// and TimeQuest's schemas are one case of it.
final class SchemaFromModelTests: XCTestCase {
    func testTimeQuestSchemasAreOneCaseOfADecodedModel() throws {
        for schema in TimeQuestSchemas.all {
            let decoded = Schema(model: try ModelCacheDecoder.decode(try ModelCacheEncoder.encode(CompiledModel(schema: schema))))
            XCTAssertEqual(ModelVersionHashes(schema: decoded), ModelVersionHashes(schema: schema), schema.versionIdentifier)
            XCTAssertEqual(decoded.entities.map(\.name), schema.entities.map(\.name))
            for (mine, theirs) in zip(decoded.entities, schema.entities) {
                XCTAssertEqual(mine.attributes.map(\.name).sorted(), theirs.attributes.map(\.name).sorted())
                XCTAssertEqual(mine.relationships.map(\.name).sorted(), theirs.relationships.map(\.name).sorted())
            }
        }
    }

    func testEveryAnyAppFixtureDecodesIntoASchemaWhoseHashesAreItsMetadatas() throws {
        for fixture in ["AnyApp/kitchen-sink", "AnyApp/bennie-game"] {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture(fixture)
            let (cache, metadata) = try StoreSnapshot(storeAt: store).read { db in
                (try StoreReader.modelCache(db), try StoreReader.metadata(db, path: store.path))
            }
            let schema = Schema(model: try ModelCacheDecoder.decode(try XCTUnwrap(cache)))
            let hashes = ModelVersionHashes(schema: schema)
            XCTAssertEqual(hashes.entityHashes, metadata.entityHashes, fixture)
            XCTAssertEqual(metadata.plist["NSStoreModelVersionChecksumKey"], .string(hashes.checksum), fixture)
            XCTAssertEqual(metadata.plist["NSStoreModelVersionHashesDigest"], .string(hashes.digest), fixture)
            if fixture.hasSuffix("kitchen-sink") {
                let recipe = try XCTUnwrap(schema.entity(named: "Recipe"))
                XCTAssertEqual(recipe.uniquenessConstraints, [["code"]])
                XCTAssertEqual(recipe.attribute(named: "cost")?.kind, .decimal)
                XCTAssertEqual(recipe.attribute(named: "profile")?.kind, .composite)
                XCTAssertEqual(recipe.attribute(named: "profile")?.elements.map(\.name), ["flavors", "intensity", "name", "origin"])
                XCTAssertEqual(recipe.attribute(named: "keywords")?.transformerName, "NSSecureUnarchiveFromData")
                XCTAssertEqual(recipe.relationship(named: "steps")?.inverse, nil)
                XCTAssertEqual(schema.entity(named: "Liquid")?.superentity, "Ingredient")
            }
        }
    }
}
