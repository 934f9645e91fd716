import Foundation

/// A store's compiled model, as read from `Z_MODELCACHE` (see `model-cache.md`): framework-neutral.
package struct CompiledModel: Sendable, Equatable {
    /// `NSVersionIdentifiers`, sorted (it is a set).
    public var versionIdentifiers: [String]
    /// In archived order (`NSEntities.values`; alphabetical in every store seen).
    public var entities: [CompiledEntity]
    /// What was present but not understood: unknown keys, classes or codes, and disagreements
    /// between redundant fields. Empty for a model this reader fully understands.
    public var notes: [String]

    public init(versionIdentifiers: [String], entities: [CompiledEntity], notes: [String] = []) {
        self.versionIdentifiers = versionIdentifiers
        self.entities = entities
        self.notes = notes
    }

    public func entity(named name: String) -> CompiledEntity? { entities.first { $0.name == name } }

    /// The entity and its ancestors, nearest first (a loop in a damaged cache is cut): where an
    /// inherited property is found, since a sub-entity lists only its own.
    public func lineage(of name: String) -> [CompiledEntity] {
        var chain: [CompiledEntity] = []
        var next = entity(named: name)
        while let current = next, !chain.contains(where: { $0.name == current.name }) {
            chain.append(current)
            next = current.superentity.flatMap { entity(named: $0) }
        }
        return chain
    }
}

package struct CompiledEntity: Sendable, Equatable {
    public var name: String
    public var superentity: String?
    /// `NSIsAbstract` (archived only when true): no row is of this entity itself, only of its
    /// sub-entities. It enters the entity's hash.
    public var isAbstract: Bool
    /// The properties the entity declares, in name order.
    public var attributes: [CompiledAttribute]
    /// In name order.
    public var relationships: [CompiledRelationship]
    /// Properties an ancestor declares that the entity's `NSProperties` lists too (Core Data
    /// archives each as an `_NSPropertyDescriptionProxy`), in name order: they enter the entity's
    /// hash as the ancestor's description does, and live in the ancestor's column.
    public var inheritedProperties: [String]
    /// Transient properties (`NSIsTransient`), declared or inherited, by name in name order: Core
    /// Data stores no column for them and leaves them out of the entity's hash.
    public var transientProperties: [String]
    /// `NSUniqueTuples`: each a list of property names.
    public var uniqueTuples: [[String]]
    public var indexes: [CompiledIndex]
    /// `NSCompoundIndexes`: each a list of property names (Core Data derives them from the fetch
    /// indexes whose elements are plain ascending ones). Not hashed.
    public var compoundIndexes: [[String]]
    /// `NSRenamingIdentifier` as archived (the entity name unless renamed).
    public var renamingIdentifier: String?
    public var versionHashModifier: String?

    public init(
        name: String, superentity: String? = nil, isAbstract: Bool = false, attributes: [CompiledAttribute] = [],
        relationships: [CompiledRelationship] = [], inheritedProperties: [String] = [], transientProperties: [String] = [],
        uniqueTuples: [[String]] = [],
        indexes: [CompiledIndex] = [], compoundIndexes: [[String]] = [], renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil
    ) {
        self.name = name
        self.superentity = superentity
        self.isAbstract = isAbstract
        self.attributes = attributes
        self.relationships = relationships
        self.inheritedProperties = inheritedProperties
        self.transientProperties = transientProperties
        self.uniqueTuples = uniqueTuples
        self.indexes = indexes
        self.compoundIndexes = compoundIndexes
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
    }
}

