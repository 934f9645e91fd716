import Foundation

extension Schema {
    /// A store's own compiled model as questbak's schema value: the same description a TimeQuest
    /// schema is, with what the cache adds (parents, uniqueness, composites, concrete defaults,
    /// counts and ordering of relationships). What no model says (natural keys, a singleton,
    /// merge rules) is an app profile's to add (`AppProfile.applied(to:)`).
    package init(model: CompiledModel) {
        self.init(
            versionIdentifier: model.versionIdentifiers.first ?? "",
            entities: model.entities.map { entity in
                var converted = Entity(
                    name: entity.name, attributes: entity.attributes.map(Attribute.init(compiled:)),
                    relationships: entity.relationships.map(Relationship.init(compiled:)), superentity: entity.superentity,
                    uniquenessConstraints: entity.uniqueTuples, versionHashModifier: entity.versionHashModifier)
                converted.originalName = entity.renamingIdentifier.flatMap { $0 == entity.name ? nil : $0 }
                converted.isAbstract = entity.isAbstract
                converted.inheritedProperties = entity.inheritedProperties
                return converted
            })
    }
}

extension Attribute {
    init(compiled attribute: CompiledAttribute) {
        let kind = Self.kind(ofTypeCode: attribute.typeCode)
        self.init(
            attribute.name, kind, optional: attribute.isOptional,
            default: attribute.symbolicDefault.map { $0 == .now ? .now : .newUUIDString }
                ?? attribute.defaultValue.flatMap { Self.defaultValue($0, kind: kind) },
            originalName: attribute.renamingIdentifier.flatMap { $0 == attribute.name ? nil : $0 },
            elements: attribute.elements.map(Attribute.init(compiled:)), transformerName: attribute.transformerName,
            valueClassName: attribute.valueClassName)
        allowsExternalStorage = attribute.allowsExternalStorage
        preservesValueOnDeletion = attribute.preservesValueOnDeletion
        isReadOnly = attribute.isReadOnly
        versionHashModifier = attribute.versionHashModifier
    }

    /// The kind of an `NSAttributeType` code; an unknown code is kept as opaque bytes.
    static func kind(ofTypeCode code: Int) -> AttributeKind { knownKind(ofTypeCode: code) ?? .transformable }

    /// The kind of a known `NSAttributeType` code (`AttributeKind(typeCode:)`).
    package static func knownKind(ofTypeCode code: Int) -> AttributeKind? { AttributeKind(typeCode: code) }

    /// A concrete default (SwiftData evaluates a default expression once and archives the value)
    /// as a value of the attribute's kind; nil for one that is no single value (an empty composite).
    static func defaultValue(_ value: CompiledDefaultValue, kind: AttributeKind) -> DefaultValue? {
        switch (value, kind) {
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

extension Relationship {
    init(compiled relationship: CompiledRelationship) {
        self.init(
            relationship.name, to: relationship.destination, inverse: relationship.inverse, toMany: relationship.isToMany,
            deleteRule: relationship.rule ?? .nullify, optional: relationship.isOptional, minCount: relationship.minCount,
            maxCount: relationship.maxCount, ordered: relationship.isOrdered)
        originalName = relationship.renamingIdentifier.flatMap { $0 == relationship.name ? nil : $0 }
        isReadOnly = relationship.isReadOnly
        versionHashModifier = relationship.versionHashModifier
    }
}

/// An archived `NSDecimalNumber` default as canonical decimal text.
enum DecimalDefault {
    /// (−1 if negative) × mantissa × 10^exponent, where the mantissa is 16 bytes little-endian;
    /// nil when it does not fit the forms a store holds (an Int64, or a Double's shortest text).
    package static func text(mantissa: Data, exponent: Int, isNegative: Bool) -> String? {
        guard mantissa.count == 16, mantissa.dropFirst(8).allSatisfy({ $0 == 0 }) else { return nil }
        let magnitude = mantissa.prefix(8).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        var digits = String(magnitude)
        if exponent > 0 {
            digits += String(repeating: "0", count: exponent)
        } else if exponent < 0 {
            let places = -exponent
            if digits.count <= places { digits = String(repeating: "0", count: places - digits.count + 1) + digits }
            digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -places))
        }
        let text = (isNegative && magnitude != 0 ? "-" : "") + digits
        if let integer = Int64(text) { return String(integer) }
        return Double(text).map { "\($0)" }
    }
}
