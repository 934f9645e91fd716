import Foundation

/// A model as it is declared, SwiftData's `VersionedSchema` written down as data: what an app
/// profile states its versions in (TimeQuest's) and what a schema file holds (`SchemaJSON`). It
/// is only a way in: `ModelVersion(schema:)` compiles it, once, to the model every store of it is
/// read, written, repaired and migrated by (the engine has one model type, the compiled one, and
/// never turns one back into a declaration; `Schema(model:)` writes one out for a schema file).
/// A new version is a new value, not new code.
package struct Schema: Sendable, Equatable {
    /// `VersionedSchema.versionIdentifier`, as SwiftData writes it into the store metadata.
    public var versionIdentifier: String
    public var entities: [Entity]
    /// What no model says, by entity name: how duplicate records are recognised and merged (see
    /// `Rules/`). An app profile gives it (`AppProfile.identities`), or a schema file states it;
    /// it is the profile's, not a model's, so it lives beside the entities rather than in them.
    /// Only entities with an identity are listed.
    public var identities: [String: Identity]

    public init(versionIdentifier: String, entities: [Entity], identities: [String: Identity] = [:]) {
        self.versionIdentifier = versionIdentifier
        // Core Data numbers entities 1...n in alphabetical order of name; keeping the array in that
        // order makes the entity number its position plus one.
        self.entities = entities.sorted { $0.name < $1.name }
        self.identities = identities.filter { $0.value != Identity() }
    }

    /// How records of `entity` are identified: its natural key, singleton cloudID and merge
    /// rules, or none of them.
    public func identity(of entity: String) -> Identity { identities[entity] ?? Identity() }

    public func entity(named name: String) -> Entity? {
        entities.first { $0.name == name }
    }

    /// Names become table names, column names, SQL and file names, so each must be a plain
    /// identifier (`[A-Za-z_][A-Za-z0-9_]*`) and unique where it has to be; one sentence per problem.
    public var nameProblems: [String] { CompiledModel(schema: self).nameProblems }

    /// The `Z_ENT` number of an entity: its position, starting at 1, in Core Data's order
    /// (alphabetical, sub-entities after their parent, depth first), as `ModelTables` numbers it.
    public func entityNumber(of name: String) -> Int? {
        guard entities.contains(where: { $0.superentity != nil }) else { return entities.firstIndex { $0.name == name }.map { $0 + 1 } }
        return EntityNumbering.ordered(entities, name: \.name, superentity: \.superentity).firstIndex { $0.name == name }.map { $0 + 1 }
    }
}

package struct Entity: Sendable, Equatable {
    public var name: String
    public var attributes: [Attribute]
    public var relationships: [Relationship]
    /// The parent entity, whose properties this one inherits and whose table it shares.
    public var superentity: String?
    /// `#Unique` / `@Attribute(.unique)`: each a list of property names (`NSUniqueTuples`).
    public var uniquenessConstraints: [[String]]
    /// `NSVersionHashModifier`, which enters the entity's hash.
    public var versionHashModifier: String?
    /// The name it had in the previous version (its renaming identifier), as for attributes.
    public var originalName: String?
    /// An abstract entity has no records of its own, only its sub-entities' (`NSIsAbstract`);
    /// it enters the entity's hash.
    public var isAbstract: Bool = false
    /// The ancestors' properties the entity's hash covers besides its own, by name: Core Data
    /// lists every inherited property (a model cache names them); empty, none is hashed.
    public var inheritedProperties: [String] = []

    public init(
        name: String, attributes: [Attribute], relationships: [Relationship] = [], superentity: String? = nil,
        uniquenessConstraints: [[String]] = [], versionHashModifier: String? = nil
    ) {
        self.name = name
        self.attributes = attributes
        self.relationships = relationships
        self.superentity = superentity
        self.uniquenessConstraints = uniquenessConstraints
        self.versionHashModifier = versionHashModifier
    }

    public var tableName: String { Entity.tableName(name) }

    /// `CompiledEntity.tableName(_:)`, the one spelling of that rule.
    public static func tableName(_ entityName: String) -> String { CompiledEntity.tableName(entityName) }

    /// `CompiledEntity.cloudIDAttribute`.
    public static let cloudIDAttribute = CompiledEntity.cloudIDAttribute

    /// The entity's cloudID attribute, if it has one.
    public var cloudID: Attribute? { attribute(named: Entity.cloudIDAttribute) }

    public func attribute(named name: String) -> Attribute? { attributes.first { $0.name == name } }
    public func relationship(named name: String) -> Relationship? { relationships.first { $0.name == name } }

    /// Relationships stored as a foreign-key column in this entity's table.
    public var toOneRelationships: [Relationship] { relationships.filter { !$0.isToMany } }

    /// Every property name, the order records are written in: attributes then to-one relationships,
    /// each group sorted by name so the order does not depend on how the schema was written down.
    public var storedPropertyNames: [String] {
        attributes.map(\.name).sorted() + toOneRelationships.map(\.name).sorted()
    }
}

