import Foundation
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// Pins the two model types to each other before one replaces the other (issue #24, "one model
/// type"): a schema comes back from its compiled model with exactly what no model says left out
/// (an app profile's natural keys, singletons, merge rules and typed-array kinds; symbolic and
/// array defaults), a store's model comes back from its schema with exactly what a schema cannot
/// hold left out (fetch indexes, transient properties, notes), and either way the hashes, the
/// CREATE statements and the entity numbers agree.
final class SchemaModelPinTests: XCTestCase {
    /// Every TimeQuest version, as the profile gives it, and a schema file that states everything
    /// the format has: a parent, uniqueness, every delete rule, renames, modifiers, flags, a
    /// composite, concrete and symbolic defaults, a natural key, a singleton with merge rules.
    func schemas() throws -> [(name: String, schema: Schema)] {
        let file = """
            {"versionIdentifier": "3.0.0", "entities": [
              {"name": "Animal", "attributes": [
                 {"name": "name", "type": "string", "default": {"value": ""}, "originalName": "title", "versionHashModifier": "m"},
                 {"name": "born", "type": "date", "default": "now"},
                 {"name": "cloudID", "type": "string", "default": "uuidString"},
                 {"name": "photo", "type": "binary", "optional": true, "externalStorage": true, "preservesValueOnDeletion": true},
                 {"name": "weight", "type": "decimal", "default": {"value": "12.5"}},
                 {"name": "tags", "type": "stringArray", "optional": true},
                 {"name": "spot", "type": "composite", "optional": true, "elements": [
                    {"name": "x", "type": "double", "optional": true}, {"name": "y", "type": "double", "optional": true}]}],
               "relationships": [
                 {"name": "owner", "destination": "Owner", "inverse": "animals", "toMany": false, "deleteRule": "deny"},
                 {"name": "vets", "destination": "Vet", "inverse": "patients", "toMany": true, "deleteRule": "noAction", "ordered": true}],
               "naturalKey": ["name", "owner"], "unique": [["cloudID"], ["name", "born"]], "versionHashModifier": "animals"},
              {"name": "Zebra", "superentity": "Animal", "attributes": [{"name": "breed", "type": "string", "optional": true}]},
              {"name": "Owner", "attributes": [{"name": "score", "type": "integer", "default": {"value": 0}}],
               "relationships": [{"name": "animals", "destination": "Animal", "inverse": "owner", "toMany": true, "deleteRule": "cascade"}],
               "singletonCloudID": "the-owner", "merge": {"score": "maximum"}},
              {"name": "Vet", "attributes": [{"name": "license", "type": "integer32", "readOnly": true}],
               "relationships": [{"name": "patients", "destination": "Animal", "inverse": "vets", "toMany": true, "minCount": 1, "maxCount": 9}]}]}
            """
        let directory = try TemporaryTestDirectory()
        let url = directory.path("schema.json")
        try Data(file.utf8).write(to: url)
        let fromFile = try Schema.load(from: url)
        return TimeQuestSchemas.declarations.map { ("TimeQuest \($0.versionIdentifier)", $0) } + [("schema file", fromFile)]
    }

    /// Every model a store carries among the fixtures and the test shapes.
    func models() throws -> [(name: String, model: CompiledModel)] {
        var models: [(String, CompiledModel)] = [("kitchen-sink model", AnyAppFixtures.kitchenSinkModel)]
        models += ModelCacheShapes.all.map { ("shape \($0.name)", $0.store.model) }
        for (fixture, model) in try fixtureCaches() { models.append(("fixture \(fixture)", model)) }
        return models
    }

    static let fixtures = [
        "v1-typical", "v1-anomalies", "v1-edge-cases", "v1-wal", "v2-typical", "AnyApp/kitchen-sink", "AnyApp/bennie-game",
        "Gates/BennieGame/fixtures/v1.0-alexander-oliver", "Gates/BennieGame/next", "Gates/Ritualist/fixtures/v1-john",
        "Gates/Ritualist/next",
    ]

