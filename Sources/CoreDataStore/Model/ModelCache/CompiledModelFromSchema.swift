import Foundation

extension CompiledModel {
    /// The compiled model Core Data would archive for a questbak schema: what a store written by a
    /// schema (TimeQuest's, or a schema file) is laid out and read by when it carries no model
    /// cache (a migrated TimeQuest store), and what fixtures and tests write as a store's cache.
    /// It carries everything a model says: tables, columns, kinds and hashes (renames, counts,
    /// ordering, modifiers, transformer names, superentities, uniqueness constraints), delete
    /// rules, and the schema's concrete defaults as a model cache holds them (so a layout of it
    /// has `ModelLayout.Field.defaultValue` as one read from a store's cache would). Left out is
    /// what no model says: array defaults (archived by their transformer), the element
    /// types of typed arrays and `Schema.identities` (an app profile's), which `ModelVersion`
    /// keeps beside the model it compiles with this. `Date.now` and a new UUID
    /// string stay symbolic (`CompiledAttribute.symbolicDefault`): a model archives the value its
    /// default expression had once, which a schema does not know.
    /// `SchemaModelPinTests` pins that nothing else is lost, either way.
    package init(schema: Schema) {
        self.init(
            versionIdentifiers: [schema.versionIdentifier],
            entities: schema.entities.map { entity in
                CompiledEntity(
                    name: entity.name, superentity: entity.superentity, isAbstract: entity.isAbstract,
                    attributes: entity.attributes.map(CompiledAttribute.init(schema:)),
                    relationships: entity.relationships.map { relationship in
                        var compiled = CompiledRelationship(
                            name: relationship.name, destination: relationship.destination, inverse: relationship.inverse,
                            minCount: relationship.minCount, maxCount: relationship.maxCount, deleteRule: relationship.deleteRule.code,
                            isOptional: relationship.isOptional,
                            isOrdered: relationship.isOrdered, renamingIdentifier: relationship.originalName ?? relationship.name)
                        compiled.isReadOnly = relationship.isReadOnly
                        compiled.versionHashModifier = relationship.versionHashModifier
                        return compiled
                    },
                    inheritedProperties: entity.inheritedProperties, uniqueTuples: entity.uniquenessConstraints,
                    renamingIdentifier: entity.originalName ?? entity.name,
                    versionHashModifier: entity.versionHashModifier)
            })
    }
}

extension CompiledAttribute {
    /// A schema's attribute as a model archives it; a composite's elements each become one (their
    /// columns are the composite's: model-cache.md, "From model to tables").
    init(schema attribute: Attribute) {
        let arrays: [AttributeKind: String] = [.integerArray: "Array<Int>", .stringArray: "Array<String>"]
        self.init(
            name: attribute.name, typeCode: Int(attribute.kind.hashTypeCode),
            valueClassName: arrays[attribute.kind] ?? attribute.valueClassName,
            transformerName: arrays[attribute.kind] == nil ? attribute.transformerName : "NSSecureUnarchiveFromData",
            isOptional: attribute.isOptional,
            renamingIdentifier: attribute.originalName ?? attribute.name,
            flags: (attribute.allowsExternalStorage ? CompiledAttribute.Flags.externalStorage : 0)
                | (attribute.preservesValueOnDeletion ? CompiledAttribute.Flags.preservesValueOnDeletion : 0))
        elements = attribute.elements.map(CompiledAttribute.init(schema:))
        switch attribute.defaultValue {
        case .value(let value)?: defaultValue = CompiledDefaultValue(schema: value, kind: attribute.kind)
        case .now?: symbolicDefault = .now
        case .newUUIDString?: symbolicDefault = .newUUIDString
        case nil: break
        }
        isReadOnly = attribute.isReadOnly
        versionHashModifier = attribute.versionHashModifier
    }
}

extension CompiledDefaultValue {
    /// A schema's concrete default as a model archives it: the inverse of
    /// `CompiledDefaultValue.declared(as:)`, so that Schema → CompiledModel → Schema keeps it. Nil for
    /// a value no archived default gives back (an array, text that is not UTF-8, an integer date).
    init?(schema value: Value, kind: AttributeKind) {
        switch value {
        case .integer(let number): self = .integer(number)
        case .boolean(let flag): self = .boolean(flag)
        case .double(let number): self = .real(number)
        case .string(let text): self = .string(text)
        case .date(let seconds): self = .date(secondsSince2001: seconds)
        case .uuid(let uuid): self = .uuid(withUnsafeBytes(of: uuid.uuid) { Data($0) })
        case .binary(let bytes): self = .data(bytes)
        case .decimal(let text):
            guard let decimal = DecimalDefault.parts(of: text) else { return nil }
            self = .decimal(mantissa: decimal.mantissa, exponent: decimal.exponent, isNegative: decimal.isNegative)
        // An empty composite's default: the `{}` SwiftData archives for a struct whose elements
        // are all optional.
        case .null where kind == .composite: self = .dictionary([:])
        case .null, .textBytes, .integerDate, .integerArray, .stringArray: return nil
        }
    }
}

extension DecimalDefault {
    /// Canonical decimal text (`"-12.5"`, `"1e-07"`) as an archived `NSDecimalNumber`'s parts: a
    /// 16-byte little-endian mantissa and a power of ten; nil for text whose digits do not fit 64
    /// bits (or `"Infinity"`, which no `NSDecimalNumber` holds).
    static func parts(of text: String) -> (mantissa: Data, exponent: Int, isNegative: Bool)? {
        var rest = Substring(text)
        let isNegative = rest.first == "-"
        if isNegative { rest = rest.dropFirst() }
        var exponent = 0
        if let mark = rest.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            guard let power = Int(rest[rest.index(after: mark)...]) else { return nil }
            exponent = power
            rest = rest[..<mark]
        }
        let pieces = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(pieces.count), pieces.allSatisfy({ $0.allSatisfy(\.isASCII) }) else { return nil }
        let fraction = pieces.count == 2 ? pieces[1] : ""
        let digits = pieces[0] + fraction
        guard !digits.isEmpty, digits.allSatisfy(\.isNumber), let magnitude = UInt64(digits) else { return nil }
        exponent -= fraction.count
        var mantissa = Data(count: 16)
        for byte in 0..<8 { mantissa[byte] = UInt8(truncatingIfNeeded: magnitude >> (8 * UInt64(byte))) }
        return (mantissa, exponent, isNegative)
    }
}
