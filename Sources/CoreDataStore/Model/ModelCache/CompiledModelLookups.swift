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

    /// Names become table names, column names, SQL and file names, so each must be a plain
    /// identifier (`[A-Za-z_][A-Za-z0-9_]*`) and unique where it has to be; one sentence per problem.
    package var nameProblems: [String] {
        var problems: [String] = []
        var tables: Set<String> = []
        for entity in entities {
            if !Self.isPlainIdentifier(entity.name) {
                problems.append("entity name \"\(entity.name.prefix(80))\" is not a plain identifier")
            }
            if !tables.insert(entity.name.uppercased()).inserted {
                problems.append("entity \(entity.name) is defined twice (names ignore case in SQLite)")
            }
            for name in entity.attributes.map(\.name) + entity.relationships.map(\.name) where !Self.isPlainIdentifier(name) {
                problems.append("\(entity.name): property name \"\(name.prefix(80))\" is not a plain identifier")
            }
        }
        return problems
    }

    /// Whether `name` is `[A-Za-z_][A-Za-z0-9_]*`: safe as a table, column and file name. The one
    /// check, for models, stores and archives alike.
    package static func isPlainIdentifier(_ name: String) -> Bool {
        func letter(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "_") || (65...90).contains(byte) || (97...122).contains(byte) }
        guard let first = name.utf8.first, letter(first) else { return false }
        return name.utf8.allSatisfy { letter($0) || (48...57).contains($0) }
    }
}

extension CompiledEntity {
    package func attribute(named name: String) -> CompiledAttribute? { attributes.first { $0.name == name } }
    package func relationship(named name: String) -> CompiledRelationship? { relationships.first { $0.name == name } }

    /// The name it had in the previous version, when renamed (its renaming identifier).
    package var originalName: String? { renamingIdentifier.flatMap { $0 == name ? nil : $0 } }

    /// Core Data's table of an entity of this name (of a root entity: sub-entities share it).
    package var tableName: String { Self.tableName(name) }

    /// `Z` + the entity name upper-cased: the one spelling of that rule.
    package static func tableName(_ entityName: String) -> String { "Z" + entityName.uppercased() }

    /// The attribute that names a record to CloudKit, in TimeQuest V2 and any app that follows
    /// its convention; the cloudID repair rules apply wherever an entity has it.
    package static let cloudIDAttribute = "cloudID"

    /// The entity's cloudID attribute, if it has one.
    package var cloudID: CompiledAttribute? { attribute(named: Self.cloudIDAttribute) }

    /// Relationships stored as a foreign-key column in this entity's table.
    package var toOneRelationships: [CompiledRelationship] { relationships.filter { !$0.isToMany } }

    /// Every property name, the order records are written in: attributes then to-one
    /// relationships, each group sorted by name so the order does not depend on how the model
    /// was written down.
    package var storedPropertyNames: [String] {
        attributes.map(\.name).sorted() + toOneRelationships.map(\.name).sorted()
    }
}

extension CompiledAttribute {
    /// The kind of `typeCode`; nil for a code no kind has, which stays the code (never guessed).
    package var kind: AttributeKind? { AttributeKind(typeCode: typeCode) }

    /// The name it had in the previous version (`@Attribute(originalName:)`), when renamed.
    package var originalName: String? { renamingIdentifier.flatMap { $0 == name ? nil : $0 } }

    /// Whether a record that lacks a value gets one: a symbolic default, or a concrete one that is
    /// a single value of the attribute's kind (an array's archived default is not: the bytes its
    /// transformer stores are not known).
    package var hasDefault: Bool {
        symbolicDefault != nil || defaultValue.flatMap { $0.declared(as: kind ?? .transformable) } != nil
    }
}

