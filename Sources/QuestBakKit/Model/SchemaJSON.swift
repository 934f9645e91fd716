import Foundation

/// Schemas as JSON, so an app team can describe a proposed next version in a file and check it
/// (`questbak check-migration`, `verify-migration --schema`) before shipping it.
/// `questbak schema 2.0.0` prints a built-in schema in this form to start from.
///
/// ```json
/// {"versionIdentifier": "3.0.0", "entities": [{"name": "Routine",
///   "attributes": [{"name": "name", "type": "string", "default": {"value": ""}},
///                  {"name": "createdAt", "type": "date", "default": "now"},
///                  {"name": "cloudID", "type": "string", "default": "uuidString"},
///                  {"name": "title", "type": "string", "renamedFrom": "name"}],
///   "relationships": [{"name": "tasks", "destination": "RoutineTask", "inverse": "routine", "toMany": true, "deleteRule": "cascade"}],
///   "naturalKey": ["name", "createdAt"]}]}
/// ```
extension Schema: Codable {
    enum CodingKeys: String, CodingKey { case versionIdentifier, entities }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            versionIdentifier: try container.decode(String.self, forKey: .versionIdentifier),
            entities: try container.decode([Entity].self, forKey: .entities))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(versionIdentifier, forKey: .versionIdentifier)
        try container.encode(entities, forKey: .entities)
    }

    public static func load(from url: URL) throws -> Schema {
        do {
            let schema = try JSONDecoder().decode(Schema.self, from: Data(contentsOf: url))
            if let problem = schema.nameProblems.first { throw SchemaFileError(path: url.path, reason: problem) }
            return schema
        } catch let error as SchemaFileError {
            throw error
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

public struct SchemaFileError: Error, LocalizedError, Equatable {
    public var path: String
    public var reason: String
    public var errorDescription: String? { "\(path): not a schema: \(reason)" }
}

extension Entity: Codable {
    enum CodingKeys: String, CodingKey { case name, attributes, relationships, naturalKey, singletonCloudID, merge }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try container.decode(String.self, forKey: .name),
            attributes: try container.decode([Attribute].self, forKey: .attributes),
            relationships: try container.decodeIfPresent([Relationship].self, forKey: .relationships) ?? [],
            identity: Identity(
                naturalKey: try container.decodeIfPresent([String].self, forKey: .naturalKey) ?? [],
                singletonCloudID: try container.decodeIfPresent(String.self, forKey: .singletonCloudID),
                merge: try container.decodeIfPresent([String: MergeRule].self, forKey: .merge) ?? [:]))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(attributes, forKey: .attributes)
        if !relationships.isEmpty { try container.encode(relationships, forKey: .relationships) }
        if !identity.naturalKey.isEmpty { try container.encode(identity.naturalKey, forKey: .naturalKey) }
        try container.encodeIfPresent(identity.singletonCloudID, forKey: .singletonCloudID)
        if !identity.merge.isEmpty { try container.encode(identity.merge, forKey: .merge) }
    }
}

extension MergeRule: Codable {}
extension DeleteRule: Codable {}
extension AttributeKind: Codable {}

extension Attribute: Codable {
    enum CodingKeys: String, CodingKey { case name, type, optional, `default`, renamedFrom }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(AttributeKind.self, forKey: .type)
        var defaultValue: DefaultValue?
        if let symbol = try? container.decode(String.self, forKey: .default) {
            switch symbol {
            case "now": defaultValue = .now
            case "uuidString": defaultValue = .newUUIDString
            default:
                throw DecodingError.dataCorruptedError(forKey: .default, in: container, debugDescription: "a default is \"now\", \"uuidString\" or {\"value\": …}")
            }
        } else if let literal = try container.decodeIfPresent([String: JSONValue].self, forKey: .default) {
            guard let json = literal["value"], let value = try? ValueJSON.value(json, as: kind) else {
                throw DecodingError.dataCorruptedError(forKey: .default, in: container, debugDescription: "{\"value\": …} must hold a \(kind.rawValue)")
            }
            defaultValue = .value(value)
        }
        self.init(
            try container.decode(String.self, forKey: .name), kind,
            optional: try container.decodeIfPresent(Bool.self, forKey: .optional) ?? false,
            default: defaultValue, renamedFrom: try container.decodeIfPresent(String.self, forKey: .renamedFrom))
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
        try container.encodeIfPresent(renamedFrom, forKey: .renamedFrom)
    }
}

extension Relationship: Codable {
    enum CodingKeys: String, CodingKey { case name, destination, inverse, toMany, deleteRule }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            try container.decode(String.self, forKey: .name), to: try container.decode(String.self, forKey: .destination),
            inverse: try container.decodeIfPresent(String.self, forKey: .inverse),
            toMany: try container.decodeIfPresent(Bool.self, forKey: .toMany) ?? false,
            deleteRule: try container.decodeIfPresent(DeleteRule.self, forKey: .deleteRule) ?? .nullify)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(destination, forKey: .destination)
        try container.encodeIfPresent(inverse, forKey: .inverse)
        try container.encode(isToMany, forKey: .toMany)
        try container.encode(deleteRule, forKey: .deleteRule)
    }
}
