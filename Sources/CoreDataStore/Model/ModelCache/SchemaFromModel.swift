import Foundation

extension Schema {
    /// A compiled model written out as a declaration, the schema file's form: what `questbak
    /// schema STORE` prints (parents, uniqueness, composites, concrete defaults, counts and
    /// ordering of relationships). Only the way out to a file: the engine reads, writes, repairs
    /// and migrates every store by the compiled model (`ModelVersion`), never by a schema made
    /// from one. What no model says (natural keys, a singleton, merge rules) is an app profile's.
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
        let kind = attribute.kind ?? .transformable
        self.init(
            attribute.name, kind, optional: attribute.isOptional,
            default: attribute.symbolicDefault.map { $0 == .now ? .now : .newUUIDString }
                ?? attribute.defaultValue.flatMap { $0.declared(as: kind) },
            originalName: attribute.renamingIdentifier.flatMap { $0 == attribute.name ? nil : $0 },
            elements: attribute.elements.map(Attribute.init(compiled:)), transformerName: attribute.transformerName,
            valueClassName: attribute.valueClassName)
        allowsExternalStorage = attribute.allowsExternalStorage
        preservesValueOnDeletion = attribute.preservesValueOnDeletion
        isReadOnly = attribute.isReadOnly
        versionHashModifier = attribute.versionHashModifier
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