    func fixtureCaches() throws -> [(String, CompiledModel)] {
        var caches: [(String, CompiledModel)] = []
        for fixture in Self.fixtures {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture(fixture)
            guard let cache = try StoreSnapshot(storeAt: store).read({ try StoreReader.modelCache($0) }) else { continue }
            caches.append((fixture, try ModelCacheDecoder.decode(cache)))
        }
        XCTAssertGreaterThanOrEqual(caches.count, 7, "the fixtures carry their models")
        return caches
    }

    /// What of `schema` a model says: no identity, no symbolic or array default, a typed array a
    /// transformable naming its value class (the profile's `attributeKinds` say the element type).
    /// `symbolicDefaultsKept`: in memory a model keeps `now` and a new UUID string; a cache's
    /// bytes do not hold them.
    func modelPart(of schema: Schema, symbolicDefaultsKept: Bool = true) -> Schema {
        func modelAttribute(_ attribute: Attribute) -> Attribute {
            var result = attribute
            let arrays: [AttributeKind: String] = [.integerArray: "Array<Int>", .stringArray: "Array<String>"]
            if let valueClass = arrays[attribute.kind] {
                result.kind = .transformable
                result.valueClassName = valueClass
                result.transformerName = "NSSecureUnarchiveFromData"
            }
            switch attribute.defaultValue {
            case .now? where !symbolicDefaultsKept, .newUUIDString? where !symbolicDefaultsKept, .value(.integerArray)?,
                .value(.stringArray)?:
                result.defaultValue = nil
            default: break
            }
            result.elements = attribute.elements.map(modelAttribute)
            return result
        }
        return Schema(
            versionIdentifier: schema.versionIdentifier,
            entities: schema.entities.map { entity in
                var result = entity
                result.attributes = entity.attributes.map(modelAttribute)
                return result
            })
    }

    /// What of `model` a schema holds: no fetch or compound index, transient property or note,
    /// one version identifier, a renaming identifier always given, no array default (archived by
    /// its transformer) or default of a class no decoder knows.
    func schemaPart(of model: CompiledModel) -> CompiledModel {
        func schemaAttribute(_ attribute: CompiledAttribute) -> CompiledAttribute {
            var result = attribute
            switch attribute.defaultValue {
            case .array?, .other?: result.defaultValue = nil
            default: break
            }
            result.elements = attribute.elements.map(schemaAttribute)
            return result
        }
        var result = model
        result.versionIdentifiers = Array(model.versionIdentifiers.prefix(1))
        result.notes = []
        for index in result.entities.indices {
            result.entities[index].indexes = []
            result.entities[index].compoundIndexes = []
            result.entities[index].transientProperties = []
            result.entities[index].renamingIdentifier = result.entities[index].renamingIdentifier ?? result.entities[index].name
            result.entities[index].attributes = result.entities[index].attributes.map(schemaAttribute)
        }
        return result
    }

    /// A model cache keeps properties in name order (`NSProperties` is a dictionary); a schema
    /// and the model it compiles to keep them in declaration order, the order reports use.
    func inNameOrder(_ schema: Schema) -> Schema {
        var result = schema
        for index in result.entities.indices {
            result.entities[index].attributes.sort { $0.name < $1.name }
            result.entities[index].relationships.sort { $0.name < $1.name }
        }
        return result
    }

    func inNameOrder(_ model: CompiledModel) -> CompiledModel {
        var result = model
        for index in result.entities.indices {
            result.entities[index].attributes.sort { $0.name < $1.name }
            result.entities[index].relationships.sort { $0.name < $1.name }
        }
        return result
    }

