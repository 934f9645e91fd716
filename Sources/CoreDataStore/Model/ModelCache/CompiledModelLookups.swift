import Foundation

// What a schema answers that the model a store carries answers too, typed: the one model type
// (issue #24) is the compiled one, and these make it as readable as the schema it replaces.

extension CompiledModel {
    /// The first of `versionIdentifiers` (a SwiftData store names one), or "" for none.
    package var versionIdentifier: String { versionIdentifiers.first ?? "" }

    /// Core Data's entity order: alphabetical, each entity followed by its sub-entities
    /// (alphabetical, depth first), as store-format.md says `Z_ENT` numbers them. An entity whose
    /// superentity is missing or lies on a cycle is left out (`ModelTables` refuses such a model).
    package var entitiesInNumberOrder: [CompiledEntity] {
        EntityNumbering.ordered(entities, name: \.name, superentity: \.superentity)
    }

    /// The `Z_ENT` number of an entity in a new store: its position in `entitiesInNumberOrder`,
    /// starting at 1.
    package func entityNumber(of name: String) -> Int? {
        entitiesInNumberOrder.firstIndex { $0.name == name }.map { $0 + 1 }
    }
}

extension CompiledEntity {
    package func attribute(named name: String) -> CompiledAttribute? { attributes.first { $0.name == name } }
    package func relationship(named name: String) -> CompiledRelationship? { relationships.first { $0.name == name } }
}

extension CompiledAttribute {
    /// The kind of `typeCode`; nil for a code no kind has, which stays the code (never guessed).
    package var kind: AttributeKind? { AttributeKind(typeCode: typeCode) }
}

extension CompiledRelationship {
    /// `deleteRule` typed; nil for a code Core Data does not define, which stays the code.
    package var rule: DeleteRule? { DeleteRule(code: deleteRule) }
}

/// Core Data's `Z_ENT` order, for either model type: alphabetical, each entity followed by its
/// sub-entities (alphabetical, depth first). Entities whose superentity is missing or on a cycle
/// are left out.
package enum EntityNumbering {
    package static func ordered<Entity>(
        _ entities: [Entity], name: (Entity) -> String, superentity: (Entity) -> String?
    ) -> [Entity] {
        var ordered: [Entity] = []
        func visit(_ entity: Entity) {
            ordered.append(entity)
            for child in entities.filter({ superentity($0) == name(entity) }).sorted(by: { name($0) < name($1) }) { visit(child) }
        }
        for root in entities.filter({ superentity($0) == nil }).sorted(by: { name($0) < name($1) }) { visit(root) }
        return ordered
    }
}
