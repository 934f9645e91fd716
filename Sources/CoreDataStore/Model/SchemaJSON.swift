import Foundation

/// Schemas as JSON, so an app team can describe a proposed next version in a file and check it
/// (`questbak check-migration`, `verify-migration --schema`) before shipping it.
/// `questbak schema 2.0.0` prints a built-in schema in this form to start from; the format is
/// described key by key in docs/schema-format.md.
///
/// ```json
/// {"versionIdentifier": "3.0.0", "entities": [{"name": "Routine",
///   "attributes": [{"name": "name", "type": "string", "default": {"value": ""}},
///                  {"name": "createdAt", "type": "date", "default": "now"},
///                  {"name": "cloudID", "type": "string", "default": "uuidString"},
///                  {"name": "title", "type": "string", "originalName": "displayName"}],
///   "relationships": [{"name": "tasks", "destination": "RoutineTask", "inverse": "routine", "toMany": true, "deleteRule": "cascade"}],
///   "naturalKey": ["name", "createdAt"]}]}
/// ```
///
/// Reading is strict: a key the format does not have is refused by name, and every problem is
/// located by entity and property name ("entity Routine, attribute createdAt: …"), not by array
/// position. A rename is `originalName`, SwiftData's `@Attribute(originalName:)` and Core Data's
/// renaming identifier; `renamedFrom`, its earlier spelling, is still read.
extension Schema: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable { case versionIdentifier, entities }

    public init(from decoder: Decoder) throws {
        self = try SchemaJSONProblem.locating(nil, decoder: decoder) {
            try SchemaJSONProblem.refuseUnknownKeys(in: decoder, known: CodingKeys.allCases.map(\.stringValue), of: "a schema")
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let entries = try container.decode([EntityEntry].self, forKey: .entities)
            return Schema(
                versionIdentifier: try container.decode(String.self, forKey: .versionIdentifier), entities: entries.map(\.entity),
                // A name given twice is refused by `nameProblems`; the first one's identity counts.
                identities: Dictionary(entries.map { ($0.entity.name, $0.identity) }, uniquingKeysWith: { first, _ in first }))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(versionIdentifier, forKey: .versionIdentifier)
        try container.encode(entities.map { EntityEntry(entity: $0, identity: identity(of: $0.name)) }, forKey: .entities)
    }

    public static func load(from url: URL) throws -> Schema {
        do {
            let schema = try JSONDecoder().decode(Schema.self, from: Data(contentsOf: url))
            if let problem = schema.nameProblems.first { throw SchemaFileError(path: url.path, reason: problem) }
            return schema
        } catch let error as SchemaFileError {
            throw error
        } catch let problem as SchemaJSONProblem {
            throw SchemaFileError(path: url.path, reason: problem.description)
        } catch let error as DecodingError {
            throw SchemaFileError(path: url.path, reason: DecodingErrorText.describe(error))
        } catch {
            throw SchemaFileError(path: url.path, reason: error.localizedDescription)
        }
    }

    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self) + Data("\n".utf8)
    }
}

/// Why a schema file cannot be read.
public struct SchemaFileError: Error, LocalizedError, Equatable {
    /// The schema file's path.
    public var path: String
    /// What is wrong with it, and where.
    public var reason: String
    /// The sentence that says why, naming the file.
    public var errorDescription: String? { "\(path): not a schema: \(reason)" }
}

/// A problem in a schema file, located the way a person finds it in the file: by entity and
/// property name ("entity Routine, attribute createdAt"), or by position where the name itself
/// is missing.
struct SchemaJSONProblem: Error, CustomStringConvertible {
    /// Outermost first, e.g. `["entity Routine", "attribute createdAt"]`; empty: the top level.
    var location: [String]
    var message: String

    var description: String { (location.isEmpty ? "top level" : location.joined(separator: ", ")) + ": " + message }

    /// Runs the decoding of one object, turning any problem inside it into one located at
    /// `place` (nil: the top level) followed by the places of the objects it is nested in.
    static func locating<T>(_ place: String?, decoder: Decoder, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch var problem as SchemaJSONProblem {
            if let place { problem.location.insert(place, at: 0) }
            throw problem
        } catch let error as DecodingError {
            throw SchemaJSONProblem(location: place.map { [$0] } ?? [], message: describe(error, below: decoder.codingPath.count))
        }
    }

