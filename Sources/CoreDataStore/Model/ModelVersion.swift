import Foundation
import GRDB

/// One version of a model as questbak works with it (issue #24, one model type): the compiled
/// model Core Data archives, which lays out the tables (a store's own `Z_MODELCACHE`, or the one
/// a schema compiles to for a store that carries none, as a migrated TimeQuest store), and beside
/// it what no model says: an app profile's identities (natural keys, singletons, merge rules), the
/// element types of TimeQuest's typed arrays (a transformable to the model) and the defaults a
/// model cannot hold (an array's `[]`). The symbolic defaults (`now`, a new UUID string) are the
/// compiled model's own (`CompiledAttribute.symbolicDefault`). Declaration order needs no field:
/// a model compiled from a schema keeps the schema's order of properties (entities in name order,
/// as a schema keeps them), and a store's own model is in the order Core Data archived it.
/// The engine's one model type: every store, an app profile's included, is described, exported,
/// restored, repaired, merged, migrated, dumped and gated by one (it was `StoreDump.Model`).
package struct ModelVersion: Sendable, Equatable {
    package var compiled: CompiledModel
    /// The kinds a schema gives attributes where they differ from their type codes' (a typed
    /// array's), by entity and attribute.
    package var attributeKinds: [String: [String: AttributeKind]]
    /// The defaults the compiled model cannot hold as declared (an array's `[]`, archived by its
    /// transformer), by entity and attribute.
    package var defaultsNoModelHolds: [String: [String: Value]]
    /// What no model says, by entity name: how duplicate records are recognised and merged (an
    /// app profile's `identities`, or a schema file's). Only entities with an identity are listed.
    package var identities: [String: Identity]

    /// The model a schema declares, compiled: the one way from a declaration (an app profile's
    /// version, a schema file) to the model every store of it is read, written and repaired by.
    package init(schema: Schema) {
        compiled = CompiledModel(schema: schema)
        identities = schema.identities
        attributeKinds = [:]
        defaultsNoModelHolds = [:]
        for entity in schema.entities {
            guard let compiledEntity = compiled.entity(named: entity.name) else { continue }
            for attribute in entity.attributes {
                guard let compiledAttribute = compiledEntity.attributes.first(where: { $0.name == attribute.name }) else { continue }
                if compiledAttribute.kind ?? .transformable != attribute.kind {
                    attributeKinds[entity.name, default: [:]][attribute.name] = attribute.kind
                }
                // A value the model cannot give back as declared is kept as declared.
                if case .value(let value)? = attribute.defaultValue,
                    compiledAttribute.defaultValue.flatMap({ $0.declared(as: attribute.kind) }) != .value(value)
                {
                    defaultsNoModelHolds[entity.name, default: [:]][attribute.name] = value
                }
            }
        }
    }

    package init(compiled: CompiledModel, identities: [String: Identity] = [:]) {
        self.compiled = compiled
        self.identities = identities.filter { $0.value != Identity() }
        attributeKinds = [:]
        defaultsNoModelHolds = [:]
    }

    package var versionIdentifier: String { compiled.versionIdentifier }

    /// The entities in name order, as a schema keeps them and reports list them (a store's own
    /// model is in the order its cache archived them).
    package var entitiesInNameOrder: [CompiledEntity] { compiled.entities.sorted { $0.name < $1.name } }

    /// How records of `entity` are identified: its natural key, singleton cloudID and merge
    /// rules, or none of them.
    package func identity(of entity: String) -> Identity { identities[entity] ?? Identity() }

    /// The attribute's own kind, not its parents' (as `Schema`'s attribute has it): the one this
    /// version gives it where its type code says less (a typed array), otherwise its type code's,
    /// an unknown code read as opaque bytes.
    package func declaredKind(of attribute: CompiledAttribute, in entityName: String) -> AttributeKind {
        attributeKinds[entityName]?[attribute.name] ?? attribute.kind ?? .transformable
    }

    /// Whether a record that lacks the attribute gets a value: a default the compiled model holds,
    /// or one only this version holds (an array's `[]`).
    package func hasDefault(_ attribute: CompiledAttribute, in entityName: String) -> Bool {
        attribute.hasDefault || defaultsNoModelHolds[entityName]?[attribute.name] != nil
    }

    /// The attribute's default as its declaration states it: symbolic (`now`, a new UUID
    /// string), a concrete value the model archives, or one only this version holds (an array's
    /// `[]`); nil for none.
    package func defaultValue(of attribute: CompiledAttribute, in entityName: String) -> DefaultValue? {
        if let symbolic = attribute.symbolicDefault { return symbolic == .now ? .now : .newUUIDString }
        if let value = defaultsNoModelHolds[entityName]?[attribute.name] { return .value(value) }
        return attribute.defaultValue.flatMap { $0.declared(as: declaredKind(of: attribute, in: entityName)) }
    }

    /// The entities, in the order the model lists them (a declaration's: by name).
    package var entities: [CompiledEntity] { compiled.entities }

    package func entity(named name: String) -> CompiledEntity? { compiled.entity(named: name) }

    /// The `Z_ENT` number of an entity in a new store of this version (`ModelTables`' numbering).
    package func entityNumber(of name: String) -> Int? { compiled.entityNumber(of: name) }

    /// The entity hashes the store metadata of this version holds.
    package var hashes: ModelVersionHashes { ModelVersionHashes(model: compiled) }

    /// The version among `versions` whose entity hashes are `entityHashes`, if any.
    package static func matching(entityHashes: [String: Data], in versions: [ModelVersion]) -> ModelVersion? {
        versions.first { $0.hashes.entityHashes == entityHashes }
    }

    /// The model a store carries in its `Z_MODELCACHE` (`CompiledModel.model(of:path:)`).
    package static func of(storeAt store: URL) throws -> ModelVersion {
        ModelVersion(compiled: try CompiledModel.model(ofStoreAt: store))
    }

    /// The store's tables as this model lays them out, checked against the store; a field the
    /// model calls transformable is read as the typed array the schema says it is.
    /// `entityNumbers`: the `Z_ENT`s, for a store whose `Z_PRIMARYKEY` does not hold them yet.
    package func layout(_ db: Database, path: String, checkRows: Bool = true, entityNumbers: [String: Int64]? = nil) throws -> ModelLayout {
        var layout = try ModelLayout(db, model: compiled, checkRows: checkRows, entityNumbers: entityNumbers)
        if let problem = layout.problems.first { throw StoreError.noModel(path: path, reason: problem) }
        layout.entities = layout.entities.map(typed)
        return layout
    }

    /// `plan` with each field the model calls transformable read as the typed array this version
    /// says it is (its own entity's or a parent's attribute).
    package func typed(_ plan: ModelLayout.EntityPlan) -> ModelLayout.EntityPlan {
        var plan = plan
        for index in plan.fields.indices where plan.fields[index].path.count == 1 && plan.fields[index].kind == .transformable {
            if let kind = kind(of: plan.fields[index].path[0], in: plan.name), [.integerArray, .stringArray].contains(kind) {
                plan.fields[index].kind = kind
            }
        }
        return plan
    }

    /// The entity's name and its parents', nearest first (a loop in a damaged model is cut).
    package func lineage(of entityName: String) -> [String] { compiled.lineage(of: entityName).map(\.name) }

    /// The kind of an attribute of the entity or of one of its parents: the schema's where it
    /// says one its type code does not, otherwise its type code's.
    package func kind(of attribute: String, in entityName: String) -> AttributeKind? {
        lineage(of: entityName).lazy.compactMap { entity in
            attributeKinds[entity]?[attribute]
                ?? compiled.entity(named: entity)?.attributes.first { $0.name == attribute }.map { $0.kind ?? .transformable }
        }.first
    }
}