package struct CompiledAttribute: Sendable, Equatable {
    /// `NSAttributeType` codes, by name: each is its kind's (`AttributeKind.hashTypeCode`, the one
    /// table of them).
    public enum TypeCode {
        public static let int16 = AttributeKind.integer16.typeCode
        public static let int32 = AttributeKind.integer32.typeCode
        public static let int64 = AttributeKind.integer.typeCode
        public static let decimal = AttributeKind.decimal.typeCode
        public static let double = AttributeKind.double.typeCode
        public static let float = AttributeKind.float.typeCode
        public static let string = AttributeKind.string.typeCode
        public static let boolean = AttributeKind.boolean.typeCode
        public static let date = AttributeKind.date.typeCode
        public static let binary = AttributeKind.binary.typeCode
        public static let uuid = AttributeKind.uuid.typeCode
        public static let uri = AttributeKind.uri.typeCode
        public static let transformable = AttributeKind.transformable.typeCode
        public static let objectID = AttributeKind.objectID.typeCode
        public static let composite = AttributeKind.composite.typeCode
        public static let all = Array(Set(AttributeKind.allCases.map(\.typeCode))).sorted()
    }

    public var name: String
    public var typeCode: Int
    public var valueClassName: String?
    public var transformerName: String?
    public var isOptional: Bool
    /// The default a model cache holds: a value SwiftData evaluated once and archived.
    public var defaultValue: CompiledDefaultValue?
    /// A default the Swift source states as an expression (`Date.now`, `UUID().uuidString`), from
    /// an app profile's model or a schema file. A field of its own rather than a case of
    /// `CompiledDefaultValue`, so that no reader of archived defaults (a layout, the cache
    /// encoder) can meet one: it is never written into a cache and never read from one, and the
    /// operation that needs a concrete value (import, migration) resolves it from its own inputs.
    public var symbolicDefault: SymbolicDefault?
    /// `NSRenamingIdentifier` as archived (the property name unless `originalName` was given).
    public var renamingIdentifier: String?
    /// `NSCompositeElements` of a composite (type 2100), in archived order.
    public var elements: [CompiledAttribute]
    /// `NSFlagsKey` as archived: 0 in most caches; see `Flags`.
    public var flags: Int
    /// `NSIsReadOnly`: enters the property's hash.
    public var isReadOnly: Bool = false
    /// The property's own `NSVersionHashModifier`: enters its hash.
    public var versionHashModifier: String?

    /// The bits of `NSFlagsKey` (inferred: see docs/model-cache.md).
    public enum Flags {
        /// `allowsExternalBinaryDataStorage` (`@Attribute(.externalStorage)`): hashed.
        public static let externalStorage = 0x4
        /// `preservesValueInHistoryOnDeletion` (`@Attribute(.preserveValueOnDeletion)`): hashed.
        public static let preservesValueOnDeletion = 0x10
        /// A file-backed future (`isFileBackedFuture`): not hashed.
        public static let fileBackedFuture = 0x20
        public static let known = externalStorage | preservesValueOnDeletion | fileBackedFuture
    }

    public init(
        name: String, typeCode: Int, valueClassName: String? = nil, transformerName: String? = nil, isOptional: Bool = false,
        defaultValue: CompiledDefaultValue? = nil, renamingIdentifier: String? = nil, elements: [CompiledAttribute] = [],
        flags: Int = 0
    ) {
        self.name = name
        self.typeCode = typeCode
        self.valueClassName = valueClassName
        self.transformerName = transformerName
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.renamingIdentifier = renamingIdentifier
        self.elements = elements
        self.flags = flags
    }

    public var isComposite: Bool { typeCode == TypeCode.composite }
    public var allowsExternalStorage: Bool { flags & Flags.externalStorage != 0 }
    public var preservesValueOnDeletion: Bool { flags & Flags.preservesValueOnDeletion != 0 }
}

/// A default a Swift source states symbolically (see `CompiledAttribute.symbolicDefault`).
package enum SymbolicDefault: Sendable, Equatable {
    /// `Date.now`.
    case now
    /// `UUID().uuidString`.
    case newUUIDString
}

/// A concrete default value, as archived (SwiftData evaluates default expressions once).
package indirect enum CompiledDefaultValue: Sendable, Equatable {
    case integer(Int64)
    case real(Double)
    case boolean(Bool)
    case string(String)
    /// `NSDate`: seconds since 2001-01-01T00:00:00Z.
    case date(secondsSince2001: Double)
    /// `NSUUID`: the 16 bytes.
    case uuid(Data)
    /// `NSDecimalNumber`: `mantissa` is the 128-bit magnitude, 16 bytes little-endian; the value
    /// is (−1 if negative) × mantissa × 10^exponent.
    case decimal(mantissa: Data, exponent: Int, isNegative: Bool)
    case data(Data)
    /// A dictionary with string keys (an empty composite's default is an empty one).
    case dictionary([String: CompiledDefaultValue])
    /// An `NSArray` or `NSMutableArray` (a transformable array's default), members in order.
    case array([CompiledDefaultValue])
    /// Anything else, named by its class and left undecoded.
    case other(className: String)
}

package struct CompiledRelationship: Sendable, Equatable {
    public var name: String
    public var destination: String
    public var inverse: String?
    /// 0 when unbounded.
    public var minCount: Int
    /// 1 for a to-one, 0 for an unbounded to-many.
    public var maxCount: Int
    /// 0 no action, 1 nullify, 2 cascade, 3 deny.
    public var deleteRule: Int
    public var isOptional: Bool
    public var isOrdered: Bool
    public var renamingIdentifier: String?
    /// `NSIsReadOnly`: enters the property's hash.
    public var isReadOnly: Bool = false
    /// The property's own `NSVersionHashModifier`: enters its hash.
    public var versionHashModifier: String?

    public init(
        name: String, destination: String, inverse: String? = nil, minCount: Int = 0, maxCount: Int = 1, deleteRule: Int = 1,
        isOptional: Bool = true, isOrdered: Bool = false, renamingIdentifier: String? = nil
    ) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.minCount = minCount
        self.maxCount = maxCount
        self.deleteRule = deleteRule
        self.isOptional = isOptional
        self.isOrdered = isOrdered
        self.renamingIdentifier = renamingIdentifier
    }

    public var isToMany: Bool { maxCount != 1 }
}

/// `NSFetchIndexDescription`.
package struct CompiledIndex: Sendable, Equatable {
    public struct Element: Sendable, Equatable {
        public var propertyName: String
        /// `NSAscending`; nil when absent.
        public var ascending: Bool?
        /// `NSFetchIndexElementType` (0 binary, 1 R-tree); nil when absent.
        public var type: Int?

        public init(propertyName: String, ascending: Bool? = true, type: Int? = 0) {
            self.propertyName = propertyName
            self.ascending = ascending
            self.type = type
        }
    }

    public var name: String
    public var elements: [Element]

    public init(name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }
}

/// Why `Z_CONTENT` could not be read.
package enum ModelCacheError: Error, LocalizedError, Equatable {
    case compression(RawDeflate.Failure)
    case propertyList(BinaryPropertyList.FormatError)
    case archive(KeyedArchiveError)

    package var errorDescription: String? {
        switch self {
        case .compression(let failure): "model cache: \(failure.localizedDescription)"
        case .propertyList(let failure): "model cache: \(failure.localizedDescription)"
        case .archive(let failure): "model cache: \(failure.localizedDescription)"
        }
    }
}

