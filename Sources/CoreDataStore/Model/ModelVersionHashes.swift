import Crypto
import Foundation

/// The hashes Core Data compares to decide whether a store matches a model without migrating,
/// computed with the scheme of `shared/spec/store-format.md` (no Apple frameworks needed).
package struct ModelVersionHashes: Sendable, Equatable {
    /// Entity name to its 32-byte version hash (`NSStoreModelVersionHashes`).
    public var entityHashes: [String: Data]
    /// `NSStoreModelVersionChecksumKey`.
    public var checksum: String
    /// `NSStoreModelVersionHashesDigest`.
    public var digest: String

    public init(entityHashes: [String: Data]) {
        self.entityHashes = entityHashes
        var concatenated = Data()
        var digestInput = Data()
        for (name, hash) in entityHashes.sorted(by: { $0.key < $1.key }) {
            concatenated.append(hash)
            digestInput.append(Data(name.utf8))
            digestInput.append(hash)
        }
        checksum = Data(SHA256.hash(data: concatenated)).base64EncodedString()
        digest = Data(SHA512.hash(data: digestInput)).base64EncodedString()
    }

    /// The hashes of a model (a store's own `Z_MODELCACHE`, or the one a schema compiles to), by
    /// the scheme in store-format.md: what the store's metadata must hold if the cache was read right.
    package init(model: CompiledModel) {
        // In name order, the first of a name winning, as the schema it was once converted to had them.
        let entities = model.entities.sorted { $0.name < $1.name }
        let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var hashes: [String: Data] = [:]
        func hash(_ entity: CompiledEntity, depth: Int) -> Data {
            if let done = hashes[entity.name] { return done }
            // A parent's hash comes first; a parent chain is cut at 64 in case a cache loops.
            let parent = depth < 64 ? entity.superentity.flatMap { byName[$0] }.map { hash($0, depth: depth + 1) } : nil
            var ancestors: [CompiledEntity] = []
            var next = entity.superentity.flatMap { byName[$0] }
            while let current = next, ancestors.count < 64 {
                ancestors.append(current)
                next = current.superentity.flatMap { byName[$0] }
            }
            let result = Self.hash(of: entity, parentHash: parent, ancestors: ancestors)
            hashes[entity.name] = result
            return result
        }
        for entity in entities { _ = hash(entity, depth: 0) }
        self.init(entityHashes: hashes)
    }

    /// `ancestors`: the parent, its parent and so on, where an inherited property is declared.
    static func hash(of entity: CompiledEntity, parentHash: Data?, ancestors: [CompiledEntity] = []) -> Data {
        var properties: [(name: String, hash: Data)] = entity.attributes.map { ($0.name, hash(of: $0)) }
        properties += entity.relationships.map { ($0.name, hash(of: $0, declaredBy: entity.name)) }
        // An inherited property enters the hash as its declaration does (a proxy hashes as the
        // property it stands for).
        for name in entity.inheritedProperties {
            for ancestor in ancestors {
                if let attribute = ancestor.attribute(named: name) {
                    properties.append((name, hash(of: attribute)))
                    break
                }
                if let relationship = ancestor.relationship(named: name) {
                    properties.append((name, hash(of: relationship, declaredBy: ancestor.name)))
                    break
                }
            }
        }
        var input = Data(entity.name.utf8)
        input.append(entity.isAbstract ? 1 : 0)
        if let parentHash { input.append(parentHash) }
        for property in properties.sorted(by: { $0.name < $1.name }) {
            input.append(property.hash)
        }
        if let modifier = entity.versionHashModifier { input.append(Data(modifier.utf8)) }
        for constraint in entity.uniqueTuples.map({ $0.joined(separator: ".") }).sorted() { input.append(Data(constraint.utf8)) }
        return Data(SHA256.hash(data: input))
    }

    static func hash(of attribute: CompiledAttribute) -> Data {
        var input = propertyBase(
            name: attribute.name, isOptional: attribute.isOptional, isReadOnly: attribute.isReadOnly,
            modifier: attribute.versionHashModifier)
        // A code no kind has is hashed as a transformable's, as it always was (a decoder notes it).
        input.append(littleEndian: (attribute.kind ?? .transformable).hashTypeCode)
        if attribute.allowsExternalStorage { input.append(1) }
        if attribute.preservesValueOnDeletion { input.append(1) }
        return Data(SHA256.hash(data: input))
    }

    /// `entity`: the entity that declares the relationship. A relationship that is its own
    /// inverse (`Person.friends` ↔ `Person.friends`) does not hash its inverse's name (inferred).
    static func hash(of relationship: CompiledRelationship, declaredBy entity: String) -> Data {
        var input = propertyBase(
            name: relationship.name, isOptional: relationship.isOptional, isReadOnly: relationship.isReadOnly,
            modifier: relationship.versionHashModifier)
        input.append(Data(relationship.destination.utf8))
        if let inverse = relationship.inverse, !(inverse == relationship.name && relationship.destination == entity) {
            input.append(Data(inverse.utf8))
        }
        input.append(littleEndian: Int32(truncatingIfNeeded: relationship.maxCount))
        input.append(littleEndian: Int32(truncatingIfNeeded: relationship.minCount))
        if relationship.isOrdered { input.append(littleEndian: UInt16(1)) }
        return Data(SHA256.hash(data: input))
    }

    /// `SHA256(name ‖ u16(optional·1 | transient·2 | readOnly·4) ‖ [modifier])`; a transient
    /// property is in no hash, so its bit is never set here.
    private static func propertyBase(name: String, isOptional: Bool, isReadOnly: Bool, modifier: String?) -> Data {
        var input = Data(name.utf8)
        input.append(littleEndian: UInt16((isOptional ? 1 : 0) | (isReadOnly ? 4 : 0)))
        if let modifier { input.append(Data(modifier.utf8)) }
        return Data(SHA256.hash(data: input))
    }

}

extension RangeReplaceableCollection where Element == UInt8 {
    /// The integer's bytes, least significant first: the model hash's input, and the repair log's
    /// file (`RepairLogFile`). Inlinable: that file appends a few per entry, half a million times.
    @inlinable
    package mutating func append<T: FixedWidthInteger>(littleEndian value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