extension CompiledDefaultValue {
    /// An archived default (SwiftData evaluates a default expression once and archives the value)
    /// as a value of the attribute's kind, as a declaration states it: the one conversion, for the
    /// column a default is stored as, a default the repairs and migrations fill in, and a schema
    /// file. Nil for one that is no single value (an array's, archived by its transformer).
    package func declared(as kind: AttributeKind) -> DefaultValue? {
        switch (self, kind) {
        case (.integer(let number), .double), (.integer(let number), .float): return .value(.double(Double(number)))
        case (.integer(let number), .date): return .value(.date(Double(number)))
        case (.integer(let number), .decimal): return .value(.decimal(String(number)))
        case (.integer(let number), _): return .value(.integer(number))
        case (.real(let number), .decimal):
            // The canonical text of what a DECIMAL column stores (a whole number is an INTEGER).
            let text = Int64(exactly: number).map(String.init) ?? "\(number)"
            return Value.decimalNumber(text) == nil ? nil : .value(.decimal(text))
        case (.real(let number), .integer), (.real(let number), .integer16), (.real(let number), .integer32):
            return Int64(exactly: number).map { .value(.integer($0)) }
        case (.real(let number), _): return .value(.double(number))
        case (.boolean(let flag), _): return .value(.boolean(flag))
        case (.string(let text), _): return .value(.string(text))
        case (.date(let seconds), _): return .value(.date(seconds))
        case (.uuid(let bytes), _):
            let uuid = bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
            return .value(kind == .uuid ? .uuid(uuid) : .string(uuid.uuidString))
        case (.decimal(let mantissa, let exponent, let negative), _):
            return DecimalDefault.text(mantissa: mantissa, exponent: exponent, isNegative: negative).map { .value(.decimal($0)) }
        case (.data(let bytes), _): return .value(.binary(bytes))
        // An empty composite (the `{}` SwiftData archives for a struct whose elements are all
        // optional) is a default: a record gets no element values, which every element allows.
        case (.dictionary(let entries), .composite) where entries.isEmpty: return .value(.null)
        // An array default (a transformable's) is archived by its transformer: the bytes Core Data
        // would store are not known, so it is no column value here (inferred).
        case (.dictionary, _), (.array, _), (.other, _): return nil
        }
    }
}

extension CompiledRelationship {
    /// `deleteRule` typed; nil for a code Core Data does not define, which stays the code.
    package var rule: DeleteRule? { DeleteRule(code: deleteRule) }

    /// The name it had in the previous version, when renamed.
    package var originalName: String? { renamingIdentifier.flatMap { $0 == name ? nil : $0 } }
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

// Initialisers that read as a Swift model declares its properties, for profiles and tests.

extension CompiledModel {
    /// A model of one version, its entities in name order (Core Data archives them so).
    package init(versionIdentifier: String, entities: [CompiledEntity]) {
        self.init(versionIdentifiers: [versionIdentifier], entities: entities.sorted { $0.name < $1.name })
    }
}

extension CompiledAttribute {
    /// An attribute as a model declares it: `CompiledAttribute("name", .string, default: .string(""))`.
    /// A typed array (`.integerArray`, `.stringArray`) is the transformable a model archives for it,
    /// naming its value class; the element type is an app profile's to say (`attributeKinds`).
    package init(
        _ name: String, _ kind: AttributeKind, optional: Bool = false, default defaultValue: CompiledDefaultValue? = nil,
        symbolicDefault: SymbolicDefault? = nil, originalName: String? = nil, elements: [CompiledAttribute] = []
    ) {
        let arrays: [AttributeKind: String] = [.integerArray: "Array<Int>", .stringArray: "Array<String>"]
        self.init(
            name: name, typeCode: kind.typeCode, valueClassName: arrays[kind],
            transformerName: arrays[kind] == nil ? nil : "NSSecureUnarchiveFromData", isOptional: optional, defaultValue: defaultValue,
            renamingIdentifier: originalName ?? name, elements: elements)
        self.symbolicDefault = symbolicDefault
    }
}

extension CompiledRelationship {
    /// A relationship as a model declares it; SwiftData makes a to-one optional and a to-many not,
    /// a to-one's maximum 1 and an unbounded to-many's 0.
    package init(
        _ name: String, to destination: String, inverse: String?, toMany: Bool, deleteRule: DeleteRule = .nullify,
        optional: Bool? = nil, minCount: Int = 0, maxCount: Int? = nil, ordered: Bool = false
    ) {
        self.init(
            name: name, destination: destination, inverse: inverse, minCount: minCount, maxCount: maxCount ?? (toMany ? 0 : 1),
            deleteRule: deleteRule.code, isOptional: optional ?? !toMany, isOrdered: ordered, renamingIdentifier: name)
    }
}
