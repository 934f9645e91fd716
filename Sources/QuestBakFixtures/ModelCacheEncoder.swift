import Foundation
import QuestBakKit

/// Writes a `CompiledModel` as `Z_MODELCACHE.Z_CONTENT` (the reverse of `ModelCacheDecoder`), for
/// fixtures and tests: an `NSKeyedArchiver` object graph laid out as `model-cache.md` describes
/// (class dictionaries, `$null`, back-references entity → model and property → entity), as a
/// binary property list, raw-DEFLATE compressed.
///
/// Not byte-identical to Core Data's output (object order and the keys the spec does not
/// describe differ); it is meant to exercise the reader, not to impersonate the framework.
package enum ModelCacheEncoder {
    package struct EncodingError: Error, LocalizedError, Equatable {
        package var reason: String
        package var errorDescription: String? { "cannot encode model cache: \(reason)" }
    }

    /// `Z_CONTENT` bytes.
    package static func encode(_ model: CompiledModel) throws -> Data {
        try RawDeflate.deflate(BinaryPropertyList.encode(try archive(model)))
    }

    /// The keyed archive as a property list (for tests that damage it before compressing).
    package static func archive(_ model: CompiledModel) throws -> PropertyListValue {
        var builder = Builder()
        return try builder.archive(model)
    }

    /// Compresses a (possibly hand-made) keyed archive as `Z_CONTENT`.
    package static func compress(_ archive: PropertyListValue) throws -> Data {
        try RawDeflate.deflate(BinaryPropertyList.encode(archive))
    }

    /// `$classes` chains, most derived first.
    static let classChains: [String: [String]] = [
        "NSManagedObjectModel": ["NSManagedObjectModel", "NSObject"],
        "NSKnownKeysDictionary1": ["NSKnownKeysDictionary1", "NSDictionary", "NSObject"],
        "NSKnownKeysMappingStrategy1": ["NSKnownKeysMappingStrategy1", "NSObject"],
        "NSEntityDescription": ["NSEntityDescription", "NSObject"],
        "NSAttributeDescription": ["NSAttributeDescription", "NSPropertyDescription", "NSObject"],
        "NSCompositeAttributeDescription": [
            "NSCompositeAttributeDescription", "NSAttributeDescription", "NSPropertyDescription", "NSObject",
        ],
        "NSRelationshipDescription": ["NSRelationshipDescription", "NSPropertyDescription", "NSObject"],
        "NSFetchIndexDescription": ["NSFetchIndexDescription", "NSObject"],
        "NSFetchIndexElementDescription": ["NSFetchIndexElementDescription", "NSObject"],
        "NSArray": ["NSArray", "NSObject"],
        "NSMutableArray": ["NSMutableArray", "NSArray", "NSObject"],
        "NSSet": ["NSSet", "NSObject"],
        "NSDictionary": ["NSDictionary", "NSObject"],
        "NSMutableDictionary": ["NSMutableDictionary", "NSDictionary", "NSObject"],
        "NSUUID": ["NSUUID", "NSObject"],
        "NSDate": ["NSDate", "NSObject"],
        "NSDecimalNumberPlaceholder": ["NSDecimalNumberPlaceholder", "NSObject"],
        "_NSPropertyDescriptionProxy": ["_NSPropertyDescriptionProxy", "NSObject"],
    ]

    private struct Builder {
        var objects: [PropertyListValue] = [.string("$null")]
        var classUIDs: [String: UInt64] = [:]
        /// Strings are archived once each, keyed by their exact bytes.
        var stringUIDs: [Data: UInt64] = [:]
        var entityUIDs: [String: UInt64] = [:]
        var relationshipUIDs: [String: [String: UInt64]] = [:]
        var attributeUIDs: [String: [String: UInt64]] = [:]
        /// Proxies for inherited properties, written once every entity's own descriptions are.
        var proxies: [(uid: UInt64, entity: String, property: String, referenceID: Int)] = []

        mutating func reserve() -> UInt64 {
            objects.append(.string("$placeholder"))
            return UInt64(objects.count - 1)
        }

        mutating func add(_ value: PropertyListValue) -> UInt64 {
            objects.append(value)
            return UInt64(objects.count - 1)
        }

        mutating func classUID(_ name: String) -> UInt64 {
            if let uid = classUIDs[name] { return uid }
            let chain = ModelCacheEncoder.classChains[name] ?? [name, "NSObject"]
            let uid = add(.dictionary(["$classname": .string(name), "$classes": .array(chain.map(PropertyListValue.string))]))
            classUIDs[name] = uid
            return uid
        }

        mutating func object(_ className: String, _ fields: [String: PropertyListValue], at uid: UInt64? = nil) -> UInt64 {
            var fields = fields
            fields["$class"] = .uid(classUID(className))
            if let uid {
                objects[Int(uid)] = .dictionary(fields)
                return uid
            }
            return add(.dictionary(fields))
        }

        mutating func string(_ text: String?) -> PropertyListValue {
            guard let text else { return .uid(0) }
            let key = Data(text.utf8)
            if let uid = stringUIDs[key] { return .uid(uid) }
            let uid = add(.string(text))
            stringUIDs[key] = uid
            return .uid(uid)
        }

        mutating func array(_ members: [PropertyListValue], className: String = "NSArray") -> PropertyListValue {
            .uid(object(className, ["NS.objects": .array(members)]))
        }

        mutating func dictionary(_ entries: [(String, PropertyListValue)], className: String = "NSMutableDictionary") -> PropertyListValue {
            .uid(object(className, ["NS.keys": .array(entries.map { string($0.0) }), "NS.objects": .array(entries.map(\.1))]))
        }

        mutating func archive(_ model: CompiledModel) throws -> PropertyListValue {
            let root = reserve()
            for entity in model.entities {
                guard entityUIDs[entity.name] == nil else { throw EncodingError(reason: "two entities named \(entity.name)") }
                entityUIDs[entity.name] = reserve()
                relationshipUIDs[entity.name] = Dictionary(uniqueKeysWithValues: entity.relationships.map { ($0.name, reserve()) })
            }
            for entity in model.entities {
                try encode(entity, model: model, root: root)
            }
            // As Core Data archives an inherited property: a proxy whose NSUnderlyingProperty is
            // the ancestor's own description (shared) and whose NSEntityDescription is the heir.
            for proxy in proxies {
                guard let underlying = declaration(of: proxy.property, above: proxy.entity, in: model) else {
                    throw EncodingError(reason: "\(proxy.entity) inherits \(proxy.property), which no ancestor declares")
                }
                _ = object(
                    "_NSPropertyDescriptionProxy",
                    [
                        "NSReferenceID": .integer(Int64(proxy.referenceID)), "NSUnderlyingProperty": .uid(underlying),
                        "NSEntityDescription": .uid(entityUIDs[proxy.entity]!),
                    ], at: proxy.uid)
            }
            let values = array(model.entities.map { .uid(entityUIDs[$0.name]!) })
            let keys = array(model.entities.map { string($0.name) })
            let mapping = object("NSKnownKeysMappingStrategy1", ["keys": keys])
            let entities = object("NSKnownKeysDictionary1", ["values": values, "searchMapping": .uid(mapping)])
            let versions = array(model.versionIdentifiers.sorted().map { string($0) }, className: "NSSet")
            _ = object(
                "NSManagedObjectModel",
                [
                    "NSEntities": .uid(entities), "NSVersionIdentifiers": versions,
                    "NSConfigurations": dictionary([], className: "NSDictionary"),
                    "NSFetchRequestTemplates": .uid(0),
                ], at: root)
            return .dictionary([
                "$archiver": .string("NSKeyedArchiver"), "$version": .integer(100_000), "$top": .dictionary(["root": .uid(root)]),
                "$objects": .array(objects),
            ])
        }

        /// `NSIsReadOnly` and a property's own `NSVersionHashModifier`, with the `_P` bits Core Data
        /// sets for them (4 read-only; 0x80 cleared when there is a modifier).
        mutating func propertyFlags(_ fields: inout [String: PropertyListValue], isReadOnly: Bool, modifier: String?) {
            guard case .integer(var flags)? = fields["_P"] else { return }
            if isReadOnly {
                fields["NSIsReadOnly"] = .boolean(true)
                flags |= 4
            }
            if let modifier {
                fields["NSVersionHashModifier"] = string(modifier)
                flags &= ~0x80
            }
            fields["_P"] = .integer(flags)
        }

        /// The description UID of `property` as the nearest ancestor of `entity` declares it.
        func declaration(of property: String, above entity: String, in model: CompiledModel) -> UInt64? {
            for ancestor in model.lineage(of: entity).dropFirst() {
                if let uid = attributeUIDs[ancestor.name]?[property] ?? relationshipUIDs[ancestor.name]?[property] { return uid }
            }
            return nil
        }

        mutating func encode(_ entity: CompiledEntity, model: CompiledModel, root: UInt64) throws {
            let entityUID = entityUIDs[entity.name]!
            var properties: [(String, PropertyListValue)] = []
            var propertyUIDs: [String: UInt64] = [:]
            // A transient property an ancestor lists is inherited too; one it does not is the entity's own.
            let ancestors = model.lineage(of: entity.name).dropFirst()
            let inheritedTransient = entity.transientProperties.filter { name in
                ancestors.contains { $0.transientProperties.contains(name) }
            }
            for name in (entity.inheritedProperties + inheritedTransient).sorted() {
                let uid = reserve()
                proxies.append((uid, entity.name, name, properties.count + 1))
                propertyUIDs[name] = uid
                properties.append((name, .uid(uid)))
            }
            for name in entity.transientProperties where !inheritedTransient.contains(name) {
                // The test encoder keeps only a transient property's name: it writes it as an
                // optional String attribute, transient (`NSIsTransient`, `_P` bit 8).
                let uid = object(
                    "NSAttributeDescription",
                    [
                        "NSPropertyName": string(name), "NSAttributeType": .integer(Int64(CompiledAttribute.TypeCode.string)),
                        "NSAttributeValueClassName": string("NSString"), "NSIsOptional": .boolean(true), "NSIsTransient": .boolean(true),
                        "NSFlagsKey": .integer(0), "_P": .integer(243 | 8), "NSEntity": .uid(entityUID),
                    ])
                attributeUIDs[entity.name, default: [:]][name] = uid
                propertyUIDs[name] = uid
                properties.append((name, .uid(uid)))
            }
            for attribute in entity.attributes {
                let uid = try encode(attribute, entity: .uid(entityUID))
                attributeUIDs[entity.name, default: [:]][attribute.name] = uid
                propertyUIDs[attribute.name] = uid
                properties.append((attribute.name, .uid(uid)))
            }
            for relationship in entity.relationships {
                guard let destination = entityUIDs[relationship.destination] else {
                    throw EncodingError(reason: "\(entity.name).\(relationship.name) points at no entity \(relationship.destination)")
                }
                var inverse: PropertyListValue = .uid(0)
                if let name = relationship.inverse {
                    guard let uid = relationshipUIDs[relationship.destination]?[name] else {
                        throw EncodingError(
                            reason: "\(entity.name).\(relationship.name) has no inverse \(relationship.destination).\(name)")
                    }
                    inverse = .uid(uid)
                }
                var fields: [String: PropertyListValue] = [
                    "NSPropertyName": string(relationship.name), "NSDestinationEntity": .uid(destination),
                    "_NSDestinationEntityName": string(relationship.destination), "NSInverseRelationship": inverse,
                    "_NSInverseRelationshipName": string(relationship.inverse), "NSMinCount": .integer(Int64(relationship.minCount)),
                    "NSMaxCount": .integer(Int64(relationship.maxCount)), "NSDeleteRule": .integer(Int64(relationship.deleteRule)),
                    "NSRenamingIdentifier": string(relationship.renamingIdentifier), "_P": .integer(relationship.isOptional ? 243 : 241),
                    "NSEntity": .uid(entityUID),
                ]
                if relationship.isOptional { fields["NSIsOptional"] = .boolean(true) }
                if relationship.isOrdered { fields["NSIsOrdered"] = .boolean(true) }
                propertyFlags(&fields, isReadOnly: relationship.isReadOnly, modifier: relationship.versionHashModifier)
                let uid = relationshipUIDs[entity.name]![relationship.name]!
                propertyUIDs[relationship.name] = uid
                properties.append((relationship.name, .uid(object("NSRelationshipDescription", fields, at: uid))))
            }
            var parent: PropertyListValue = .uid(0)
            if let name = entity.superentity {
                guard let uid = entityUIDs[name] else { throw EncodingError(reason: "\(entity.name) has no superentity \(name)") }
                parent = .uid(uid)
            }
            let children = model.entities.filter { $0.superentity == entity.name }.map {
                ($0.name, PropertyListValue.uid(entityUIDs[$0.name]!))
            }
            var fields: [String: PropertyListValue] = [
                "NSEntityName": string(entity.name), "NSProperties": dictionary(properties), "NSSuperentity": parent,
                "NSSubentities": dictionary(children),
                "NSUniqueTuples": array(entity.uniqueTuples.map { tuple in array(tuple.map { string($0) }) }),
                "NSVersionHashModifier": string(entity.versionHashModifier), "NSRenamingIdentifier": string(entity.renamingIdentifier),
                "NSClassNameForEntity": string(entity.name), "NSUserInfo": dictionary([], className: "NSDictionary"),
                "NSManagedObjectModel": .uid(root),
            ]
            if !entity.indexes.isEmpty {
                let indexes: [PropertyListValue] = entity.indexes.map { index in
                    let elements: [PropertyListValue] = index.elements.map { element in
                        var fields: [String: PropertyListValue] = ["NSPropertyName": string(element.propertyName)]
                        if let ascending = element.ascending { fields["NSAscending"] = .boolean(ascending) }
                        if let type = element.type { fields["NSFetchIndexElementType"] = .integer(Int64(type)) }
                        return .uid(object("NSFetchIndexElementDescription", fields))
                    }
                    return .uid(
                        object(
                            "NSFetchIndexDescription",
                            ["NSIndexName": string(index.name), "NSIndexElements": array(elements), "NSEntity": .uid(entityUID)]))
                }
                fields["NSFetchIndexDescriptions"] = array(indexes)
            }
            if !entity.compoundIndexes.isEmpty {
                // Each a list of the descriptions (or proxies) of its properties, as Core Data's
                // compound-index representation of a fetch index.
                var lists: [PropertyListValue] = []
                for list in entity.compoundIndexes {
                    let members = try list.map { name -> PropertyListValue in
                        guard let uid = propertyUIDs[name] else {
                            throw EncodingError(reason: "\(entity.name): compound index names no property \(name)")
                        }
                        return .uid(uid)
                    }
                    lists.append(array(members))
                }
                fields["NSCompoundIndexes"] = array(lists)
            }
            if entity.isAbstract { fields["NSIsAbstract"] = .boolean(true) }
            _ = object("NSEntityDescription", fields, at: entityUID)
        }

        mutating func encode(_ attribute: CompiledAttribute, entity: PropertyListValue) throws -> UInt64 {
            var fields: [String: PropertyListValue] = [
                "NSPropertyName": string(attribute.name), "NSAttributeType": .integer(Int64(attribute.typeCode)),
                "NSAttributeValueClassName": string(attribute.valueClassName), "NSValueTransformerName": string(attribute.transformerName),
                "NSDefaultValue": try encode(attribute.defaultValue), "NSRenamingIdentifier": string(attribute.renamingIdentifier),
                "NSFlagsKey": .integer(Int64(attribute.flags)), "_P": .integer(attribute.isOptional ? 243 : 241), "NSEntity": entity,
            ]
            if attribute.isOptional { fields["NSIsOptional"] = .boolean(true) }
            propertyFlags(&fields, isReadOnly: attribute.isReadOnly, modifier: attribute.versionHashModifier)
            if attribute.isComposite {
                var elements: [PropertyListValue] = []
                for element in attribute.elements { elements.append(.uid(try encode(element, entity: .uid(0)))) }
                fields["NSCompositeElements"] = array(elements)
                return object("NSCompositeAttributeDescription", fields)
            }
            guard attribute.elements.isEmpty else { throw EncodingError(reason: "\(attribute.name) has elements but is not composite") }
            return object("NSAttributeDescription", fields)
        }

        mutating func encode(_ value: CompiledDefaultValue?) throws -> PropertyListValue {
            guard let value else { return .uid(0) }
            switch value {
            case .integer(let number): return .uid(add(.integer(number)))
            case .real(let number): return .uid(add(.real(number)))
            case .boolean(let flag): return .uid(add(.boolean(flag)))
            case .string(let text): return string(text)
            case .data(let bytes): return .uid(add(.data(bytes)))
            case .date(let seconds): return .uid(object("NSDate", ["NS.time": .real(seconds)]))
            case .uuid(let bytes): return .uid(object("NSUUID", ["NS.uuidbytes": .data(bytes)]))
            case .decimal(let mantissa, let exponent, let negative):
                // NS.length: the 16-bit words of the mantissa in use.
                let bytes = [UInt8](mantissa)
                var length = 0
                for word in 0..<(bytes.count / 2) where bytes[2 * word] != 0 || bytes[2 * word + 1] != 0 { length = word + 1 }
                return .uid(
                    object(
                        "NSDecimalNumberPlaceholder",
                        [
                            "NS.mantissa": .data(mantissa), "NS.exponent": .integer(Int64(exponent)), "NS.negative": .boolean(negative),
                            "NS.length": .integer(Int64(length)), "NS.compact": .boolean(true), "NS.mantissa.bo": .integer(1),
                        ]))
            case .dictionary(let entries):
                var encoded: [(String, PropertyListValue)] = []
                for (key, value) in entries.sorted(by: { $0.key < $1.key }) { encoded.append((key, try encode(value))) }
                return dictionary(encoded, className: "NSDictionary")
            case .array(let members):
                var encoded: [PropertyListValue] = []
                for member in members { encoded.append(try encode(member)) }
                return array(encoded)
            case .other(let className): throw EncodingError(reason: "a default of class \(className) cannot be written")
            }
        }
    }
}