/// A default as the Swift source states it. `Date.now` and `UUID().uuidString` stay symbolic
/// here: the operation that needs a concrete value (import, migration) resolves them from its own
/// inputs, so no pure function ever reads the clock.
package enum DefaultValue: Sendable, Equatable {
    case value(Value)
    case now
    case newUUIDString
}

package struct Attribute: Sendable, Equatable {
    public var name: String
    public var kind: AttributeKind
    public var isOptional: Bool
    /// The property-level default from the Swift declaration, if any.
    public var defaultValue: DefaultValue?
    /// `@Attribute(originalName:)`: the name this property had in the previous version, which
    /// makes a rename a lightweight change.
    public var originalName: String?
    /// A composite's elements (kind `.composite`): a Codable struct stored inline, each element a
    /// column of its own.
    public var elements: [Attribute]
    /// A transformable's `NSValueTransformerName` and value class (`Array<String>`).
    public var transformerName: String?
    public var valueClassName: String?
    /// `@Attribute(.externalStorage)`: Core Data may keep a large value in a file beside the
    /// store. It enters the attribute's hash.
    public var allowsExternalStorage: Bool = false
    /// `@Attribute(.preserveValueOnDeletion)`: kept in persistent history when the record is
    /// deleted. It enters the attribute's hash.
    public var preservesValueOnDeletion: Bool = false
    /// Core Data's read-only property flag and the property's own version hash modifier: both
    /// enter its hash.
    public var isReadOnly: Bool = false
    public var versionHashModifier: String?

    public init(
        _ name: String, _ kind: AttributeKind, optional: Bool = false, default defaultValue: DefaultValue? = nil,
        originalName: String? = nil, elements: [Attribute] = [], transformerName: String? = nil,
        valueClassName: String? = nil
    ) {
        self.name = name
        self.kind = kind
        self.isOptional = optional
        self.defaultValue = defaultValue
        self.originalName = originalName
        self.elements = elements
        self.transformerName = transformerName
        self.valueClassName = valueClassName
    }
}

package enum DeleteRule: String, Sendable, Equatable, CaseIterable {
    case nullify, cascade, deny, noAction

    /// `NSDeleteRule` as a model cache archives it (`NSDeleteRule`'s raw values).
    package var code: Int {
        switch self {
        case .noAction: 0
        case .nullify: 1
        case .cascade: 2
        case .deny: 3
        }
    }

    /// The rule of an archived code; nil for a code Core Data does not define (the decoder notes it).
    package init?(code: Int) {
        guard let rule = DeleteRule.allCases.first(where: { $0.code == code }) else { return nil }
        self = rule
    }
}

package struct Relationship: Sendable, Equatable {
    public var name: String
    public var destination: String
    public var inverse: String?
    public var isToMany: Bool
    public var deleteRule: DeleteRule
    /// SwiftData makes a to-one `Model?` optional and a to-many `[Model] = []` not; a model cache
    /// says so for each relationship.
    public var isOptional: Bool
    /// `NSMinCount` and `NSMaxCount` (1 for a to-one, 0 for an unbounded to-many).
    public var minCount: Int
    public var maxCount: Int
    /// An ordered to-many (`NSIsOrdered`).
    public var isOrdered: Bool
    /// The name it had in the previous version (its renaming identifier), as for attributes.
    public var originalName: String?
    /// Core Data's read-only property flag and the property's own version hash modifier: both
    /// enter its hash.
    public var isReadOnly: Bool = false
    public var versionHashModifier: String?

    public init(
        _ name: String, to destination: String, inverse: String?, toMany: Bool, deleteRule: DeleteRule = .nullify, optional: Bool? = nil,
        minCount: Int = 0, maxCount: Int? = nil, ordered: Bool = false
    ) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = toMany
        self.deleteRule = deleteRule
        self.isOptional = optional ?? !toMany
        self.minCount = minCount
        self.maxCount = maxCount ?? (toMany ? 0 : 1)
        self.isOrdered = ordered
        self.originalName = nil
    }
}

/// How records of one entity are identified when looking for duplicates.
package struct Identity: Sendable, Equatable {
    /// Properties that identify a record when it has no usable cloudID (seed 000); empty: none.
    public var naturalKey: [String]
    /// A singleton entity keeps one record; its cloudID is pinned to this value.
    public var singletonCloudID: String?
    /// How a singleton's duplicates are merged, per property; unnamed properties come from the keeper.
    public var merge: [String: MergeRule]

    public init(naturalKey: [String] = [], singletonCloudID: String? = nil, merge: [String: MergeRule] = [:]) {
        self.naturalKey = naturalKey
        self.singletonCloudID = singletonCloudID
        self.merge = merge
    }
}

package enum MergeRule: String, Sendable, Equatable {
    case maximum, minimum
}
