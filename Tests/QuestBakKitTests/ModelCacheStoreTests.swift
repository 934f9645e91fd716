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
            let store = try store(fixture, withCache: CompiledModel(schema: schema), in: directory)
            let inspection = try StoreInspection(snapshot: try StoreSnapshot(storeAt: store), candidates: TimeQuestSchemas.versions)
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
            try StoreInspection(snapshot: try StoreSnapshot(storeAt: store), candidates: TimeQuestSchemas.versions).model)
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
        XCTAssertNil(try StoreInspection(snapshot: try StoreSnapshot(storeAt: plain), candidates: TimeQuestSchemas.versions).model)
        XCTAssertTrue(try Questbak.run(["inspect", plain.path]).standardOutput.contains("model:               none in the store"))
        let damaged = try directory.copyFixture("v2-typical")
        let queue = try DatabaseQueue(path: damaged.path)
        try queue.write { try $0.execute(sql: "UPDATE Z_MODELCACHE SET Z_CONTENT = x'0102030405'") }
        try queue.close()
        let summary = try XCTUnwrap(
            try StoreInspection(snapshot: try StoreSnapshot(storeAt: damaged), candidates: TimeQuestSchemas.versions).model)
        XCTAssertNotNil(summary.problem)
        XCTAssertFalse(summary.hashesMatch)
    }
}

/// A decoded model is questbak's schema value: the same hashes, whichever way they are computed,
/// and TimeQuest's schemas are one case of it.
final class SchemaFromModelTests: XCTestCase {
    func testTimeQuestSchemasAreOneCaseOfADecodedModel() throws {
        for schema in TimeQuestSchemas.declarations {
            let decoded = Schema(model: try ModelCacheDecoder.decode(try ModelCacheEncoder.encode(CompiledModel(schema: schema))))
            XCTAssertEqual(ModelVersionHashes(declaration: decoded), ModelVersionHashes(declaration: schema), schema.versionIdentifier)
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
            let hashes = ModelVersionHashes(declaration: schema)
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

    /// Schema → CompiledModel → Schema keeps every concrete default, through a model cache's bytes
    /// too; `now` and a new UUID string stay symbolic in the model and out of its cache, and an
    /// array default stays out of the model (archived by a transformer): each says so by coming
    /// back as no default.
    func testAConcreteDefaultSurvivesTheModelAndItsCache() throws {
        let uuid = UUID(uuidString: "12345678-1234-4234-8234-123456789ABC")!
        let concrete: [Attribute] = [
            Attribute("count", .integer, default: .value(.integer(-7))), Attribute("small", .integer16, default: .value(.integer(3))),
            Attribute("flag", .boolean, default: .value(.boolean(true))), Attribute("ratio", .double, default: .value(.double(0.25))),
            Attribute("name", .string, default: .value(.string("Ünïcode"))), Attribute("at", .date, default: .value(.date(-1.5))),
            Attribute("token", .uuid, default: .value(.uuid(uuid))), Attribute("bytes", .binary, default: .value(.binary(Data([0, 255])))),
            Attribute("price", .decimal, default: .value(.decimal("-12.5"))),
            Attribute("tiny", .decimal, default: .value(.decimal("1e-07"))),
            Attribute("whole", .decimal, default: .value(.decimal("100"))),
            Attribute("place", .composite, optional: true, default: .value(.null), elements: [Attribute("x", .double, optional: true)]),
        ]
        let symbolic: [Attribute] = [
            Attribute("createdAt", .date, default: .now), Attribute("cloudID", .string, default: .newUUIDString),
            Attribute("days", .integerArray, default: .value(.integerArray([]))),
        ]
        let schema = Schema(versionIdentifier: "1.0", entities: [Entity(name: "Thing", attributes: concrete + symbolic)])
        let model = CompiledModel(schema: schema)
        for decoded in [Schema(model: model), Schema(model: try ModelCacheDecoder.decode(try ModelCacheEncoder.encode(model)))] {
            let thing = try XCTUnwrap(decoded.entity(named: "Thing"))
            for attribute in concrete {
                XCTAssertEqual(thing.attribute(named: attribute.name)?.defaultValue, attribute.defaultValue, attribute.name)
            }
            for attribute in symbolic where attribute.name == "days" || decoded != Schema(model: model) {
                XCTAssertNil(thing.attribute(named: attribute.name)?.defaultValue, attribute.name)
            }
        }
        XCTAssertEqual(Schema(model: model).entity(named: "Thing")?.attribute(named: "createdAt")?.defaultValue, .now)
        XCTAssertEqual(Schema(model: model).entity(named: "Thing")?.attribute(named: "cloudID")?.defaultValue, .newUUIDString)
    }

    /// A layout of a profile's model has its defaults as a layout of a store's own cache would:
    /// what the model repair rules and the model migrator fill in.
    func testALayoutOfAProfilesModelHasItsDefaults() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v2-typical")
        let layout = try StoreSnapshot(storeAt: store).read { try ModelLayout($0, model: CompiledModel(schema: TimeQuestSchemas.v2)) }
        XCTAssertEqual(layout.problems, [])
        let fields = try XCTUnwrap(layout.entity(named: "PlayerProfile")).fields
        XCTAssertEqual(fields.first { $0.column == "ZNOTIFICATIONHOUR" }?.defaultValue, .integer(7))
        XCTAssertEqual(fields.first { $0.column == "ZSOUNDENABLED" }?.defaultValue, .integer(1))
        XCTAssertNil(try XCTUnwrap(fields.first { $0.column == "ZCREATEDAT" }).defaultValue, "now stays symbolic")
    }

    /// What a schema says that a model also says comes back from its model unchanged: renames,
    /// counts, ordering, modifiers, transformer names and concrete defaults; and the hashes agree
    /// whichever of the two they are computed from.
    func testASchemaComesBackFromItsModel() throws {
        var price = Attribute("price", .decimal, optional: true, default: .value(.decimal("9.99")), originalName: "cost")
        price.versionHashModifier = "v2"
        price.isReadOnly = true
        var lines = Relationship("lines", to: "Line", inverse: "order", toMany: true, minCount: 1, maxCount: 5, ordered: true)
        lines.originalName = "items"
        var order = Entity(
            name: "Order",
            attributes: [
                price, Attribute("blob", .transformable, optional: true, transformerName: "MyTransformer", valueClassName: "MyClass"),
            ],
            relationships: [lines], versionHashModifier: "orders")
        order.originalName = "Purchase"
        let schema = Schema(
            versionIdentifier: "2.0",
            entities: [
                order,
                Entity(
                    name: "Line", attributes: [Attribute("n", .integer)],
                    relationships: [Relationship("order", to: "Order", inverse: "lines", toMany: false)]),
            ])
        let model = CompiledModel(schema: schema)
        XCTAssertEqual(Schema(model: model), schema)
        XCTAssertEqual(ModelVersionHashes(model: model), ModelVersionHashes(declaration: schema))
    }
}