    func testASchemaComesBackFromItsModelWithoutWhatNoModelSays() throws {
        for (name, schema) in try schemas() {
            let model = CompiledModel(schema: schema)
            XCTAssertEqual(Schema(model: model), modelPart(of: schema), name)
            let decoded = try ModelCacheDecoder.decode(try ModelCacheEncoder.encode(model))
            XCTAssertEqual(
                Schema(model: decoded), inNameOrder(modelPart(of: schema, symbolicDefaultsKept: false)), "\(name), through a cache's bytes")
            // What the engine reads a store of the declaration by is what its cache's bytes say.
            XCTAssertEqual(ModelVersionHashes(model: decoded), ModelVersionHashes(model: model), name)
            XCTAssertEqual(try ModelTables(model: decoded).tables, try ModelTables(model: model).tables, name)
            XCTAssertEqual(try ModelTables(model: decoded).joinTables, try ModelTables(model: model).joinTables, name)
            for entity in schema.entities {
                XCTAssertEqual(model.entityNumber(of: entity.name), try ModelTables(model: model).number(of: entity.name), name)
                XCTAssertEqual(model.entityNumber(of: entity.name), schema.entityNumber(of: entity.name), name)
            }
            for entity in model.entities {
                for relationship in entity.relationships {
                    XCTAssertEqual(
                        relationship.rule, schema.entity(named: entity.name)?.relationship(named: relationship.name)?.deleteRule,
                        "\(name): \(entity.name).\(relationship.name)")
                }
            }
        }
    }

