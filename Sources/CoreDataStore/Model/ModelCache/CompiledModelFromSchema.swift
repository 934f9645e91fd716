import Foundation

extension CompiledModel {
    /// The compiled model Core Data would archive for a questbak schema: what a store written by a
    /// schema (TimeQuest's, or a schema file) is laid out and read by when it carries no model
    /// cache (a migrated TimeQuest store), and what fixtures and tests write as a store's cache.
    /// It carries what decides tables, columns and kinds, not default values: a reader that needs
    /// those keeps the schema beside it (`StoreDump.Model`).
    package init(schema: Schema) {
        self.init(
            versionIdentifiers: [schema.versionIdentifier],
            entities: schema.entities.map { entity in
                CompiledEntity(
                    name: entity.name, isAbstract: entity.isAbstract,
                    attributes: entity.attributes.map(CompiledAttribute.init(schema:)),
                    relationships: entity.relationships.map { relationship in
                        var compiled = CompiledRelationship(
                            name: relationship.name, destination: relationship.destination, inverse: relationship.inverse, minCount: 0,
                            maxCount: relationship.isToMany ? 0 : 1, isOptional: relationship.isOptional,
                            renamingIdentifier: relationship.name)
                        compiled.isReadOnly = relationship.isReadOnly
                        compiled.versionHashModifier = relationship.versionHashModifier
                        return compiled
                    },
                    inheritedProperties: entity.inheritedProperties, renamingIdentifier: entity.name)
            })
    }
}

extension CompiledAttribute {
    /// A schema's attribute as a model archives it; a composite's elements each become one (their
    /// columns are the composite's: model-cache.md, "From model to tables").
    init(schema attribute: Attribute) {
        let arrays: [AttributeKind: String] = [.integerArray: "Array<Int>", .stringArray: "Array<String>"]
        self.init(
            name: attribute.name, typeCode: Int(attribute.kind.hashTypeCode), valueClassName: arrays[attribute.kind],
            transformerName: arrays[attribute.kind] == nil ? nil : "NSSecureUnarchiveFromData",
            isOptional: attribute.isOptional,
            renamingIdentifier: attribute.originalName ?? attribute.name,
            flags: (attribute.allowsExternalStorage ? CompiledAttribute.Flags.externalStorage : 0)
                | (attribute.preservesValueOnDeletion ? CompiledAttribute.Flags.preservesValueOnDeletion : 0))
        elements = attribute.elements.map(CompiledAttribute.init(schema:))
        isReadOnly = attribute.isReadOnly
        versionHashModifier = attribute.versionHashModifier
    }
}