    /// Refuses the first key of the object that is not one of `known`.
    static func refuseUnknownKeys(in decoder: Decoder, known: [String], of kind: String) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        let listed = known.filter { $0 != "renamedFrom" }.joined(separator: ", ")
        for key in container.allKeys.map(\.stringValue).sorted() where !known.contains(key) {
            throw SchemaJSONProblem(location: [], message: "unknown key \"\(key)\" (\(kind) has \(listed))")
        }
    }

    /// A `DecodingError` inside an object, its key path relative to that object.
    static func describe(_ error: DecodingError, below depth: Int) -> String {
        func path(_ keys: [CodingKey]) -> String { DecodingErrorText.path(Array(keys.dropFirst(depth))) }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing key \"\(path(context.codingPath + [key]))\""
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let place = path(context.codingPath)
            return (place.isEmpty ? "must be " : "\"\(place)\" must be ") + expectation(type)
        case .dataCorrupted(let context):
            let place = path(context.codingPath)
            return (place.isEmpty ? "" : "\"\(place)\": ") + context.debugDescription
        @unknown default:
            return DecodingErrorText.describe(error)
        }
    }

    private static func expectation(_ type: Any.Type) -> String {
        let name = String(describing: type)
        if type == Bool.self { return "true or false" }
        if type == String.self { return "a string" }
        if name.hasPrefix("Dictionary") || name.hasPrefix("KeyedDecodingContainer") { return "an object" }
        if name.hasPrefix("Array") || name.hasPrefix("UnkeyedDecodingContainer") { return "an array" }
        if type == Int.self || type == Int64.self || type == Double.self { return "a number" }
        return name
    }

    /// The one of `choices` that `text` names, or a problem listing them.
    static func choice<T: RawRepresentable>(_ text: String, of key: String, among choices: [T]) throws -> T where T.RawValue == String {
        guard let value = T(rawValue: text) else {
            throw SchemaJSONProblem(
                location: [], message: "\(key) \"\(text.prefix(40))\" is not one of \(choices.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }
}

/// Any key of a JSON object, to list the keys a file actually has.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// An entity as a schema file states it: the model's entity, and the identity an app profile
/// would otherwise give (natural key, singleton, merge rules), which a model does not hold.
struct EntityEntry: Codable {
    var entity: Entity
    var identity: Identity

    init(entity: Entity, identity: Identity) {
        self.entity = entity
        self.identity = identity
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, attributes, relationships, naturalKey, singletonCloudID, merge, superentity, unique, versionHashModifier
        case abstract, inherits
    }

    init(from decoder: Decoder) throws {
        let name = try? decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
        let place = name.map { "entity \($0.prefix(80))" } ?? "entities[\(decoder.codingPath.last?.intValue ?? 0)]"
        self = try SchemaJSONProblem.locating(place, decoder: decoder) {
            try SchemaJSONProblem.refuseUnknownKeys(in: decoder, known: CodingKeys.allCases.map(\.stringValue), of: "an entity")
            let container = try decoder.container(keyedBy: CodingKeys.self)
            var merge: [String: MergeRule] = [:]
            for (property, rule) in (try container.decodeIfPresent([String: String].self, forKey: .merge) ?? [:]).sorted(by: {
                $0.key < $1.key
            }) {
                merge[property] = try SchemaJSONProblem.choice(rule, of: "merge rule of \(property)", among: [MergeRule.maximum, .minimum])
            }
            var entity = Entity(
                name: try container.decode(String.self, forKey: .name),
                attributes: try container.decode([Attribute].self, forKey: .attributes),
                relationships: try container.decodeIfPresent([Relationship].self, forKey: .relationships) ?? [],
                superentity: try container.decodeIfPresent(String.self, forKey: .superentity),
                uniquenessConstraints: try container.decodeIfPresent([[String]].self, forKey: .unique) ?? [],
                versionHashModifier: try container.decodeIfPresent(String.self, forKey: .versionHashModifier))
            entity.isAbstract = try container.decodeIfPresent(Bool.self, forKey: .abstract) ?? false
            entity.inheritedProperties = try container.decodeIfPresent([String].self, forKey: .inherits) ?? []
            let identity = Identity(
                naturalKey: try container.decodeIfPresent([String].self, forKey: .naturalKey) ?? [],
                singletonCloudID: try container.decodeIfPresent(String.self, forKey: .singletonCloudID), merge: merge)
            return EntityEntry(entity: entity, identity: identity)
        }
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let entity = self.entity
        try container.encode(entity.name, forKey: .name)
        try container.encode(entity.attributes, forKey: .attributes)
        if !entity.relationships.isEmpty { try container.encode(entity.relationships, forKey: .relationships) }
        if !identity.naturalKey.isEmpty { try container.encode(identity.naturalKey, forKey: .naturalKey) }
        try container.encodeIfPresent(identity.singletonCloudID, forKey: .singletonCloudID)
        if !identity.merge.isEmpty { try container.encode(identity.merge, forKey: .merge) }
        try container.encodeIfPresent(entity.superentity, forKey: .superentity)
        if !entity.uniquenessConstraints.isEmpty { try container.encode(entity.uniquenessConstraints, forKey: .unique) }
        try container.encodeIfPresent(entity.versionHashModifier, forKey: .versionHashModifier)
        if entity.isAbstract { try container.encode(true, forKey: .abstract) }
        if !entity.inheritedProperties.isEmpty { try container.encode(entity.inheritedProperties, forKey: .inherits) }
    }
}

extension MergeRule: Codable {}
extension DeleteRule: Codable {}
extension AttributeKind: Codable {}

extension Attribute: Codable {
    /// `renamedFrom` is the deprecated spelling of `originalName`, read but never written.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, type, optional, `default`, originalName, renamedFrom, elements, transformer, valueClass
        case externalStorage, preservesValueOnDeletion, readOnly, versionHashModifier
    }

    public init(from decoder: Decoder) throws {
        let name = try? decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
        let place = name.map { "attribute \($0.prefix(80))" } ?? "attributes[\(decoder.codingPath.last?.intValue ?? 0)]"
        self = try SchemaJSONProblem.locating(place, decoder: decoder) {
            try SchemaJSONProblem.refuseUnknownKeys(in: decoder, known: CodingKeys.allCases.map(\.stringValue), of: "an attribute")
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let name = try container.decode(String.self, forKey: .name)
            let kind = try SchemaJSONProblem.choice(
                try container.decode(String.self, forKey: .type), of: "type", among: AttributeKind.allCases)
            let defaultValue = try Self.defaultValue(try container.decodeIfPresent(JSONValue.self, forKey: .default), kind: kind)
            let originalName = try container.decodeIfPresent(String.self, forKey: .originalName)
            let renamedFrom = try container.decodeIfPresent(String.self, forKey: .renamedFrom)
            if originalName != nil, renamedFrom != nil {
                throw SchemaJSONProblem(location: [], message: "give \"originalName\" only (\"renamedFrom\" is its deprecated spelling)")
            }
            let elements = try container.decodeIfPresent([Attribute].self, forKey: .elements) ?? []
            if (kind == .composite) != !elements.isEmpty {
                throw SchemaJSONProblem(location: [], message: "\"elements\" are given with type \"composite\", and only then")
            }
            var attribute = Attribute(
                name, kind, optional: try container.decodeIfPresent(Bool.self, forKey: .optional) ?? false,
                default: defaultValue, originalName: originalName ?? renamedFrom, elements: elements,
                transformerName: try container.decodeIfPresent(String.self, forKey: .transformer),
                valueClassName: try container.decodeIfPresent(String.self, forKey: .valueClass))
            attribute.allowsExternalStorage = try container.decodeIfPresent(Bool.self, forKey: .externalStorage) ?? false
            attribute.preservesValueOnDeletion = try container.decodeIfPresent(Bool.self, forKey: .preservesValueOnDeletion) ?? false
            attribute.isReadOnly = try container.decodeIfPresent(Bool.self, forKey: .readOnly) ?? false
            attribute.versionHashModifier = try container.decodeIfPresent(String.self, forKey: .versionHashModifier)
            return attribute
        }
    }

    /// `"now"` (a date), `"uuidString"` (a string) or `{"value": …}` holding a value of the
    /// attribute's type, spelled as in archives.
    private static func defaultValue(_ json: JSONValue?, kind: AttributeKind) throws -> DefaultValue? {
        let forms = "\"now\", \"uuidString\" or {\"value\": …}"
        switch json {
        case nil, .null?:
            return nil
        case .string("now")?:
            guard kind == .date else {
                throw SchemaJSONProblem(location: [], message: "default \"now\" is for date attributes, not \(kind.rawValue)")
            }
            return .now
        case .string("uuidString")?:
            guard kind == .string else {
                throw SchemaJSONProblem(location: [], message: "default \"uuidString\" is for string attributes, not \(kind.rawValue)")
            }
            return .newUUIDString
        case .string(let text)?:
            throw SchemaJSONProblem(location: [], message: "default \"\(text.prefix(40))\" is not \(forms)")
        case .object(let members)?:
            if let key = members.keys.sorted().first(where: { $0 != "value" }) {
                throw SchemaJSONProblem(location: [], message: "default: unknown key \"\(key)\" (a default is \(forms))")
            }
            guard let literal = members["value"] else {
                throw SchemaJSONProblem(location: [], message: "default {} has no \"value\" (a default is \(forms))")
            }
            do {
                return .value(try ValueJSON.value(literal, as: kind))
            } catch let mismatch as ValueJSON.TypeMismatch {
                throw SchemaJSONProblem(
                    location: [],
                    message: "default {\"value\": …} must hold \(mismatch.expected) for a \(kind.rawValue) attribute, not \(mismatch.found)"
                )
            }
        case let other?:
            throw SchemaJSONProblem(location: [], message: "default must be \(forms), not \(other.typeName)")
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(kind, forKey: .type)
        if isOptional { try container.encode(true, forKey: .optional) }
        switch defaultValue {
        case .now?: try container.encode("now", forKey: .default)
        case .newUUIDString?: try container.encode("uuidString", forKey: .default)
        case .value(let value)?: try container.encode(["value": EncodableValue(value)], forKey: .default)
        case nil: break
        }
        try container.encodeIfPresent(originalName, forKey: .originalName)
        if !elements.isEmpty { try container.encode(elements, forKey: .elements) }
        try container.encodeIfPresent(transformerName, forKey: .transformer)
        try container.encodeIfPresent(valueClassName, forKey: .valueClass)
        if allowsExternalStorage { try container.encode(true, forKey: .externalStorage) }
        if preservesValueOnDeletion { try container.encode(true, forKey: .preservesValueOnDeletion) }
        if isReadOnly { try container.encode(true, forKey: .readOnly) }
        try container.encodeIfPresent(versionHashModifier, forKey: .versionHashModifier)
    }
}

extension Relationship: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, destination, inverse, toMany, deleteRule, optional, minCount, maxCount, ordered, readOnly, versionHashModifier
    }

    public init(from decoder: Decoder) throws {
        let name = try? decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
        let place = name.map { "relationship \($0.prefix(80))" } ?? "relationships[\(decoder.codingPath.last?.intValue ?? 0)]"
        self = try SchemaJSONProblem.locating(place, decoder: decoder) {
            try SchemaJSONProblem.refuseUnknownKeys(in: decoder, known: CodingKeys.allCases.map(\.stringValue), of: "a relationship")
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let deleteRule = try container.decodeIfPresent(String.self, forKey: .deleteRule)
                .map { try SchemaJSONProblem.choice($0, of: "deleteRule", among: [DeleteRule.nullify, .cascade, .deny, .noAction]) }
            var relationship = Relationship(
                try container.decode(String.self, forKey: .name), to: try container.decode(String.self, forKey: .destination),
                inverse: try container.decodeIfPresent(String.self, forKey: .inverse),
                toMany: try container.decodeIfPresent(Bool.self, forKey: .toMany) ?? false,
                deleteRule: deleteRule ?? .nullify, optional: try container.decodeIfPresent(Bool.self, forKey: .optional),
                minCount: try container.decodeIfPresent(Int.self, forKey: .minCount) ?? 0,
                maxCount: try container.decodeIfPresent(Int.self, forKey: .maxCount),
                ordered: try container.decodeIfPresent(Bool.self, forKey: .ordered) ?? false)
            relationship.isReadOnly = try container.decodeIfPresent(Bool.self, forKey: .readOnly) ?? false
            relationship.versionHashModifier = try container.decodeIfPresent(String.self, forKey: .versionHashModifier)
            // A model knows a to-one by its maxCount of 1 (`CompiledRelationship.isToMany`): a
            // to-many limited to one record would be laid out and hashed as a to-one, not as the
            // file says, so the file is refused rather than read as another model.
            if relationship.isToMany, relationship.maxCount == 1 {
                throw SchemaJSONProblem(
                    location: [], message: "toMany is true but maxCount is 1, which Core Data's model makes a to-one; give toMany false")
            }
            if !relationship.isToMany, relationship.maxCount != 1 {
                throw SchemaJSONProblem(
                    location: [],
                    message:
                        "toMany is false but maxCount is \(relationship.maxCount), which Core Data's model makes a to-many; give toMany true"
                )
            }
            return relationship
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(destination, forKey: .destination)
        try container.encodeIfPresent(inverse, forKey: .inverse)
        try container.encode(isToMany, forKey: .toMany)
        try container.encode(deleteRule, forKey: .deleteRule)
        // Only where they differ from what `toMany` implies (SwiftData's `Model?` and `[Model] = []`).
        if isOptional != !isToMany { try container.encode(isOptional, forKey: .optional) }
        if minCount != 0 { try container.encode(minCount, forKey: .minCount) }
        if maxCount != (isToMany ? 0 : 1) { try container.encode(maxCount, forKey: .maxCount) }
        if isOrdered { try container.encode(true, forKey: .ordered) }
        if isReadOnly { try container.encode(true, forKey: .readOnly) }
        try container.encodeIfPresent(versionHashModifier, forKey: .versionHashModifier)
    }
}