    /// A schema file that states natural keys, a singleton and merge rules gives a model and,
    /// beside its entities, a profile's identities; written again, the file says the same.
    func testASchemaFilesIdentitiesAreBesideItsModel() throws {
        let schema = try XCTUnwrap(try schemas().first { $0.name == "schema file" }?.schema)
        XCTAssertEqual(
            schema.identities,
            [
                "Animal": Identity(naturalKey: ["name", "owner"]),
                "Owner": Identity(singletonCloudID: "the-owner", merge: ["score": .maximum]),
            ])
        XCTAssertEqual(schema.identity(of: "Vet"), Identity())
        XCTAssertEqual(try JSONDecoder().decode(Schema.self, from: try schema.jsonData()), schema)
        let text = String(decoding: try schema.jsonData(), as: UTF8.self)
        XCTAssertTrue(text.contains(#""singletonCloudID" : "the-owner""#), text)
    }

    /// What a schema answers, the model it compiles to answers the same way; and a model written
    /// with the readable initialisers is the one a schema of the same declarations compiles to.
    func testTheModelAnswersAsItsSchemaDoes() throws {
        for (name, schema) in try schemas() {
            let model = CompiledModel(schema: schema)
            XCTAssertEqual(model.versionIdentifier, schema.versionIdentifier, name)
            XCTAssertEqual(model.nameProblems, schema.nameProblems, name)
            for entity in schema.entities {
                let compiled = try XCTUnwrap(model.entity(named: entity.name), name)
                XCTAssertEqual(compiled.tableName, entity.tableName, name)
                XCTAssertEqual(compiled.originalName, entity.originalName, name)
                XCTAssertEqual(compiled.cloudID?.name, entity.cloudID?.name, name)
                XCTAssertEqual(compiled.storedPropertyNames, entity.storedPropertyNames, name)
                XCTAssertEqual(compiled.toOneRelationships.map(\.name), entity.toOneRelationships.map(\.name), name)
                for attribute in entity.attributes {
                    XCTAssertEqual(compiled.attribute(named: attribute.name)?.originalName, attribute.originalName, name)
                }
            }
        }
        let bad = Schema(versionIdentifier: "1", entities: [Entity(name: "A b", attributes: [Attribute("c-d", .string)])])
        XCTAssertEqual(CompiledModel(schema: bad).nameProblems.count, 2)
        XCTAssertEqual(CompiledModel(schema: bad).nameProblems, bad.nameProblems)

        let declared = CompiledModel(
            versionIdentifier: "1.0.0",
            entities: [
                CompiledEntity(
                    name: "Routine",
                    attributes: [
                        CompiledAttribute("name", .string, default: .string("")),
                        CompiledAttribute("activeDays", .integerArray),
                        CompiledAttribute("createdAt", .date, symbolicDefault: .now),
                        CompiledAttribute("title", .string, optional: true, originalName: "displayName"),
                    ],
                    relationships: [CompiledRelationship("tasks", to: "Task", inverse: "routine", toMany: true, deleteRule: .cascade)],
                    renamingIdentifier: "Routine"),
                CompiledEntity(
                    name: "Task", attributes: [CompiledAttribute("n", .integer16)],
                    relationships: [CompiledRelationship("routine", to: "Routine", inverse: "tasks", toMany: false)],
                    renamingIdentifier: "Task"),
            ])
        let schema = Schema(
            versionIdentifier: "1.0.0",
            entities: [
                Entity(
                    name: "Routine",
                    attributes: [
                        Attribute("name", .string, default: .value(.string(""))), Attribute("activeDays", .integerArray),
                        Attribute("createdAt", .date, default: .now),
                        Attribute("title", .string, optional: true, originalName: "displayName"),
                    ],
                    relationships: [Relationship("tasks", to: "Task", inverse: "routine", toMany: true, deleteRule: .cascade)]),
                Entity(
                    name: "Task", attributes: [Attribute("n", .integer16)],
                    relationships: [Relationship("routine", to: "Routine", inverse: "tasks", toMany: false)]),
            ])
        XCTAssertEqual(declared, CompiledModel(schema: schema))
    }

    /// The profile puts back what no model says, but for array defaults (which the profile does
    /// not hold yet).
    func testTheProfileCompletesTimeQuestsModels() throws {
        for version in TimeQuestSchemas.declarations {
            var expected = version
            for entity in expected.entities.indices {
                for attribute in expected.entities[entity].attributes.indices {
                    switch expected.entities[entity].attributes[attribute].defaultValue {
                    case .value(.integerArray)?: expected.entities[entity].attributes[attribute].defaultValue = nil
                    default: break
                    }
                }
            }
            var completed = AppProfile.timeQuest.applied(to: Schema(model: CompiledModel(schema: version)))
            // A typed array's value class and transformer are the model's; the schema's kind
            // implies them.
            for entity in completed.entities.indices {
                for attribute in completed.entities[entity].attributes.indices
                where [.integerArray, .stringArray].contains(completed.entities[entity].attributes[attribute].kind) {
                    completed.entities[entity].attributes[attribute].valueClassName = nil
                    completed.entities[entity].attributes[attribute].transformerName = nil
                }
            }
            XCTAssertEqual(completed, expected, version.versionIdentifier)
        }
    }

    func testAStoresModelComesBackFromItsSchemaWithoutWhatASchemaCannotHold() throws {
        for (name, model) in try models() {
            let schema = Schema(model: model)
            let back = CompiledModel(schema: schema)
            XCTAssertEqual(back, schemaPart(of: model), name)
            if back != schemaPart(of: model) {
                for (mine, theirs) in zip(back.entities, schemaPart(of: model).entities) where mine != theirs {
                    XCTFail("\(name): \(mine.name)\n\(mine)\n\(theirs)")
                }
            }
            XCTAssertEqual(ModelVersionHashes(model: back), ModelVersionHashes(model: model), name)
            let tables = try ModelTables(model: model)
            let tablesBack = try ModelTables(model: back)
            XCTAssertEqual(tablesBack.tables.map(\.createStatement), tables.tables.map(\.createStatement), name)
            XCTAssertEqual(tablesBack.tables.map(\.columns), tables.tables.map(\.columns), name)
            XCTAssertEqual(tablesBack.joinTables, tables.joinTables, name)
            for entity in model.entities {
                XCTAssertEqual(model.entityNumber(of: entity.name), tables.number(of: entity.name), "\(name): \(entity.name)")
            }
        }
    }

    /// The TimeQuest fixtures' caches are their version's model as the generator archives it:
    /// no defaults, every delete rule nullify (`asTheFixturesWereArchived`), so `make fixtures`
    /// writes the same bytes although the model carries the cascades now.
    func testTheTimeQuestFixtureCachesAreTheirVersionsAsArchived() throws {
        var checked = 0
        for (fixture, cache) in try fixtureCaches() where !fixture.contains("/") {
            let version = try XCTUnwrap(TimeQuestSchemas.declaration(cache.versionIdentifier), fixture)
            XCTAssertEqual(cache, inNameOrder(CompiledModel(schema: version).asTheFixturesWereArchived), fixture)
            XCTAssertTrue(cache.entities.flatMap(\.relationships).allSatisfy { $0.rule == .nullify }, fixture)
            XCTAssertTrue(CompiledModel(schema: version).entities.flatMap(\.relationships).contains { $0.rule == .cascade }, fixture)
            checked += 1
        }
        XCTAssertEqual(checked, 5)
    }
}