/// Reads `Z_MODELCACHE.Z_CONTENT` into a `CompiledModel`, following `model-cache.md`.
package enum ModelCacheDecoder {
    /// Decodes raw `Z_CONTENT` bytes (raw DEFLATE of a binary plist keyed archive).
    public static func decode(_ content: Data, outputLimit: Int = 64 << 20) throws -> CompiledModel {
        let plistBytes: Data
        do { plistBytes = try RawDeflate.inflate(content, outputLimit: outputLimit) } catch { throw ModelCacheError.compression(error) }
        return try decode(propertyList: plistBytes)
    }

    /// Decodes the inflated binary property list.
    package static func decode(propertyList bytes: Data) throws -> CompiledModel {
        let plist: PropertyListValue
        do {
            plist = try BinaryPropertyList.decode(bytes)
        } catch let error as BinaryPropertyList.FormatError {
            throw ModelCacheError.propertyList(error)
        }
        return try decode(archive: plist)
    }

    /// Decodes the keyed archive, already read from its property list.
    package static func decode(archive plist: PropertyListValue) throws -> CompiledModel {
        do {
            var reader = Reader(archive: try KeyedArchive(plist))
            return try reader.model()
        } catch let error as KeyedArchiveError {
            throw ModelCacheError.archive(error)
        }
    }

    /// Keys each class is known to hold; any other key is noted, not failed on.
    static let knownKeys: [String: Set<String>] = [
        "NSManagedObjectModel": [
            "NSEntities", "NSVersionIdentifiers", "NSConfigurations", "NSFetchRequestTemplates", "NSVersionHashModifier",
            "NSLocalizationSpecification", "NSModelVersionChecksum",
        ],
        "NSEntityDescription": [
            "NSEntityName", "NSProperties", "NSSuperentity", "NSSubentities", "NSUniqueTuples", "NSFetchIndexDescriptions",
            "NSCompoundIndexes", "NSVersionHashModifier", "NSRenamingIdentifier", "NSClassNameForEntity", "NSUserInfo",
            "NSManagedObjectModel", "NSIsAbstract",
        ],
        "_NSPropertyDescriptionProxy": ["NSReferenceID", "NSUnderlyingProperty", "NSEntityDescription"],
        "NSAttributeDescription": [
            "NSPropertyName", "NSAttributeType", "NSAttributeValueClassName", "NSValueTransformerName", "NSDefaultValue", "NSIsOptional",
            "NSIsIndexed", "NSRenamingIdentifier", "NSFlagsKey", "_P", "NSEntity", "NSCompositeElements", "NSUserInfo", "NSIsTransient",
            "NSVersionHashModifier", "NSIsReadOnly",
        ],
        "NSRelationshipDescription": [
            "NSPropertyName", "NSDestinationEntity", "_NSDestinationEntityName", "NSInverseRelationship", "_NSInverseRelationshipName",
            "NSMinCount", "NSMaxCount", "NSDeleteRule", "NSIsOptional", "NSIsOrdered", "NSRenamingIdentifier", "_P", "NSEntity",
            "NSIsTransient", "NSFlagsKey", "NSIsIndexed", "NSUserInfo", "NSVersionHashModifier", "NSIsReadOnly",
        ],
        "NSFetchIndexDescription": ["NSIndexName", "NSIndexElements", "NSEntity", "NSPartialIndexPredicate"],
        "NSFetchIndexElementDescription": ["NSPropertyName", "NSAscending", "NSFetchIndexElementType", "NSProperty", "NSIndexDescription"],
    ]

    private struct Reader {
        let archive: KeyedArchive
        var notes: Set<String> = []

        init(archive: KeyedArchive) { self.archive = archive }

        mutating func note(_ text: String) { notes.insert(text) }

        mutating func noteUnknownKeys(of object: ArchivedObject, as className: String) {
            let known = ModelCacheDecoder.knownKeys[className] ?? []
            for key in object.fields.keys where !known.contains(key) {
                note("\(className) key \(key) not read")
            }
        }

        func require(_ object: ArchivedObject, kindOf className: String, from owner: Int?, key: String?) throws {
            guard object.isKind(of: className) else {
                throw KeyedArchiveError(.wrongClass(expected: className, found: object.className), objectIndex: owner, key: key)
            }
        }

        func int(_ value: Int64, of owner: ArchivedObject, key: String) throws -> Int {
            guard let number = Int(exactly: value) else {
                throw KeyedArchiveError(.invalidValue("\(value) does not fit an Int"), objectIndex: owner.index, key: key)
            }
            return number
        }

        mutating func model() throws -> CompiledModel {
            let root = try archive.rootObject()
            try require(root, kindOf: "NSManagedObjectModel", from: nil, key: "$top.root")
            noteUnknownKeys(of: root, as: "NSManagedObjectModel")
            var versions: [String] = []
            for (position, reference) in (try archive.elements("NSVersionIdentifiers", of: root) ?? []).enumerated() {
                guard let version = try archive.stringValue(reference, from: root.index, key: "NSVersionIdentifiers[\(position)]") else {
                    throw KeyedArchiveError(
                        .invalidValue("a version identifier is $null"), objectIndex: root.index, key: "NSVersionIdentifiers")
                }
                versions.append(version)
            }
            let entities = separateInherited(try entityList(of: root))
            var model = CompiledModel(versionIdentifiers: versions.sorted(), entities: entities)
            model.notes = notes.sorted()
            return model
        }

        mutating func entityList(of root: ArchivedObject) throws -> [CompiledEntity] {
            guard let dictionary = try archive.object("NSEntities", of: root) else {
                throw KeyedArchiveError(.missingKey, objectIndex: root.index, key: "NSEntities")
            }
            var references: [PropertyListValue]
            var names: [String?]
            if dictionary.isKind(of: "NSKnownKeysDictionary1") || dictionary.fields["values"] != nil {
                guard let values = try archive.elements("values", of: dictionary) else {
                    throw KeyedArchiveError(.missingKey, objectIndex: dictionary.index, key: "values")
                }
                references = values
                names = []
                if let mapping = try archive.object("searchMapping", of: dictionary) {
                    for (position, key) in (try archive.elements("keys", of: mapping) ?? []).enumerated() {
                        names.append(try archive.stringValue(key, from: mapping.index, key: "keys[\(position)]"))
                    }
                } else {
                    note("NSEntities has no searchMapping; entity names taken from the entities")
                }
            } else if dictionary.isKind(of: "NSDictionary") {
                // Not seen in a real cache: accepted as the plain form of the same mapping.
                note("NSEntities is an \(dictionary.className), not an NSKnownKeysDictionary1")
                let entries = try archive.entries(of: dictionary, from: root.index, key: "NSEntities")
                references = entries.map(\.value)
                names = try entries.enumerated().map { position, entry in
                    try archive.stringValue(entry.key, from: dictionary.index, key: "NS.keys[\(position)]")
                }
            } else {
                throw KeyedArchiveError(
                    .wrongClass(expected: "NSKnownKeysDictionary1", found: dictionary.className), objectIndex: root.index, key: "NSEntities"
                )
            }
            if !names.isEmpty, names.count != references.count {
                note("NSEntities lists \(names.count) names for \(references.count) entities")
            }
            var entities: [CompiledEntity] = []
            for (position, reference) in references.enumerated() {
                let key = "NSEntities[\(position)]"
                guard case .object(let object) = try archive.resolve(reference, from: dictionary.index, key: key) else {
                    throw KeyedArchiveError(
                        .wrongType(expected: "an NSEntityDescription", found: "$null or a plain value"), objectIndex: dictionary.index,
                        key: key)
                }
                try require(object, kindOf: "NSEntityDescription", from: dictionary.index, key: key)
                let entity = try archive.visiting(object.index, key: key) { try self.entity(object) }
                if position < names.count, let listed = names[position], listed != entity.name {
                    note("NSEntities lists \(listed.debugDescription) for the entity named \(entity.name.debugDescription)")
                }
                entities.append(entity)
            }
            return entities
        }

        mutating func entity(_ object: ArchivedObject) throws -> CompiledEntity {
            noteUnknownKeys(of: object, as: "NSEntityDescription")
            var entity = CompiledEntity(name: try archive.requiredString("NSEntityName", of: object))
            if let parent = try archive.object("NSSuperentity", of: object, kindOf: ["NSEntityDescription"]) {
                entity.superentity = try archive.requiredString("NSEntityName", of: parent)
            }
            entity.isAbstract = try archive.flag("NSIsAbstract", of: object) ?? false
            entity.renamingIdentifier = try archive.string("NSRenamingIdentifier", of: object)
            entity.versionHashModifier = try archive.string("NSVersionHashModifier", of: object)
            if let properties = try archive.object("NSProperties", of: object) {
                for (position, entry) in try archive.entries(of: properties, from: object.index, key: "NSProperties").enumerated() {
                    let key = "NSProperties[\(position)]"
                    let name = try archive.stringValue(entry.key, from: properties.index, key: key)
                    guard case .object(let property) = try archive.resolve(entry.value, from: properties.index, key: key) else {
                        throw KeyedArchiveError(
                            .wrongType(expected: "a property description", found: "$null or a plain value"), objectIndex: properties.index,
                            key: key)
                    }
                    let decodedName: String? = try archive.visiting(property.index, key: key) {
                        if property.isKind(of: "_NSPropertyDescriptionProxy") {
                            let inherited = try proxiedName(property, in: entity.name)
                            entity.inheritedProperties.append(inherited)
                            return inherited
                        } else if property.isKind(of: "NSRelationshipDescription") {
                            let relationship = try relationship(property)
                            if try isTransient(property, describing: "relationship \(relationship.name)") {
                                entity.transientProperties.append(relationship.name)
                            } else {
                                entity.relationships.append(relationship)
                            }
                            return relationship.name
                        } else if property.isKind(of: "NSAttributeDescription") {
                            let attribute = try attribute(property)
                            if try isTransient(property, describing: "attribute \(attribute.name)") {
                                entity.transientProperties.append(attribute.name)
                            } else {
                                entity.attributes.append(attribute)
                            }
                            return attribute.name
                        } else if property.isKind(of: "NSPropertyDescription") {
                            // A fetched or other property kind: present, not described here.
                            note("entity \(entity.name) property \(name ?? "?") is an \(property.className), not read")
                            return nil
                        }
                        throw KeyedArchiveError(
                            .wrongClass(expected: "NSAttributeDescription or NSRelationshipDescription", found: property.className),
                            objectIndex: properties.index, key: key)
                    }
                    if let name, let decodedName, name != decodedName {
                        note("entity \(entity.name) lists property \(decodedName.debugDescription) under the name \(name.debugDescription)")
                    }
                }
            }
            entity.attributes.sort { $0.name < $1.name }
            entity.relationships.sort { $0.name < $1.name }
            entity.inheritedProperties.sort()
            entity.transientProperties.sort()
            entity.uniqueTuples = try propertyNameLists("NSUniqueTuples", of: object)
            for (position, reference) in (try archive.elements("NSFetchIndexDescriptions", of: object) ?? []).enumerated() {
                let key = "NSFetchIndexDescriptions[\(position)]"
                guard case .object(let index) = try archive.resolve(reference, from: object.index, key: key) else {
                    throw KeyedArchiveError(
                        .wrongType(expected: "an NSFetchIndexDescription", found: "$null or a plain value"), objectIndex: object.index,
                        key: key)
                }
                try require(index, kindOf: "NSFetchIndexDescription", from: object.index, key: key)
                entity.indexes.append(try fetchIndex(index))
            }
            entity.compoundIndexes = try propertyNameLists("NSCompoundIndexes", of: object)
            // Core Data writes a compound index for each fetch index of plain elements: one that
            // matches none of them says the two lists were not written together.
            let fetchIndexProperties = Set(entity.indexes.map { $0.elements.map(\.propertyName) })
            for compound in entity.compoundIndexes where !entity.indexes.isEmpty && !fetchIndexProperties.contains(compound) {
                note("entity \(entity.name): compound index \(compound.joined(separator: ", ")) matches no fetch index")
            }
            return entity
        }

        /// The name of the property an `_NSPropertyDescriptionProxy` stands for: Core Data's
        /// description of a property the entity inherits, written once by the ancestor that
        /// declares it (`NSUnderlyingProperty`, shared, not copied) and seen from the sub-entity
        /// (`NSEntityDescription`). Which ancestor declares it is settled once every entity is read.
        mutating func proxiedName(_ proxy: ArchivedObject, in entityName: String) throws -> String {
            noteUnknownKeys(of: proxy, as: "_NSPropertyDescriptionProxy")
            let underlying = try underlyingProperty(of: proxy)
            guard underlying.isKind(of: "NSAttributeDescription") || underlying.isKind(of: "NSRelationshipDescription") else {
                throw KeyedArchiveError(
                    .wrongClass(expected: "NSAttributeDescription or NSRelationshipDescription", found: underlying.className),
                    objectIndex: proxy.index, key: "NSUnderlyingProperty")
            }
            if let seenFrom = try archive.object("NSEntityDescription", of: proxy, kindOf: ["NSEntityDescription"]),
                let name = try archive.string("NSEntityName", of: seenFrom), name != entityName
            {
                note("entity \(entityName) lists a proxy seen from entity \(name)")
            }
            return try archive.requiredString("NSPropertyName", of: underlying)
        }

        /// The description a proxy stands for; a proxy of a proxy (not seen, accepted) is followed.
        func underlyingProperty(of proxy: ArchivedObject) throws -> ArchivedObject {
            var current = proxy
            for _ in 0..<KeyedArchive.maximumDepth where current.isKind(of: "_NSPropertyDescriptionProxy") {
                guard let next = try archive.object("NSUnderlyingProperty", of: current) else {
                    throw KeyedArchiveError(.missingKey, objectIndex: current.index, key: "NSUnderlyingProperty")
                }
                current = next
            }
            guard !current.isKind(of: "_NSPropertyDescriptionProxy") else {
                throw KeyedArchiveError(.tooDeep(limit: KeyedArchive.maximumDepth), objectIndex: proxy.index, key: "NSUnderlyingProperty")
            }
            return current
        }

        /// A sub-entity's `NSProperties` lists what it inherits as well as what it declares (as
        /// proxies, or, in a cache written otherwise, as descriptions of the same name): each
        /// property is kept once, with the ancestor that declares it, and named as inherited by the
        /// sub-entities (their hashes include it; their rows keep it in the ancestor's column).
        mutating func separateInherited(_ entities: [CompiledEntity]) -> [CompiledEntity] {
            var result = entities
            let byName = Dictionary(entities.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
            var settled: [String: Set<String>] = [:]
            /// The names `name` declares, after its own inherited ones are taken out (ancestors first).
            func declared(_ name: String, chain: [String]) -> Set<String> {
                if let done = settled[name] { return done }
                guard let position = byName[name], !chain.contains(name) else { return [] }
                var entity = result[position]
                var fromAncestors: Set<String> = []
                var transientAbove: Set<String> = []
                var next = entity.superentity
                var seen = chain + [name]
                while let current = next, !seen.contains(current), let index = byName[current] {
                    fromAncestors.formUnion(declared(current, chain: seen))
                    transientAbove.formUnion(result[index].transientProperties)
                    seen.append(current)
                    next = result[index].superentity
                }
                // An inherited transient property is transient here too: no column, no hash.
                let inheritedTransient = Set(entity.inheritedProperties).intersection(transientAbove)
                entity.inheritedProperties.removeAll { inheritedTransient.contains($0) }
                entity.transientProperties = Set(entity.transientProperties).union(inheritedTransient).sorted()
                var inherited = Set(entity.inheritedProperties)
                for attribute in entity.attributes where fromAncestors.contains(attribute.name) { inherited.insert(attribute.name) }
                for relationship in entity.relationships where fromAncestors.contains(relationship.name) {
                    inherited.insert(relationship.name)
                }
                entity.attributes.removeAll { fromAncestors.contains($0.name) }
                entity.relationships.removeAll { fromAncestors.contains($0.name) }
                for name in inherited.sorted() where !fromAncestors.contains(name) {
                    note("entity \(entity.name) inherits \(name), which no ancestor declares")
                }
                entity.inheritedProperties = inherited.filter(fromAncestors.contains).sorted()
                result[position] = entity
                let own = Set(entity.attributes.map(\.name) + entity.relationships.map(\.name))
                settled[name] = own
                return own
            }
            for entity in entities { _ = declared(entity.name, chain: []) }
            return result
        }

        /// An array of arrays of property names (`NSUniqueTuples`, `NSCompoundIndexes`), each
        /// inner array an `NSArray`.
        func propertyNameLists(_ key: String, of object: ArchivedObject) throws -> [[String]] {
            try (archive.elements(key, of: object) ?? []).enumerated().map { position, reference in
                let key = "\(key)[\(position)]"
                guard case .object(let list) = try archive.resolve(reference, from: object.index, key: key) else {
                    throw KeyedArchiveError(
                        .wrongType(expected: "an NSArray", found: "$null or a plain value"), objectIndex: object.index, key: key)
                }
                return try archive.members(of: list, from: object.index, key: key).enumerated().map { inner, member in
                    try propertyName(member, from: list.index, key: "\(key)[\(inner)]")
                }
            }
        }

        /// A unique-tuple or index member: a property name, or (inferred) a property description.
        func propertyName(_ reference: PropertyListValue, from owner: Int, key: String) throws -> String {
            switch try archive.resolve(reference, from: owner, key: key) {
            case .plain(.string(let name)): return name
            case .object(let object) where object.isKind(of: "_NSPropertyDescriptionProxy"):
                return try archive.requiredString("NSPropertyName", of: try underlyingProperty(of: object))
            case .object(let object) where object.isKind(of: "NSPropertyDescription") || object.fields["NSPropertyName"] != nil:
                return try archive.requiredString("NSPropertyName", of: object)
            case .object(let object) where object.isKind(of: "NSString"):
                if let name = try archive.stringValue(reference, from: owner, key: key) { return name }
                throw KeyedArchiveError(.missingKey, objectIndex: owner, key: key)
            case .object(let object):
                throw KeyedArchiveError(.wrongClass(expected: "a property name", found: object.className), objectIndex: owner, key: key)
            case .null:
                throw KeyedArchiveError(.invalidValue("a property name is $null"), objectIndex: owner, key: key)
            case .plain(let value):
                throw KeyedArchiveError(
                    .wrongType(expected: "a property name", found: KeyedArchive.describe(value)), objectIndex: owner, key: key)
            }
        }

        mutating func fetchIndex(_ object: ArchivedObject) throws -> CompiledIndex {
            noteUnknownKeys(of: object, as: "NSFetchIndexDescription")
            var index = CompiledIndex(name: try archive.requiredString("NSIndexName", of: object), elements: [])
            for (position, reference) in (try archive.elements("NSIndexElements", of: object) ?? []).enumerated() {
                let key = "NSIndexElements[\(position)]"
                guard case .object(let element) = try archive.resolve(reference, from: object.index, key: key) else {
                    throw KeyedArchiveError(
                        .wrongType(expected: "an NSFetchIndexElementDescription", found: "$null or a plain value"),
                        objectIndex: object.index, key: key)
                }
                try require(element, kindOf: "NSFetchIndexElementDescription", from: object.index, key: key)
                noteUnknownKeys(of: element, as: "NSFetchIndexElementDescription")
                let name: String
                if let text = try archive.string("NSPropertyName", of: element) {
                    name = text
                } else if let property = element.fields["NSProperty"] {
                    note("an index element names its property through NSProperty")
                    name = try propertyName(property, from: element.index, key: "NSProperty")
                } else {
                    throw KeyedArchiveError(.missingKey, objectIndex: element.index, key: "NSPropertyName")
                }
                let type = try archive.integer("NSFetchIndexElementType", of: element).map {
                    try int($0, of: element, key: "NSFetchIndexElementType")
                }
                index.elements.append(.init(propertyName: name, ascending: try archive.flag("NSAscending", of: element), type: type))
            }
            return index
        }

        /// `NSIsReadOnly` is present, and true, only when read-only; `_P` bit value 4 says the same.
        mutating func isReadOnly(_ object: ArchivedObject, describing: String) throws -> Bool {
            let readOnly = try archive.flag("NSIsReadOnly", of: object) ?? false
            if let flags = try archive.integer("_P", of: object), (flags & 4 != 0) != readOnly {
                note("\(describing): _P \(flags) disagrees with NSIsReadOnly \(readOnly)")
            }
            return readOnly
        }

        /// `NSIsTransient` is present, and true, only when transient; `_P` bit value 8 says the same.
        mutating func isTransient(_ object: ArchivedObject, describing: String) throws -> Bool {
            let transient = try archive.flag("NSIsTransient", of: object) ?? false
            if let flags = try archive.integer("_P", of: object), (flags & 8 != 0) != transient {
                note("\(describing): _P \(flags) disagrees with NSIsTransient \(transient)")
            }
            return transient
        }

        /// `NSIsOptional` is present, and true, only when optional; `_P` bit value 2 says the same.
        mutating func optionality(of object: ArchivedObject, describing: String) throws -> Bool {
            let optional = try archive.flag("NSIsOptional", of: object) ?? false
            if let flags = try archive.integer("_P", of: object), (flags & 2 != 0) != optional {
                note("\(describing): _P \(flags) disagrees with NSIsOptional \(optional)")
            }
            return optional
        }

        mutating func attribute(_ object: ArchivedObject) throws -> CompiledAttribute {
            noteUnknownKeys(of: object, as: "NSAttributeDescription")
            let name = try archive.requiredString("NSPropertyName", of: object)
            guard let code = try archive.integer("NSAttributeType", of: object) else {
                throw KeyedArchiveError(.missingKey, objectIndex: object.index, key: "NSAttributeType")
            }
            var attribute = CompiledAttribute(name: name, typeCode: try int(code, of: object, key: "NSAttributeType"))
            if !CompiledAttribute.TypeCode.all.contains(attribute.typeCode) {
                note("attribute \(name): unknown NSAttributeType \(code)")
            }
            attribute.valueClassName = try archive.string("NSAttributeValueClassName", of: object)
            attribute.transformerName = try archive.string("NSValueTransformerName", of: object)
            attribute.isOptional = try optionality(of: object, describing: "attribute \(name)")
            attribute.renamingIdentifier = try archive.string("NSRenamingIdentifier", of: object)
            attribute.isReadOnly = try isReadOnly(object, describing: "attribute \(name)")
            attribute.versionHashModifier = try archive.string("NSVersionHashModifier", of: object)
            if let flags = try archive.integer("NSFlagsKey", of: object) {
                attribute.flags = try int(flags, of: object, key: "NSFlagsKey")
                if attribute.flags & ~CompiledAttribute.Flags.known != 0 {
                    note("attribute \(name): NSFlagsKey \(flags) has bits of unknown meaning, not hashed")
                }
            }
            if let reference = object.fields["NSDefaultValue"] {
                attribute.defaultValue = try defaultValue(reference, from: object.index, key: "NSDefaultValue")
            }
            let isCompositeClass = object.isKind(of: "NSCompositeAttributeDescription")
            if isCompositeClass != attribute.isComposite {
                note("attribute \(name): class \(object.className) with NSAttributeType \(code)")
            }
            for (position, reference) in (try archive.elements("NSCompositeElements", of: object) ?? []).enumerated() {
                let key = "NSCompositeElements[\(position)]"
                guard case .object(let element) = try archive.resolve(reference, from: object.index, key: key) else {
                    throw KeyedArchiveError(
                        .wrongType(expected: "an NSAttributeDescription", found: "$null or a plain value"), objectIndex: object.index,
                        key: key)
                }
                try require(element, kindOf: "NSAttributeDescription", from: object.index, key: key)
                attribute.elements.append(try archive.visiting(element.index, key: key) { try self.attribute(element) })
            }
            return attribute
        }

        mutating func defaultValue(_ reference: PropertyListValue, from owner: Int, key: String) throws -> CompiledDefaultValue? {
            switch try archive.resolve(reference, from: owner, key: key) {
            case .null: return nil
            case .plain(.integer(let number)): return .integer(number)
            case .plain(.real(let number)): return .real(number)
            case .plain(.boolean(let flag)): return .boolean(flag)
            case .plain(.string(let text)): return .string(text)
            case .plain(.data(let bytes)): return .data(bytes)
            case .plain(let value):
                throw KeyedArchiveError(
                    .wrongType(expected: "a default value", found: KeyedArchive.describe(value)), objectIndex: owner, key: key)
            case .object(let object):
                return try archive.visiting(object.index, key: key) { try self.objectDefault(object) }
            }
        }

        mutating func objectDefault(_ object: ArchivedObject) throws -> CompiledDefaultValue {
            func field(_ name: String) throws -> PropertyListValue {
                guard let value = object.fields[name] else { throw KeyedArchiveError(.missingKey, objectIndex: object.index, key: name) }
                if case .uid = value, case .plain(let plain) = try archive.resolve(value, from: object.index, key: name) { return plain }
                return value
            }
            func wrong(_ name: String, _ expected: String) throws -> Never {
                throw KeyedArchiveError(
                    .wrongType(expected: expected, found: KeyedArchive.describe(try field(name))), objectIndex: object.index, key: name)
            }
            if object.isKind(of: "NSUUID") {
                guard case .data(let bytes) = try field("NS.uuidbytes") else { try wrong("NS.uuidbytes", "16 bytes of data") }
                guard bytes.count == 16 else {
                    throw KeyedArchiveError(.invalidValue("a UUID of \(bytes.count) bytes"), objectIndex: object.index, key: "NS.uuidbytes")
                }
                return .uuid(bytes)
            }
            if object.isKind(of: "NSDate") {
                switch try field("NS.time") {
                case .real(let seconds): return .date(secondsSince2001: seconds)
                case .integer(let seconds): return .date(secondsSince2001: Double(seconds))
                default: try wrong("NS.time", "a real")
                }
            }
            if object.isKind(of: "NSDecimalNumberPlaceholder") || object.isKind(of: "NSDecimalNumber") {
                guard case .data(let mantissa) = try field("NS.mantissa") else { try wrong("NS.mantissa", "16 bytes of data") }
                guard mantissa.count == 16 else {
                    throw KeyedArchiveError(
                        .invalidValue("a mantissa of \(mantissa.count) bytes"), objectIndex: object.index, key: "NS.mantissa")
                }
                guard case .integer(let exponent) = try field("NS.exponent"), (-128...127).contains(exponent) else {
                    try wrong("NS.exponent", "an integer from -128 to 127")
                }
                let negative: Bool
                switch try field("NS.negative") {
                case .boolean(let flag): negative = flag
                case .integer(let number) where number == 0 || number == 1: negative = number == 1
                default: try wrong("NS.negative", "a boolean")
                }
                if case .integer(let order)? = object.fields["NS.mantissa.bo"], order != 1 {
                    note("a decimal default has NS.mantissa.bo \(order) (byte order 1, little-endian, assumed)")
                }
                return .decimal(mantissa: mantissa, exponent: Int(exponent), isNegative: negative)
            }
            if object.isKind(of: "NSString") || object.isKind(of: "NSMutableString") {
                return .string(try archive.stringValue(.uid(UInt64(object.index)), from: object.index, key: nil) ?? "")
            }
            if object.isKind(of: "NSData") {
                guard case .data(let bytes) = try field("NS.data") else { try wrong("NS.data", "data") }
                return .data(bytes)
            }
            if object.isKind(of: "NSArray") {
                var members: [CompiledDefaultValue] = []
                for (position, member) in try archive.members(of: object, from: object.index, key: nil).enumerated() {
                    members.append(
                        try defaultValue(member, from: object.index, key: "NS.objects[\(position)]") ?? .other(className: "$null"))
                }
                return .array(members)
            }
            if object.isKind(of: "NSDictionary") {
                var result: [String: CompiledDefaultValue] = [:]
                for (position, entry) in try archive.entries(of: object, from: object.index, key: nil).enumerated() {
                    let key = "NS.keys[\(position)]"
                    guard let name = try archive.stringValue(entry.key, from: object.index, key: key) else {
                        throw KeyedArchiveError(.invalidValue("a $null key"), objectIndex: object.index, key: key)
                    }
                    result[name] =
                        try defaultValue(entry.value, from: object.index, key: "NS.objects[\(position)]") ?? .other(className: "$null")
                }
                return .dictionary(result)
            }
            note("a default value of class \(object.className) is not decoded")
            return .other(className: object.className)
        }

        mutating func relationship(_ object: ArchivedObject) throws -> CompiledRelationship {
            noteUnknownKeys(of: object, as: "NSRelationshipDescription")
            let name = try archive.requiredString("NSPropertyName", of: object)
            let destinationObject = try archive.object("NSDestinationEntity", of: object, kindOf: ["NSEntityDescription"])
            let destinationFromObject = try destinationObject.map { try archive.requiredString("NSEntityName", of: $0) }
            let destinationName = try archive.string("_NSDestinationEntityName", of: object)
            guard let destination = destinationName ?? destinationFromObject else {
                throw KeyedArchiveError(.missingKey, objectIndex: object.index, key: "NSDestinationEntity")
            }
            if let destinationName, let destinationFromObject, destinationName != destinationFromObject {
                note("relationship \(name): _NSDestinationEntityName \(destinationName) but NSDestinationEntity \(destinationFromObject)")
            }
            let inverseObject = try archive.object("NSInverseRelationship", of: object, kindOf: ["NSRelationshipDescription"])
            let inverseFromObject = try inverseObject.map { try archive.requiredString("NSPropertyName", of: $0) }
            let inverseName = try archive.string("_NSInverseRelationshipName", of: object)
            if inverseName != inverseFromObject, inverseName != nil, inverseFromObject != nil {
                note("relationship \(name): _NSInverseRelationshipName and NSInverseRelationship disagree")
            }
            func count(_ key: String) throws -> Int {
                guard let value = try archive.integer(key, of: object) else {
                    throw KeyedArchiveError(.missingKey, objectIndex: object.index, key: key)
                }
                guard value >= 0, let number = Int(exactly: value) else {
                    throw KeyedArchiveError(.invalidValue("\(value) is not a count"), objectIndex: object.index, key: key)
                }
                return number
            }
            let deleteRule = try archive.integer("NSDeleteRule", of: object).map { try int($0, of: object, key: "NSDeleteRule") } ?? 0
            if !(0...3).contains(deleteRule) { note("relationship \(name): unknown NSDeleteRule \(deleteRule)") }
            var relationship = CompiledRelationship(
                name: name, destination: destination, inverse: inverseName ?? inverseFromObject, minCount: try count("NSMinCount"),
                maxCount: try count("NSMaxCount"), deleteRule: deleteRule,
                isOptional: try optionality(of: object, describing: "relationship \(name)"),
                isOrdered: try archive.flag("NSIsOrdered", of: object) ?? false,
                renamingIdentifier: try archive.string("NSRenamingIdentifier", of: object))
            relationship.isReadOnly = try isReadOnly(object, describing: "relationship \(name)")
            relationship.versionHashModifier = try archive.string("NSVersionHashModifier", of: object)
            return relationship
        }
    }
}
